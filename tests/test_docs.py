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
