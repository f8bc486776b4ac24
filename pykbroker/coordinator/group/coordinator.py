"""The group coordinator: serves the classic groups of the `__consumer_offsets` partitions this
broker leads, and follows leadership changes of those partitions.

    coordinator = GroupCoordinator.for_broker(broker_id, config, writer, loader, metadata, timer)
    coordinator.startup()            # load the partitions led now; follow the metadata store
    await coordinator.run()          # background writes, until cancelled (the broker runs the timer)
    result = await coordinator.join_group(JoinRequest(...))
    errors = await coordinator.txn_commit_offsets(...)   # pending until complete_transaction(...)

Every group request is first checked as Kafka does: INVALID_GROUP_ID (an empty group id, except
for the offset and describe/delete APIs), COORDINATOR_NOT_AVAILABLE (not started, or stopped),
COORDINATOR_LOAD_IN_PROGRESS (the group's partition is loading) and NOT_COORDINATOR (another
broker leads the group's partition).
"""

from __future__ import annotations

import logging

from ...common.purgatory import DelayedOperationPurgatory
from ...common.timer import Timer
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ..partition_io import CoordinatorLoader, PartitionWriter
from .admin import Admin
from .join import GroupConfig, Joining, JoinRequest
from .log_io import OffsetsTopicLog
from .manager import GroupManager, OffsetConfig
from .member_requests import MemberRequests
from .model import JoinResult, SyncResult
from .offsets import Offsets
from .offsets_topic import OFFSETS_TOPIC, partition_count
from .rebalance import Rebalance
from .runtime import LoopRuntime, Reply
from .txn_offsets import TxnOffsets, TxnVerifier

log = logging.getLogger(__name__)

# APIs that accept an empty group id (for compatibility, as Kafka does)
_EMPTY_GROUP_ID_ALLOWED = {ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.DESCRIBE_GROUPS, ApiKey.DELETE_GROUPS}


class GroupCoordinator(Joining, MemberRequests, Rebalance, Offsets, TxnOffsets, Admin):
    def __init__(
        self,
        broker_id: int,
        group_config: GroupConfig,
        offset_config: OffsetConfig,
        manager: GroupManager,
        runtime,
        offsets_log=None,
        metadata=None,
    ) -> None:
        self.broker_id = broker_id
        self.group_config = group_config
        self.offset_config = offset_config
        self.manager = manager
        self.runtime = runtime
        self.join_purgatory = DelayedOperationPurgatory("Rebalance", runtime.timer)
        self.sync_purgatory = DelayedOperationPurgatory("Sync", runtime.timer)
        self.offsets_log = offsets_log if offsets_log is not None else manager.offsets_log
        self.metadata = metadata
        self.is_active = False
        # KIP-890 part 1: checks that a transactional commit's partition is in its transaction
        # (broker.py sets it when `transaction.partition.verification.enable`; None: no check)
        self.txn_verifier: TxnVerifier | None = None

    @classmethod
    def for_broker(
        cls, broker_id: int, config, writer: PartitionWriter, loader: CoordinatorLoader, metadata, timer: Timer
    ) -> GroupCoordinator:
        """The broker's coordinator: `__consumer_offsets` written through `writer` and loaded
        through `loader` (`offsets.load.buffer.size` is the loader's), its timeouts on `timer`."""
        runtime = LoopRuntime(timer)
        offsets_log = OffsetsTopicLog(
            writer,
            loader,
            runtime,
            compression=int(config["offsets.topic.compression.codec"]),
            timeout_ms=int(config["offsets.commit.timeout.ms"]),
        )
        count = partition_count(metadata, config)  # fixed for the broker's lifetime, as in Kafka
        manager = GroupManager(offsets_log, runtime, OffsetConfig.from_broker_config(config), lambda: count)
        return cls(
            broker_id, GroupConfig.from_broker_config(config), manager.config, manager, runtime, offsets_log, metadata
        )

    # -- lifecycle -------------------------------------------------------------------------
    def startup(self) -> None:
        if self.metadata is not None:
            self.metadata.add_topic_listener(self._on_topic_changed)
            info = self.metadata.topic(OFFSETS_TOPIC)
            if info is not None:
                self._on_topic_changed(OFFSETS_TOPIC, info)
        self._schedule_offset_expiration()
        self.is_active = True
        log.info("Group coordinator %d started", self.broker_id)

    async def run(self) -> None:
        await self.runtime.run()

    def shutdown(self) -> None:
        self.is_active = False
        for partition in sorted(self.manager.owned_partitions | self.manager.loading_partitions):
            self.manager.remove_groups_for_partition(partition, self.on_group_unloaded)
        log.info("Group coordinator %d stopped", self.broker_id)

    def partition_for(self, group_id: str) -> int:
        return self.manager.partition_for(group_id)

    # -- following leadership of __consumer_offsets ----------------------------------------
    def on_election(self, partition: int) -> None:
        log.debug("Elected as the group coordinator for partition %d", partition)
        self.manager.schedule_load(partition, self.on_group_loaded)

    def on_resignation(self, partition: int) -> None:
        log.info("Resigned as the group coordinator for partition %d", partition)
        self.manager.remove_groups_for_partition(partition, self.on_group_unloaded)

    def _on_topic_changed(self, name: str, info) -> None:
        if name != OFFSETS_TOPIC:
            if info is None and self.is_active:
                self.remove_offsets_of_topic(name)
            return
        served = self.manager.owned_partitions | self.manager.loading_partitions
        led = (
            set()
            if info is None
            else {
                index
                for index, state in info.partitions.items()
                if state.leader == self.broker_id and self.offsets_log.is_leader(index)
            }
        )
        for partition in sorted(led - served):
            self.on_election(partition)
        for partition in sorted(served - led):
            self.on_resignation(partition)

    def _schedule_offset_expiration(self) -> None:
        self.runtime.call_later(self.offset_config.retention_check_interval_ms, self._expire_offsets_and_reschedule)

    def _expire_offsets_and_reschedule(self) -> None:
        try:
            self.expire_offsets()
        finally:
            self._schedule_offset_expiration()

    # -- the checks every group request starts with ----------------------------------------
    def validate_group_status(self, group_id: str | None, api: int) -> ErrorCode | None:
        if group_id is None or (group_id == "" and api not in _EMPTY_GROUP_ID_ALLOWED):
            return ErrorCode.INVALID_GROUP_ID
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if self.manager.is_group_loading(group_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if not self.manager.is_group_local(group_id):
            return ErrorCode.NOT_COORDINATOR
        return None

    # -- for request handlers: the answers that wait for other members or for the log ------
    async def join_group(self, request: JoinRequest) -> JoinResult:
        reply = Reply()
        self.handle_join_group(request, reply.set)
        return await reply.wait()

    async def sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        assignments: dict[str, bytes],
    ) -> SyncResult:
        reply = Reply()
        self.handle_sync_group(
            group_id, generation_id, member_id, protocol_type, protocol_name, group_instance_id, assignments, reply.set
        )
        return await reply.wait()

    async def commit_offsets(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int, offsets: dict
    ) -> dict:
        reply = Reply()
        self.handle_commit_offsets(group_id, member_id, group_instance_id, generation_id, offsets, reply.set)
        return await reply.wait()
