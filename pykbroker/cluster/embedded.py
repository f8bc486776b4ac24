"""The single-broker metadata store: cluster state kept in a JSON file in the first log dir.

The state is the topics (ids, partitions, config overrides) and the dynamic broker configs (per
broker id, and the cluster-wide default under Kafka's entity name `<default>`).

Every log dir also gets Kafka's `meta.properties` (cluster.id, broker.id), so the directories
look like a Kafka broker's. Writes replace the state file atomically (write, fsync, rename).

The file is one JSON document, one topic a line; files written with any other layout of the same
document (older versions indented it) load alike.

The state changes at once on the event loop. A change is numbered and marks its topic changed;
once per turn of the loop (however many changes it made) the changed topics are serialized again,
one line of JSON each, kept with the unchanged ones' lines, and the list of lines (immutable
strings) goes to one writer thread (`state_writer.SnapshotWriter`) that joins, writes, fsyncs and
renames off the loop, newer snapshots superseding older ones: the loop's work is proportional to
what changed, and the changes made during one write go out in the next (group commit). Off the
loop (tests, tools) a change is serialized and handed over at once, whole. Nothing is acknowledged before it is
on disk: admin handlers await `wait_durable()` before answering, an ISR proposal is answered
(`callback`) only once its snapshot is written, and `close()` flushes the writer.

A topic whose logs cannot be created (a listener raises KafkaError, e.g. KAFKA_STORAGE_ERROR when
no file descriptor is left) is taken out again at once, and the listeners drop what they made of
it: a topic exists with all its partitions or not at all, and so do added partitions. (Should the
broker stop in between, the state written last has them, and the next start creates their logs.)
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

import anyio

from ..protocol.errors import ErrorCode, KafkaError
from .assignment import place_new_topic
from .meta_properties import read_cluster_id, write_atomically, write_meta_properties
from .model import BrokerInfo, PartitionState, TopicInfo, new_cluster_id, new_topic_id, validate_topic_name
from .state_writer import SnapshotWriter
from .store import CLIENT_ENTITY_TYPE, IP_ENTITY_TYPE, USER_ENTITY_TYPE, BrokerEntity, IsrCallback, MetadataStore

log = logging.getLogger(__name__)

STATE_FILE = "pykbroker-metadata.json"
DEFAULT_BROKER_ENTITY = "<default>"  # Kafka's name for the cluster-wide dynamic broker configs


class EmbeddedMetadataStore(MetadataStore):
    def __init__(self, log_dirs: list[str], broker: BrokerInfo) -> None:
        super().__init__()
        self.log_dirs = [Path(d) for d in log_dirs]
        self.broker = broker
        self.controller_id = broker.broker_id
        self._topics: dict[str, TopicInfo] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._user_configs: dict[str, dict[str, str]] = {}
        self._changes = 0  # the number of the newest change
        self._snapshot_loop: asyncio.AbstractEventLoop | None = None  # where a snapshot is scheduled
        self._changed_topics: set[str] = set()  # changed in place since the last snapshot
        self._topic_lines: dict[str, tuple[TopicInfo, str]] = {}  # each topic's serialized line
        for d in self.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
        self.cluster_id = self._load_or_create_cluster_id()
        self._load_state()
        self._writer: SnapshotWriter[StateSnapshot] = SnapshotWriter(self._write_state, "pykbroker-metadata-writer")

    # -- reading -----------------------------------------------------------------------
    def brokers(self) -> list[BrokerInfo]:
        return [self.broker]

    def topics(self) -> dict[str, TopicInfo]:
        return self._topics

    # -- writing -----------------------------------------------------------------------
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
        assignments = assignments or self._assign(num_partitions, replication_factor)
        partitions = {
            index: PartitionState(index, list(replicas), leader=replicas[0], isr=list(replicas))
            for index, replicas in assignments.items()
        }
        info = TopicInfo(name, new_topic_id(), partitions, dict(configs or {}))
        self._topics[name] = info
        self._changed_topics.add(name)
        self._save_state()
        try:
            self._notify_topic(name, info)
        except KafkaError:  # its logs could not be created (KAFKA_STORAGE_ERROR): no half topic
            self._topics.pop(name, None)
            self._changed_topics.add(name)
            self._save_state()
            self._notify_topic(name, None)  # what was created goes
            raise
        return info

    def delete_topic(self, name: str) -> None:
        if self._topics.pop(name, None) is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        self._changed_topics.add(name)
        self._save_state()
        self._notify_topic(name, None)

    def add_partitions(self, name: str, new_total: int, assignments: list[list[int]] | None = None) -> TopicInfo:
        info = self._topics[name]
        first_new = len(info.partitions)
        for offset, index in enumerate(range(first_new, new_total)):
            replicas = assignments[offset] if assignments else [self.broker.broker_id]
            info.partitions[index] = PartitionState(index, list(replicas), leader=replicas[0], isr=list(replicas))
        self._changed_topics.add(name)
        self._save_state()
        try:
            self._notify_topic(name, info)
        except KafkaError:  # their logs could not be created: the topic keeps its old partitions
            for index in range(first_new, new_total):
                info.partitions.pop(index, None)
            self._changed_topics.add(name)
            self._save_state()
            self._notify_topic(name, info)
            raise
        return info

    def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        self._topics[name].configs = dict(configs)
        self._changed_topics.add(name)
        self._save_state()
        self._notify_topic(name, self._topics[name])

    def propose_isr(
        self,
        topic: str,
        partition: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: list[int],
        callback: IsrCallback,
    ) -> None:
        state = self._topics[topic].partitions.get(partition) if topic in self._topics else None
        if state is None or state.partition_epoch != partition_epoch:
            callback(None)
            return
        state.isr = list(new_isr)
        state.partition_epoch += 1
        self._topic_changed(topic)
        self._changed_topics.add(topic)
        seq = self._save_state()
        new_epoch = state.partition_epoch
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called off any loop: write here, then answer
            self._writer.flush()
            callback(new_epoch if self._writer.durable >= seq else None)
            return
        # The leader acts on the new ISR only once it is on disk, as it does once ZooKeeper
        # acknowledges the write in cluster mode; a failed write refuses the proposal (the
        # in-memory state keeps it and a later snapshot writes it).
        self._writer.when_durable(seq, loop, lambda error: callback(new_epoch if error is None else None))

    # -- log directory failures --------------------------------------------------------
    def log_dir_failed(self, broker_id: int, log_dir: str, offline_partitions: list[tuple[str, int]]) -> None:
        """One broker is its own controller: no other replica could lead the partitions, so
        nothing is recorded. The listeners of their topics are told again, so that whoever
        serves them (the coordinators of the internal topics) sees that they are no longer
        served here and resigns them."""
        for name in sorted({topic for topic, _ in offline_partitions}):
            info = self._topics.get(name)
            if info is not None:
                self._notify_topic(name, info)

    @property
    def state_dir(self) -> Path:
        """The log directory holding this store's state (as KRaft's `metadata.log.dir`)."""
        return self.log_dirs[0]

    # -- dynamic broker configs --------------------------------------------------------
    def broker_configs(self, entity: BrokerEntity) -> dict[str, str]:
        return dict(self._broker_configs.get(_entity_key(entity), {}))

    def set_broker_configs(self, entity: BrokerEntity, configs: dict[str, str]) -> None:
        key = _entity_key(entity)
        if configs:
            self._broker_configs[key] = dict(configs)
        else:
            self._broker_configs.pop(key, None)
        self._save_state()
        self._notify_broker_configs(entity, configs)

    def all_user_configs(self) -> dict[str, dict[str, str]]:
        return {user: dict(configs) for user, configs in self._user_configs.items()}

    def set_user_configs(self, user: str, configs: dict[str, str]) -> None:
        self._user_configs[user] = dict(configs)
        self._save_state()
        self._notify_user_configs(user, configs)

    def set_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        self.apply_group_configs(group_id, configs)
        self._save_state()

    def set_quota_entity_configs(self, entity_type: str, name: str, configs: dict[str, str]) -> None:
        super().set_quota_entity_configs(entity_type, name, configs)
        if entity_type != USER_ENTITY_TYPE:
            self._save_state()

    def _assign(self, num_partitions: int, replication_factor: int) -> dict[int, list[int]]:
        return place_new_topic([(self.broker.broker_id, self.broker.rack)], num_partitions, replication_factor)

    # -- durability --------------------------------------------------------------------
    async def wait_durable(self) -> None:
        """Return once every change made so far is on disk (raise the write's error if not)."""
        seq = self._changes
        if self._writer.durable >= seq:
            return
        done = anyio.Event()
        outcome: list[BaseException | None] = []

        def written(error: BaseException | None) -> None:
            outcome.append(error)
            done.set()

        self._writer.when_durable(seq, asyncio.get_running_loop(), written)
        await done.wait()
        if outcome[0] is not None:
            raise outcome[0]

    def close(self) -> None:
        """Put the last state on disk (blocks until the writer thread is idle)."""
        self._submit_snapshot()
        if not self._writer.flush() or self._writer.durable < self._changes:
            log.error("The last metadata state could not be written to %s", self._state_path())

    # -- persistence -------------------------------------------------------------------
    def _load_or_create_cluster_id(self) -> str:
        cluster_id = read_cluster_id(self.log_dirs) or new_cluster_id()
        write_meta_properties(self.log_dirs, broker_id=self.broker.broker_id, cluster_id=cluster_id)
        return cluster_id

    def _state_path(self) -> Path:
        return self.log_dirs[0] / STATE_FILE

    def _load_state(self) -> None:
        path = self._state_path()
        if not path.exists():
            return
        raw = json.loads(path.read_text())
        for t in raw["topics"]:
            partitions = {
                int(p["partition"]): PartitionState(
                    int(p["partition"]),
                    p["replicas"],
                    p["leader"],
                    p["leader_epoch"],
                    p["isr"],
                    p.get("partition_epoch", 0),
                )
                for p in t["partitions"]
            }
            self._topics[t["name"]] = TopicInfo(t["name"], uuid.UUID(t["topic_id"]), partitions, t.get("configs", {}))
        self._broker_configs = {entity: dict(configs) for entity, configs in raw.get("broker_configs", {}).items()}
        self._user_configs = {user: dict(configs) for user, configs in raw.get("user_configs", {}).items()}
        self._group_configs = {group: dict(configs) for group, configs in raw.get("group_configs", {}).items()}
        for entity_type in (CLIENT_ENTITY_TYPE, IP_ENTITY_TYPE):
            saved = raw.get("quota_configs", {}).get(entity_type, {})
            self._quota_entity_configs[entity_type] = {name: dict(configs) for name, configs in saved.items()}

    def _save_state(self) -> int:
        """Number a change; its snapshot goes to the writer at the end of this turn of the loop."""
        self._changes += 1
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # off any loop: hand over the whole state now
            self._topic_lines.clear()
            self._submit_snapshot()
            return self._changes
        if self._snapshot_loop is not loop:  # (a loop that closed first never ran its snapshot)
            self._snapshot_loop = loop
            loop.call_soon(self._submit_snapshot)
        return self._changes

    def _submit_snapshot(self) -> None:
        """Hand the writer the state's lines, serializing only the topics changed since the last."""
        self._snapshot_loop = None
        if self._changes <= self._writer.submitted:
            return
        lines = [self._topic_line(name, info) for name, info in self._topics.items()]
        self._changed_topics.clear()
        if len(self._topic_lines) > len(self._topics):  # some were deleted
            self._topic_lines = {name: self._topic_lines[name] for name in self._topics}
        configs = json.dumps(
            {
                "broker_configs": self._broker_configs,
                "user_configs": self._user_configs,
                "group_configs": self._group_configs,
                "quota_configs": self._quota_entity_configs,
            }
        )
        self._writer.submit(StateSnapshot(lines, configs), self._changes)

    def _topic_line(self, name: str, info: TopicInfo) -> str:
        cached = self._topic_lines.get(name)
        if cached is None or cached[0] is not info or name in self._changed_topics:
            cached = (info, json.dumps(_topic_record(info), separators=(",", ":")))
            self._topic_lines[name] = cached
        return cached[1]

    def _write_state(self, snapshot: StateSnapshot) -> None:  # on the writer thread
        write_atomically(self._state_path(), snapshot.text())


@dataclass(frozen=True, eq=False)  # written as it is, never compared
class StateSnapshot:
    """The state file's text in parts: one line per topic, then the dynamic configs' object."""

    topic_lines: list[str]
    configs: str  # a JSON object: {"broker_configs": ..., "user_configs": ..., "group_configs": ...}

    def text(self) -> str:
        topics = ",\n".join(self.topic_lines)
        return f'{{"version": 1, "topics": [\n{topics}\n], {self.configs[1:]}\n'


def _topic_record(info: TopicInfo) -> dict:
    return {
        "name": info.name,
        "topic_id": str(info.topic_id),
        "configs": info.configs,
        "partitions": [
            {
                "partition": p.partition,
                "replicas": p.replicas,
                "leader": p.leader,
                "leader_epoch": p.leader_epoch,
                "isr": p.isr,
                "partition_epoch": p.partition_epoch,
            }
            for p in info.partitions.values()
        ],
    }


def _entity_key(entity: BrokerEntity) -> str:
    return DEFAULT_BROKER_ENTITY if entity is None else str(entity)
