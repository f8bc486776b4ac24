"""Cluster tests run a real ZooKeeper (Debian's package) and brokers as separate processes.

One ZooKeeper serves the whole session; each test module runs its own cluster under its own
chroot, so modules never see each other's znodes.
"""
import pytest

from pykbroker.testkit.zookeeper import ZooKeeperProcess, zookeeper_available

from .harness import Cluster


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    if not zookeeper_available():
        pytest.skip("needs java and ZooKeeper (Debian's zookeeper package; make system-deps)")
    with ZooKeeperProcess(tmp_path_factory.mktemp("zookeeper")) as running:
        yield running


@pytest.fixture(scope="module")
def cluster(request, zookeeper, tmp_path_factory):
    """Three brokers for a whole test module; tests leave every broker running."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    options = getattr(request.module, "CLUSTER_OPTIONS", {})
    running = Cluster(tmp_path_factory.mktemp(name), zookeeper, chroot=f"/{name}",
                      **options).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def all_running(cluster):
    """Restart whatever a test stopped, so that the next test starts with the full cluster."""
    yield cluster
    cluster.ensure_all_running()
