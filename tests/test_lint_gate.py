"""`make lint` holds the whole package to typed functions: mypy's `disallow_untyped_defs` and
`disallow_incomplete_defs` for every module of `pykbroker/`, and no override that relaxes them."""

import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
STRICT_FLAGS = ("disallow_untyped_defs", "disallow_incomplete_defs")


def mypy_settings() -> dict:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]


def test_every_module_of_the_package_must_annotate_its_functions():
    settings = mypy_settings()
    assert settings["files"] == ["pykbroker"]
    assert all(settings.get(flag) is True for flag in STRICT_FLAGS)


def test_no_override_relaxes_the_strict_flags_or_ignores_errors():
    for override in mypy_settings().get("overrides", []):
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert not any(module.startswith("pykbroker") for module in modules), override
        assert not any(override.get(flag) is False for flag in STRICT_FLAGS), override
        assert "ignore_errors" not in override, override
