"""Watching the cluster's znodes and handing every change to the store on the event loop.

Runs on kazoo's threads. Each watch reads what changed and posts it through the loop bridge;
nothing here touches the store's state:

- `/brokers/ids` children: the live brokers' registrations (with their epochs);
- `/controller`: the active controller's id;
- `/brokers/topics` children, then each topic's znode (its id and replica assignment) and
  each partition's `state` znode (leader, leader epoch, ISR, partition epoch);
- `/config/changes` children: which topic's or broker's dynamic configs, or which user's configs
  (SCRAM credentials), to read again.

The first reading of every watch happens inside `start()`, so after `start()` the bridge holds
a complete snapshot of the cluster. kazoo re-arms the watches after a reconnection and after a
new session replaces an expired one.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading

from kazoo.exceptions import NoNodeError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from ..common.time import now_ms
from . import zk_data

log = logging.getLogger(__name__)

CONFIG_CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # Kafka's notification retention


class ClusterWatches:
    def __init__(self, client, bridge, store) -> None:
        self.client = client
        self.bridge = bridge
        self.store = store
        self._lock = threading.Lock()
        self._generations = itertools.count(1)
        self._topics: dict[str, int] = {}  # watched topic -> its watch generation
        self._partitions: dict[str, set[int]] = {}  # watched partitions of each topic
        self._last_config_change: str | None = None
        self._stopped = False

    def start(self) -> None:
        self._skip_existing_config_changes()
        for entity in self._children(f"{zk_data.CONFIG}/{zk_data.BROKER_CONFIG_TYPE}"):
            self._post_broker_configs(entity)
        for user in self._children(f"{zk_data.CONFIG}/{zk_data.USER_CONFIG_TYPE}"):
            self._post_user_configs(user)
        ChildrenWatch(self.client, zk_data.BROKER_IDS, self._on_brokers)
        DataWatch(self.client, zk_data.CONTROLLER, self._on_controller)
        ChildrenWatch(self.client, zk_data.TOPICS, self._on_topics)
        ChildrenWatch(self.client, zk_data.CONFIG_CHANGES, self._on_config_changes)

    def stop(self) -> None:
        self._stopped = True

    # -- brokers and controller ---------------------------------------------------------
    def _on_brokers(self, children: list[str]):
        if self._stopped:
            return False
        registrations = {}
        for child in children:
            broker_id = int(child)
            try:
                data, stat = self.client.get(zk_data.broker_path(broker_id))
            except NoNodeError:
                continue
            registrations[broker_id] = zk_data.decode_broker(broker_id, data, stat.czxid)
        self.bridge.post(self.store.apply_brokers, registrations)
        return None

    def _on_controller(self, data, _stat, _event=None):
        if self._stopped:
            return False
        self.bridge.post(self.store.apply_controller, zk_data.decode_controller(data))
        return None

    # -- topics and partitions ----------------------------------------------------------
    def _on_topics(self, children: list[str]):
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
        DataWatch(self.client, zk_data.topic_path(topic), functools.partial(self._on_topic_data, topic, generation))

    def _current(self, topic: str, generation: int) -> bool:
        with self._lock:
            return not self._stopped and self._topics.get(topic) == generation

    def _forget(self, topic: str, generation: int | None) -> None:
        with self._lock:
            if generation is not None and self._topics.get(topic) != generation:
                return
            self._topics.pop(topic, None)
            self._partitions.pop(topic, None)
        self.bridge.post(self.store.apply_topic_deleted, topic)

    def _on_topic_data(self, topic: str, generation: int, data, _stat, _event=None):
        if not self._current(topic, generation):
            return False
        if data is None:
            self._forget(topic, generation)
            return False
        assignment = zk_data.decode_topic(data)
        configs = self._read_config(zk_data.TOPIC_CONFIG_TYPE, topic)
        self.bridge.post(self.store.apply_topic, topic, assignment, configs)
        with self._lock:
            watched = self._partitions.setdefault(topic, set())
            new = sorted(set(assignment.partitions) - watched)
            watched.update(new)
        for partition in new:
            DataWatch(
                self.client,
                zk_data.partition_state_path(topic, partition),
                functools.partial(self._on_state, topic, generation, partition),
            )
        return None

    def _on_state(self, topic: str, generation: int, partition: int, data, stat, _event=None):
        if not self._current(topic, generation):
            return False
        state = zk_data.decode_state(data, stat.version, stat.mzxid) if data is not None else None
        self.bridge.post(self.store.apply_partition_state, topic, partition, state)
        return None

    # -- dynamic configs ----------------------------------------------------------------
    def _skip_existing_config_changes(self) -> None:
        """Configs are read whole at start, so notifications older than now are done."""
        existing = sorted(self._children(zk_data.CONFIG_CHANGES))
        self._last_config_change = existing[-1] if existing else None

    def _on_config_changes(self, children: list[str]):
        if self._stopped:
            return False
        for child in sorted(children):
            if self._last_config_change is not None and child <= self._last_config_change:
                continue
            self._last_config_change = child
            self._process_config_change(f"{zk_data.CONFIG_CHANGES}/{child}")
        return None

    def _process_config_change(self, path: str) -> None:
        try:
            data, stat = self.client.get(path)
        except NoNodeError:
            return
        entity = zk_data.decode_config_change(data)
        if entity is not None:
            entity_type, name = entity
            if entity_type == zk_data.TOPIC_CONFIG_TYPE:
                self.bridge.post(self.store.apply_topic_configs, name, self._read_config(entity_type, name))
            elif entity_type == zk_data.BROKER_CONFIG_TYPE:
                self._post_broker_configs(name)
            elif entity_type == zk_data.USER_CONFIG_TYPE and "/" not in name:  # not a user's client quotas
                self._post_user_configs(name)
        if now_ms() - stat.ctime > CONFIG_CHANGE_EXPIRATION_MS:
            self._delete_quietly(path)

    def _post_broker_configs(self, entity: str) -> None:
        configs = self._read_config(zk_data.BROKER_CONFIG_TYPE, entity)
        self.bridge.post(self.store.apply_broker_configs, entity, configs)

    def _post_user_configs(self, user: str) -> None:
        configs = self._read_config(zk_data.USER_CONFIG_TYPE, user)
        self.bridge.post(self.store.apply_user_configs, user, configs)

    # -- reading ------------------------------------------------------------------------
    def _read_config(self, entity_type: str, name: str) -> dict[str, str]:
        try:
            data, _ = self.client.get(zk_data.config_path(entity_type, name))
        except NoNodeError:
            return {}
        return zk_data.decode_config(data)

    def _children(self, path: str) -> list[str]:
        try:
            return self.client.get_children(path)
        except NoNodeError:
            return []

    def _delete_quietly(self, path: str) -> None:
        try:
            self.client.delete(path)
        except NoNodeError:
            pass
        except Exception:
            log.debug("Could not delete %s", path, exc_info=True)
