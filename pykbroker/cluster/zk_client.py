"""`KafkaZkClient`: every read, write and watch of Kafka's znodes, in Kafka's words (Kafka's
`KafkaZkClient`); the paths and the JSON in each znode are `zk_data`'s. Nothing else in the broker
speaks to ZooKeeper: the metadata store, its watches, the controller, the ACL store and the
producer id blocks all ask this client.

    zk = KafkaZkClient("127.0.0.1:2181/kafka", session_timeout_ms=18000)
    zk.start()                                        # blocks until connected, or raises
    cluster_id = zk.create_or_get_cluster_id(proposed)
    epoch = zk.register_broker(registration)          # the registration znode's creation zxid
    zk.watch_topics(on_topics)                        # on kazoo's threads

Every call blocks until ZooKeeper answers: the controller's event thread, the watches (on kazoo's
threads) and worker threads call them freely. Calls made on the event loop pass `timeout_s`, so
that the loop waits a bounded time (`ZooKeeperTimeoutError` after it). A failure of ZooKeeper
itself (connection lost, session expired) is a `ZooKeeperError`. Watch callbacks stop their watch
by returning False.

A registration left by this broker's previous process (killed before its session ended) is
waited for: it disappears when ZooKeeper expires that session. The broker epoch is the
registration's creation zxid, as in Kafka: it grows with every (re-)registration.
"""

from __future__ import annotations

import enum
import functools
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    KazooException,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.states import ZnodeStat
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from ..common.time import SYSTEM_CLOCK
from . import zk_data
from .zk_data import BrokerRegistration, LeaderAndIsr, TopicAssignment
from .zk_session import ZkSession

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
WatchResult = bool | None  # False stops the watch
P = ParamSpec("P")
R = TypeVar("R")


class ZooKeeperError(Exception):
    """ZooKeeper failed a call (connection lost, session expired, ...); the message names why."""


class ZooKeeperTimeoutError(ZooKeeperError):
    """ZooKeeper did not answer within the caller's `timeout_s`."""


class ControllerMovedError(Exception):
    """Another controller took over while this one was writing (Kafka's ControllerMovedException)."""


class ControllerElection(enum.Enum):
    """The outcome of `register_controller_and_increment_controller_epoch`."""

    ELECTED = "elected"
    CONTROLLER_EXISTS = "another broker is the controller"
    EPOCH_CHANGED = "another controller bumped the epoch meanwhile"
    FAILED = "failed"


@dataclass(frozen=True)
class PartitionStateWritten:
    """A partition state as ZooKeeper stored it: its new version (the partition epoch) and zxid."""

    zk_version: int
    mzxid: int


@dataclass(frozen=True)
class ChangeNotification:
    """One sequential change notification: its data and when it was made."""

    data: bytes
    ctime_ms: int


@contextmanager
def _zookeeper_errors() -> Iterator[None]:
    try:
        yield
    except KazooTimeoutError as exc:
        raise ZooKeeperTimeoutError("ZooKeeper did not answer in time") from exc
    except KazooException as exc:
        raise ZooKeeperError(type(exc).__name__) from exc


def _translated(method: Callable[P, R]) -> Callable[P, R]:
    """kazoo's exceptions, as `ZooKeeperError`s."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with _zookeeper_errors():
            return method(*args, **kwargs)

    return call


def _result(answer: IAsyncResult, timeout_s: float | None) -> Any:
    """What an asynchronous call answered, waiting at most `timeout_s` (forever when None)."""
    return answer.get(timeout=timeout_s)


class KafkaZkClient:
    def __init__(self, connect: str, *, session_timeout_ms: int, connection_timeout_ms: int | None = None) -> None:
        self.session = ZkSession(
            connect, session_timeout_ms=session_timeout_ms, connection_timeout_ms=connection_timeout_ms
        )

    # -- the session ---------------------------------------------------------------------
    @property
    def connect(self) -> str:
        return self.session.connect

    @property
    def connected(self) -> bool:
        return self.session.connected

    @property
    def request_timeout_s(self) -> float:
        """How long a caller waits for one ZooKeeper answer before giving up."""
        return self.session.request_timeout_s

    def start(self) -> None:
        self.session.start()

    def close(self) -> None:
        """Close the session: ZooKeeper deletes this broker's ephemeral znodes at once."""
        self.session.stop()

    def on_new_session(self, callback: Callable[[], None]) -> None:
        """`callback()` runs on a helper thread each time a new session replaces a lost one."""
        self.session.on_new_session(callback)

    def on_session_lost(self, callback: Callable[[], None]) -> None:
        """`callback()` runs on a helper thread when the session expires."""
        self.session.on_session_lost(callback)

    @property
    def _zk(self) -> KazooClient:
        return self.session.started_client()

    # -- the cluster -----------------------------------------------------------------------
    @_translated
    def create_top_level_paths(self) -> None:
        """The znodes a Kafka broker makes sure exist when it starts."""
        for path in zk_data.PERSISTENT_PATHS:
            self._zk.ensure_path(path)

    @_translated
    def create_or_get_cluster_id(self, proposed: str) -> str:
        try:
            data, _ = self._zk.get(zk_data.CLUSTER_ID)
            return zk_data.decode_cluster_id(data)
        except NoNodeError:
            pass
        try:
            self._zk.create(zk_data.CLUSTER_ID, zk_data.encode_cluster_id(proposed), makepath=True)
            return proposed
        except NodeExistsError:  # another broker was quicker
            data, _ = self._zk.get(zk_data.CLUSTER_ID)
            return zk_data.decode_cluster_id(data)

    # -- brokers ---------------------------------------------------------------------------
    @_translated
    def register_broker(self, registration: BrokerRegistration) -> int:
        """Create `/brokers/ids/<id>`; returns the broker epoch (its creation zxid).

        A registration still owned by an older session of this broker id is waited for, up to
        twice the session timeout; another live broker with the same id is an error.
        """
        client = self._zk
        path = zk_data.broker_path(registration.broker_id)
        data = zk_data.encode_broker(registration)
        deadline_ms = SYSTEM_CLOCK.monotonic_ms() + 2 * self.session.session_timeout_ms + 5000
        while True:
            try:
                _, stat = client.create(path, data, ephemeral=True, makepath=True, include_data=True)
                log.info(
                    "Registered broker %d at path %s with addresses: %s (broker epoch %d)",
                    registration.broker_id,
                    path,
                    ",".join(e.connection_string for e in registration.endpoints),
                    stat.czxid,
                )
                return int(stat.czxid)
            except NodeExistsError:
                stat = client.exists(path)
                if stat is not None and stat.ephemeralOwner == client.client_id[0]:
                    return int(stat.czxid)
            remaining_ms = deadline_ms - SYSTEM_CLOCK.monotonic_ms()
            if remaining_ms < 0:
                raise RuntimeError(
                    f"Broker id {registration.broker_id} is registered by another live session in ZooKeeper"
                )
            log.info("Waiting for the previous registration of broker %d to expire", registration.broker_id)
            self._wait_until_deleted(path, min(1.0, max(0.0, remaining_ms / 1000)))

    def _wait_until_deleted(self, path: str, timeout_s: float) -> None:
        """Wait up to `timeout_s` for `path` to go (not at all when it is gone already)."""
        gone = threading.Event()
        if self._zk.exists(path, watch=lambda _event: gone.set()) is not None:
            gone.wait(timeout_s)

    @_translated
    def get_broker(self, broker_id: int) -> BrokerRegistration | None:
        """The broker's registration, with its epoch; None when it is not registered."""
        try:
            data, stat = self._zk.get(zk_data.broker_path(broker_id))
        except NoNodeError:
            return None
        return zk_data.decode_broker(broker_id, data, stat.czxid)

    @_translated
    def get_all_broker_and_epochs(self) -> dict[int, int]:
        """Every registered broker id with its epoch (registration zxid)."""
        live = {}
        for child in self._zk.get_children(zk_data.BROKER_IDS):
            stat = self._zk.exists(zk_data.broker_path(int(child)))
            if stat is not None:
                live[int(child)] = int(stat.czxid)
        return live

    def watch_broker_ids(self, callback: Callable[[list[int]], WatchResult]) -> None:
        """`callback(broker_ids)` now and whenever brokers register or go."""
        self._watch_children(zk_data.BROKER_IDS, lambda children: callback([int(c) for c in children]))

    # -- the controller --------------------------------------------------------------------
    @_translated
    def ensure_feature_znode(self) -> None:
        """`/feature` as a Kafka 3.9 controller leaves it on failover: created, enabled and empty,
        when absent (an existing one is left as it is)."""
        try:
            self._zk.create(zk_data.FEATURE, zk_data.encode_feature_znode())
        except NodeExistsError:
            pass

    @_translated
    def get_controller_id(self) -> int | None:
        """The active controller's broker id; None when there is none."""
        try:
            data, _ = self._zk.get(zk_data.CONTROLLER)
        except NoNodeError:
            return None
        return zk_data.decode_controller(data)

    def watch_controller(self, callback: Callable[[int | None], WatchResult]) -> None:
        """`callback(controller_id)` now and whenever `/controller` changes (None: no controller)."""

        def on_data(data: bytes | None, _stat: ZnodeStat | None) -> WatchResult:
            return callback(None if data is None else zk_data.decode_controller(data))

        self._watch_data(zk_data.CONTROLLER, on_data)

    @_translated
    def get_or_create_controller_epoch(self) -> tuple[int, int]:
        """The controller epoch and its znode's version (created with the initial epoch if absent)."""
        try:
            data, stat = self._zk.get(zk_data.CONTROLLER_EPOCH)
            return zk_data.decode_controller_epoch(data), int(stat.version)
        except NoNodeError:
            try:
                self._zk.create(
                    zk_data.CONTROLLER_EPOCH, zk_data.encode_controller_epoch(zk_data.INITIAL_CONTROLLER_EPOCH)
                )
            except NodeExistsError:
                pass
            return self.get_or_create_controller_epoch()

    @_translated
    def register_controller_and_increment_controller_epoch(
        self, broker_id: int, new_epoch: int, expected_epoch_zk_version: int
    ) -> ControllerElection:
        """Create the ephemeral `/controller` and bump `/controller_epoch` in one transaction."""
        transaction = self._zk.transaction()
        transaction.create(zk_data.CONTROLLER, zk_data.encode_controller(broker_id), ephemeral=True)
        transaction.set_data(
            zk_data.CONTROLLER_EPOCH, zk_data.encode_controller_epoch(new_epoch), expected_epoch_zk_version
        )
        results = transaction.commit()
        if isinstance(results[0], NodeExistsError):
            return ControllerElection.CONTROLLER_EXISTS
        if isinstance(results[1], BadVersionError):
            return ControllerElection.EPOCH_CHANGED
        if any(isinstance(r, Exception) for r in results):
            log.warning("Controller election failed: %s", results)
            return ControllerElection.FAILED
        return ControllerElection.ELECTED

    # -- topics ----------------------------------------------------------------------------
    @_translated
    def get_all_topics(self) -> set[str]:
        return set(self._zk.get_children(zk_data.TOPICS))

    def watch_topics(self, callback: Callable[[list[str]], WatchResult]) -> None:
        """`callback(topics)` now and whenever topics are created or deleted."""
        self._watch_children(zk_data.TOPICS, callback)

    def watch_topic(self, topic: str, callback: Callable[[TopicAssignment | None], WatchResult]) -> None:
        """`callback(assignment)` now and whenever the topic's znode changes (None: deleted)."""

        def on_data(data: bytes | None, _stat: ZnodeStat | None) -> WatchResult:
            return callback(None if data is None else zk_data.decode_topic(data))

        self._watch_data(zk_data.topic_path(topic), on_data)

    @_translated
    def get_topic_assignment(self, topic: str, timeout_s: float | None = None) -> tuple[TopicAssignment, int] | None:
        """The topic's assignment and its znode's version; None when the topic does not exist."""
        try:
            data, stat = _result(self._zk.get_async(zk_data.topic_path(topic)), timeout_s)
        except NoNodeError:
            return None
        return zk_data.decode_topic(data), int(stat.version)

    @_translated
    def create_topic_assignment(self, topic: str, assignment: TopicAssignment, timeout_s: float | None = None) -> bool:
        """Create the topic's znode; False when it exists already."""
        try:
            _result(
                self._zk.create_async(zk_data.topic_path(topic), zk_data.encode_topic(assignment), makepath=True),
                timeout_s,
            )
        except NodeExistsError:
            return False
        return True

    @_translated
    def set_topic_assignment(
        self, topic: str, assignment: TopicAssignment, expected_version: int, timeout_s: float | None = None
    ) -> bool:
        """Compare-and-set the topic's assignment; False when its version changed meanwhile."""
        try:
            _result(
                self._zk.set_async(zk_data.topic_path(topic), zk_data.encode_topic(assignment), expected_version),
                timeout_s,
            )
        except BadVersionError:
            return False
        return True

    @_translated
    def update_assignment_and_states(
        self,
        topic: str,
        assignment: TopicAssignment,
        states: Mapping[TopicPartition, tuple[LeaderAndIsr, int]],
        expected_controller_epoch_zk_version: int,
    ) -> bool:
        """The controller's write of a topic's assignment (whatever the znode's version), after
        compare-and-sets of partition states (new state, expected version), in one transaction that
        checks the controller epoch; False when a state changed or the topic went meanwhile,
        ControllerMovedError when the epoch moved."""
        transaction = self._zk.transaction()
        transaction.check(zk_data.CONTROLLER_EPOCH, expected_controller_epoch_zk_version)
        for (name, partition), (state, version) in states.items():
            transaction.set_data(zk_data.partition_state_path(name, partition), zk_data.encode_state(state), version)
        transaction.set_data(zk_data.topic_path(topic), zk_data.encode_topic(assignment))
        return self._commit_as_controller(transaction)

    # -- reassignments asked through /admin/reassign_partitions ----------------------------
    def watch_reassign_partitions(self, callback: Callable[[bytes | None], WatchResult]) -> None:
        """`callback(data)` now and whenever `/admin/reassign_partitions` is created or changes
        (None: absent)."""

        def on_data(data: bytes | None, _stat: ZnodeStat | None) -> WatchResult:
            return callback(data)

        self._watch_data(zk_data.REASSIGN_PARTITIONS, on_data)

    @_translated
    def get_reassign_partitions(self) -> tuple[bytes, int] | None:
        """`/admin/reassign_partitions` and its version; None when absent."""
        try:
            data, stat = self._zk.get(zk_data.REASSIGN_PARTITIONS)
        except NoNodeError:
            return None
        return data, int(stat.version)

    @_translated
    def set_reassign_partitions(self, data: bytes, expected_version: int) -> bool:
        """Compare-and-set `/admin/reassign_partitions`; False when it changed or went meanwhile."""
        try:
            self._zk.set(zk_data.REASSIGN_PARTITIONS, data, expected_version)
        except (BadVersionError, NoNodeError):
            return False
        return True

    @_translated
    def delete_reassign_partitions(self, expected_version: int = -1) -> bool:
        try:
            self._zk.delete(zk_data.REASSIGN_PARTITIONS, expected_version)
        except NoNodeError:
            return True
        except BadVersionError:
            return False
        return True

    # -- deleting topics -----------------------------------------------------------------
    @_translated
    def is_topic_marked_for_deletion(self, topic: str, timeout_s: float | None = None) -> bool:
        return _result(self._zk.exists_async(zk_data.delete_topic_path(topic)), timeout_s) is not None

    @_translated
    def create_delete_topic_path(self, topic: str, timeout_s: float | None = None) -> None:
        """Ask the controller to delete the topic (nothing when asked already)."""
        try:
            _result(self._zk.create_async(zk_data.delete_topic_path(topic), makepath=True), timeout_s)
        except NodeExistsError:
            pass

    @_translated
    def get_topic_deletions(self) -> list[str]:
        return sorted(self._zk.get_children(zk_data.DELETE_TOPICS))

    def watch_topic_deletions(self, callback: Callable[[list[str]], WatchResult]) -> None:
        self._watch_children(zk_data.DELETE_TOPICS, callback)

    @_translated
    def delete_topic_znode(self, topic: str) -> None:
        """The topic's znode with its partitions' states, and its configs."""
        self._delete_quietly(zk_data.topic_path(topic), recursive=True)
        self._delete_quietly(zk_data.config_path(zk_data.TOPIC_CONFIG_TYPE, topic))

    @_translated
    def delete_topic_deletion(self, topic: str) -> None:
        self._delete_quietly(zk_data.delete_topic_path(topic))

    # -- partition states ----------------------------------------------------------------
    def watch_partition_state(
        self, topic: str, partition: int, callback: Callable[[LeaderAndIsr | None], WatchResult]
    ) -> None:
        """`callback(state)` now and whenever the partition's state znode changes (None: absent)."""

        def on_data(data: bytes | None, stat: ZnodeStat | None) -> WatchResult:
            if data is None or stat is None:
                return callback(None)
            return callback(zk_data.decode_state(data, stat.version, stat.mzxid))

        self._watch_data(zk_data.partition_state_path(topic, partition), on_data)

    @_translated
    def get_topic_partition_state(self, topic: str, partition: int) -> LeaderAndIsr | None:
        try:
            data, stat = self._zk.get(zk_data.partition_state_path(topic, partition))
        except NoNodeError:
            return None
        return zk_data.decode_state(data, stat.version, stat.mzxid)

    @_translated
    def get_topic_partition_states(self, partitions: list[TopicPartition]) -> dict[TopicPartition, LeaderAndIsr | None]:
        """Many partitions' states, read in one pipelined round."""
        pending = {tp: self._zk.get_async(zk_data.partition_state_path(*tp)) for tp in partitions}
        states: dict[TopicPartition, LeaderAndIsr | None] = {}
        for tp, answer in pending.items():
            try:
                data, stat = answer.get()
            except NoNodeError:
                states[tp] = None
            else:
                states[tp] = zk_data.decode_state(data, stat.version, stat.mzxid)
        return states

    @_translated
    def create_topic_partition_state(
        self, topic: str, partition: int, state: LeaderAndIsr, expected_controller_epoch_zk_version: int
    ) -> bool:
        """A partition's first state, if the controller epoch is still this controller's; False when
        the topic is gone or another writer was first; ControllerMovedError when the epoch moved."""
        try:
            self._zk.ensure_path(zk_data.partition_path(topic, partition))
        except NoNodeError:
            return False
        transaction = self._zk.transaction()
        transaction.check(zk_data.CONTROLLER_EPOCH, expected_controller_epoch_zk_version)
        transaction.create(zk_data.partition_state_path(topic, partition), zk_data.encode_state(state))
        return self._commit_as_controller(transaction)

    @_translated
    def update_leader_and_isr(
        self, states: Mapping[TopicPartition, tuple[LeaderAndIsr, int]], expected_controller_epoch_zk_version: int
    ) -> bool:
        """Compare-and-set every partition's state (new state, expected version) in one transaction
        that checks the controller epoch; False when a state changed meanwhile, ControllerMovedError
        when the epoch moved."""
        transaction = self._zk.transaction()
        transaction.check(zk_data.CONTROLLER_EPOCH, expected_controller_epoch_zk_version)
        for (topic, partition), (state, version) in states.items():
            transaction.set_data(zk_data.partition_state_path(topic, partition), zk_data.encode_state(state), version)
        return self._commit_as_controller(transaction)

    @staticmethod
    def _commit_as_controller(transaction: Any) -> bool:
        results = transaction.commit()
        if isinstance(results[0], Exception) and not isinstance(results[0], RolledBackError):
            raise ControllerMovedError()
        return not any(isinstance(r, Exception) for r in results)

    def set_topic_partition_state_async(
        self,
        topic: str,
        partition: int,
        state: LeaderAndIsr,
        expected_version: int,
        on_done: Callable[[PartitionStateWritten | Exception], None],
    ) -> bool:
        """Compare-and-set a partition's state without waiting (a leader changing its ISR);
        `on_done` hears the outcome on kazoo's thread. False when the write could not be sent."""
        try:
            answer = self._zk.set_async(
                zk_data.partition_state_path(topic, partition), zk_data.encode_state(state), expected_version
            )
        except KazooException:
            return False
        answer.rawlink(lambda done: on_done(_state_written(done)))
        return True

    # -- ISR change notifications --------------------------------------------------------
    def propagate_isr_changes(self, partitions: list[TopicPartition]) -> None:
        """Tell the controller which partitions' ISRs changed (without waiting)."""
        try:
            self._zk.create_async(
                f"{zk_data.ISR_CHANGES}/{zk_data.ISR_CHANGE_PREFIX}",
                zk_data.encode_isr_change(partitions),
                sequence=True,
            )
        except KazooException:
            log.debug("Could not announce the ISR change of %s", partitions)

    def watch_isr_change_notifications(self, callback: Callable[[list[str]], WatchResult]) -> None:
        self._watch_children(zk_data.ISR_CHANGES, callback)

    @_translated
    def delete_isr_change_notifications(self) -> None:
        for child in sorted(self._zk.get_children(zk_data.ISR_CHANGES)):
            self._delete_quietly(f"{zk_data.ISR_CHANGES}/{child}")

    # -- log directory failures ------------------------------------------------------------
    @_translated
    def set_offline_replicas(self, offline: zk_data.OfflineReplicas) -> None:
        """Write this broker's `/brokers/offline_replicas/<id>` (ephemeral, owned by this session).
        One left by an older session of the broker is replaced."""
        path = zk_data.offline_replicas_path(offline.broker_id)
        data = zk_data.encode_offline_replicas(offline)
        client = self._zk
        for _ in range(3):
            try:
                client.create(path, data, ephemeral=True, makepath=True)
                return
            except NodeExistsError:
                stat = client.exists(path)
                if stat is None:
                    continue
                if stat.ephemeralOwner == client.client_id[0]:
                    client.set(path, data)
                    return
                self._delete_quietly(path)  # an earlier session's, not expired yet
        raise ZooKeeperError(f"could not write {path}")

    @_translated
    def get_offline_replicas(self) -> dict[int, zk_data.OfflineReplicas]:
        """Every broker's replicas on offline log dirs, by broker id (brokers without any left out)."""
        found = {}
        for child in self._children(zk_data.OFFLINE_REPLICAS):
            try:
                data, _ = self._zk.get(f"{zk_data.OFFLINE_REPLICAS}/{child}")
            except NoNodeError:
                continue
            found[int(child)] = zk_data.decode_offline_replicas(int(child), data)
        return found

    @_translated
    def propagate_log_dir_event(self, broker_id: int) -> None:
        """Kafka's `/log_dir_event_notification/log_dir_event_<seq>`: a log dir of the broker failed."""
        self._zk.create(
            f"{zk_data.LOG_DIR_EVENTS}/{zk_data.LOG_DIR_EVENT_PREFIX}",
            zk_data.encode_log_dir_event(broker_id),
            sequence=True,
            makepath=True,
        )

    def watch_log_dir_event_notifications(self, callback: Callable[[list[str]], WatchResult]) -> None:
        self._watch_children(zk_data.LOG_DIR_EVENTS, callback)

    @_translated
    def get_all_log_dir_event_notifications(self) -> list[str]:
        return sorted(self._children(zk_data.LOG_DIR_EVENTS))

    @_translated
    def get_broker_ids_from_log_dir_events(self, children: Iterable[str]) -> set[int]:
        broker_ids = set()
        for child in children:
            notification = self._get_notification(f"{zk_data.LOG_DIR_EVENTS}/{child}")
            broker_id = None if notification is None else zk_data.decode_log_dir_event(notification.data)
            if broker_id is not None:
                broker_ids.add(broker_id)
        return broker_ids

    @_translated
    def delete_log_dir_event_notifications(self, children: Iterable[str]) -> None:
        for child in children:
            self._delete_quietly(f"{zk_data.LOG_DIR_EVENTS}/{child}")

    # -- configs ---------------------------------------------------------------------------
    @_translated
    def get_entity_configs(self, entity_type: str, name: str) -> dict[str, str]:
        """`/config/<entity_type>/<name>`; empty when absent."""
        try:
            data, _ = self._zk.get(zk_data.config_path(entity_type, name))
        except NoNodeError:
            return {}
        return zk_data.decode_config(data)

    @_translated
    def get_all_entities_with_config(self, entity_type: str) -> list[str]:
        return self._children(f"{zk_data.CONFIG}/{entity_type}")

    @_translated
    def set_or_create_entity_configs(
        self, entity_type: str, name: str, configs: dict[str, str], timeout_s: float | None = None
    ) -> None:
        """Write an entity's configs, in the key order Kafka writes that entity type's."""
        path = zk_data.config_path(entity_type, name)
        data = _encode_entity_configs(entity_type, configs)
        try:
            _result(self._zk.set_async(path, data), timeout_s)
        except NoNodeError:
            try:
                _result(self._zk.create_async(path, data, makepath=True), timeout_s)
            except NodeExistsError:
                _result(self._zk.set_async(path, data), timeout_s)

    @_translated
    def create_config_change_notification(self, entity_type: str, name: str, timeout_s: float | None = None) -> None:
        _result(
            self._zk.create_async(
                f"{zk_data.CONFIG_CHANGES}/{zk_data.CONFIG_CHANGE_PREFIX}",
                zk_data.encode_config_change(entity_type, name),
                sequence=True,
                makepath=True,
            ),
            timeout_s,
        )

    @_translated
    def get_config_change_notifications(self) -> list[str]:
        return self._children(zk_data.CONFIG_CHANGES)

    def watch_config_change_notifications(self, callback: Callable[[list[str]], WatchResult]) -> None:
        self._watch_children(zk_data.CONFIG_CHANGES, callback)

    @_translated
    def get_config_change_notification(self, child: str) -> ChangeNotification | None:
        return self._get_notification(f"{zk_data.CONFIG_CHANGES}/{child}")

    def delete_config_change_notification(self, child: str) -> None:
        self._delete_notification(f"{zk_data.CONFIG_CHANGES}/{child}")

    # -- producer ids ----------------------------------------------------------------------
    @_translated
    def allocate_producer_id_block(
        self, broker_id: int, size: int, *, timeout_s: float, max_attempts: int = 10
    ) -> int | None:
        """Reserve the next block of `size` producer ids in `/latest_producer_id_block` (read the
        latest, compare-and-set the next); its first id, or None when other brokers kept winning."""
        for _ in range(max_attempts):
            data, stat = _result(self._zk.get_async(zk_data.PRODUCER_ID_BLOCK), timeout_s)
            last_end = zk_data.decode_producer_id_block_end(data)
            start = 0 if last_end is None else last_end + 1
            block = zk_data.encode_producer_id_block(broker_id, start, start + size - 1)
            try:
                _result(self._zk.set_async(zk_data.PRODUCER_ID_BLOCK, block, stat.version), timeout_s)
            except BadVersionError:
                continue
            return start
        return None

    # -- ACLs --------------------------------------------------------------------------------
    @_translated
    def create_acl_paths(self, pattern_types: Iterable[str], resource_types: Iterable[str]) -> None:
        """Every resource type's parent, for each pattern type, and the change paths."""
        resource_types = list(resource_types)
        for pattern_type in pattern_types:
            for resource_type in resource_types:
                self._zk.ensure_path(zk_data.acl_type_path(pattern_type, resource_type))
        self._zk.ensure_path(zk_data.LITERAL_ACL_CHANGES)
        self._zk.ensure_path(zk_data.EXTENDED_ACL_CHANGES)

    @_translated
    def get_acl_resource_names(self, pattern_type: str, resource_type: str) -> list[str]:
        return self._children(zk_data.acl_type_path(pattern_type, resource_type))

    @_translated
    def get_versioned_acls(self, pattern_type: str, resource_type: str, name: str) -> tuple[bytes | None, int]:
        """The resource's ACL znode data and version; (None, -1) when absent."""
        try:
            data, stat = self._zk.get(zk_data.acl_path(pattern_type, resource_type, name))
        except NoNodeError:
            return None, -1
        return data, int(stat.version)

    @_translated
    def conditional_set_acls(
        self, pattern_type: str, resource_type: str, name: str, data: bytes | None, expected_version: int
    ) -> bool:
        """Write the resource's ACLs if its znode still has `expected_version` (-1: absent); None
        deletes it. False when another broker wrote first."""
        path = zk_data.acl_path(pattern_type, resource_type, name)
        try:
            if data is None:
                self._zk.delete(path, version=expected_version)
            elif expected_version < 0:
                self._zk.create(path, data, makepath=True)
            else:
                self._zk.set(path, data, version=expected_version)
        except (BadVersionError, NodeExistsError, NoNodeError, NotEmptyError):
            return False
        return True

    @_translated
    def create_acl_change_notification(self, changes_path: str, payload: bytes) -> None:
        self._zk.create(f"{changes_path}/{zk_data.ACL_CHANGE_PREFIX}", payload, sequence=True, makepath=True)

    @_translated
    def get_acl_change_notifications(self, changes_path: str) -> list[str]:
        return self._children(changes_path)

    def watch_acl_change_notifications(self, changes_path: str, callback: Callable[[list[str]], WatchResult]) -> None:
        self._watch_children(changes_path, callback)

    @_translated
    def get_acl_change_notification(self, changes_path: str, child: str) -> ChangeNotification | None:
        return self._get_notification(f"{changes_path}/{child}")

    def delete_acl_change_notification(self, changes_path: str, child: str) -> None:
        self._delete_notification(f"{changes_path}/{child}")

    # -- delegation tokens (Kafka's createDelegationTokenPaths, setOrCreateDelegationToken, ...) --
    @_translated
    def create_delegation_token_paths(self) -> None:
        self._zk.ensure_path(zk_data.DELEGATION_TOKENS)
        self._zk.ensure_path(zk_data.DELEGATION_TOKEN_CHANGES)

    @_translated
    def get_delegation_token_ids(self) -> list[str]:
        return self._children(zk_data.DELEGATION_TOKENS)

    @_translated
    def get_delegation_token_info(self, token_id: str) -> bytes | None:
        """`/delegation_token/tokens/<id>`'s data; None when absent."""
        try:
            data, _ = self._zk.get(f"{zk_data.DELEGATION_TOKENS}/{token_id}")
        except NoNodeError:
            return None
        return bytes(data) if data else None

    @_translated
    def set_or_create_delegation_token(self, token_id: str, data: bytes) -> None:
        path = f"{zk_data.DELEGATION_TOKENS}/{token_id}"
        try:
            self._zk.set(path, data)
        except NoNodeError:
            try:
                self._zk.create(path, data, makepath=True)
            except NodeExistsError:
                self._zk.set(path, data)

    @_translated
    def delete_delegation_token(self, token_id: str) -> None:
        self._delete_quietly(f"{zk_data.DELEGATION_TOKENS}/{token_id}")

    @_translated
    def create_token_change_notification(self, token_id: str) -> None:
        self._zk.create(
            f"{zk_data.DELEGATION_TOKEN_CHANGES}/{zk_data.DELEGATION_TOKEN_CHANGE_PREFIX}",
            token_id.encode(),
            sequence=True,
            makepath=True,
        )

    @_translated
    def get_token_change_notifications(self) -> list[str]:
        return self._children(zk_data.DELEGATION_TOKEN_CHANGES)

    def watch_token_change_notifications(self, callback: Callable[[list[str]], WatchResult]) -> None:
        self._watch_children(zk_data.DELEGATION_TOKEN_CHANGES, callback)

    @_translated
    def get_token_change_notification(self, child: str) -> ChangeNotification | None:
        return self._get_notification(f"{zk_data.DELEGATION_TOKEN_CHANGES}/{child}")

    def delete_token_change_notification(self, child: str) -> None:
        self._delete_notification(f"{zk_data.DELEGATION_TOKEN_CHANGES}/{child}")

    # -- the znode operations underneath ---------------------------------------------------
    def _watch_children(self, path: str, callback: Callable[[list[str]], WatchResult]) -> None:
        def on_children(children: list[str]) -> WatchResult:
            return callback(children)

        with _zookeeper_errors():
            ChildrenWatch(self._zk, path, on_children)

    def _watch_data(self, path: str, callback: Callable[[bytes | None, ZnodeStat | None], WatchResult]) -> None:
        def on_data(data: bytes | None, stat: ZnodeStat | None) -> WatchResult:
            return callback(data, stat)

        with _zookeeper_errors():
            DataWatch(self._zk, path, on_data)

    def _children(self, path: str) -> list[str]:
        try:
            return list(self._zk.get_children(path))
        except NoNodeError:
            return []

    def _get_notification(self, path: str) -> ChangeNotification | None:
        try:
            data, stat = self._zk.get(path)
        except NoNodeError:
            return None
        return ChangeNotification(data, int(stat.ctime))

    def _delete_notification(self, path: str) -> None:
        """Delete an expired notification; another broker may have done it already."""
        try:
            self._zk.delete(path)
        except NoNodeError:
            pass
        except Exception:  # noqa: BLE001 - purging is best effort
            log.debug("Could not delete %s", path, exc_info=True)

    def _delete_quietly(self, path: str, recursive: bool = False) -> None:
        try:
            self._zk.delete(path, recursive=recursive)
        except NoNodeError:
            pass


def _state_written(done: IAsyncResult) -> PartitionStateWritten | Exception:
    try:
        stat = done.get_nowait()
    except Exception as exc:  # noqa: BLE001 - the outcome is handed on, not raised
        return exc
    return PartitionStateWritten(int(stat.version), int(stat.mzxid))


def _encode_entity_configs(entity_type: str, configs: dict[str, str]) -> bytes:
    if entity_type in (zk_data.USER_CONFIG_TYPE, zk_data.CLIENT_CONFIG_TYPE, zk_data.IP_CONFIG_TYPE):
        return zk_data.encode_user_config(configs)
    if entity_type == zk_data.BROKER_CONFIG_TYPE:
        return zk_data.encode_broker_config(configs)
    return zk_data.encode_config(configs)
