"""The settings a harness broker starts from, one table for all of them.

A single broker (`EmbeddedBroker`, `BrokerProcess`, the pytest plugin's `kafka_broker`) runs
`DEV_PROFILE`, the development profile of `pykbroker --dev` (Kafka's example server.properties
for one node), on a free 127.0.0.1 port; a cluster's brokers (`BrokerCluster`, `pykbroker
cluster`) the same with the replication of a cluster. The caller's settings win over both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..config.dev_profile import DEV_PROFILE

FREE_PORT_LISTENER = "PLAINTEXT://127.0.0.1:0"


def single_broker_settings(
    overrides: Mapping[str, object] | None = None,
    *,
    broker_id: int = 0,
    log_dirs: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """`DEV_PROFILE` on a free port, with `log_dirs` (when given), then `overrides` on top."""
    settings = {"broker.id": str(broker_id), **DEV_PROFILE, "listeners": FREE_PORT_LISTENER}
    if log_dirs is not None:
        settings["log.dirs"] = str(log_dirs)
    settings.update({key: str(value) for key, value in (overrides or {}).items()})
    return settings


def cluster_settings(brokers: int) -> dict[str, str]:
    """What every broker of an N-broker cluster gets before the user's overrides: the profile
    with a replication factor of min(3, N) for new and internal topics, and one less (at least 1)
    for `min.insync.replicas`."""
    replication_factor = min(3, brokers)
    min_isr = max(1, replication_factor - 1)
    return {
        **{key: value for key, value in DEV_PROFILE.items() if key != "listeners"},  # each broker has its own
        "default.replication.factor": str(replication_factor),
        "min.insync.replicas": str(min_isr),
        "offsets.topic.replication.factor": str(replication_factor),
        "transaction.state.log.replication.factor": str(replication_factor),
        "transaction.state.log.min.isr": str(min_isr),
        "share.coordinator.state.topic.replication.factor": str(replication_factor),
        "share.coordinator.state.topic.min.isr": str(min_isr),
    }
