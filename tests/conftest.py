"""Shared fixtures: brokers run as separate processes on free loopback ports, always stopped."""
import pytest

from pykbroker.testkit.process import BrokerProcess


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """One broker for a whole test module (tests use distinct topic names)."""
    with BrokerProcess(tmp_path_factory.mktemp("broker")) as running:
        yield running


@pytest.fixture
def fresh_broker(tmp_path):
    """A broker of the test's own, for tests that restart or configure it."""
    with BrokerProcess(tmp_path / "broker") as running:
        yield running


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With pytest-xdist (`make test` runs two workers with `--dist loadscope`), a test module
    stays on one worker, so that its module-scoped brokers start once; the compatibility suite's
    modules run as two units, so that each of its session pairs of brokers (pykbroker and Kafka
    3.9.0: single, three-broker and secured) starts once, on one worker. (The scopes are named
    here rather than by xdist_group marks, which pytest-xdist cannot attach to a test's id under
    every pytest version.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scheduling_scope(nodeid)

    return ModuleScheduling(config, log)


# The compatibility suite's modules that use its secured brokers (and no other of its brokers).
COMPAT_SECURITY_MODULES = frozenset({"test_security_scenarios.py", "test_authorization_matrix.py",
                                     "test_assign_without_group_acl.py"})


def scheduling_scope(nodeid: str) -> str:
    """The unit of work a worker runs whole: the test's module; for the compatibility suite
    "compat-security" (the modules on its secured brokers) or "compat" (those on its single and
    three-broker ones)."""
    path = nodeid.split("::", 1)[0]
    if not path.startswith("tests/compat/"):
        return path
    return "compat-security" if path.rsplit("/", 1)[-1] in COMPAT_SECURITY_MODULES else "compat"


_LOG_TAIL_CHARACTERS = 20_000


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries the end of the log of each broker process it used, so
    that a failure seen only in CI can be read afterwards."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.when == "call":
        for name, value in getattr(item, "funcargs", {}).items():
            if isinstance(value, BrokerProcess):
                report.sections.append((f"log of broker fixture {name!r}", value.log_text()[-_LOG_TAIL_CHARACTERS:]))
