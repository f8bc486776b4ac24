"""The services request handlers are given, each typed as the narrow interface handlers use.

`broker.py` fills one `BrokerServices` when the broker opens and the dispatcher hands it to
every handler as `ctx.services`. Handlers call only what these interfaces name, so a type
checker sees the whole seam; the implementations live in their rooms:

| field | interface | implemented by |
|---|---|---|
| `metadata` | `MetadataStore` (cluster/store.py) | the embedded or the ZooKeeper store |
| `replica_manager` | `ReplicaService` | `replication.replica_manager.ReplicaManager` |
| `fetch_sessions` | `FetchSessionCache` | `replication.fetch_session` |
| `group_coordinator` | `GroupService` | `coordinator.group.GroupCoordinator` |
| `share_groups` | `ShareGroupService` | `coordinator.group.GroupCoordinator` (its share groups) |
| `groups` | `GroupServices`: the two above, opened on first use | `broker._GroupServices` |
| `topic_creator` | `TopicAdmin` | `cluster.topic_creation.TopicCreator` |
| `controller` | `ControllerService` | `cluster.local_controller.LocalController`, or the ZooKeeper controller |
| `producer_ids` | `ProducerIdService` | `coordinator.producer_ids.ProducerIdManager` |
| `txn_markers` | `TxnMarkerService` | `replication.txn_markers.TxnMarkerWriter` |
| `txn_coordinator` | `TransactionService` | `coordinator.transaction.TransactionCoordinator` |
| `txn_verifier` | `TxnVerifierService` | `coordinator.transaction.TransactionVerifier` |
| `share_partitions` | `SharePartitionService` | `coordinator.share.partitions.SharePartitionManager` |
| `share_coordinator` | `ShareCoordinatorService` | `coordinator.share.ShareCoordinator` |
| `share_persister` | `SharePersister` (coordinator/share/persister.py) | `coordinator.share.DefaultStatePersister` |
| `share` | `ShareServices`: the three above, opened on first use | `broker._ShareServices` |
| `transactions` | `TransactionServices`: `txn_coordinator`, opened on first use | `broker._TransactionServices` |
| `quotas` | `ClientQuotas` (quota/client_quotas.py) | itself; None: no quotas are enforced |
| `authorizer` | `Authorizer` | `security.authorizer.AclAuthorizer`; None without `authorizer.class.name` |

`config` is the broker's effective config (static, then dynamic broker configs), read anew at
each use since AlterConfigs may change it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from ...cluster.model import BrokerInfo, TopicInfo
    from ...cluster.store import MetadataStore
    from ...common.txn_marker import TxnMarker
    from ...config import BrokerConfig
    from ...coordinator.group.consumer.manager import DescribedGroup, HeartbeatRequest
    from ...coordinator.group.consumer.manager import HeartbeatResult as ConsumerHeartbeatResult
    from ...coordinator.group.formats import OffsetAndMetadata
    from ...coordinator.group.join import JoinRequest
    from ...coordinator.group.model import (
        FetchedOffset,
        GroupOverview,
        GroupSummary,
        JoinResult,
        LeaveResult,
        MemberIdentity,
        SyncResult,
    )
    from ...coordinator.group.share.results import DescribedShareGroup, HeartbeatResult, OffsetsResult
    from ...coordinator.share.combiner import PersisterStateBatch
    from ...coordinator.share.partitions import (
        AcknowledgementBatch,
        ShareFetchResult,
        ShareSessionCache,
        ShareTopicPartition,
    )
    from ...coordinator.share.persister import SharePersister, ShareState
    from ...coordinator.share.shard import SharePartitionKey
    from ...coordinator.transaction import DescribedTransaction, TransactionListing
    from ...log.config import LogConfig
    from ...log.producer_state import ProducerStateEntry
    from ...log.results import TimestampAndOffset
    from ...protocol.errors import ErrorCode
    from ...quota.client_quotas import ClientQuotas
    from ...replication.fetch_session import FetchSessionCache
    from ...replication.fetch_types import PartitionFetchRequest, PartitionFetchResult, SessionWait
    from ...replication.replica_manager import LogDirEntry, ProduceResult
    from ...replication.replica_selector import ClientMetadata
    from ...security.acl import AclOperation, ResourceType
    from ...security.acl_bindings import AclBinding, AclBindingFilter
    from ...security.delegation_tokens import TokenInformation
    from ...security.principal import KafkaPrincipal
    from ...security.token_manager import CreateTokenResult


class ReplicaService(Protocol):
    """The partitions this broker hosts: Produce, Fetch, ListOffsets, OffsetForLeaderEpoch,
    DeleteRecords and DescribeLogDirs read and write them only through these calls."""

    async def handle_produce_append(
        self,
        entries: dict[TopicPartition, bytearray],
        *,
        required_acks: int,
        timeout_ms: int,
        transactional_id: str | None,
        verifier: TxnVerifierService | None,
        api_version: int = ...,
    ) -> dict[TopicPartition, ProduceResult]: ...

    async def fetch_records(
        self,
        requested: list[tuple[TopicPartition, PartitionFetchRequest]],
        *,
        replica_id: int,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        isolation_level: int = 0,
        session_wait: SessionWait | None = None,
        client_metadata: ClientMetadata | None = None,
    ) -> dict[TopicPartition, PartitionFetchResult]: ...

    def record_follower_session(
        self, replica_id: int, session: list[tuple[TopicPartition, PartitionFetchRequest]]
    ) -> None: ...

    def fetch_offset_for_timestamp(
        self,
        topic: str,
        index: int,
        timestamp: int,
        *,
        replica_id: int,
        isolation_level: int,
        current_leader_epoch: int = -1,
    ) -> TimestampAndOffset | None: ...

    def legacy_fetch_offsets(
        self, topic: str, index: int, max_num_offsets: int, *, replica_id: int, isolation_level: int
    ) -> list[int]: ...

    def end_offset_for_epoch(
        self, topic: str, index: int, leader_epoch: int, current_leader_epoch: int, *, leader_only: bool = True
    ) -> tuple[int, int]: ...

    def delete_records(self, topic: str, index: int, offset: int) -> int: ...

    def describe_log_dirs(self) -> list[tuple[str, list[LogDirEntry]]]: ...

    def alter_replica_log_dirs(self, destinations: Mapping[TopicPartition, str]) -> dict[TopicPartition, ErrorCode]: ...

    def is_log_dir_online(self, log_dir: str) -> bool: ...

    def is_offline(self, topic: str, index: int) -> bool: ...

    def leader_hint(self, topic: str, index: int) -> tuple[int, int] | None: ...

    def log_config(self, topic: str, index: int) -> LogConfig | None: ...

    def active_producers(self, topic: str, index: int) -> list[ProducerStateEntry]: ...


class TxnMarkerService(Protocol):
    """Transaction markers appended as partition leader (WriteTxnMarkers, and the transaction
    coordinator for the partitions this broker leads)."""

    async def write_txn_markers(self, markers: list[TxnMarker]) -> list[dict[TopicPartition, ErrorCode]]: ...


class GroupService(Protocol):
    """The group coordinator as the group APIs and FindCoordinator use it."""

    def partition_for(self, group_id: str) -> int: ...

    async def join_group(self, request: JoinRequest) -> JoinResult: ...

    async def sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        assignments: dict[str, bytes],
    ) -> SyncResult: ...

    async def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        *,
        api_version: int = 8,
    ) -> dict[TopicPartition, ErrorCode]: ...

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
    ) -> dict[TopicPartition, ErrorCode]: ...

    def handle_heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode: ...

    def handle_leave_group(self, group_id: str, leaving: list[MemberIdentity]) -> LeaveResult: ...

    def handle_fetch_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool = False
    ) -> tuple[ErrorCode, dict[TopicPartition, FetchedOffset]]: ...

    def handle_delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]: ...

    def handle_list_groups(
        self, states: list[str] | None = None, types: list[str] | None = None
    ) -> tuple[ErrorCode, list[GroupOverview]]: ...

    def handle_describe_group(self, group_id: str) -> tuple[ErrorCode, GroupSummary]: ...

    def handle_delete_groups(self, group_ids: list[str]) -> dict[str, ErrorCode]: ...

    @property
    def consumer_groups_enabled(self) -> bool: ...

    async def consumer_group_heartbeat(self, request: HeartbeatRequest) -> ConsumerHeartbeatResult: ...

    def consumer_group_describe(self, group_id: str) -> DescribedGroup: ...

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode | None: ...


class SharePartitionService(Protocol):
    """The share partitions this broker leads, and share sessions, as ShareFetch and
    ShareAcknowledge use them."""

    @property
    def sessions(self) -> ShareSessionCache: ...

    def record_lock_duration_ms(self, group_id: str) -> int: ...

    async def fetch(
        self,
        group_id: str,
        member_id: str,
        partitions: Sequence[ShareTopicPartition],
        *,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        max_records: int,
    ) -> dict[ShareTopicPartition, ShareFetchResult]: ...

    async def acknowledge(
        self, group_id: str, member_id: str, acknowledgements: Mapping[ShareTopicPartition, list[AcknowledgementBatch]]
    ) -> dict[ShareTopicPartition, ErrorCode]: ...

    async def release_session(self, group_id: str, member_id: str) -> ErrorCode: ...

    def connection_closed(self, connection_id: str) -> None: ...


class TopicAdmin(Protocol):
    """Creating topics: by CreateTopics, and automatically on Metadata requests."""

    @property
    def auto_create_enabled(self) -> bool: ...

    def auto_create(self, name: str) -> TopicInfo: ...

    def create(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        configs: dict[str, str] | None = None,
        assignments: dict[int, list[int]] | None = None,
    ) -> TopicInfo: ...


class ReplicaAssignmentView(Protocol):
    """A partition being reassigned: all its replicas, those being added and those being removed."""

    @property
    def replicas(self) -> list[int]: ...

    @property
    def adding(self) -> list[int]: ...

    @property
    def removing(self) -> list[int]: ...


class ControllerService(Protocol):
    """What ControlledShutdown, ElectLeaders and the partition reassignment APIs ask of the controller."""

    async def controlled_shutdown(
        self, broker_id: int, broker_epoch: int
    ) -> tuple[ErrorCode, list[TopicPartition]]: ...

    async def elect_leaders(
        self, election_type: int, partitions: list[TopicPartition] | None
    ) -> dict[TopicPartition, tuple[ErrorCode, str | None]]: ...

    async def move_leadership(self, topic: str, partition: int, broker_id: int) -> tuple[ErrorCode, str | None]: ...

    async def alter_partition_reassignments(
        self, reassignments: dict[TopicPartition, list[int] | None]
    ) -> ErrorCode | dict[TopicPartition, tuple[ErrorCode, str | None]]: ...

    async def list_partition_reassignments(
        self, partitions: list[TopicPartition] | None
    ) -> ErrorCode | Mapping[TopicPartition, ReplicaAssignmentView]: ...


class ProducerIdService(Protocol):
    async def generate_producer_id_async(self) -> int: ...


class ShareCoordinatorService(Protocol):
    """The share coordinator as the share-group state APIs and FindCoordinator use it."""

    @property
    def is_active(self) -> bool: ...

    def partition_for(self, key: SharePartitionKey) -> int: ...

    async def initialize_state(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> ShareState: ...

    async def read_state(self, key: SharePartitionKey, leader_epoch: int) -> ShareState: ...

    async def write_state(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: list[PersisterStateBatch],
    ) -> ShareState: ...

    async def delete_state(self, key: SharePartitionKey) -> ShareState: ...

    async def read_summary(self, key: SharePartitionKey, leader_epoch: int) -> ShareState: ...


class TransactionService(Protocol):
    """The transaction coordinator as the transaction APIs and FindCoordinator use it."""

    def partition_for(self, transactional_id: str) -> int: ...

    async def init_producer_id(
        self,
        transactional_id: str,
        transaction_timeout_ms: int,
        expected_producer_id: int,
        expected_producer_epoch: int,
    ) -> tuple[ErrorCode, int, int]: ...

    async def add_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]: ...

    async def verify_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]: ...

    async def add_offsets(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str
    ) -> ErrorCode: ...

    async def end_txn(
        self, transactional_id: str, producer_id: int, producer_epoch: int, committed: bool
    ) -> tuple[ErrorCode, int, int]: ...

    def describe_transaction(self, transactional_id: str) -> DescribedTransaction: ...

    def list_transactions(
        self, producer_ids: list[int], states: list[str], duration_ms: int = -1
    ) -> TransactionListing: ...


class TxnVerifierService(Protocol):
    """Produce-path verification of transactional batches (KIP-890 part 1)."""

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        *,
        abortable_error_supported: bool = True,
    ) -> dict[TopicPartition, ErrorCode]: ...


class Authorizer(Protocol):
    """Kafka's authorizer as KafkaApis uses it (handlers ask it through the checks of
    `handlers/support/authorization.py`, which call `handlers/support/auth.py`)."""

    def authorize(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: str,
        *,
        log_if_denied: bool = True,
    ) -> bool: ...

    def authorize_by_resource_type(
        self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool: ...

    def authorized_operations(
        self, principal: KafkaPrincipal, host: str, resource_type: ResourceType, resource_name: str
    ) -> int: ...

    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]: ...

    async def create_acls(self, bindings: list[AclBinding]) -> list[tuple[ErrorCode, str | None]]: ...

    async def delete_acls(
        self, filters: list[AclBindingFilter]
    ) -> list[list[tuple[AclBinding, ErrorCode, str | None]]]: ...


class ShareGroupService(Protocol):
    """The group coordinator's share groups (KIP-932) as the share group APIs use them."""

    async def share_group_heartbeat(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        rack_id: str | None,
        subscribed_topic_names: list[str] | None,
        client_id: str,
        client_host: str,
    ) -> HeartbeatResult: ...

    def describe_share_group(self, group_id: str) -> DescribedShareGroup: ...

    async def describe_share_group_offsets(
        self, group_id: str, topics: list[tuple[str, list[int]]] | None
    ) -> OffsetsResult: ...

    async def alter_share_group_offsets(
        self, group_id: str, topics: list[tuple[str, list[tuple[int, int]]]]
    ) -> OffsetsResult: ...

    async def delete_share_group_offsets(self, group_id: str, topics: list[str]) -> OffsetsResult: ...


class DelegationTokenService(Protocol):
    """The broker's delegation tokens (security.token_manager.DelegationTokenManager), as the four
    delegation-token APIs use them."""

    @property
    def enabled(self) -> bool: ...

    async def create(
        self, owner: KafkaPrincipal, requester: KafkaPrincipal, renewers: list[KafkaPrincipal], max_lifetime_ms: int
    ) -> CreateTokenResult: ...

    async def renew(
        self, principal: KafkaPrincipal, token_hmac_bytes: bytes, period_ms: int
    ) -> tuple[ErrorCode, int]: ...

    async def expire(
        self, principal: KafkaPrincipal, token_hmac_bytes: bytes, period_ms: int
    ) -> tuple[ErrorCode, int]: ...

    def tokens(self, eligible: Callable[[TokenInformation], bool]) -> list[tuple[TokenInformation, bytes]]: ...


class GroupCoordinatorService(GroupService, ShareGroupService, Protocol):
    """The group coordinator, serving the classic and consumer groups and the share groups."""


class GroupServices(Protocol):
    """The group coordinator, opened on first use (or at start when `__consumer_offsets` exists)."""

    def coordinator(self) -> GroupCoordinatorService: ...


class TransactionServices(Protocol):
    """The transaction coordinator, opened on first use (or at start when `__transaction_state`
    exists)."""

    def coordinator(self) -> TransactionService: ...


class ShareServices(Protocol):
    """The share partitions, the share coordinator and the persister (KIP-932), opened together
    on first use (or at start when `__share_group_state` exists)."""

    @property
    def is_open(self) -> bool: ...

    def partitions(self) -> SharePartitionService: ...

    def coordinator(self) -> ShareCoordinatorService: ...

    def persister(self) -> SharePersister: ...


class ListenerSecurityService(Protocol):
    """The listeners' TLS and SASL settings (server.listener_security.ListenerSecurity)."""

    def validate(self, config: BrokerConfig) -> None: ...


@dataclass(frozen=True, eq=False, repr=False)  # never compared nor printed: no methods to generate
class BrokerServices:
    """Everything a handler may use besides its request."""

    broker_id: int
    api_versions: list[tuple[int, int, int]]  # (api key, min version, max version) advertised
    metadata: MetadataStore
    replica_manager: ReplicaService
    fetch_sessions: FetchSessionCache
    groups: GroupServices
    topic_creator: TopicAdmin
    controller: ControllerService
    producer_ids: ProducerIdService
    txn_markers: TxnMarkerService
    transactions: TransactionServices
    current_config: Callable[[], BrokerConfig]
    live_brokers: Callable[[str], list[BrokerInfo]]  # with their endpoint on a listener
    txn_verifier: TxnVerifierService | None = None  # None: produce skips transaction verification
    authorizer: Authorizer | None = None  # None: no authorizer.class.name, everything is allowed
    listener_security: ListenerSecurityService | None = None  # None: checks no listener change
    share: ShareServices | None = None  # None: the share partitions and share-group state are not served
    delegation_tokens: DelegationTokenService | None = None  # None: delegation tokens are not enabled
    quotas: ClientQuotas | None = None  # None: no client quotas are enforced

    @property
    def config(self) -> BrokerConfig:
        """The broker's effective config now."""
        return self.current_config()

    @property
    def group_coordinator(self) -> GroupService:
        """The group coordinator, opened on first use."""
        return self.groups.coordinator()

    @property
    def share_groups(self) -> ShareGroupService | None:
        """The group coordinator's share groups, opened on first use."""
        return self.groups.coordinator()

    @property
    def txn_coordinator(self) -> TransactionService:
        """The transaction coordinator, opened on first use."""
        return self.transactions.coordinator()

    @property
    def share_partitions(self) -> SharePartitionService | None:
        """None: ShareFetch/ShareAcknowledge unsupported."""
        return None if self.share is None else self.share.partitions()

    @property
    def share_coordinator(self) -> ShareCoordinatorService | None:
        """None: the share-group state APIs are not served."""
        return None if self.share is None else self.share.coordinator()

    @property
    def share_persister(self) -> SharePersister | None:
        """The share-partitions' durable state (KIP-932)."""
        return None if self.share is None else self.share.persister()
