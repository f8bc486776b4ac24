"""The interface every metadata store offers, and change notification.

Two stores implement it: `EmbeddedMetadataStore` (one broker, state in a local file) and, in
cluster mode, `ZkMetadataStore` (Kafka's znodes in ZooKeeper). Readers get consistent snapshots
of plain records; writers go through the store's methods, which validate, persist and then tell
the listeners. Everything here is called on the broker's event loop thread, and listeners are
called there too.

A partition's leader proposes ISR changes with `propose_isr`; the store persists them (with a
compare-and-set on the partition epoch in ZooKeeper) and answers through a callback with the new
partition epoch, or None when the proposal lost to a newer state. The answer comes once the new
ISR is persisted (acknowledged by ZooKeeper, or on disk), so the leader never acts on an ISR that
a restart could forget.

A store's writers change its in-memory state at once; `wait_durable()` returns once every change
made so far is persisted. Whoever acknowledges a change (the admin handlers) awaits it first: the
embedded store writes its file on a worker thread, while ZooKeeper's writes are acknowledged
before the writer returns.

Besides topics, a store keeps the dynamic broker configs (Kafka's KIP-226 layers): one set of
overrides per broker id, and one cluster-wide default set (entity `None`). They are raw strings,
already validated by whoever wrote them; `BrokerConfig.with_dynamic` layers them over the static
config.

And the configs of users (Kafka's `/config/users/<user>` entity configs): the SCRAM credentials,
one key per mechanism ("SCRAM-SHA-256": "salt=...,stored_key=...,server_key=...,iterations=4096").
Users are named as Kafka names their znodes: sanitized (URL-encoded, see `security.sanitizer`).
The same user configs hold the user's client quotas (`producer_byte_rate`, ...), as Kafka's
`/config/users/<user>` znode does; a user's per-client quotas are user configs named
`<user>/clients/<client>` (Kafka's child znode), and `<default>` names the default user or client.
Client-id quotas (`/config/clients/<client>`) and IP quotas (`/config/ips/<ip>`) are the other
quota entity types (`quota_entity_configs`); every change of a quota entity's configs reaches the
quota listeners, on every broker.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .model import BrokerInfo, TopicInfo

IsrCallback = Callable[["int | None"], None]  # the new partition epoch, or None if refused
TopicListener = Callable[[str, "TopicInfo | None"], None]  # (name, new state or None if deleted)
BrokerEntity = int | None  # a broker id, or None for the cluster-wide default
BrokerConfigListener = Callable[[BrokerEntity, dict], None]  # (entity, its new dynamic configs)
UserConfigListener = Callable[[str, dict], None]  # (sanitized user name, its new configs)
GroupConfigListener = Callable[[str, dict], None]  # (group id, its new dynamic configs)
QuotaConfigListener = Callable[[str, str, dict], None]  # (entity type, sanitized entity name, its new configs)

USER_ENTITY_TYPE = "users"  # Kafka's ConfigType.User: `/config/users/<user>[/clients/<client>]`
CLIENT_ENTITY_TYPE = "clients"  # Kafka's ConfigType.Client: `/config/clients/<client>`
IP_ENTITY_TYPE = "ips"  # Kafka's ConfigType.Ip: `/config/ips/<ip>`
QUOTA_ENTITY_TYPES = (USER_ENTITY_TYPE, CLIENT_ENTITY_TYPE, IP_ENTITY_TYPE)


class MetadataStore(ABC):
    cluster_id: str
    controller_id: int
    broker_epoch: int = -1  # this broker's registration epoch (-1 when not registered)

    def __init__(self) -> None:
        self._topic_listeners: list[TopicListener] = []
        self._broker_config_listeners: list[BrokerConfigListener] = []
        self._user_config_listeners: list[UserConfigListener] = []
        self._group_config_listeners: list[GroupConfigListener] = []
        self._quota_config_listeners: list[QuotaConfigListener] = []
        self._quota_entity_configs: dict[str, dict[str, dict[str, str]]] = {CLIENT_ENTITY_TYPE: {}, IP_ENTITY_TYPE: {}}
        self._group_configs: dict[str, dict[str, str]] = {}
        self._topic_id_index: TopicNamesById | None = None

    # -- reading -----------------------------------------------------------------------
    @abstractmethod
    def brokers(self) -> list[BrokerInfo]:
        """The live brokers."""

    @abstractmethod
    def topics(self) -> dict[str, TopicInfo]:
        """Every topic by name."""

    def live_brokers(self, listener_name: str | None = None) -> list[BrokerInfo]:
        """The live brokers with their endpoint on `listener_name` (None: their first)."""
        return self.brokers()

    def broker_endpoint(self, broker_id: int, listener_name: str | None = None) -> BrokerInfo | None:
        for broker in self.live_brokers(listener_name):
            if broker.broker_id == broker_id:
                return broker
        return None

    def topic(self, name: str) -> TopicInfo | None:
        return self.topics().get(name)

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        name = self.topic_names_by_id().get(topic_id)
        return None if name is None else self.topics().get(name)

    def topic_names_by_id(self) -> Mapping[uuid.UUID, str]:
        """{topic id: name} of every topic; a lookup costs one dictionary access while the topics
        stay the same, not a walk over all of them (Fetch v13+ asks for every request)."""
        index = getattr(self, "_topic_id_index", None)
        if index is None:
            index = self._topic_id_index = TopicNamesById(self)
        return index

    # -- writing -----------------------------------------------------------------------
    @abstractmethod
    def create_topic(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        configs: dict[str, str] | None = None,
        assignments: dict[int, list[int]] | None = None,
    ) -> TopicInfo:
        """Create a topic; raises KafkaError (TOPIC_ALREADY_EXISTS, INVALID_*, ...)."""

    @abstractmethod
    def delete_topic(self, name: str) -> None:
        """Delete a topic; raises KafkaError UNKNOWN_TOPIC_OR_PARTITION if absent."""

    @abstractmethod
    def add_partitions(self, name: str, new_total: int, assignments: list[list[int]] | None = None) -> TopicInfo:
        """Grow a topic to `new_total` partitions (replicas of each new one, or the default)."""

    @abstractmethod
    def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        """Replace a topic's config overrides."""

    @abstractmethod
    def propose_isr(
        self,
        topic: str,
        partition: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: list[int],
        callback: IsrCallback,
    ) -> None:
        """Persist a leader's new ISR if the partition is still at `partition_epoch`; then
        `callback(new partition epoch)`, or `callback(None)` when refused (later, on the loop)."""

    @abstractmethod
    async def wait_durable(self) -> None:
        """Return once every change made so far is persisted; raises if it could not be."""

    # -- log directory failures --------------------------------------------------------
    def log_dir_failed(self, broker_id: int, log_dir: str, offline_partitions: list[tuple[str, int]]) -> None:
        """This broker's log directory `log_dir` failed and `offline_partitions` (hosted there)
        went offline (on the loop, after the replica manager stopped serving them). A cluster
        tells its controller (Kafka's `/log_dir_event_notification`), which moves their
        leadership; a store with no controller to tell has nothing to do."""

    # -- lifecycle ---------------------------------------------------------------------
    def register(self) -> None:
        """Announce this broker as live (once it is ready to serve)."""

    def close(self) -> None:
        """Release the store's resources (a ZooKeeper session ends here; the embedded store
        puts its last state on disk)."""

    # -- dynamic broker configs --------------------------------------------------------
    @abstractmethod
    def broker_configs(self, entity: BrokerEntity) -> dict[str, str]:
        """The dynamic config overrides of one broker, or the cluster-wide defaults (None)."""

    @abstractmethod
    def set_broker_configs(self, entity: BrokerEntity, configs: dict[str, str]) -> None:
        """Replace the dynamic config overrides of one broker or of the cluster default."""

    # -- user configs (SCRAM credentials) ----------------------------------------------
    def user_configs(self, user: str) -> dict[str, str]:
        """The configs of one (sanitized) user name; empty when it has none."""
        return dict(self.all_user_configs().get(user, {}))

    @abstractmethod
    def all_user_configs(self) -> dict[str, dict[str, str]]:
        """Every user with configs, by sanitized name."""

    @abstractmethod
    def set_user_configs(self, user: str, configs: dict[str, str]) -> None:
        """Replace the configs of one (sanitized) user name; KafkaError when not possible."""

    def add_user_config_listener(self, listener: UserConfigListener) -> None:
        self._user_config_listeners.append(listener)

    def _notify_user_configs(self, user: str, configs: dict[str, str]) -> None:
        for listener in self._user_config_listeners:
            listener(user, dict(configs))
        for quota_listener in self._quota_config_listeners:
            quota_listener(USER_ENTITY_TYPE, user, dict(configs))

    # -- quota entities (users, user/client pairs, client ids, IPs) --------------------
    def quota_entity_configs(self, entity_type: str) -> dict[str, dict[str, str]]:
        """Every entity of one quota entity type (`QUOTA_ENTITY_TYPES`) with configs, by sanitized
        name (users include their `<user>/clients/<client>` children)."""
        if entity_type == USER_ENTITY_TYPE:
            return self.all_user_configs()
        return {name: dict(configs) for name, configs in self._quota_entity_configs[entity_type].items()}

    def set_quota_entity_configs(self, entity_type: str, name: str, configs: dict[str, str]) -> None:
        """Replace the configs of one quota entity (sanitized name). The stores make them durable
        and tell the other brokers; this base keeps client and IP entities in memory."""
        if entity_type == USER_ENTITY_TYPE:
            self.set_user_configs(name, configs)
        else:
            self.apply_quota_entity_configs(entity_type, name, configs)

    def apply_quota_entity_configs(self, entity_type: str, name: str, configs: dict[str, str]) -> None:
        """Take a client or IP entity's configs as they now are (written here, or by another broker)."""
        entities = self._quota_entity_configs[entity_type]
        if entities.get(name, {}) == configs:
            return
        if configs:
            entities[name] = dict(configs)
        else:
            entities.pop(name, None)
        for listener in self._quota_config_listeners:
            listener(entity_type, name, dict(configs))

    def add_quota_config_listener(self, listener: QuotaConfigListener) -> None:
        """`listener(entity type, sanitized name, configs)` hears of every change of a quota
        entity's configs (users' too: their SCRAM credentials share the znode)."""
        self._quota_config_listeners.append(listener)

    # -- group configs (Kafka's GROUP config resource) --------------------------------
    def group_configs(self, group_id: str) -> dict[str, str]:
        """The dynamic configs of one group; empty when it has none."""
        return dict(self._group_configs.get(group_id, {}))

    def all_group_configs(self) -> dict[str, dict[str, str]]:
        return {group: dict(configs) for group, configs in self._group_configs.items()}

    def set_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        """Replace the dynamic configs of one group (an empty dict removes them). The stores
        make them durable; this base keeps them in memory."""
        self.apply_group_configs(group_id, configs)

    def apply_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        """Take a group's configs as they now are (written here, or by another broker)."""
        if self._group_configs.get(group_id, {}) == configs:
            return
        if configs:
            self._group_configs[group_id] = dict(configs)
        else:
            self._group_configs.pop(group_id, None)
        for listener in self._group_config_listeners:
            listener(group_id, dict(configs))

    def add_group_config_listener(self, listener: GroupConfigListener) -> None:
        self._group_config_listeners.append(listener)

    # -- change notification -----------------------------------------------------------
    def add_topic_listener(self, listener: TopicListener) -> None:
        self._topic_listeners.append(listener)

    def _notify_topic(self, name: str, info: TopicInfo | None) -> None:
        self._topic_changed(name)
        for listener in self._topic_listeners:
            listener(name, info)

    # -- values derived from a topic ---------------------------------------------------
    def derived(self, info: TopicInfo, kind: str, compute: Callable[[TopicInfo], Any]) -> Any:
        """`compute(info)`, kept until the topic changes (a request that describes every topic,
        such as Metadata, then costs per partition only for the topics that changed)."""
        memo: dict[str, dict[str, tuple[TopicInfo, Any]]] = self.__dict__.setdefault("_derived", {})
        entry = memo.get(info.name, {}).get(kind)
        if entry is not None and entry[0] is info:
            return entry[1]
        value = compute(info)
        memo.setdefault(info.name, {})[kind] = (info, value)
        return value

    def _topic_changed(self, name: str) -> None:
        """Forget what was derived from topic `name` (it changed)."""
        self.__dict__.get("_derived", {}).pop(name, None)

    def add_broker_config_listener(self, listener: BrokerConfigListener) -> None:
        self._broker_config_listeners.append(listener)

    def _notify_broker_configs(self, entity: BrokerEntity, configs: dict[str, str]) -> None:
        for listener in self._broker_config_listeners:
            listener(entity, dict(configs))


class TopicNamesById(Mapping[uuid.UUID, str]):
    """A store's topic names by topic id, kept as an index that is checked on each lookup (the
    name found must still carry that id) and rebuilt from the store's topics when it misses: a
    new or recreated topic, or an id that is not known (answered None)."""

    def __init__(self, store: MetadataStore) -> None:
        self._store = store
        self._names: dict[uuid.UUID, str] = {}

    def get(self, topic_id: uuid.UUID, default: str | None = None) -> str | None:  # type: ignore[override]
        name = self._names.get(topic_id)
        if name is None or not self._still_names(topic_id, name):
            self._names = {info.topic_id: name for name, info in self._store.topics().items()}
            name = self._names.get(topic_id)
        return default if name is None else name

    def _still_names(self, topic_id: uuid.UUID, name: str) -> bool:
        info = self._store.topics().get(name)
        return info is not None and info.topic_id == topic_id

    def __getitem__(self, topic_id: uuid.UUID) -> str:
        name = self.get(topic_id)
        if name is None:
            raise KeyError(topic_id)
        return name

    def __iter__(self) -> Iterator[uuid.UUID]:
        return iter({info.topic_id for info in self._store.topics().values()})

    def __len__(self) -> int:
        return len(self._store.topics())
