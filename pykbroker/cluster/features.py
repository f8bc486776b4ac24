"""The cluster's feature flags (KIP-584) as ApiVersions v3+ reports them: the features this broker
supports (name -> lowest and highest level) and the levels finalized for the cluster.

    supported = supported_features()               # {"group.version": (0, 1), "share.version": (0, 1)}
    finalized = finalized_features(config)         # {"share.version": 1} with share groups on

`group.version` 1 is KIP-848's consumer group protocol, finalized when
`group.coordinator.rebalance.protocols` includes "consumer"; `share.version` 1 is KIP-932's share
groups, finalized when it includes "share". The consumer and share group APIs are advertised
(and served) only while their feature is finalized at 1 or above, as Kafka does; group configs (the GROUP config
resource) are served while either is.

These levels follow the broker's setting, not UpdateFeatures: Kafka 3.9 in ZooKeeper mode supports
no feature that UpdateFeatures could finalize (its `/feature` znode stays `{"features":{}}`), and
pykbroker answers UpdateFeatures as it does (`updatable_features()` is empty). The epoch is the
`/feature` znode's version, which nothing changes after the controller creates it: 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config.broker import BrokerConfig

GROUP_VERSION = "group.version"
SHARE_VERSION = "share.version"

# name -> (min, max) levels this broker supports
SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {GROUP_VERSION: (0, 1), SHARE_VERSION: (0, 1)}

FINALIZED_FEATURES_EPOCH = 0  # the levels below never change while the broker runs

# The APIs of share groups (KIP-932), served only with share.version >= 1.
SHARE_API_KEYS = frozenset({76, 77, 78, 79, 90, 91, 92})
# The APIs of consumer groups (KIP-848), served only with group.version >= 1.
CONSUMER_GROUP_API_KEYS = frozenset({68, 69})


def supported_features() -> dict[str, tuple[int, int]]:
    return dict(SUPPORTED_FEATURES)


def finalized_features(config: BrokerConfig) -> dict[str, int]:
    """The finalized level of each feature (a level of 0 is not listed, as Kafka)."""
    protocols = config["group.coordinator.rebalance.protocols"]
    levels = {GROUP_VERSION: 1 if "consumer" in protocols else 0, SHARE_VERSION: 1 if "share" in protocols else 0}
    return {name: level for name, level in levels.items() if level > 0}


def updatable_features() -> frozenset[str]:
    """The features UpdateFeatures may finalize: none, as in Kafka 3.9's ZooKeeper mode, whose
    brokers support no feature (group.version and share.version follow the broker's setting)."""
    return frozenset()


def share_groups_enabled(config: BrokerConfig) -> bool:
    return finalized_features(config).get(SHARE_VERSION, 0) >= 1


def group_configs_enabled(config: BrokerConfig) -> bool:
    """Whether the GROUP config resource (Kafka 4's group configs) is served: with either of the
    Kafka 4 group protocols finalized. Without them the broker answers as Kafka 3.9 in ZooKeeper
    mode, which knows no such resource type."""
    return bool(finalized_features(config))


def consumer_groups_enabled(config: BrokerConfig) -> bool:
    return finalized_features(config).get(GROUP_VERSION, 0) >= 1


def disabled_api_keys(config: BrokerConfig) -> frozenset[int]:
    """The APIs a feature not finalized keeps off ApiVersions."""
    disabled = frozenset() if share_groups_enabled(config) else SHARE_API_KEYS
    return disabled if consumer_groups_enabled(config) else disabled | CONSUMER_GROUP_API_KEYS
