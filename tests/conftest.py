"""Shared fixtures: brokers run as separate processes on free loopback ports, always stopped."""
import pytest

from pykbroker.testing import BrokerProcess


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


def pytest_collection_modifyitems(config, items):
    """With pytest-xdist (`make test` runs two workers with `--dist loadgroup`), a test module
    stays on one worker, so that its module-scoped brokers start once; the compatibility suite's
    modules share one worker, so that its session brokers (pykbroker and Kafka 3.9.0, single and
    three-broker) start once."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        group = "compat" if path.startswith("tests/compat/") else path
        item.add_marker(pytest.mark.xdist_group(group))
