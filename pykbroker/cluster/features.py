"""The cluster's feature flags (KIP-584) as ApiVersions v3+ reports them: the features this broker
supports (name -> lowest and highest level) and the levels finalized for the cluster.

    supported = supported_features()               # {"group.version": (0, 1)}
    finalized = finalized_features(config)         # {"group.version": 1} with consumer groups on

`group.version` 1 is KIP-848's new consumer group protocol, finalized (as Kafka 4 does by default)
when `group.coordinator.rebalance.protocols` includes "consumer". Other branches of the group
protocols add theirs here (e.g. `share.version`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config.broker import BrokerConfig

GROUP_VERSION = "group.version"

# name -> (min, max) levels this broker supports
SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {GROUP_VERSION: (0, 1)}

FINALIZED_FEATURES_EPOCH = 0  # the levels below never change while the broker runs


def supported_features() -> dict[str, tuple[int, int]]:
    return dict(SUPPORTED_FEATURES)


def finalized_features(config: BrokerConfig) -> dict[str, int]:
    """The finalized level of each feature (a level of 0 is not listed, as Kafka)."""
    levels = {GROUP_VERSION: 1 if "consumer" in config["group.coordinator.rebalance.protocols"] else 0}
    return {name: level for name, level in levels.items() if level > 0}
