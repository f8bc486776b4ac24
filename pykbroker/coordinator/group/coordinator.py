"""The group coordinator: the one object the broker and the request handlers talk to. It serves
the classic groups of the `__consumer_offsets` partitions this broker leads, follows leadership
changes of those partitions, and hands each request to the collaborator that owns it.

    coordinator = GroupCoordinator.for_broker(broker_id, config, writer, loader, metadata, timer)
    coordinator.startup()            # load the partitions led now; follow the metadata store
    await coordinator.run()          # background writes, until cancelled (the broker runs the timer)
    result = await coordinator.join_group(JoinRequest(...))
    errors = await coordinator.txn_commit_offsets(...)   # pending until complete_transaction(...)

The collaborators, each given what it uses when it is built:

    manager      GroupMetadataManager   the groups served, where they live, request checks
    loader       GroupLoader            loading and unloading partitions of __consumer_offsets
    rebalance    Rebalance              rebalances, and the members' Heartbeats
    joining      Joining                JoinGroup
    members      MemberRequests         SyncGroup, Heartbeat, LeaveGroup
    offsets      OffsetMetadataManager  OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete
    store        OffsetStore            writing offsets and tombstones
    transactions OpenTransactions       transactional offsets pending until their markers
    expiration   OffsetExpiration       the retention check, offsets of deleted topics
    admin        GroupAdmin             ListGroups, DescribeGroups, DeleteGroups
    consumer_groups ConsumerGroupManager ConsumerGroupHeartbeat, ConsumerGroupDescribe (KIP-848)
    share        ShareGroupCoordinator  share groups (KIP-932): ShareGroupHeartbeat, ShareGroupDescribe,
                                        the share groups of ListGroups/DeleteGroups, share group offsets
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ...common.timer import Timer
from ...common.topic_partition import TopicPartition
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ..internal_topic import follow_topic, led_partitions
from ..partition_io import CoordinatorLoader, PartitionWriter
from ..runtime import LoopRuntime, Reply
from .admin import GroupAdmin
from .config import GroupConfig, OffsetConfig
from .formats import OffsetAndMetadata
from .group import GroupMetadata
from .join import Joining, JoinRequest
from .loader import GroupLoader
from .log_io import OffsetsLog, OffsetsTopicLog
from .manager import GroupMetadataManager
from .member import JoinCallback, SyncCallback
from .member_requests import MemberRequests
from .model import (
    FetchedOffset,
    GroupOverview,
    GroupSummary,
    JoinResult,
    LeaveResult,
    MemberIdentity,
    SyncResult,
)
from .offset_expiration import OffsetExpiration
from .offset_store import CommitCallback, OffsetStore
from .offsets import OffsetMetadataManager, TxnVerifier
from .offsets_topic import OFFSETS_TOPIC, partition_count
from .rebalance import Rebalance
from .share.record_types import SHARE_RECORD_TYPES
from .state import DEAD, EMPTY
from .txn_offsets import OpenTransactions

if TYPE_CHECKING:
    from ...cluster.model import TopicInfo
    from ...cluster.store import MetadataStore
    from ...config.broker import BrokerConfig
    from ..partition_io import LoadedRecord
    from ..share.persister import SharePersister
    from .consumer.manager import ConsumerGroupManager, ConsumerGroupSettings, DescribedGroup, HeartbeatRequest
    from .consumer.manager import HeartbeatResult as ConsumerHeartbeatResult
    from .share.coordinator import ShareGroupConfig, ShareGroupCoordinator
    from .share.results import DescribedShareGroup, HeartbeatResult, OffsetsResult

log = logging.getLogger(__name__)


class GroupCoordinator:
    def __init__(
        self,
        broker_id: int,
        group_config: GroupConfig,
        offset_config: OffsetConfig,
        offsets_log: OffsetsLog,
        runtime: LoopRuntime,
        partition_count: Callable[[], int],
        metadata: MetadataStore | None = None,
        consumer_settings: ConsumerGroupSettings | None = None,
        *,
        share_config: ShareGroupConfig | None = None,
        persister: SharePersister | None = None,
        group_configs: Callable[[str], Mapping[str, str]] | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.runtime = runtime
        self.offsets_log = offsets_log
        self.metadata = metadata
        self.manager = manager = GroupMetadataManager(offsets_log, runtime, offset_config, partition_count)
        self.rebalance = rebalance = Rebalance(manager, group_config, runtime)
        heartbeats = rebalance.heartbeats
        self.joining = Joining(manager, group_config, rebalance, heartbeats)
        self.members = MemberRequests(manager, rebalance, heartbeats)
        self.transactions = transactions = OpenTransactions(manager)
        self.store = store = OffsetStore(manager, offsets_log, offset_config, transactions)
        self.offsets = OffsetMetadataManager(manager, store, heartbeats)
        self.expiration = OffsetExpiration(manager, store, runtime, offset_config)
        self.admin = GroupAdmin(manager, store)

        def on_classic_group_converted(group: GroupMetadata) -> None:
            """A classic group became a consumer group: its members' waiting JoinGroup and
            SyncGroup get REBALANCE_IN_PROGRESS (they join the consumer group anew), its timers
            and delayed operations end, its classic bookkeeping is emptied."""
            for member in list(group.members.values()):
                group.invoke_join_callback(member, JoinResult(member.member_id, ErrorCode.REBALANCE_IN_PROGRESS))
                group.invoke_sync_callback(member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
            rebalance.heartbeats.cancel_all(group)
            group.members.clear()
            group.static_members.clear()
            group.pending_members.clear()
            group.supported_protocols.clear()
            group.num_awaiting_join = 0
            group.state = DEAD  # a delayed join completing now skips its rebalance
            rebalance.remove_sync_expiration(group)
            if group.join_operation is not None:
                group.join_operation.force_complete()
                group.join_operation = None
            group.state = EMPTY
            group.generation_id = 0
            group.leader_id = None

        # consumer groups (KIP-848): built on the first ConsumerGroupHeartbeat or Describe, or
        # the first consumer group loaded from its records (no group is a consumer group before)
        self._consumer_groups: ConsumerGroupManager | None = None
        self._consumer_settings = consumer_settings
        self._on_classic_group_converted = on_classic_group_converted
        self._consumer_group_configs = group_configs or (lambda group_id: {})

        def on_group_loaded(group: GroupMetadata) -> None:
            rebalance.on_group_loaded(group)
            if group.consumer is not None or self._consumer_groups is not None:
                self.consumer_groups.on_group_loaded(group)

        def on_group_unloaded(group: GroupMetadata) -> None:
            rebalance.on_group_unloaded(group)
            if self._consumer_groups is not None:
                self._consumer_groups.on_group_unloaded(group)

        # share groups (KIP-932): built on the first share group request or share group record
        self._share: ShareGroupCoordinator | None = None
        self._share_config = share_config
        self._share_persister = persister
        self._share_group_configs = group_configs or (lambda group_id: {})
        self._share_acks = offset_config.commit_required_acks
        self._share_listeners: list[Callable[[str, str], None]] = []
        self.broker_config: BrokerConfig | None = None  # the share groups' settings, when for_broker built it
        # the broker's persister, opened when the share groups are (None: `persister`, else in memory)
        self.share_persister_source: Callable[[], SharePersister] | None = None
        self.loader = GroupLoader(
            manager,
            offsets_log,
            transactions,
            runtime,
            on_group_loaded=on_group_loaded,
            on_group_unloaded=on_group_unloaded,
            on_partition_loaded=self._on_partition_loaded,
            on_partition_unloaded=self._on_partition_unloaded,
        )

    @property
    def consumer_groups(self) -> ConsumerGroupManager:
        """The consumer groups' manager (KIP-848), built on first use: its modules are imported
        then, on the event loop, once, for a few milliseconds."""
        if self._consumer_groups is None:
            from .consumer.manager import ConsumerGroupManager, ConsumerGroupSettings

            settings = self._consumer_settings
            if settings is None:
                broker_config = self.broker_config
                settings = (
                    ConsumerGroupSettings()
                    if broker_config is None
                    else ConsumerGroupSettings.from_broker_config(broker_config)
                )
            self._consumer_groups = ConsumerGroupManager(
                self.manager,
                self.runtime,
                settings,
                self.metadata,
                group_config=self._consumer_group_configs,
                on_classic_group_converted=self._on_classic_group_converted,
            )
        return self._consumer_groups

    @property
    def share(self) -> ShareGroupCoordinator:
        """The share groups' coordinator, built on first use: its modules are imported then, on the
        event loop, once, for a few milliseconds."""
        if self._share is None:
            self._share = self._build_share_coordinator()
        return self._share

    def _build_share_coordinator(self) -> ShareGroupCoordinator:
        from .share.coordinator import ShareGroupConfig, ShareGroupCoordinator, TopicsView

        config = self._share_config
        if config is None:
            broker_config = self.broker_config
            config = ShareGroupConfig() if broker_config is None else ShareGroupConfig.from_broker_config(broker_config)
        share = ShareGroupCoordinator(
            self.manager,
            self.offsets_log,
            self.runtime,
            config,
            TopicsView(self.metadata),
            self._persister_for_share_groups(),
            self._share_group_configs,
            acks=self._share_acks,
        )
        for listener in self._share_listeners:
            share.add_share_group_listener(listener)
        return share

    def _persister_for_share_groups(self) -> SharePersister:
        if self._share_persister is not None:
            return self._share_persister
        if self.share_persister_source is not None:
            return self.share_persister_source()
        from ..share.persister import InMemorySharePersister

        return InMemorySharePersister()

    def _is_share_group(self, group_id: str) -> bool:
        return self._share is not None and self._share.is_share_group(group_id)

    def _on_partition_loaded(self, partition: int, records: Sequence[LoadedRecord]) -> None:
        """Share groups come back from their records; the share group code is loaded only when the
        partition holds some (or share groups already exist)."""
        if self._share is None and not any(_is_share_group_record(record) for record in records):
            return
        self.share.on_partition_loaded(partition, records)

    def _on_partition_unloaded(self, partition: int) -> None:
        if self._share is not None:
            self._share.on_partition_unloaded(partition)

    @classmethod
    def for_broker(
        cls,
        broker_id: int,
        config: BrokerConfig,
        writer: PartitionWriter,
        loader: CoordinatorLoader,
        metadata: MetadataStore,
        timer: Timer,
        persister: SharePersister | None = None,
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
        coordinator = cls(
            broker_id,
            GroupConfig.from_broker_config(config),
            OffsetConfig.from_broker_config(config),
            offsets_log,
            runtime,
            lambda: count,
            metadata,
            persister=persister,
            group_configs=metadata.group_configs,
        )
        coordinator.broker_config = config
        return coordinator

    # -- lifecycle -------------------------------------------------------------------------
    def startup(self) -> None:
        follow_topic(self.metadata, OFFSETS_TOPIC, self._on_topic_changed)
        self.expiration.start()
        self.manager.is_active = True
        log.info("Group coordinator %d started", self.broker_id)

    async def run(self) -> None:
        await self.runtime.run()

    def shutdown(self) -> None:
        self.manager.is_active = False
        for partition in sorted(self.manager.served_partitions()):
            self.loader.unload(partition)
        log.info("Group coordinator %d stopped", self.broker_id)

    @property
    def is_active(self) -> bool:
        return self.manager.is_active

    @property
    def txn_verifier(self) -> TxnVerifier | None:
        """KIP-890 part 1: checks that a transactional commit's partition is in its transaction
        (broker.py sets it; None: no check)."""
        return self.offsets.txn_verifier

    @txn_verifier.setter
    def txn_verifier(self, verifier: TxnVerifier | None) -> None:
        self.offsets.txn_verifier = verifier

    def partition_for(self, group_id: str) -> int:
        return self.manager.partition_for(group_id)

    # -- following leadership of __consumer_offsets ----------------------------------------
    def on_election(self, partition: int) -> None:
        log.debug("Elected as the group coordinator for partition %d", partition)
        self.loader.schedule_load(partition)

    def on_resignation(self, partition: int) -> None:
        log.info("Resigned as the group coordinator for partition %d", partition)
        self.loader.unload(partition)

    def _on_topic_changed(self, name: str, info: TopicInfo | None) -> None:
        if name != OFFSETS_TOPIC:
            if info is None and self.is_active:
                self.remove_offsets_of_topic(name)
                if self._share is not None:
                    self._share.on_topic_deleted(name)
            if self._consumer_groups is not None:
                self._consumer_groups.on_topic_changed(name)
            return
        served = self.manager.served_partitions()
        led = set(led_partitions(info, self.broker_id, self.offsets_log.is_leader))
        for partition in sorted(led - served):
            self.on_election(partition)
        for partition in sorted(served - led):
            self.on_resignation(partition)

    # -- membership: JoinGroup, SyncGroup, Heartbeat, LeaveGroup ---------------------------
    async def join_group(self, request: JoinRequest) -> JoinResult:
        reply: Reply[JoinResult] = Reply()
        self.handle_join_group(request, reply.set)
        return await reply.wait()

    def handle_join_group(self, request: JoinRequest, callback: JoinCallback) -> None:
        if self._is_share_group(request.group_id):  # a group of another type
            callback(JoinResult(member_id="", error=ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        group = self._consumer_group_served(request.group_id)
        if group is not None:  # a consumer group: the consumer groups' manager exists
            if group.consumer is not None and group.consumer.members:
                self.consumer_groups.classic_members.join(group, request, callback)
                return
            self.consumer_groups.classic_join(request.group_id)
        self.joining.handle_join_group(request, callback)

    def _consumer_group_served(self, group_id: str) -> GroupMetadata | None:
        """The group of `group_id` if this coordinator serves it now and it is a consumer group
        (whose classic members the classic requests then speak for)."""
        if self.manager.validate_group_status(group_id, ApiKey.JOIN_GROUP) is not None:
            return None
        group = self.manager.get_group(group_id)
        return group if group is not None and group.consumer is not None else None

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
        reply: Reply[SyncResult] = Reply()
        self.handle_sync_group(
            group_id, generation_id, member_id, protocol_type, protocol_name, group_instance_id, assignments, reply.set
        )
        return await reply.wait()

    def handle_sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        assignments: dict[str, bytes],
        callback: SyncCallback,
    ) -> None:
        group = self._consumer_group_served(group_id)
        if group is not None:
            self.consumer_groups.classic_members.sync(
                group, generation_id, member_id, protocol_type, protocol_name, callback
            )
            return
        self.members.handle_sync_group(
            group_id, generation_id, member_id, protocol_type, protocol_name, group_instance_id, assignments, callback
        )

    def handle_heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        group = self._consumer_group_served(group_id)
        if group is not None:
            return self.consumer_groups.classic_members.heartbeat(group, member_id, generation_id)
        return self.members.handle_heartbeat(group_id, member_id, group_instance_id, generation_id)

    def handle_leave_group(self, group_id: str, leaving: list[MemberIdentity]) -> LeaveResult:
        group = self._consumer_group_served(group_id)
        if group is not None:
            return self.consumer_groups.classic_members.leave(group, leaving)
        return self.members.handle_leave_group(group_id, leaving)

    # -- consumer groups (KIP-848) ---------------------------------------------------------
    @property
    def consumer_groups_enabled(self) -> bool:
        """Whether `group.coordinator.rebalance.protocols` includes "consumer"."""
        return self.consumer_groups.settings.enabled

    async def consumer_group_heartbeat(self, request: HeartbeatRequest) -> ConsumerHeartbeatResult:
        if self._is_share_group(request.group_id):  # a group of another type
            from .consumer.manager import HeartbeatResult as ConsumerHeartbeatResult

            return ConsumerHeartbeatResult(
                ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a consumer group."
            )
        reply: Reply[ConsumerHeartbeatResult] = Reply()
        self.consumer_groups.handle_heartbeat(request, reply.set)
        return await reply.wait()

    def consumer_group_describe(self, group_id: str) -> DescribedGroup:
        if self._is_share_group(group_id):  # a group of another type
            from .consumer.manager import DescribedGroup

            return DescribedGroup(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        return self.consumer_groups.describe(group_id)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        """Kafka's ConsumerGroup.validateOffsetFetch: a consumer group member fetching offsets
        must be current (member epoch -1: not a member, not checked)."""
        group = self.manager.get_group(group_id)
        if group is None or group.consumer is None or member_epoch == -1:
            return None
        member = group.consumer.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None if member.member_epoch == member_epoch else ErrorCode.STALE_MEMBER_EPOCH

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self.consumer_groups.topic_name(topic_id)

    # -- offsets ---------------------------------------------------------------------------
    async def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        *,
        api_version: int = 8,
    ) -> dict[TopicPartition, ErrorCode]:
        reply: Reply[dict[TopicPartition, ErrorCode]] = Reply()
        self.handle_commit_offsets(
            group_id, member_id, group_instance_id, generation_id, offsets, reply.set, api_version=api_version
        )
        return await reply.wait()

    def handle_commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
        *,
        api_version: int = 8,
    ) -> None:
        """`api_version` is the OffsetCommit request's (consumer group members must use v9+)."""
        if self._is_share_group(group_id):  # share groups keep no committed offsets
            callback({tp: ErrorCode.GROUP_ID_NOT_FOUND for tp in offsets})
            return
        self.offsets.handle_commit_offsets(
            group_id, member_id, group_instance_id, generation_id, offsets, callback, api_version=api_version
        )

    async def txn_commit_offsets(
        self,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
    ) -> dict[TopicPartition, ErrorCode]:
        return await self.offsets.txn_commit_offsets(
            transactional_id,
            group_id,
            producer_id,
            producer_epoch,
            member_id,
            group_instance_id,
            generation_id,
            offsets,
        )

    def complete_transaction(
        self, offsets_partition: int, producer_id: int, committed: bool, marker_offset: int
    ) -> None:
        """The COMMIT (`committed`) or ABORT marker of `producer_id` was written at
        `marker_offset` of `__consumer_offsets` partition `offsets_partition`."""
        self.transactions.complete_transaction(offsets_partition, producer_id, committed, marker_offset)

    def handle_fetch_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool = False
    ) -> tuple[ErrorCode, dict[TopicPartition, FetchedOffset]]:
        if self._is_share_group(group_id):
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        return self.offsets.handle_fetch_offsets(group_id, partitions, require_stable)

    def handle_delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        return self.offsets.handle_delete_offsets(group_id, partitions)

    def remove_offsets_of_topic(self, topic: str) -> int:
        return self.expiration.remove_offsets_of_topic(topic)

    # -- groups ----------------------------------------------------------------------------
    def handle_list_groups(
        self, states: list[str] | None = None, types: list[str] | None = None
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        error, overviews = self.admin.handle_list_groups(states, types)
        if error != ErrorCode.COORDINATOR_NOT_AVAILABLE:
            if self._share is not None:
                overviews += [GroupOverview(*share) for share in self._share.overviews(states, types)]
        return error, overviews

    def handle_describe_group(self, group_id: str) -> tuple[ErrorCode, GroupSummary]:
        return self.admin.handle_describe_group(group_id)

    def handle_delete_groups(self, group_ids: list[str]) -> dict[str, ErrorCode]:
        share_ids = [g for g in group_ids if self._is_share_group(g)]
        errors = self.admin.handle_delete_groups([g for g in group_ids if g not in share_ids])
        for group_id in share_ids:
            error = self.manager.validate_group_status(group_id, ApiKey.DELETE_GROUPS)
            errors[group_id] = error if error is not None else self.share.delete_group(group_id)
        return errors

    # -- share groups (KIP-932) ------------------------------------------------------------
    async def share_group_heartbeat(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        rack_id: str | None,
        subscribed_topic_names: list[str] | None,
        client_id: str,
        client_host: str,
    ) -> HeartbeatResult:
        return await self.share.heartbeat(
            group_id, member_id, member_epoch, rack_id, subscribed_topic_names, client_id, client_host
        )

    def describe_share_group(self, group_id: str) -> DescribedShareGroup:
        return self.share.describe(group_id)

    async def describe_share_group_offsets(
        self, group_id: str, topics: list[tuple[str, list[int]]] | None
    ) -> OffsetsResult:
        return await self.share.describe_offsets(group_id, topics)

    async def alter_share_group_offsets(
        self, group_id: str, topics: list[tuple[str, list[tuple[int, int]]]]
    ) -> OffsetsResult:
        return await self.share.alter_offsets(group_id, topics)

    async def delete_share_group_offsets(self, group_id: str, topics: list[str]) -> OffsetsResult:
        return await self.share.delete_offsets(group_id, topics)

    def add_share_group_listener(self, on_member_leave: Callable[[str, str], None]) -> None:
        """`on_member_leave(group id, member id)` when a share group member leaves or is fenced."""
        if self._share is None:
            self._share_listeners.append(on_member_leave)
        else:
            self._share.add_share_group_listener(on_member_leave)


def _is_share_group_record(record: LoadedRecord) -> bool:
    """A share group record: its key starts with a share record type (int16)."""
    key = record.key
    if record.is_control or key is None or len(key) < 2:
        return False
    return int.from_bytes(key[:2], "big") in SHARE_RECORD_TYPES
