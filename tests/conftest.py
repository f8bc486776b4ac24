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
    modules share one worker, so that its session brokers (pykbroker and Kafka 3.9.0, single and
    three-broker) start once. (The scopes are named here rather than by xdist_group marks, which
    pytest-xdist cannot attach to a test's id under every pytest version.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scheduling_scope(nodeid)

    return ModuleScheduling(config, log)


def scheduling_scope(nodeid: str) -> str:
    """The unit of work a worker runs whole: the test's module, or "compat" for the
    compatibility suite."""
    path = nodeid.split("::", 1)[0]
    return "compat" if path.startswith("tests/compat/") else path


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
