"""One broker wired together from its config: the one place that knows every room.

    broker = Broker(BrokerConfig.from_file(...))
    anyio.run(broker.run)           # serves until SIGINT/SIGTERM or broker.shutdown()

`open()` checks what the broker cannot honour (unserved security protocols, SASL and TLS
settings, an unknown authorizer: each stops it with one line), locks `log.dirs`, binds the
listeners, and opens the services in order: the metadata store (embedded, or ZooKeeper with
`zookeeper.connect`), the log manager (logs load in the background), the replica manager, the
group and transaction coordinators on their internal topics, producer ids, the authorizer and the
controller. `run()` serves: the socket server dispatching to the handlers of
`handlers/support/registry.py`, which reach the services through `ctx.services` (the typed
`BrokerServices` built by `services()`), plus the timer, the maintenance tasks and `/metrics`.

In a cluster the broker also runs follower fetchers, registers once everything is open, and
shuts down in a controlled way on SIGTERM (`controlled.shutdown.enable`). `shutdown()` may be
called from any thread; `serving` (a threading.Event) is set once the broker serves, for whoever
runs it on a thread of its own (`pykbroker.testkit.embedded`). Only the command line and the test
harness (`testkit/`) import this module.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import anyio
from anyio.abc import SocketListener, TaskGroup

from .cluster.embedded import EmbeddedMetadataStore
from .cluster.local_controller import LocalController
from .cluster.loop_bridge import LoopBridge
from .cluster.model import BrokerInfo, TopicInfo
from .cluster.store import CLIENT_ENTITY_TYPE, IP_ENTITY_TYPE, USER_ENTITY_TYPE, MetadataStore
from .cluster.topic_creation import TopicCreator
from .common.time import SYSTEM_CLOCK
from .common.timer import SystemTimer
from .config import BrokerConfig, ConfigError, topic_config_values
from .coordinator.group import offsets_topic
from .coordinator.internal_topic import follow_topic
from .coordinator.producer_ids import FileBlockStore, ProducerIdManager, ZkBlockStore
from .coordinator.share import state_topic
from .coordinator.transaction import txn_topic
from .handlers.support.registry import deferred_registry
from .handlers.support.services import BrokerServices
from .log.descriptor_limit import open_file_limit, report_open_file_limit, segment_cache_capacity
from .log.dir_lock import LogDirInUse, LogDirLocks, LogDirUnusable
from .log.manager import LogManager
from .maintenance import run_maintenance
from .protocol.errors import ErrorCode
from .quota.client_quotas import ClientQuotas
from .quota.connection_quotas import ConnectionQuotas, read_limits
from .replication.fetch_session import FetchSessionCache
from .replication.inter_broker_security import InterBrokerSecurity
from .replication.replica_manager import ReplicaManager, open_broker_connection
from .replication.txn_markers import TxnMarkerWriter
from .security.sasl import SASL_PROTOCOLS
from .security.sasl.errors import SaslConfigError
from .server.connection import ListenerAuthentication
from .server.dispatcher import Dispatcher
from .server.faults import FaultSeam
from .server.listener_security import ListenerSecurity
from .server.request_metrics import RequestMetrics
from .server.socket_server import (
    SERVED_SECURITY_PROTOCOLS,
    TLS_SECURITY_PROTOCOLS,
    BoundListener,
    SocketServer,
    bind_listener,
)

if TYPE_CHECKING:
    from anyio.lowlevel import EventLoopToken

    from .cluster.controller.controller import Controller
    from .cluster.zk_data import BrokerRegistration
    from .cluster.zk_store import ZkMetadataStore
    from .common.topic_partition import TopicPartition
    from .coordinator.group import GroupCoordinator
    from .coordinator.share import DefaultStatePersister, ShareCoordinator
    from .coordinator.share.partitions import SharePartitionManager
    from .coordinator.transaction import TransactionCoordinator, TransactionVerifier
    from .replication.broker_client import Connect
    from .security.authorizer import AclAuthorizer, AclStore
    from .security.delegation_tokens import TokenStore
    from .security.sasl.client import SaslClientCredentials
    from .security.ssl_config import ServerSsl
    from .security.token_manager import DelegationTokenManager
    from .server.faults import FaultInjector
    from .server.metrics_http import Health

log = logging.getLogger(__name__)

HALT_GRACE_S = 0.2  # how long a broker left without log directories answers before it halts

_Service = TypeVar("_Service")


def _is_internal_partition(key: tuple[str, int]) -> bool:
    return key[0] in (
        offsets_topic.OFFSETS_TOPIC,
        txn_topic.TRANSACTION_STATE_TOPIC,
        state_topic.SHARE_GROUP_STATE_TOPIC,
    )


def halt_process(exit_code: int) -> None:
    """End the process now, without a clean shutdown (Kafka's Exit.halt): the log lines so far
    are written out first."""
    logging.shutdown()
    os._exit(exit_code)


def _opened(service: _Service | None) -> _Service:
    """A service set by `Broker.open()`; a clear error when the broker is not (or no longer) open."""
    if service is None:
        raise RuntimeError("broker not open")
    return service


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.static_config = config  # server.properties and --override
        self.config = config  # the effective config: static, then dynamic broker configs
        self.broker_id: int = config.broker_id
        self.listeners: list[BoundListener] = []
        self.listener_tls: dict[str, ServerSsl] = {}  # TLS listeners' server sides, by name
        self.listener_security: ListenerSecurity | None = None  # set by open(): what dynamic configs change
        self.inter_broker_security = InterBrokerSecurity()
        self.log_dir_locks: LogDirLocks | None = None
        self.registry = deferred_registry()
        self.api_versions = sorted((key, e.min_version, e.max_version) for key, e in self.registry.items())
        # set by open(); None until then, and after a failed open() for what was not reached
        self.metadata: MetadataStore | None = None
        self.controller: LocalController | Controller | None = None
        self.bridge = LoopBridge()
        self.serving = threading.Event()  # set once run() serves; other threads wait on it
        self._loop_token: EventLoopToken | None = None  # run()'s event loop, for shutdown() from other threads
        self._loop_thread: int | None = None
        self._shutdown_requested = False
        self.timer = SystemTimer(SYSTEM_CLOCK)  # the one timer: purgatories, group timeouts
        self.topic_creator: TopicCreator | None = None
        self.log_manager: LogManager | None = None
        self.replica_manager: ReplicaManager | None = None
        self.producer_ids: ProducerIdManager | None = None
        # groups: opened with `__consumer_offsets` or on first use (_open_groups)
        self._group_coordinator: GroupCoordinator | None = None
        self._groups_followed = False
        # share groups (KIP-932): opened with `__share_group_state` or on first use (_open_share_groups)
        self._share_partitions: SharePartitionManager | None = None
        self._share_coordinator: ShareCoordinator | None = None
        self._share_persister: DefaultStatePersister | None = None
        self._share_groups_followed = False
        self._tasks: TaskGroup | None = None  # the task group of run(), for services opened later
        self.txn_markers: TxnMarkerWriter | None = None
        # transactions: opened with `__transaction_state` or on first use (_open_transactions)
        self._txn_coordinator: TransactionCoordinator | None = None
        self._txn_verifier: TransactionVerifier | None = None
        self._transactions_followed = False
        self.authorizer: AclAuthorizer | None = None  # None without authorizer.class.name
        self.token_manager: DelegationTokenManager | None = None  # None without delegation.token.secret.key
        self.fetch_sessions = FetchSessionCache(config["max.incremental.fetch.session.cache.slots"])
        self.client_quotas = ClientQuotas(
            int(config["quota.window.num"]),
            int(config["quota.window.size.seconds"]),
            int(config["controller.quota.window.num"]),
            int(config["controller.quota.window.size.seconds"]),
        )
        self.connection_quotas = ConnectionQuotas(
            [listener.name for listener in config.listeners],
            self.inter_broker_listener,
            int(config["quota.window.num"]),
            int(config["quota.window.size.seconds"]),
        )
        self._reconfigure_connection_quotas()
        self.request_metrics = RequestMetrics()
        self.metrics_socket: socket.socket | None = None  # pykbroker.metrics.listener, bound by open()
        self.fault_seam = FaultSeam()  # injected faults for client tests (server/faults/), opened on first use
        # how the broker stops when no log directory is left: at once, with this exit code, as
        # Kafka halts (the in-process test broker replaces it)
        self.halt: Callable[[int], None] = halt_process
        self._cancel_scope: anyio.CancelScope | None = None
        self.started = False
        self.stopping = False

    @property
    def faults(self) -> FaultInjector:
        """The broker's injected faults (their modules are imported on first use)."""
        return self.fault_seam.injector

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def in_cluster(self) -> bool:
        """True with `zookeeper.connect`: the broker is one of a ZooKeeper-managed cluster."""
        return bool(self.config.get("zookeeper.connect"))

    def open(self) -> None:
        """Check what must be refused, lock the log directories, bind the listeners and open
        the stores: everything that can fail before serving. On a failure nothing stays open."""
        started_at_ms = SYSTEM_CLOCK.monotonic_ms()
        self._refuse_unserved_security_protocols()
        self._open_tls()
        self._refuse_unknown_authorizer()
        try:
            self.log_dir_locks = self._lock_log_dirs()
            self.listeners = self._bind_listeners()
            self.metrics_socket = self._bind_metrics_listener()
            report_open_file_limit()
            self.metadata = metadata = self._open_metadata_store()
            self.authorizer = self._open_authorizer(metadata)
            self.token_manager = self._open_token_manager(metadata)
            self._open_services(metadata)
            self._start_tls_with_dynamic_configs()
            self.listener_security = ListenerSecurity(
                self.listeners, self.listener_tls, self._listener_authentication(metadata)
            )
            self._apply_dynamic_configs()  # the listeners' dynamic settings (they start with the static ones)
        except BaseException:
            self.close()
            raise
        log.info(
            "Broker %d opened in %.0f ms (cluster id %s)",
            self.broker_id,
            SYSTEM_CLOCK.monotonic_ms() - started_at_ms,
            metadata.cluster_id,
        )

    def _refuse_unserved_security_protocols(self) -> None:
        """A listener that asks for TLS or SASL must not be served as plaintext: refuse to start."""
        for listener in self.config.listeners:
            protocol = self.config.security_protocol_of(listener.name)
            if protocol not in SERVED_SECURITY_PROTOCOLS:
                raise ConfigError(
                    "listeners",
                    f"Listener {listener} uses security protocol "
                    f"{protocol}, which this broker does not serve (only "
                    f"{', '.join(sorted(SERVED_SECURITY_PROTOCOLS))})",
                )
        protocol = self.config["security.inter.broker.protocol"]
        if protocol not in SERVED_SECURITY_PROTOCOLS:
            raise ConfigError(
                "security.inter.broker.protocol",
                f"security.inter.broker.protocol={protocol} is not served by this "
                f"broker (only {', '.join(sorted(SERVED_SECURITY_PROTOCOLS))})",
            )
        self._refuse_undefined_secured_inter_broker_listener()
        self._check_sasl_settings()

    def _refuse_undefined_secured_inter_broker_listener(self) -> None:
        """An inter-broker listener with TLS or SASL that no listener defines has no ssl.*/sasl.*
        settings to connect with: Kafka's requirement (a listener name defined in
        advertised.listeners). The default PLAINTEXT inter-broker listener of a single broker
        without one stays accepted, as before."""
        name = self.inter_broker_listener
        advertised = [listener.name for listener in self.config.advertised_listeners]
        if name in advertised or self._inter_broker_protocol() == "PLAINTEXT":
            return
        key = (
            "inter.broker.listener.name"
            if self.config.get("inter.broker.listener.name")
            else ("security.inter.broker.protocol")
        )
        raise ConfigError(
            key,
            "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid "
            f"options based on currently configured listeners are {','.join(advertised)}",
        )

    def _check_sasl_settings(self) -> None:
        """Every SASL listener's mechanisms and JAAS configs, and this broker's own credentials
        when the inter-broker listener is a SASL one: refused at start, as Kafka refuses them."""
        try:
            for listener in self.config.listeners:
                if self.config.security_protocol_of(listener.name) in SASL_PROTOCOLS:
                    from .security.sasl.config import SaslListenerSettings

                    SaslListenerSettings.from_config(self.config, listener.name)
            self.inter_broker_sasl()
        except SaslConfigError as error:
            raise ConfigError(error.key, str(error)) from None

    def inter_broker_sasl(self) -> SaslClientCredentials | None:
        """The credentials this broker authenticates with to the others (None without SASL)."""
        name = self.inter_broker_listener
        if self._inter_broker_protocol() not in SASL_PROTOCOLS:
            return None
        from .security.sasl.client import SaslClientCredentials
        from .security.sasl.config import inter_broker_credentials

        return SaslClientCredentials(*inter_broker_credentials(self.config, name))

    def inter_broker_connect(self) -> Connect:
        """How this broker opens connections to the others: `BrokerConnection.open` with the
        inter-broker listener's security (TLS, then SASL), for the follower fetchers, controlled
        shutdown, the transaction marker sender and the KIP-890 verifier. The client's module is
        imported with the first connection (a single broker without transactions opens none)."""
        return partial(open_broker_connection, security=self.inter_broker_security)

    def _listener_authentication(self, metadata: MetadataStore) -> dict[str, ListenerAuthentication]:
        """How connections authenticate on each SASL listener."""
        authentication: dict[str, ListenerAuthentication] = {}
        if not any(self.config.security_protocol_of(listener.name) in SASL_PROTOCOLS for listener in self.listeners):
            return authentication
        from .security.sasl.config import SaslListenerSettings
        from .security.sasl.credentials import scram_credential_lookup

        credentials = scram_credential_lookup(metadata)
        token_credentials = self.token_manager.credential if self.token_manager is not None else None
        for listener in self.listeners:
            protocol = self.config.security_protocol_of(listener.name)
            if protocol in SASL_PROTOCOLS:
                authentication[listener.name] = ListenerAuthentication(
                    protocol,
                    SaslListenerSettings.from_config(self.config, listener.name),
                    credentials,
                    lambda: int(self.config["connection.failed.authentication.delay.ms"]),
                    token_credentials,
                )
        return authentication

    def _open_tls(self) -> None:
        """The TLS contexts of the SSL/SASL_SSL listeners and of inter-broker connections, from
        the `ssl.*` keys (per-listener overrides included): a key store that cannot be read, a
        wrong password or a setting that cannot be honoured stops the broker here (ConfigError)."""
        for listener in self.config.listeners:
            if self.config.security_protocol_of(listener.name) in TLS_SECURITY_PROTOCOLS:
                from .security.ssl_config import ServerSsl

                self.listener_tls[listener.name] = ServerSsl.for_listener(self.config, listener.name)
        name = self.inter_broker_listener
        protocol = self._inter_broker_protocol()
        context = None
        if protocol in TLS_SECURITY_PROTOCOLS:
            from .security.ssl_config import client_ssl_context

            context = client_ssl_context(self.config, name)
        self.inter_broker_security = InterBrokerSecurity(protocol, context, self.inter_broker_sasl())

    def _start_tls_with_dynamic_configs(self) -> None:
        """The TLS listeners start with the stored dynamic configs over the static ones, as Kafka
        builds its listeners from both at start: a stored key store is taken as it is, without
        the checks of a change while running (its certificate's DN may differ from the static
        one's); one that cannot be used stops the broker (ConfigError), as a static one does."""
        if not self.listener_tls:
            return
        from .security.ssl_config import ServerSsl, ssl_fingerprint

        for listener in self.listeners:
            started = self.listener_tls.get(listener.name)
            if started is not None and ssl_fingerprint(self.config, listener.name) != started.fingerprint:
                tls = ServerSsl.for_listener(self.config, listener.name)
                self.listener_tls[listener.name] = listener.tls = tls

    @property
    def authorizer_configured(self) -> bool:
        """True with `authorizer.class.name` set: only then are the ACL modules imported."""
        return bool((self.config.get("authorizer.class.name") or "").strip())

    def _refuse_unknown_authorizer(self) -> None:
        """An authorizer class this broker does not implement, or settings Kafka's AclAuthorizer
        refuses, stop the broker before it touches anything."""
        if not self.authorizer_configured:
            return
        from .security.authorizer import AuthorizerConfigError, authorizer_settings

        try:
            authorizer_settings(self.config)
        except AuthorizerConfigError as error:
            raise ConfigError(error.key, str(error)) from None

    def _lock_log_dirs(self) -> LogDirLocks:
        """Kafka's `.lock`: a second broker on the same directories stops here, touching nothing."""
        key = self.config.log_dirs_key
        try:
            return LogDirLocks.acquire(self.config.log_dirs)
        except LogDirInUse as error:
            raise RuntimeError(f"Failed to acquire the lock on {error.directory} ({key}): {error.reason}") from None
        except LogDirUnusable as error:
            raise ConfigError(key, f"Cannot use {error.directory} ({key}): {error.reason}") from None

    def _bind_listeners(self) -> list[BoundListener]:
        bound: list[BoundListener] = []
        try:
            for name, host, port in self.config.listeners:
                listener = bind_listener(name, host, port)
                listener.security_protocol = self.config.security_protocol_of(name)
                listener.tls = self.listener_tls.get(name)
                # Kafka closes connections idle for connections.max.idle.ms, a handshake included
                listener.handshake_timeout_s = self.config["connections.max.idle.ms"] / 1000
                bound.append(listener)
        except BaseException:
            for listener in bound:
                listener.sock.close()
            raise
        return bound

    def _bind_metrics_listener(self) -> socket.socket | None:
        address = self.config.metrics_listener
        if address is None:
            return None
        from .server.metrics_http import bind_metrics_socket  # only where metrics are served

        return bind_metrics_socket(*address)

    def _open_services(self, metadata: MetadataStore) -> None:
        """Open the services on `metadata` (already `self.metadata`), each set on the broker as
        soon as it exists so that `close()` stops it if a later one fails."""
        self._apply_dynamic_configs()
        metadata.add_broker_config_listener(lambda _entity, _configs: self._apply_dynamic_configs())
        self._follow_quota_configs(metadata)
        self.topic_creator = topic_creator = TopicCreator(metadata, self.config)
        self.log_manager = log_manager = LogManager(
            self.config.log_dirs,
            topic_config_values({}, self.config),
            fsync_before_ack=bool(self.config["pykbroker.fsync.before.ack"]),
            topic_configs=self._topic_log_config,
            time_ms=self.timer.clock.now_ms,
            max_open_segments=segment_cache_capacity(open_file_limit()),
            recovery_threads_per_data_dir=int(self.config["num.recovery.threads.per.data.dir"]),
            load_logs=False,
        )
        self.replica_manager = replica_manager = ReplicaManager(
            self.broker_id,
            self.config,
            log_manager,
            metadata,
            timer=self.timer,
            inter_broker_listener=self.inter_broker_listener,
            connect=self.inter_broker_connect(),
        )
        self.fetch_sessions.follow(replica_manager)
        log_manager.dir_failures.add_listener(lambda log_dir: self.bridge.post(self._handle_log_dir_failure, log_dir))
        self._start_loading_logs(log_manager, replica_manager)
        replica_manager.startup(delete_stray_logs=self.in_cluster)
        self.txn_markers = TxnMarkerWriter(replica_manager)
        self._follow_offsets_topic(metadata, topic_creator)
        self._follow_share_group_state(metadata, topic_creator)
        self.producer_ids = ProducerIdManager(self._producer_id_block_store(metadata))
        self._follow_transaction_state(metadata, topic_creator)
        metadata.register()
        self.controller = self._start_controller(metadata)

    def _handle_log_dir_failure(self, log_dir: str) -> None:
        """A log directory failed (on the loop, told by the log manager's failure channel): its
        partitions go offline, the metadata store tells the controller, and a broker with no
        online log directory left halts, as Kafka's does. So does a single broker whose metadata
        state was in that directory (as KRaft's broker whose `metadata.log.dir` failed)."""
        replica_manager, metadata, log_manager = self.replica_manager, self.metadata, self.log_manager
        if replica_manager is None or metadata is None or log_manager is None:
            return
        offline = replica_manager.handle_log_dir_failure(log_dir)
        metadata.log_dir_failed(self.broker_id, log_dir, offline)  # first: the controller hears of it
        if not log_manager.online_dirs():
            log.error("Shutdown broker because all log dirs in %s have failed", ", ".join(log_manager.log_dirs))
            self._halt_soon()
        elif isinstance(metadata, EmbeddedMetadataStore) and os.path.abspath(metadata.state_dir) == log_dir:
            log.error("Shutdown broker because the metadata log dir %s has failed", log_dir)
            self._halt_soon()

    def _halt_soon(self) -> None:
        """Halt with exit code 1 once the answers already given (the KAFKA_STORAGE_ERROR of the
        request that hit the failure) have reached the sockets: a moment later, on the loop."""
        asyncio.get_running_loop().call_later(HALT_GRACE_S, self.halt, 1)

    def _start_loading_logs(self, log_manager: LogManager, replica_manager: ReplicaManager) -> None:
        """Load the logs on disk in the background (`num.recovery.threads.per.data.dir` threads
        per log dir), each partition served as soon as its log is in. The internal topics'
        partitions load first and are waited for: the coordinators start on them."""
        log_manager.start_loading(
            lambda key: self.bridge.post(replica_manager.log_loaded, *key),
            first=_is_internal_partition,
        )
        log_manager.wait_until_loaded(_is_internal_partition)

    # -- groups ------------------------------------------------------------------------------
    def _follow_offsets_topic(self, metadata: MetadataStore, topic_creator: TopicCreator) -> None:
        """`__consumer_offsets` is created on first use as before; the group coordinator opens as
        soon as the topic exists (at once when it is on disk or in the metadata, so that its
        partitions load at start) or a group request needs it."""
        topic_creator.register_internal_topic(
            offsets_topic.OFFSETS_TOPIC,
            lambda: offsets_topic.ensure_created(metadata, topic_creator, self.config),
        )
        _opened(self.txn_markers).on_offsets_marker = self._complete_offsets_transaction

        def on_topic_changed(name: str, info: TopicInfo | None) -> None:
            if name == offsets_topic.OFFSETS_TOPIC and info is not None and self._groups_followed:
                self._open_groups()

        self._groups_followed = True
        follow_topic(metadata, offsets_topic.OFFSETS_TOPIC, on_topic_changed)

    @property
    def group_coordinator(self) -> GroupCoordinator | None:
        """The group coordinator on `__consumer_offsets` (None before open)."""
        self._open_groups()
        return self._group_coordinator

    def _open_groups(self) -> None:
        """The group coordinator, opened once the broker is open. Opened on a first group request,
        its modules are imported then, on the event loop, once. A broker shutting down in a
        controlled way still serves groups; a closed one (or one stopped before serving) opens nothing."""
        if self._group_coordinator is not None or not self._groups_followed or (self.stopping and self._tasks is None):
            return
        token = self._loop_token
        if self._tasks is not None and token is not None and threading.get_ident() != self._loop_thread:
            from anyio.from_thread import run_sync  # asked from another thread: opened on the loop

            run_sync(self._open_groups, token=token)
            return
        self._open_group_coordinator(_opened(self.metadata), _opened(self.replica_manager))
        if self._tasks is not None:  # opened while serving: its loop joins the broker's tasks
            self._tasks.start_soon(_opened(self._group_coordinator).run)

    def _open_group_coordinator(self, metadata: MetadataStore, replica_manager: ReplicaManager) -> None:
        """The group coordinator on `__consumer_offsets`, connected to the share persister and to
        the transactions; it loads the partitions this broker leads and follows their leadership."""
        from .coordinator.group import GroupCoordinator
        from .replication.coordinator_partitions import CoordinatorLogLoader, CoordinatorPartitionWriter

        self._group_coordinator = group_coordinator = GroupCoordinator.for_broker(
            self.broker_id,
            self.config,
            CoordinatorPartitionWriter(replica_manager),
            CoordinatorLogLoader(replica_manager, int(self.config["offsets.load.buffer.size"])),
            metadata,
            self.timer,
        )
        group_coordinator.share_persister_source = lambda: _opened(self.share_persister)
        self._connect_group_coordinator_to_transactions(replica_manager, group_coordinator)
        group_coordinator.startup()

    def _group_partition_for(self, group_id: str) -> int:
        """The `__consumer_offsets` partition of a group (AddOffsetsToTxn), from the group coordinator."""
        return _opened(self.group_coordinator).partition_for(group_id)

    def _complete_offsets_transaction(
        self, offsets_partition: int, producer_id: int, committed: bool, marker_offset: int
    ) -> None:
        """A transaction marker written to `__consumer_offsets`: the group coordinator completes
        the producer's pending transactional offsets."""
        _opened(self.group_coordinator).complete_transaction(offsets_partition, producer_id, committed, marker_offset)

    # -- transactions -----------------------------------------------------------------------
    def _follow_transaction_state(self, metadata: MetadataStore, topic_creator: TopicCreator) -> None:
        """`__transaction_state` is created on first use as before; the transaction coordinator and
        the produce path's verifier open as soon as the topic exists (at once when it is on disk,
        so that its partitions load at start) or a transaction request needs them."""
        topic_creator.register_internal_topic(
            txn_topic.TRANSACTION_STATE_TOPIC,
            lambda: txn_topic.ensure_created(metadata, topic_creator, self.config),
        )

        def on_topic_changed(name: str, info: TopicInfo | None) -> None:
            if name == txn_topic.TRANSACTION_STATE_TOPIC and info is not None and self._transactions_followed:
                self._open_transactions()

        self._transactions_followed = True
        follow_topic(metadata, txn_topic.TRANSACTION_STATE_TOPIC, on_topic_changed)

    @property
    def txn_coordinator(self) -> TransactionCoordinator | None:
        """The transaction coordinator on `__transaction_state` (None before open)."""
        self._open_transactions()
        return self._txn_coordinator

    @property
    def txn_verifier(self) -> TransactionVerifier | None:
        """The produce path's verifier of transactional batches, KIP-890 (None before open)."""
        self._open_transactions()
        return self._txn_verifier

    def _open_transactions(self) -> None:
        """The transaction coordinator and the verifier, opened once the broker is open. Opened on
        a first transaction request, their modules are imported then, on the event loop, once,
        for a few milliseconds."""
        if self._txn_coordinator is not None or not self._transactions_followed or self.stopping:
            return
        token = self._loop_token
        if self._tasks is not None and token is not None and threading.get_ident() != self._loop_thread:
            from anyio.from_thread import run_sync  # asked from another thread: opened on the loop

            run_sync(self._open_transactions, token=token)
            return
        self._open_transaction_coordinator(_opened(self.metadata), _opened(self.replica_manager))
        if self._tasks is not None:  # opened while serving: its loop joins the broker's tasks
            self._tasks.start_soon(_opened(self._txn_coordinator).run)

    def _open_transaction_coordinator(self, metadata: MetadataStore, replica_manager: ReplicaManager) -> None:
        """The transaction coordinator on `__transaction_state` (AddOffsetsToTxn adds the group's
        `__consumer_offsets` partition, from the group coordinator, opened then if it is not), and
        the produce path's verifier."""
        from .coordinator.transaction import TransactionCoordinator, TransactionVerifier
        from .replication.coordinator_partitions import CoordinatorLogLoader, CoordinatorPartitionWriter

        self._txn_coordinator = txn_coordinator = TransactionCoordinator.for_broker(
            self.broker_id,
            self.config,
            CoordinatorPartitionWriter(replica_manager),
            CoordinatorLogLoader(replica_manager, int(self.config["transaction.state.log.load.buffer.size"])),
            metadata,
            self.timer,
            _opened(self.producer_ids),
            listener_name=self.inter_broker_listener,
            group_partition_for=self._group_partition_for,
            marker_writer=_opened(self.txn_markers),  # markers for partitions this broker leads
            connect=self.inter_broker_connect(),
        )
        txn_coordinator.startup()
        self._txn_verifier = TransactionVerifier(
            self.broker_id,
            metadata,
            txn_coordinator,
            listener_name=self.inter_broker_listener,
            request_timeout_ms=int(self.config["request.timeout.ms"]),
            connect=self.inter_broker_connect(),
        )

    # -- share groups (KIP-932) -------------------------------------------------------------
    def _follow_share_group_state(self, metadata: MetadataStore, topic_creator: TopicCreator) -> None:
        """`__share_group_state` is created on first use as before; the share coordinator, the
        persister and the share partitions open as soon as the topic exists (at once when it is
        on disk, so that its partitions load at start) or a share request needs them."""
        topic_creator.register_internal_topic(
            state_topic.SHARE_GROUP_STATE_TOPIC,
            lambda: state_topic.ensure_created(metadata, topic_creator, self.config),
        )

        def on_topic_changed(name: str, info: TopicInfo | None) -> None:
            if name == state_topic.SHARE_GROUP_STATE_TOPIC and info is not None and self._share_groups_followed:
                self._open_share_groups()

        self._share_groups_followed = True
        follow_topic(metadata, state_topic.SHARE_GROUP_STATE_TOPIC, on_topic_changed)

    @property
    def share_coordinator(self) -> ShareCoordinator | None:
        """The share coordinator on `__share_group_state` (None before open)."""
        self._open_share_groups()
        return self._share_coordinator

    @property
    def share_persister(self) -> DefaultStatePersister | None:
        """The SharePersister of KIP-932, through which the broker reaches the share coordinator
        of any key (None before open)."""
        self._open_share_groups()
        return self._share_persister

    @property
    def share_partitions(self) -> SharePartitionManager | None:
        """The share partitions this broker leads: ShareFetch, ShareAcknowledge (None before open)."""
        self._open_share_groups()
        return self._share_partitions

    def _open_share_groups(self) -> None:
        """The share coordinator, the persister and the share partitions, opened together once the
        broker is open. Opened on a first share request, their modules are imported then, on the
        event loop, once, for a few milliseconds."""
        if self._share_partitions is not None or not self._share_groups_followed or self.stopping:
            return
        token = self._loop_token
        if self._tasks is not None and token is not None and threading.get_ident() != self._loop_thread:
            from anyio.from_thread import run_sync  # asked from another thread: opened on the loop

            run_sync(self._open_share_groups, token=token)
            return
        metadata, replica_manager = _opened(self.metadata), _opened(self.replica_manager)
        group_coordinator = _opened(self.group_coordinator)
        self._open_share_coordinator(metadata, replica_manager)
        self._open_share_partitions(replica_manager, metadata, group_coordinator)
        if self._tasks is not None:  # opened while serving: their loops join the broker's tasks
            self._tasks.start_soon(_opened(self._share_partitions).run)
            self._tasks.start_soon(_opened(self._share_coordinator).run)

    def _open_share_coordinator(self, metadata: MetadataStore, replica_manager: ReplicaManager) -> None:
        """The share coordinator on `__share_group_state` (KIP-932), and the persister through
        which the rest of the broker reaches the share coordinator of any key."""
        from .coordinator.share import DefaultStatePersister, ShareCoordinator
        from .replication.coordinator_partitions import CoordinatorLogLoader, CoordinatorPartitionWriter

        self._share_coordinator = share_coordinator = ShareCoordinator.for_broker(
            self.broker_id,
            self.config,
            CoordinatorPartitionWriter(replica_manager),
            CoordinatorLogLoader(replica_manager, int(self.config["share.coordinator.load.buffer.size"])),
            metadata,
            self.timer,
        )
        share_coordinator.startup()
        self._share_persister = DefaultStatePersister(
            self.broker_id,
            metadata,
            share_coordinator,
            listener_name=self.inter_broker_listener,
            request_timeout_ms=int(self.config["request.timeout.ms"]),
            connect=self.inter_broker_connect(),
        )

    def _open_share_partitions(
        self, replica_manager: ReplicaManager, metadata: MetadataStore, group_coordinator: GroupCoordinator
    ) -> None:
        """The share partitions this broker leads (ShareFetch, ShareAcknowledge). Their state is
        kept through the share persister, each group's settings come from its group configs, and
        a share group's departing members release what they hold (`on_member_leave`)."""
        from .coordinator.share.partitions import SharePartitionManager

        self._share_partitions = share_partitions = SharePartitionManager(
            replica_manager, _opened(self._share_persister), self.timer, lambda: self.config, metadata.group_configs
        )
        group_coordinator.add_share_group_listener(share_partitions.on_member_leave)

    def _connect_group_coordinator_to_transactions(
        self, replica_manager: ReplicaManager, group_coordinator: GroupCoordinator
    ) -> None:
        """A TxnOffsetCommit first verifies that the group's partition is in the transaction (KIP-890),
        carrying the verification's guard to its append, as Kafka's group coordinator does."""

        async def verify_offsets_partition(
            transactional_id: str, producer_id: int, producer_epoch: int, tp: tuple[str, int]
        ) -> tuple[ErrorCode, object]:
            return await replica_manager.maybe_start_transaction_verification_for_partition(
                tp, transactional_id, producer_id, producer_epoch, _opened(self.txn_verifier)
            )

        group_coordinator.txn_verifier = verify_offsets_partition

    def _apply_dynamic_configs(self) -> None:
        """Dynamic broker configs (AlterConfigs on this broker or on the cluster default) over
        the static ones, as Kafka's DynamicBrokerConfig does: topic defaults such as
        `log.retention.ms` reach every log, and later readers see the new values."""
        metadata = _opened(self.metadata)
        self.config = self.static_config.with_dynamic(
            _decoded_broker_configs(self.static_config, metadata.broker_configs(self.broker_id)),
            _decoded_broker_configs(self.static_config, metadata.broker_configs(None)),
        )
        if self.listener_security is not None:  # new TLS handshakes and SASL logins use the new settings
            self.listener_security.apply(self.config)
        self._reconfigure_connection_quotas()
        if self.topic_creator is not None:
            self.topic_creator.config = self.config
        if self.replica_manager is not None:
            self.replica_manager.config = self.config
        # in a cluster the controller is the ZooKeeper one; the LocalController has nothing to reconfigure
        if self.in_cluster and self.controller is not None and not isinstance(self.controller, LocalController):
            self.controller.reconfigure(self.config)
        if self.replica_manager is not None:
            self.replica_manager.reapply_topic_configs()

    def _reconfigure_connection_quotas(self) -> None:
        """The connection limits follow the (static, then dynamic) broker configs."""
        config = self.config

        def value(key: str) -> object:
            return config.raw(key) if key.startswith("listener.name.") else config.get(key)

        self.connection_quotas.reconfigure(read_limits(value, list(self.connection_quotas.listeners)))

    def _open_metadata_store(self) -> MetadataStore:
        if not self.in_cluster:
            return EmbeddedMetadataStore(self.config.log_dirs, self._advertised_self())
        from .cluster.zk_client import KafkaZkClient  # cluster modules load only in cluster mode
        from .cluster.zk_store import ZkMetadataStore

        zk_client = KafkaZkClient(
            self.config["zookeeper.connect"],
            session_timeout_ms=int(self.config["zookeeper.session.timeout.ms"]),
            connection_timeout_ms=self.config.get("zookeeper.connection.timeout.ms"),
        )
        store = ZkMetadataStore(zk_client, self.bridge, self._registration(), self.config.log_dirs)
        try:
            store.open()
        except BaseException:
            store.close()
            raise
        return store

    def _open_authorizer(self, metadata: MetadataStore) -> AclAuthorizer | None:
        """`authorizer.class.name`'s authorizer with every ACL loaded (ZooKeeper's in a cluster, the
        ACL file of the first log dir on a single broker); a class or setting it cannot honour stops
        the broker here."""
        if not self.authorizer_configured:
            return None
        from .security.authorizer import AuthorizerConfigError, create_authorizer

        def acl_store() -> AclStore:
            if not self.in_cluster:
                from .security.acl_store import FileAclStore

                return FileAclStore(self.config.log_dirs[0])
            from .security.zk_acl_store import ZkAclStore

            zk_client = self._zk_store(metadata).zk_client
            return ZkAclStore(zk_client, request_timeout_s=min(zk_client.request_timeout_s, 5.0))

        try:
            authorizer = create_authorizer(self.config, acl_store)
        except AuthorizerConfigError as error:
            raise ConfigError(error.key, str(error)) from None
        if authorizer is not None:
            authorizer.open()
        return authorizer

    @property
    def delegation_token_key_configured(self) -> bool:
        """True with `delegation.token.secret.key` (or its old name `delegation.token.master.key`)
        set: only then are the token settings read and the token modules imported."""
        return bool(self.config["delegation.token.secret.key"] or self.config["delegation.token.master.key"])

    def _open_token_manager(self, metadata: MetadataStore) -> DelegationTokenManager | None:
        """The delegation tokens, with every stored token loaded (ZooKeeper's in a cluster, a file
        beside the embedded store's state on a single broker); None without a secret key."""
        if not self.delegation_token_key_configured:
            return None
        from .security.token_settings import TokenSettings

        settings = TokenSettings.from_config(self.config)
        if not settings.enabled:
            return None
        from .security.token_manager import DelegationTokenManager

        if self.in_cluster:
            from .security.zk_token_store import ZkTokenStore

            store: TokenStore = ZkTokenStore(self._zk_store(metadata).zk_client)
        else:
            from .security.delegation_tokens import FileTokenStore

            store = FileTokenStore(self.config.log_dirs[0])
        manager = DelegationTokenManager(settings, store)
        manager.startup()
        return manager

    async def _expire_tokens_periodically(self, manager: DelegationTokenManager) -> None:
        """Kafka's "delete-expired-tokens" task: every `delegation.token.expiry.check.interval.ms`,
        on the active controller (a single broker is its own), expired tokens are removed."""
        interval_s = manager.settings.expiry_check_interval_ms / 1000
        while True:
            if self._is_active_controller():
                await manager.expire_tokens()
            await anyio.sleep(interval_s)

    def _producer_id_block_store(self, metadata: MetadataStore) -> FileBlockStore | ZkBlockStore:
        if not self.in_cluster:
            return FileBlockStore(self.config.log_dirs[0])
        zk_client = self._zk_store(metadata).zk_client
        return ZkBlockStore(zk_client, self.broker_id, min(zk_client.request_timeout_s, 5.0))

    def _start_controller(self, metadata: MetadataStore) -> LocalController | Controller:
        if not self.in_cluster:
            return LocalController(metadata, self.broker_id)
        from .cluster.controller.controller import Controller

        store = self._zk_store(metadata)
        controller = Controller(store.zk_client, self.broker_id, self.config, self.bridge)
        controller.startup()
        store.add_topic_config_listener(controller.topic_configs_changed)
        return controller

    @staticmethod
    def _zk_store(metadata: MetadataStore) -> ZkMetadataStore:
        """The metadata store in cluster mode, which is always the ZooKeeper one."""
        from .cluster.zk_store import ZkMetadataStore  # cluster modules load only in cluster mode

        if not isinstance(metadata, ZkMetadataStore):
            raise RuntimeError(f"cluster mode needs the ZooKeeper metadata store, not {type(metadata).__name__}")
        return metadata

    def _inter_broker_protocol(self) -> str:
        """The security protocol of the inter-broker listener."""
        name = self.inter_broker_listener
        return self.config.security_protocol_map.get(name, self.config["security.inter.broker.protocol"])

    @property
    def inter_broker_listener(self) -> str:
        """The listener other brokers use to reach this one (Kafka's rule)."""
        name = self.config.get("inter.broker.listener.name")
        return (name or self.config["security.inter.broker.protocol"]).upper()

    async def run(self, *, handle_signals: bool = True) -> None:
        """Serve until cancelled, a signal arrives, or `shutdown()` is called."""
        if not self.listeners:
            self.open()
        dispatcher = Dispatcher(self.registry, self.services(), self.request_metrics, self.fault_seam)
        server = SocketServer(
            self.listeners,
            dispatcher,
            self.config["socket.request.max.bytes"],
            self.config["socket.send.buffer.bytes"],
            self.config["socket.receive.buffer.bytes"],
            authentication=_opened(self.listener_security).authentication,
            connection_quotas=self.connection_quotas,
        )
        try:
            server.listen()  # only now: a client that connected earlier would have waited unanswered
            async with anyio.create_task_group() as tasks:
                self._attach_to_this_loop(tasks.cancel_scope)
                self.bridge.attach()
                if handle_signals:
                    tasks.start_soon(self._stop_on_signal, tasks.cancel_scope)
                tasks.start_soon(server.serve)
                tasks.start_soon(run_maintenance, self.config, _opened(self.log_manager), _opened(self.replica_manager))
                tasks.start_soon(self.timer.run)
                if self._group_coordinator is not None:
                    tasks.start_soon(self._group_coordinator.run)
                if self._share_partitions is not None:
                    tasks.start_soon(self._share_partitions.run)
                if self._txn_coordinator is not None:
                    tasks.start_soon(self._txn_coordinator.run)
                if self._share_coordinator is not None:
                    tasks.start_soon(self._share_coordinator.run)
                self._tasks = tasks
                tasks.start_soon(_opened(self.replica_manager).run)
                if self.token_manager is not None:
                    tasks.start_soon(self._expire_tokens_periodically, self.token_manager)
                await self._serve_metrics(tasks)
                self.started = True
                self.serving.set()
                data = ", ".join(_opened(self.log_manager).log_dirs)
                for listener in self.listeners:
                    log.info(
                        "pykbroker started: listening on %s://%s:%d, data in %s",
                        listener.name,
                        listener.host,
                        listener.port,
                        data,
                    )
        finally:
            self.close()

    async def _serve_metrics(self, tasks: TaskGroup) -> None:
        """`/metrics` and `/health` on `pykbroker.metrics.listener`, when it is set."""
        if self.metrics_socket is None:
            return
        from .server.metrics_http import MetricsHttpServer, http_address

        host, port = self.metrics_socket.getsockname()[:2]
        listener = await SocketListener.from_socket(self.metrics_socket)
        tasks.start_soon(MetricsHttpServer(self.render_metrics, self.health).serve, listener)
        log.info("Metrics and health served on %s (/metrics, /health)", http_address(host, port))

    def _follow_quota_configs(self, metadata: MetadataStore) -> None:
        """The client quotas follow the quota entities' configs: those stored now, then each change."""
        quotas = self.client_quotas
        metadata.add_quota_config_listener(quotas.entity_configs_changed)
        for entity_type in (USER_ENTITY_TYPE, CLIENT_ENTITY_TYPE):
            for name, configs in metadata.quota_entity_configs(entity_type).items():
                quotas.entity_configs_changed(entity_type, name, configs)
        connection_quotas = self.connection_quotas

        def ip_configs_changed(entity_type: str, name: str, configs: dict[str, str]) -> None:
            if entity_type == IP_ENTITY_TYPE:
                connection_quotas.ip_quota_changed(name, configs)

        metadata.add_quota_config_listener(ip_configs_changed)
        for name, configs in metadata.quota_entity_configs(IP_ENTITY_TYPE).items():
            connection_quotas.ip_quota_changed(name, configs)

    async def render_metrics(self) -> str:
        """The Prometheus text of `/metrics`, read now."""
        from .server.metrics import MetricsSources, collect_with_share_groups, render

        groups = _opened(self.group_coordinator)
        sources = MetricsSources(
            replicas=_opened(self.replica_manager),
            groups=groups,
            metadata=_opened(self.metadata),
            requests=self.request_metrics,
            is_active_controller=self._is_active_controller,
            # the share groups' start offsets, where the group coordinator serves share groups
            share_group_offsets=getattr(groups, "describe_share_group_offsets", None),
            quotas=self.client_quotas,
            connections=self.connection_quotas,
        )
        return render(await collect_with_share_groups(sources))

    def _is_active_controller(self) -> bool:
        """A single broker is its own controller; in a cluster, the one ZooKeeper elected."""
        if isinstance(self.controller, LocalController):
            return True
        return bool(getattr(self.controller, "active", False))

    def health(self) -> Health:
        """Ready (200 on `/health`) once the listeners serve with the metadata loaded; not while stopping."""
        from .server.metrics_http import Health

        if self.stopping:
            return Health(False, {"status": "STOPPING", "brokerId": self.broker_id})
        if not self.started:
            return Health(False, {"status": "STARTING", "brokerId": self.broker_id})
        listeners = [f"{listener.name}://{listener.host}:{listener.port}" for listener in self.listeners]
        return Health(True, {"status": "UP", "brokerId": self.broker_id, "listeners": listeners})

    def shutdown(self) -> None:
        """Ask a running broker to stop, from its own event loop or from any other thread (a
        cancel scope may only be cancelled on its own loop's thread: from another one the cancel
        is handed to the loop). Asked before `run()` serves, the broker stops as it starts."""
        self.stopping = True
        self._shutdown_requested = True
        scope, token = self._cancel_scope, self._loop_token
        if scope is None or token is None:
            return  # run() has not attached yet: it sees _shutdown_requested
        if threading.get_ident() == self._loop_thread:
            scope.cancel()
            return
        from anyio.from_thread import run_sync

        try:
            run_sync(scope.cancel, token=token)
        except anyio.RunFinishedError:
            pass  # the loop has already ended: nothing left to stop

    def _attach_to_this_loop(self, scope: anyio.CancelScope) -> None:
        """Note run()'s cancel scope and event loop, so that `shutdown()` reaches them from any
        thread; a shutdown asked before this point stops the broker now."""
        from anyio.lowlevel import current_token

        self._loop_thread = threading.get_ident()
        self._loop_token = current_token()
        self._cancel_scope = scope
        if self._shutdown_requested:
            scope.cancel()

    def close(self) -> None:
        """Stop every service that is open (also after a failed `open()`), then unlock the
        log directories."""
        self.bridge.detach()
        self.stopping = True
        self._tasks = None
        for listener in self.listeners:
            listener.sock.close()
        if self.metrics_socket is not None:
            self.metrics_socket.close()
        if self._share_persister is not None:
            self._share_persister.shutdown()
            self._share_persister = None
        if self._share_coordinator is not None:
            self._share_coordinator.shutdown()
            self._share_coordinator = None
        if self._txn_coordinator is not None:
            self._txn_coordinator.shutdown()
            self._txn_coordinator = None
        if self._group_coordinator is not None:
            self._group_coordinator.shutdown()
        if self._share_partitions is not None:
            self._share_partitions.shutdown()
        if self.replica_manager is not None:
            self.replica_manager.shutdown()
            self.replica_manager = None
        elif self.log_manager is not None:
            self.log_manager.stop_loading()  # a failed open(): no load keeps running
        if self.controller is not None and not isinstance(self.controller, LocalController):
            self.controller.shutdown()
        if self.authorizer is not None:
            self.authorizer.close()
            self.authorizer = None
        if self.token_manager is not None:
            self.token_manager.close()
            self.token_manager = None
        if self.metadata is not None:
            self.metadata.close()  # the embedded store's last state reaches the disk here
        if self.log_dir_locks is not None:
            self.log_dir_locks.release()
            self.log_dir_locks = None
        if self.started:
            log.info("Broker %d stopped", self.broker_id)

    async def _stop_on_signal(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                log.info("Received %s, shutting down", signal.Signals(signum).name)
                self.stopping = True
                if self.in_cluster and self.config["controlled.shutdown.enable"]:
                    from .shutdown import controlled_shutdown  # cluster modules load only in cluster mode

                    await controlled_shutdown(self)
                scope.cancel()
                return

    def _topic_log_config(self, topic: str) -> dict:
        info = self.metadata.topic(topic) if self.metadata is not None else None
        return topic_config_values(info.configs if info else {}, self.config)

    # -- what handlers ask of the broker -----------------------------------------------
    def services(self) -> BrokerServices:
        """The services handlers are given, once the broker is open."""
        controller = self.controller  # checked here: mypy infers `object` for a union through _opened()
        if controller is None:
            raise RuntimeError("broker not open")
        return BrokerServices(
            broker_id=self.broker_id,
            api_versions=self.api_versions,
            metadata=_opened(self.metadata),
            replica_manager=_opened(self.replica_manager),
            fetch_sessions=self.fetch_sessions,
            groups=_GroupServices(self),
            topic_creator=_opened(self.topic_creator),
            controller=controller,
            producer_ids=_opened(self.producer_ids),
            txn_markers=_opened(self.txn_markers),
            transactions=_TransactionServices(self),
            txn_verifier=_TxnVerifierOnFirstUse(self),
            share=_ShareServices(self),
            authorizer=self.authorizer,
            current_config=lambda: self.config,
            listener_security=self.listener_security,
            live_brokers=self.live_brokers,
            delegation_tokens=self.token_manager,
            quotas=self.client_quotas,
        )

    async def move_leadership(self, topic: str, partition: int, broker_id: int) -> None:
        """Make `broker_id` (a live in-sync replica) the leader of the partition, through the
        controller's election (on the broker whose controller is active; a single broker refuses:
        moving leadership needs a cluster). ValueError with the controller's reason otherwise."""
        controller = self.controller
        if controller is None:
            raise RuntimeError("broker not open")
        error, message = await controller.move_leadership(topic, partition, broker_id)
        if error not in (ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED):
            raise ValueError(f"{error.name}: {message or error.message}")

    def live_brokers(self, listener_name: str) -> list[BrokerInfo]:
        """Live brokers with their endpoint on `listener_name` (the listener a client used)."""
        if self.in_cluster:
            return _opened(self.metadata).live_brokers(listener_name)
        return [self._advertised_self(listener_name)]

    def _registration(self) -> BrokerRegistration:
        """What this broker announces in ZooKeeper: its advertised endpoints and rack."""
        from .cluster import zk_data

        endpoints = []
        for name, _, _ in self.config.advertised_listeners:
            advertised = self._advertised_self(name)
            endpoints.append(
                zk_data.Endpoint(name, advertised.host, advertised.port, self.config.security_protocol_of(name))
            )
        return zk_data.BrokerRegistration(self.broker_id, tuple(endpoints), self.config.get("broker.rack"))

    def _advertised_self(self, listener_name: str | None = None) -> BrokerInfo:
        advertised = self.config.advertised_listeners
        bound = {listener.name: listener for listener in self.listeners}
        for name, host, port in advertised:
            if listener_name is None or name == listener_name:
                if port == 0 and name in bound:
                    port = bound[name].port
                if host in ("", "0.0.0.0", "::"):
                    host = socket.getfqdn()  # Kafka advertises the canonical host name
                return BrokerInfo(self.broker_id, host, port, self.config.get("broker.rack"))
        first = self.listeners[0]
        return BrokerInfo(self.broker_id, first.host, first.port, self.config.get("broker.rack"))


def _decoded_broker_configs(config: BrokerConfig, stored: Mapping[str, str]) -> dict[str, str]:
    """Dynamic broker configs as stored; only ZooKeeper keeps encoded passwords, whose decoding
    (and the config-admin module) is loaded on first use."""
    if not stored or not config.get("zookeeper.connect"):
        return dict(stored)
    from .handlers.support.config_admin import decoded_broker_configs

    return decoded_broker_configs(config, stored)


class _GroupServices:
    """The broker's group coordinator for the handlers (`GroupServices`), opened on first use."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker

    def coordinator(self) -> GroupCoordinator:
        return _opened(self._broker.group_coordinator)


class _ShareServices:
    """The broker's share services for the handlers (`ShareServices`), opened on first use."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker

    @property
    def is_open(self) -> bool:
        return self._broker._share_partitions is not None

    def partitions(self) -> SharePartitionManager:
        return _opened(self._broker.share_partitions)

    def coordinator(self) -> ShareCoordinator:
        return _opened(self._broker.share_coordinator)

    def persister(self) -> DefaultStatePersister:
        return _opened(self._broker.share_persister)


class _TransactionServices:
    """The broker's transaction coordinator for the handlers (`TransactionServices`), opened on
    first use."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker

    def coordinator(self) -> TransactionCoordinator:
        return _opened(self._broker.txn_coordinator)


class _TxnVerifierOnFirstUse:
    """The produce path's verifier (KIP-890), opened on the first transactional batch: every
    Produce carries it, few need it."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        *,
        abortable_error_supported: bool = True,
    ) -> dict[TopicPartition, ErrorCode]:
        verifier = _opened(self._broker.txn_verifier)
        return await verifier.verify(
            transactional_id,
            producer_id,
            producer_epoch,
            partitions,
            abortable_error_supported=abortable_error_supported,
        )
