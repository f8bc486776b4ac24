"""The group coordinator's settings, read from the broker's config: the members' session
timeouts, the group size cap and the initial rebalance delay (`GroupConfig`), and the committed
offsets' metadata size, retention and write acks (`OffsetConfig`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...config.broker import BrokerConfig


@dataclass(frozen=True)
class GroupConfig:
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    max_size: int = 2**31 - 1
    initial_rebalance_delay_ms: int = 3000

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> GroupConfig:
        return cls(
            int(config["group.min.session.timeout.ms"]),
            int(config["group.max.session.timeout.ms"]),
            int(config["group.max.size"]),
            int(config["group.initial.rebalance.delay.ms"]),
        )


@dataclass(frozen=True)
class OffsetConfig:
    max_metadata_size: int = 4096
    retention_ms: int = 7 * 24 * 3600 * 1000
    retention_check_interval_ms: int = 600000
    commit_required_acks: int = -1

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> OffsetConfig:
        return cls(
            max_metadata_size=int(config["offset.metadata.max.bytes"]),
            retention_ms=int(config["offsets.retention.minutes"]) * 60 * 1000,
            retention_check_interval_ms=int(config["offsets.retention.check.interval.ms"]),
            commit_required_acks=int(config["offsets.commit.required.acks"]),
        )
