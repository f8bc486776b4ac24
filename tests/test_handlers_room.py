"""The handlers room shows what is an API: every module of `pykbroker/handlers/` serves exactly
the Kafka API it is named after, the registry lists each of them explicitly, and what they share
lives in `handlers/support/`."""

import importlib
from pathlib import Path

import pykbroker.handlers
from pykbroker.handlers.support.registry import API_MODULES, default_modules
from pykbroker.protocol.api_keys import ApiKey

HANDLERS = Path(pykbroker.handlers.__file__).parent


def api_module_names() -> list[str]:
    return sorted(p.stem for p in HANDLERS.glob("*.py") if p.stem != "__init__")


def test_every_module_beside_support_is_listed_in_the_registry():
    assert sorted(API_MODULES) == api_module_names()


def test_each_api_module_serves_the_api_it_is_named_after():
    for name in API_MODULES:
        module = importlib.import_module(f"pykbroker.handlers.{name}")
        assert module.API_KEY == ApiKey[name.upper()], name


def test_the_registry_lists_the_apis_in_api_key_order():
    keys = [module.API_KEY for module in default_modules()]
    assert keys == sorted(keys)


def test_support_modules_serve_no_api():
    for path in (HANDLERS / "support").glob("*.py"):
        module = importlib.import_module(f"pykbroker.handlers.support.{path.stem}")
        assert not hasattr(module, "API_KEY"), path.name
