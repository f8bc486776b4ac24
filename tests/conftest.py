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
