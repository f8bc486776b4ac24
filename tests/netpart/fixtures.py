"""The partition tests' cluster fixture: one cluster per system for a whole test module
(ZooKeeper and three brokers in network namespaces, see `cluster.py`), skipped where namespaces,
nftables, Java or Kafka are missing, always torn down (processes, namespaces, data).

    cluster = partitioned_cluster("kafka")      # at the top of a test module
"""

import tempfile
from pathlib import Path

import pytest

from compat import realkafka
from pykbroker.testkit.zookeeper import zookeeper_available

from ..ci import skip_or_fail_in_ci
from .cluster import NamespacedCluster
from .network import netns_supported


def why_not(system: str) -> str | None:
    reason = netns_supported()
    if reason is None and not zookeeper_available():
        reason = "needs java and ZooKeeper (Debian's zookeeper package; make system-deps)"
    if reason is None and system == "kafka":
        reason = realkafka.unavailable()
    return reason


def partitioned_cluster(system: str):
    """A module-scoped fixture: `system`'s cluster in namespaces."""

    @pytest.fixture(scope="module")
    def fixture():
        reason = why_not(system)
        if reason:
            skip_or_fail_in_ci(reason)
        directory = Path(tempfile.mkdtemp(prefix=f"netpart-{system}-"))
        with NamespacedCluster.of(system, directory) as cluster:
            yield cluster

    return fixture
