"""The single-broker metadata store: cluster state kept in a JSON file in the first log dir.

The state is the topics (ids, partitions, config overrides) and the dynamic broker configs (per
broker id, and the cluster-wide default under Kafka's entity name `<default>`).

Every log dir also gets Kafka's `meta.properties` (cluster.id, broker.id), so the directories
look like a Kafka broker's. Writes replace the state file atomically (write, fsync, rename).

The state changes at once on the event loop; each change serializes the whole state there (small,
cheap) and hands it to one writer thread (`state_writer.SnapshotWriter`) that writes, fsyncs and
renames off the loop, newer snapshots superseding older ones. Nothing is acknowledged before it is
on disk: admin handlers await `wait_durable()` before answering, an ISR proposal is answered
(`callback`) only once its snapshot is written, and `close()` flushes the writer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from pathlib import Path

import anyio

from ..protocol.errors import ErrorCode, KafkaError
from .assignment import place_new_topic
from .meta_properties import read_cluster_id, write_atomically, write_meta_properties
from .model import BrokerInfo, PartitionState, TopicInfo, new_cluster_id, new_topic_id, validate_topic_name
from .state_writer import SnapshotWriter
from .store import BrokerEntity, MetadataStore

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
        for d in self.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
        self.cluster_id = self._load_or_create_cluster_id()
        self._load_state()
        self._writer = SnapshotWriter(self._write_state, "pykbroker-metadata-writer")

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
        self._save_state()
        self._notify_topic(name, info)
        return info

    def delete_topic(self, name: str) -> None:
        if self._topics.pop(name, None) is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        self._save_state()
        self._notify_topic(name, None)

    def add_partitions(self, name: str, new_total: int, assignments: list[list[int]] | None = None) -> TopicInfo:
        info = self._topics[name]
        first_new = len(info.partitions)
        for offset, index in enumerate(range(first_new, new_total)):
            replicas = assignments[offset] if assignments else [self.broker.broker_id]
            info.partitions[index] = PartitionState(index, list(replicas), leader=replicas[0], isr=list(replicas))
        self._save_state()
        self._notify_topic(name, info)
        return info

    def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        self._topics[name].configs = dict(configs)
        self._save_state()
        self._notify_topic(name, self._topics[name])

    def propose_isr(
        self, topic: str, partition: int, leader_epoch: int, partition_epoch: int, new_isr: list[int], callback
    ) -> None:
        state = self._topics[topic].partitions.get(partition) if topic in self._topics else None
        if state is None or state.partition_epoch != partition_epoch:
            callback(None)
            return
        state.isr = list(new_isr)
        state.partition_epoch += 1
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

    def _assign(self, num_partitions: int, replication_factor: int) -> dict[int, list[int]]:
        return place_new_topic([(self.broker.broker_id, self.broker.rack)], num_partitions, replication_factor)

    # -- durability --------------------------------------------------------------------
    async def wait_durable(self) -> None:
        """Return once every change made so far is on disk (raise the write's error if not)."""
        seq = self._writer.submitted
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
        if not self._writer.flush():
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

    def _save_state(self) -> int:
        """Hand a snapshot of the state to the writer thread; its number."""
        raw = {
            "version": 1,
            "topics": [
                {
                    "name": t.name,
                    "topic_id": str(t.topic_id),
                    "configs": t.configs,
                    "partitions": [
                        {
                            "partition": p.partition,
                            "replicas": p.replicas,
                            "leader": p.leader,
                            "leader_epoch": p.leader_epoch,
                            "isr": p.isr,
                            "partition_epoch": p.partition_epoch,
                        }
                        for p in t.partitions.values()
                    ],
                }
                for t in self._topics.values()
            ],
            "broker_configs": self._broker_configs,
            "user_configs": self._user_configs,
        }
        return self._writer.submit(json.dumps(raw, indent=1))

    def _write_state(self, text: str) -> None:  # on the writer thread
        write_atomically(self._state_path(), text)


def _entity_key(entity: BrokerEntity) -> str:
    return DEFAULT_BROKER_ENTITY if entity is None else str(entity)
