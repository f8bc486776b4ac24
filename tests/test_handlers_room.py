"""The handlers room shows what is an API: every module of `pykbroker/handlers/` serves exactly
the Kafka API it is named after, the registry lists each of them explicitly, and what they share
lives in `handlers/support/`."""

import importlib
from pathlib import Path

import pykbroker.handlers
from pykbroker.handlers.support.registry import (
    API_MODULES,
    API_VERSIONS,
    build_registry,
    default_modules,
    deferred_registry,
)
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


def test_the_version_table_says_what_each_api_module_declares():
    for module in default_modules():
        name = module.__name__.rsplit(".", 1)[1]
        assert API_VERSIONS[name] == (module.API_KEY, module.MIN_VERSION, module.MAX_VERSION), name


def test_the_deferred_registry_serves_what_the_modules_serve():
    eager = build_registry(default_modules())
    deferred = deferred_registry()
    assert sorted(deferred) == sorted(eager)
    for key, entry in deferred.items():
        assert (entry.min_version, entry.max_version) == (eager[key].min_version, eager[key].max_version)
        assert entry.handle is eager[key].handle
        assert entry.request_type is eager[key].request_type


def test_support_modules_serve_no_api():
    for path in (HANDLERS / "support").glob("*.py"):
        module = importlib.import_module(f"pykbroker.handlers.support.{path.stem}")
        assert not hasattr(module, "API_KEY"), path.name
