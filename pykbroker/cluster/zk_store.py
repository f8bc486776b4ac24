"""The cluster-mode metadata store: Kafka's znodes in ZooKeeper, and this broker's view of them.

    store = ZkMetadataStore(zk_client, bridge, registration, log_dirs)
    store.open()        # connect, cluster id, read everything, start watching (blocking)
    store.register()    # once the broker can serve: the ephemeral /brokers/ids/<id>

Reading: the view (live brokers, topics with their partitions' leader, epoch and ISR, configs,
the controller id) lives on the event loop and changes only there, when a watch on ZooKeeper's
threads posts what it read (see `zk_watches`). Listeners hear about every topic whose view
changed.

A partition's leader as shown is the one in its state znode, except that a leader is shown as
none (-1) while it is not registered, or when the state was written before the leader's current
registration: that leadership belongs to an earlier life of the broker, and the controller will
elect again. So a restarted broker never serves as leader on a stale state.

Writing: topic creation, deletion requests, partition additions and config changes are written
the way Kafka's admin code writes them in ZooKeeper mode (the controller then elects leaders,
deletes topics); those calls wait for ZooKeeper (a bounded time), like Kafka's request handler
threads do, and update the view at once. ISR changes proposed by a leader are written
asynchronously with a compare-and-set on the state znode's version, followed by an
`/isr_change_notification` for the controller; the answer comes back on the event loop.

A log directory of this broker that fails (`log_dir_failed`) is announced as Kafka's broker does,
with a `/log_dir_event_notification`, after this broker's replicas on its failed dirs are listed
in its ephemeral `/brokers/offline_replicas/<id>` (pykbroker's own znode: see `zk_data`), from
which the controller learns which replicas went offline. Both are written on a helper thread,
again after every new session. Every broker reads the lists back (when brokers come or go, and on
each log dir event) to show Metadata's `offline_replicas`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from ..common.uuids import ZERO_UUID
from ..protocol.errors import ErrorCode, KafkaError
from . import zk_data
from .assignment import assign_replicas, start_index_of
from .loop_bridge import LoopBridge
from .meta_properties import check_cluster_id, write_meta_properties
from .model import BrokerInfo, PartitionState, TopicInfo, new_cluster_id, new_topic_id, validate_topic_name
from .store import BrokerEntity, IsrCallback, MetadataStore
from .zk_client import KafkaZkClient, PartitionStateWritten, ZooKeeperError, ZooKeeperTimeoutError
from .zk_data import BrokerRegistration, LeaderAndIsr, OfflineReplicas, TopicAssignment
from .zk_watches import ClusterWatches

log = logging.getLogger(__name__)

T = TypeVar("T")
TopicConfigListener = Callable[[str, dict[str, str]], None]

LOOP_WAIT_S = 5.0  # the longest an administrative write holds the event loop
ANNOUNCE_ATTEMPTS = 30  # writing the offline replicas: once a second (a new session writes them again)
ANNOUNCE_RETRY_S = 1.0


class ZkMetadataStore(MetadataStore):
    def __init__(
        self, zk_client: KafkaZkClient, bridge: LoopBridge, registration: BrokerRegistration, log_dirs: list[str]
    ) -> None:
        super().__init__()
        self.zk_client = zk_client
        self.bridge = bridge
        self.registration = registration
        self.broker_id = registration.broker_id
        self.log_dirs = log_dirs
        self.cluster_id = ""
        self.controller_id = -1
        self.broker_epoch = -1
        self._registrations: dict[int, BrokerRegistration] = {}
        self._assignments: dict[str, TopicAssignment] = {}
        self._states: dict[tuple[str, int], LeaderAndIsr] = {}
        self._topics: dict[str, TopicInfo] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._user_configs: dict[str, dict[str, str]] = {}
        self._watches: ClusterWatches | None = None
        self._registered = False
        self._closed = False
        self._topic_config_listeners: list[TopicConfigListener] = []
        self._offline_read: dict[int, OfflineReplicas] = {}  # every broker's list, as last read
        self._offline_replicas: dict[int, frozenset[tuple[str, int]]] = {}  # shown: the lists read, and our own
        self._own_offline = OfflineReplicas(self.broker_id)  # this broker's failed log dirs and partitions
        self._announce_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------
    def open(self) -> None:
        self.zk_client.start()
        self.zk_client.create_top_level_paths()
        # As Kafka: a new cluster gets a new id, so log dirs of another cluster (or of a single
        # broker) are refused rather than mixed in.
        self.cluster_id = self.zk_client.create_or_get_cluster_id(new_cluster_id())
        check_cluster_id(self.log_dirs, self.cluster_id)
        write_meta_properties(self.log_dirs, broker_id=self.broker_id, cluster_id=self.cluster_id)
        self._watches = ClusterWatches(self.zk_client, self.bridge, self)
        self._watches.start()
        self.bridge.flush_pending()  # the first snapshot, before the event loop runs
        log.info(
            "Read the cluster state from ZooKeeper: %d live broker(s), %d topic(s), controller %d",
            len(self._registrations),
            len(self._topics),
            self.controller_id,
        )

    def register(self) -> None:
        """Register this broker (blocking); again by itself after a session expires."""
        self.apply_broker_epoch(self.zk_client.register_broker(self.registration))
        if not self._registered:
            self._registered = True
            self.zk_client.on_new_session(self._register_again)
        if self._own_offline.log_dirs:  # log dirs that failed before the broker registered
            self._announce_in_background()

    def _register_again(self) -> None:  # a helper thread, after a new session began
        epoch = self.zk_client.register_broker(self.registration)
        self.bridge.post(self.apply_broker_epoch, epoch)
        if self._own_offline.log_dirs:  # the old session's list went with it
            self._announce_offline_replicas()

    async def wait_durable(self) -> None:
        """At once: every write returned only once ZooKeeper acknowledged it."""

    def close(self) -> None:
        self._closed = True
        if self._watches is not None:
            self._watches.stop()
        self.zk_client.close()

    # -- reading -----------------------------------------------------------------------
    def brokers(self) -> list[BrokerInfo]:
        return self.live_brokers(None)

    def live_brokers(self, listener_name: str | None = None) -> list[BrokerInfo]:
        brokers = []
        for broker_id, registration in sorted(self._registrations.items()):
            endpoint = registration.endpoint(listener_name)
            if endpoint is not None:
                brokers.append(BrokerInfo(broker_id, endpoint.host, endpoint.port, registration.rack))
        return brokers

    def topics(self) -> dict[str, TopicInfo]:
        return self._topics

    def broker_racks(self) -> list[tuple[int, str | None]]:
        return [(broker_id, r.rack) for broker_id, r in sorted(self._registrations.items())]

    # -- applying what the watches read (event loop) -----------------------------------
    def apply_brokers(self, registrations: dict[int, BrokerRegistration]) -> None:
        if registrations != self._registrations:
            self._registrations = dict(registrations)
            self._refresh_all_topics()

    def apply_broker_epoch(self, epoch: int) -> None:
        self.broker_epoch = epoch
        self._refresh_all_topics()

    def apply_controller(self, controller_id: int) -> None:
        self.controller_id = controller_id

    def apply_topic(self, name: str, assignment: TopicAssignment, configs: dict[str, str]) -> None:
        old = self._topics.get(name)
        if old is not None and assignment.topic_id is not None and old.topic_id not in (assignment.topic_id, ZERO_UUID):
            self.apply_topic_deleted(name)  # deleted and created again under the same name
            old = None
        self._assignments[name] = assignment
        topic_id = assignment.topic_id or (old.topic_id if old is not None else ZERO_UUID)
        self._publish(TopicInfo(name, topic_id, self._partition_states(name), dict(configs)))

    def apply_partition_state(self, name: str, partition: int, state: LeaderAndIsr | None) -> None:
        key = (name, partition)
        old = self._states.get(key)
        if state is None:
            self._states.pop(key, None)
        elif old is not None and old.mzxid > state.mzxid:
            return  # an older reading overtaken by a newer one
        else:
            self._states[key] = state
        info = self._topics.get(name)
        if info is not None:
            self._publish(TopicInfo(name, info.topic_id, self._partition_states(name), info.configs))

    def apply_topic_deleted(self, name: str) -> None:
        self._assignments.pop(name, None)
        for key in [key for key in self._states if key[0] == name]:
            del self._states[key]
        if self._topics.pop(name, None) is not None:
            self._notify_topic(name, None)

    def apply_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        info = self._topics.get(name)
        if info is not None and info.configs != configs:
            self._publish(TopicInfo(name, info.topic_id, info.partitions, dict(configs)))
            for listener in self._topic_config_listeners:
                listener(name, dict(configs))

    def add_topic_config_listener(self, listener: TopicConfigListener) -> None:
        """`listener(topic, configs)` hears of every change of an existing topic's configs (on
        the event loop), as Kafka's TopicConfigHandler does."""
        self._topic_config_listeners.append(listener)

    def apply_broker_configs(self, entity: str, configs: dict[str, str]) -> None:
        if self._broker_configs.get(entity, {}) == configs:
            return
        if configs:
            self._broker_configs[entity] = dict(configs)
        else:
            self._broker_configs.pop(entity, None)
        self._notify_broker_configs(_parse_entity(entity), configs)

    def _refresh_all_topics(self) -> None:
        for name, info in list(self._topics.items()):
            self._publish(TopicInfo(name, info.topic_id, self._partition_states(name), info.configs))

    def _publish(self, info: TopicInfo) -> None:
        old = self._topics.get(info.name)
        if (
            old is not None
            and old.topic_id == info.topic_id
            and old.configs == info.configs
            and old.partitions == info.partitions
        ):
            return
        self._topics[info.name] = info
        self._notify_topic(info.name, info)

    def _partition_states(self, name: str) -> dict[int, PartitionState]:
        assignment = self._assignments.get(name)
        if assignment is None:
            return {}
        return {
            index: self._partition_state(name, index, replicas)
            for index, replicas in sorted(assignment.partitions.items())
        }

    def _partition_state(self, name: str, index: int, replicas: list[int]) -> PartitionState:
        offline = [
            r
            for r in replicas
            if r not in self._registrations or (name, index) in self._offline_replicas.get(r, frozenset())
        ]
        state = self._states.get((name, index))
        if state is None:  # the controller has not elected a leader yet
            return PartitionState(index, list(replicas), -1, -1, [], 0, offline)
        leader = state.leader if self._leadership_is_current(state) else -1
        return PartitionState(
            index, list(replicas), leader, state.leader_epoch, list(state.isr), state.zk_version, offline
        )

    def _leadership_is_current(self, state: LeaderAndIsr) -> bool:
        """The leader is registered, and was when its leadership was written."""
        if state.leader < 0:
            return False
        if state.leader == self.broker_id:
            return 0 <= self.broker_epoch < state.mzxid
        registration = self._registrations.get(state.leader)
        return registration is not None and registration.epoch < state.mzxid

    # -- writing topics (event loop; waits for ZooKeeper) ------------------------------
    def create_topic(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        configs: dict[str, str] | None = None,
        assignments: dict[int, list[int]] | None = None,
    ) -> TopicInfo:
        validate_topic_name(name)
        if name in self._topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        self._require_connection()
        if assignments is None:
            assignments = assign_replicas(self.broker_racks(), num_partitions, replication_factor)
        if self._wait(lambda timeout_s: self.zk_client.is_topic_marked_for_deletion(name, timeout_s)):
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' is marked for deletion.")
        configs = dict(configs or {})
        self._set_entity_configs(zk_data.TOPIC_CONFIG_TYPE, name, configs)
        assignment = TopicAssignment(new_topic_id(), {p: list(r) for p, r in assignments.items()})
        if not self._wait(lambda timeout_s: self.zk_client.create_topic_assignment(name, assignment, timeout_s)):
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        log.info(
            "Creating topic %s with configuration %s and initial partition assignment %s",
            name,
            configs,
            assignment.partitions,
        )
        self.apply_topic(name, assignment, configs)
        return self._topics[name]

    def delete_topic(self, name: str) -> None:
        if name not in self._topics:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        self._require_connection()
        self._wait(lambda timeout_s: self.zk_client.create_delete_topic_path(name, timeout_s))
        log.info("Topic %s marked for deletion", name)

    def add_partitions(self, name: str, new_total: int, assignments: list[list[int]] | None = None) -> TopicInfo:
        self._require_connection()
        for _ in range(3):
            found = self._wait(lambda timeout_s: self.zk_client.get_topic_assignment(name, timeout_s))
            if found is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            current, version = found
            if current.adding or current.removing:
                raise KafkaError(
                    ErrorCode.REASSIGNMENT_IN_PROGRESS,
                    f"A partition reassignment is in progress for the topic '{name}'.",
                )
            added = self._new_partition_assignments(current, new_total, assignments)
            merged = TopicAssignment(current.topic_id, {**current.partitions, **added})
            if not self._wait(
                lambda timeout_s: self.zk_client.set_topic_assignment(name, merged, version, timeout_s)  # noqa: B023
            ):
                continue
            info = self._topics.get(name)
            self.apply_topic(name, merged, info.configs if info else {})
            return self._topics[name]
        raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"The partitions of topic {name} kept changing")

    def _new_partition_assignments(
        self, current: TopicAssignment, new_total: int, assignments: list[list[int]] | None
    ) -> dict[int, list[int]]:
        first_new = len(current.partitions)
        if assignments is not None:
            return {first_new + i: list(replicas) for i, replicas in enumerate(assignments)}
        replication_factor = len(current.partitions[0])
        racks = self.broker_racks()
        start = start_index_of(racks, current.partitions[0][0])
        return assign_replicas(
            racks, new_total - first_new, replication_factor, first_partition=first_new, start_index=max(start, 0)
        )

    def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        self._set_entity_configs(zk_data.TOPIC_CONFIG_TYPE, name, configs)
        self._announce_config_change(zk_data.TOPIC_CONFIG_TYPE, name)
        self.apply_topic_configs(name, dict(configs))

    # -- dynamic broker configs --------------------------------------------------------
    def broker_configs(self, entity: BrokerEntity) -> dict[str, str]:
        return dict(self._broker_configs.get(_entity_name(entity), {}))

    def set_broker_configs(self, entity: BrokerEntity, configs: dict[str, str]) -> None:
        name = _entity_name(entity)
        self._set_entity_configs(zk_data.BROKER_CONFIG_TYPE, name, configs)
        self._announce_config_change(zk_data.BROKER_CONFIG_TYPE, name)
        self.apply_broker_configs(name, dict(configs))

    # -- user configs (SCRAM credentials), as Kafka's AdminZkClient.changeConfigs ---------
    def all_user_configs(self) -> dict[str, dict[str, str]]:
        return {user: dict(configs) for user, configs in self._user_configs.items()}

    def set_user_configs(self, user: str, configs: dict[str, str]) -> None:
        self._set_entity_configs(zk_data.USER_CONFIG_TYPE, user, configs)
        self._announce_config_change(zk_data.USER_CONFIG_TYPE, user)
        self.apply_user_configs(user, dict(configs))

    def apply_user_configs(self, user: str, configs: dict[str, str]) -> None:
        if self._user_configs.get(user) == configs:
            return
        if configs:
            self._user_configs[user] = dict(configs)
        else:
            self._user_configs.pop(user, None)
        self._notify_user_configs(user, configs)

    # -- group configs: /config/groups/<group>, announced as other entities' configs -----
    def set_quota_entity_configs(self, entity_type: str, name: str, configs: dict[str, str]) -> None:
        """Kafka's AdminZkClient.changeConfigs: the entity's znode, then a change notification."""
        if entity_type == zk_data.USER_CONFIG_TYPE:
            self.set_user_configs(name, configs)
            return
        self._set_entity_configs(entity_type, name, configs)
        self._announce_config_change(entity_type, name)
        self.apply_quota_entity_configs(entity_type, name, dict(configs))

    def set_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        self._set_entity_configs(zk_data.GROUP_CONFIG_TYPE, group_id, configs)
        self._announce_config_change(zk_data.GROUP_CONFIG_TYPE, group_id)
        self.apply_group_configs(group_id, dict(configs))

    # -- ISR changes from a leader (asynchronous) --------------------------------------
    def propose_isr(
        self,
        topic: str,
        partition: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: list[int],
        callback: IsrCallback,
    ) -> None:
        current = self._states.get((topic, partition))
        if current is None or current.leader != self.broker_id:
            callback(None)
            return
        proposed = LeaderAndIsr(self.broker_id, leader_epoch, list(new_isr), current.controller_epoch)

        def written(outcome: PartitionStateWritten | Exception) -> None:  # on ZooKeeper's thread
            self.bridge.post(self._isr_written, topic, partition, proposed, outcome, callback)

        if not self.zk_client.set_topic_partition_state_async(topic, partition, proposed, partition_epoch, written):
            callback(None)

    def _isr_written(
        self,
        topic: str,
        partition: int,
        proposed: LeaderAndIsr,
        outcome: PartitionStateWritten | Exception,
        callback: IsrCallback,
    ) -> None:
        if isinstance(outcome, Exception):
            log.info(
                "ISR change of %s-%d to %s not written: %s", topic, partition, proposed.isr, type(outcome).__name__
            )
            callback(None)
            return
        log.info("ISR of %s-%d is now %s (partition epoch %d)", topic, partition, proposed.isr, outcome.zk_version)
        self.apply_partition_state(
            topic,
            partition,
            LeaderAndIsr(
                proposed.leader,
                proposed.leader_epoch,
                proposed.isr,
                proposed.controller_epoch,
                outcome.zk_version,
                outcome.mzxid,
            ),
        )
        callback(outcome.zk_version)
        self.zk_client.propagate_isr_changes([(topic, partition)])

    # -- log directory failures --------------------------------------------------------
    def log_dir_failed(self, broker_id: int, log_dir: str, offline_partitions: list[tuple[str, int]]) -> None:
        """Show this broker's replicas in `log_dir` as offline at once, then tell the controller (in
        the background): the list of replicas on offline dirs first, then Kafka's log dir event."""
        own = self._own_offline
        log_dirs = own.log_dirs if log_dir in own.log_dirs else (*own.log_dirs, log_dir)
        self._own_offline = OfflineReplicas(self.broker_id, log_dirs, own.partitions | frozenset(offline_partitions))
        self._show_offline_replicas()
        if self._registered:
            self._announce_in_background()

    def _announce_in_background(self) -> None:
        threading.Thread(target=self._announce_offline_replicas, name="log-dir-failure-announcer", daemon=True).start()

    def _announce_offline_replicas(self) -> None:
        """Write this broker's offline replicas and a log dir event (blocking; tried again for a while
        while ZooKeeper fails)."""
        with self._announce_lock:
            for _ in range(ANNOUNCE_ATTEMPTS):
                if self._closed:
                    return
                try:
                    self.zk_client.set_offline_replicas(self._own_offline)
                    self.zk_client.propagate_log_dir_event(self.broker_id)
                    return
                except ZooKeeperError as exc:
                    log.warning(
                        "Could not tell the controller of the failed log dirs %s (%s)", self._own_offline.log_dirs, exc
                    )
                    time.sleep(ANNOUNCE_RETRY_S)

    def apply_offline_replicas(self, found: dict[int, OfflineReplicas]) -> None:
        """Every broker's replicas on offline log dirs as read from ZooKeeper (this broker's own as
        it knows them, written or not yet)."""
        self._offline_read = dict(found)
        self._show_offline_replicas()

    def _show_offline_replicas(self) -> None:
        offline = {b: o.partitions for b, o in self._offline_read.items() if o.partitions and b != self.broker_id}
        if self._own_offline.partitions:
            offline[self.broker_id] = self._own_offline.partitions
        if offline != self._offline_replicas:
            self._offline_replicas = offline
            self._refresh_all_topics()

    # -- helpers -----------------------------------------------------------------------
    def _wait(self, call: Callable[[float], T]) -> T:
        """`call(timeout_s)`, a ZooKeeper call made on the event loop: waited for briefly, since the
        whole broker waits meanwhile."""
        try:
            return call(min(self.zk_client.request_timeout_s, LOOP_WAIT_S))
        except ZooKeeperTimeoutError:
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, "ZooKeeper did not answer in time") from None

    def _require_connection(self) -> None:
        """Fail at once rather than block the event loop while ZooKeeper is unreachable."""
        if not self.zk_client.connected:
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, "Not connected to ZooKeeper")

    def _set_entity_configs(self, entity_type: str, name: str, configs: dict[str, str]) -> None:
        self._require_connection()
        self._wait(lambda timeout_s: self.zk_client.set_or_create_entity_configs(entity_type, name, configs, timeout_s))

    def _announce_config_change(self, entity_type: str, name: str) -> None:
        self._wait(lambda timeout_s: self.zk_client.create_config_change_notification(entity_type, name, timeout_s))


def _entity_name(entity: BrokerEntity) -> str:
    return zk_data.DEFAULT_BROKER_ENTITY if entity is None else str(entity)


def _parse_entity(name: str) -> BrokerEntity:
    return None if name == zk_data.DEFAULT_BROKER_ENTITY else int(name)
