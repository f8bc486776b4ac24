"""Every network-partition scenario (`scenarios.py`) on a three-broker Kafka 3.9.0 cluster, each
broker and ZooKeeper in a network namespace of its own: no acknowledged write lost, none
duplicated, no read of a write later truncated or aborted, and the cluster heals by itself.
`test_partitions_pykbroker.py` runs the same scenarios on pykbroker."""

import pytest

from .fixtures import partitioned_cluster
from .scenarios import SCENARIOS, run_scenario

cluster = partitioned_cluster("kafka")


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_partition_scenario(cluster, scenario):
    run_scenario(cluster, SCENARIOS[scenario])
