"""Watching the cluster's znodes and handing every change to the store on the event loop.

Runs on ZooKeeper's threads, through `KafkaZkClient`'s watches. Each watch reads what changed and
posts it through the loop bridge; nothing here touches the store's state:

- `/brokers/ids` children: the live brokers' registrations (with their epochs);
- `/controller`: the active controller's id;
- `/brokers/topics` children, then each topic's znode (its id and replica assignment) and
  each partition's `state` znode (leader, leader epoch, ISR, partition epoch);
- `/log_dir_event_notification` children (and `/brokers/ids`): every broker's replicas on offline
  log dirs, read again from `/brokers/offline_replicas`;
- `/config/changes` children: which topic's or broker's dynamic configs, which user's configs
  (SCRAM credentials, quotas; `users/<user>/clients/<client>` too), or which client id's or IP's
  quotas, to read again.

The first reading of every watch happens inside `start()`, so after `start()` the bridge holds
a complete snapshot of the cluster. The ZooKeeper client re-arms the watches after a
reconnection and after a new session replaces an expired one.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from typing import Protocol

from ..common.time import now_ms
from . import zk_data
from .loop_bridge import LoopBridge
from .zk_client import KafkaZkClient, WatchResult
from .zk_data import BrokerRegistration, LeaderAndIsr, OfflineReplicas, TopicAssignment

log = logging.getLogger(__name__)

CONFIG_CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # Kafka's notification retention


class ClusterView(Protocol):
    """What the watches feed (on the event loop): the ZooKeeper metadata store's `apply_*`."""

    def apply_brokers(self, registrations: dict[int, BrokerRegistration]) -> None: ...
    def apply_controller(self, controller_id: int) -> None: ...
    def apply_offline_replicas(self, found: dict[int, OfflineReplicas]) -> None: ...
    def apply_topic(self, name: str, assignment: TopicAssignment, configs: dict[str, str]) -> None: ...
    def apply_partition_state(self, name: str, partition: int, state: LeaderAndIsr | None) -> None: ...
    def apply_topic_deleted(self, name: str) -> None: ...
    def apply_topic_configs(self, name: str, configs: dict[str, str]) -> None: ...
    def apply_broker_configs(self, entity: str, configs: dict[str, str]) -> None: ...
    def apply_user_configs(self, user: str, configs: dict[str, str]) -> None: ...
    def apply_group_configs(self, group_id: str, configs: dict[str, str]) -> None: ...
    def apply_quota_entity_configs(self, entity_type: str, name: str, configs: dict[str, str]) -> None: ...


class ClusterWatches:
    def __init__(self, zk_client: KafkaZkClient, bridge: LoopBridge, store: ClusterView) -> None:
        self.zk_client = zk_client
        self.bridge = bridge
        self.store = store
        self._lock = threading.Lock()
        self._generations = itertools.count(1)
        self._topics: dict[str, int] = {}  # watched topic -> its watch generation
        self._partitions: dict[str, set[int]] = {}  # watched partitions of each topic
        self._with_state: set[tuple[str, int]] = set()  # watched partitions whose state znode was read
        self._last_config_change: str | None = None
        self._stopped = False

    def start(self) -> None:
        self._skip_existing_config_changes()
        for entity in self.zk_client.get_all_entities_with_config(zk_data.BROKER_CONFIG_TYPE):
            self._post_broker_configs(entity)
        for user in self.zk_client.get_all_entities_with_config(zk_data.USER_CONFIG_TYPE):
            self._post_user_configs(user)
            for client in self.zk_client.get_all_entities_with_config(f"{zk_data.USER_CONFIG_TYPE}/{user}/clients"):
                self._post_user_configs(f"{user}/clients/{client}")
        for entity_type in (zk_data.CLIENT_CONFIG_TYPE, zk_data.IP_CONFIG_TYPE):
            for name in self.zk_client.get_all_entities_with_config(entity_type):
                self._post_quota_entity_configs(entity_type, name)
        for group in self.zk_client.get_all_entities_with_config(zk_data.GROUP_CONFIG_TYPE):
            self._post_group_configs(group)
        self.zk_client.watch_broker_ids(self._on_brokers)
        self.zk_client.watch_controller(self._on_controller)
        self.zk_client.watch_topics(self._on_topics)
        self.zk_client.watch_config_change_notifications(self._on_config_changes)
        self.zk_client.watch_log_dir_event_notifications(self._on_log_dir_events)

    def stop(self) -> None:
        self._stopped = True

    # -- brokers and controller ---------------------------------------------------------
    def _on_brokers(self, broker_ids: list[int]) -> WatchResult:
        if self._stopped:
            return False
        registrations: dict[int, BrokerRegistration] = {}
        for broker_id in broker_ids:
            registration = self.zk_client.get_broker(broker_id)
            if registration is not None:
                registrations[broker_id] = registration
        self.bridge.post(self.store.apply_brokers, registrations)
        self._post_offline_replicas()
        return None

    def _on_log_dir_events(self, _children: list[str]) -> WatchResult:
        """A broker announced a failed log dir (or the controller consumed the announcement)."""
        if self._stopped:
            return False
        self._post_offline_replicas()
        return None

    def _post_offline_replicas(self) -> None:
        self.bridge.post(self.store.apply_offline_replicas, self.zk_client.get_offline_replicas())

    def _on_controller(self, controller_id: int | None) -> WatchResult:
        if self._stopped:
            return False
        self.bridge.post(self.store.apply_controller, -1 if controller_id is None else controller_id)
        return None

    # -- topics and partitions ----------------------------------------------------------
    def _on_topics(self, children: list[str]) -> WatchResult:
        if self._stopped:
            return False
        with self._lock:
            known = set(self._topics)
        for topic in sorted(set(children) - known):
            self._watch_topic(topic)
        for topic in sorted(known - set(children)):
            self._forget(topic, None)
        return None

    def _watch_topic(self, topic: str) -> None:
        generation = next(self._generations)
        with self._lock:
            self._topics[topic] = generation
            self._partitions[topic] = set()
        self.zk_client.watch_topic(topic, functools.partial(self._on_topic_data, topic, generation))

    def _current(self, topic: str, generation: int) -> bool:
        with self._lock:
            return not self._stopped and self._topics.get(topic) == generation

    def _forget(self, topic: str, generation: int | None) -> None:
        with self._lock:
            if generation is not None and self._topics.get(topic) != generation:
                return
            self._topics.pop(topic, None)
            self._partitions.pop(topic, None)
            self._with_state = {key for key in self._with_state if key[0] != topic}
        self.bridge.post(self.store.apply_topic_deleted, topic)

    def _on_topic_data(self, topic: str, generation: int, assignment: TopicAssignment | None) -> WatchResult:
        if not self._current(topic, generation):
            return False
        if assignment is None:
            self._forget(topic, generation)
            return False
        configs = self.zk_client.get_entity_configs(zk_data.TOPIC_CONFIG_TYPE, topic)
        self.bridge.post(self.store.apply_topic, topic, assignment, configs)
        with self._lock:
            watched = self._partitions.setdefault(topic, set())
            new = sorted(set(assignment.partitions) - watched)
            watched.update(new)
        for partition in new:
            self.zk_client.watch_partition_state(
                topic, partition, functools.partial(self._on_state, topic, generation, partition)
            )
        return None

    def _on_state(self, topic: str, generation: int, partition: int, state: LeaderAndIsr | None) -> WatchResult:
        """A partition's state znode read. Before it is first written (a topic being created) the
        watch waits for it; once it is gone again (the topic being deleted) the watch ends, or
        every deleted partition would keep a watch, and its ZooKeeper client listener, forever."""
        if not self._current(topic, generation):
            return False
        self.bridge.post(self.store.apply_partition_state, topic, partition, state)
        return self._state_absent(topic, partition) if state is None else self._state_read(topic, partition)

    def _state_read(self, topic: str, partition: int) -> WatchResult:
        with self._lock:
            self._with_state.add((topic, partition))
        return None

    def _state_absent(self, topic: str, partition: int) -> WatchResult:
        """None (keep watching) while the znode was never there; False (stop) once it was
        removed, forgetting the partition so that a later reading of the topic watches it anew."""
        with self._lock:
            if (topic, partition) not in self._with_state:
                return None
            self._with_state.discard((topic, partition))
            self._partitions.get(topic, set()).discard(partition)
        return False

    # -- dynamic configs ----------------------------------------------------------------
    def _skip_existing_config_changes(self) -> None:
        """Configs are read whole at start, so notifications older than now are done."""
        existing = sorted(self.zk_client.get_config_change_notifications())
        self._last_config_change = existing[-1] if existing else None

    def _on_config_changes(self, children: list[str]) -> WatchResult:
        if self._stopped:
            return False
        for child in sorted(children):
            if self._last_config_change is not None and child <= self._last_config_change:
                continue
            self._last_config_change = child
            self._process_config_change(child)
        return None

    def _process_config_change(self, child: str) -> None:
        notification = self.zk_client.get_config_change_notification(child)
        if notification is None:
            return
        entity = zk_data.decode_config_change(notification.data)
        if entity is not None:
            entity_type, name = entity
            if entity_type == zk_data.TOPIC_CONFIG_TYPE:
                configs = self.zk_client.get_entity_configs(entity_type, name)
                self.bridge.post(self.store.apply_topic_configs, name, configs)
            elif entity_type == zk_data.BROKER_CONFIG_TYPE:
                self._post_broker_configs(name)
            elif entity_type == zk_data.USER_CONFIG_TYPE:  # a user, or a user's client (`<user>/clients/<client>`)
                self._post_user_configs(name)
            elif entity_type in (zk_data.CLIENT_CONFIG_TYPE, zk_data.IP_CONFIG_TYPE):
                self._post_quota_entity_configs(entity_type, name)
            elif entity_type == zk_data.GROUP_CONFIG_TYPE:
                self._post_group_configs(name)
        if now_ms() - notification.ctime_ms > CONFIG_CHANGE_EXPIRATION_MS:
            self.zk_client.delete_config_change_notification(child)

    def _post_broker_configs(self, entity: str) -> None:
        configs = self.zk_client.get_entity_configs(zk_data.BROKER_CONFIG_TYPE, entity)
        self.bridge.post(self.store.apply_broker_configs, entity, configs)

    def _post_group_configs(self, group: str) -> None:
        configs = self.zk_client.get_entity_configs(zk_data.GROUP_CONFIG_TYPE, group)
        self.bridge.post(self.store.apply_group_configs, group, configs)

    def _post_quota_entity_configs(self, entity_type: str, name: str) -> None:
        configs = self.zk_client.get_entity_configs(entity_type, name)
        self.bridge.post(self.store.apply_quota_entity_configs, entity_type, name, configs)

    def _post_user_configs(self, user: str) -> None:
        configs = self.zk_client.get_entity_configs(zk_data.USER_CONFIG_TYPE, user)
        self.bridge.post(self.store.apply_user_configs, user, configs)
