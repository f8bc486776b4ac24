"""The documentation's API table is the broker's own: what ApiVersions advertises."""
import re
from pathlib import Path

from pykbroker.handlers.support.registry import build_registry, default_modules

COMPATIBILITY = Path(__file__).resolve().parents[1] / "docs" / "compatibility.md"


def test_compatibility_table_lists_exactly_the_advertised_versions():
    rows = re.findall(r"^\| (\w+) \| (\d+) \| (\d+)-(\d+) \|$", COMPATIBILITY.read_text(), re.M)
    documented = {int(key): (int(low), int(high)) for _, key, low, high in rows}
    advertised = {key: (e.min_version, e.max_version)
                  for key, e in build_registry(default_modules()).items()}
    assert documented == advertised


def test_configuration_doc_lists_every_broker_and_topic_key():
    from pykbroker.config import BROKER_CONFIGS, TOPIC_CONFIGS

    text = (COMPATIBILITY.parent / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([\w.]+)` \|", text, re.M))
    assert set(BROKER_CONFIGS) | set(TOPIC_CONFIGS) <= documented


ROOT = COMPATIBILITY.parents[1]
LINK = re.compile(r"\]\(([^)#\s]*)(?:#([\w-]+))?\)")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_the_readme_and_docs_link_to_pages_and_headings_that_exist():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target, anchor in LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            linked = (page.parent / target).resolve() if target else page
            if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
                broken.append(f"{page.relative_to(ROOT)}: {target}#{anchor}" if anchor else
                              f"{page.relative_to(ROOT)}: {target}")
    assert not broken


def test_the_readme_points_to_the_architecture_page():
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text()
    assert "## Layout" in (ROOT / "docs" / "architecture.md").read_text()
