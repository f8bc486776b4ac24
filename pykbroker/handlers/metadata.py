"""Metadata (key 3), versions 0-12.

Brokers, cluster id and controller id (v1+), and for each requested topic its id (v10+) and
partitions with leader, leader epoch (v7+), replicas, ISR and offline replicas (v5+).

Which topics: v0 treats an empty list as "all topics"; v1+ uses null for "all" and an empty list
for none. v12 may name topics by id: once one is, only the ids count (Kafka ignores the names,
such as the empty one the Java client sends beside an id; unknown ids get UNKNOWN_TOPIC_ID).
Missing topics are created when the broker allows auto-creation and the request does too
(always before v4); otherwise UNKNOWN_TOPIC_OR_PARTITION. A name that collides with an
existing topic's ('.' versus '_') is not auto-created: INVALID_TOPIC_EXCEPTION.
A topic created here is answered with its leader at once (Kafka's controller answers
LEADER_NOT_AVAILABLE until the topic is committed), so a client may produce to it right away:
the answer therefore waits until the new topic is durable in the metadata store (an fsync on the
embedded store's writer thread; at once with ZooKeeper, which acknowledged the creation).
Authorized operations are reported when asked for (v8+).

An existing topic's entry is encoded once per version and kept until the topic changes (the
store's `derived`), so that a request for every topic of a large cluster costs per topic only
the lookups and the authorization, not the encoding of every partition again.

Before v12 a topic is named by its name: a request with a null name or a topic id in those
versions is invalid (Kafka's "Topic name can not be null for version 10") and closes the
connection.

Authorization as Kafka's KafkaApis: topics the caller may not DESCRIBE are left out of an
all-topics answer and answered TOPIC_AUTHORIZATION_FAILED when named (without their id, so that
their existence is not disclosed; by id, the id is returned); a missing topic is auto-created
only with CREATE on the cluster or on the topic (TOPIC_AUTHORIZATION_FAILED otherwise). Those
answers come first, as Kafka's do.
"""

import uuid
from collections.abc import Iterator

from ..cluster.model import INTERNAL_TOPICS, BrokerInfo, PartitionState, TopicInfo
from ..cluster.store import MetadataStore
from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.codegen import ZERO_UUID, EncodedStructs
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import MetadataRequest, MetadataResponse
from .support.auth import CLUSTER, CLUSTER_NAME, TOPIC, authorized_operations
from .support.authorization import check
from .support.context import CloseConnection, RequestContext
from .support.controller_rules import check_new_topic_name

API_KEY = ApiKey.METADATA
MIN_VERSION = 0
MAX_VERSION = 12

RESPONSE = messages.of(MetadataResponse)
DESCRIBE_TOPIC = check(API_KEY, "topic")
CREATE_ON_CLUSTER = check(API_KEY, "create_any")
CREATE_TOPIC = check(API_KEY, "create")
DESCRIBE_CLUSTER = check(API_KEY, "cluster")

# A topic as the answer names it: found, or (name, id, error) when it was not
Unresolved = tuple[str | None, uuid.UUID, ErrorCode]
TopicEntry = TopicInfo | Unresolved


async def handle(request: MetadataRequest, ctx: RequestContext) -> MetadataResponse:
    _check_named_by_name(request, ctx.api_version)
    services = ctx.services
    store = services.metadata
    response = MetadataResponse(
        brokers=[_broker_entry(b) for b in services.live_brokers(ctx.listener_name)],
        cluster_id=store.cluster_id,
        controller_id=store.controller_id,
        cluster_authorized_operations=_cluster_operations(
            ctx, ctx.api_version in range(8, 11) and request.include_cluster_authorized_operations
        ),
    )
    include_ops = ctx.api_version >= 8 and request.include_topic_authorized_operations
    created: list[str] = []
    denied: list[TopicEntry] = []
    described = [_encoded_topic(ctx, entry, include_ops) for entry in _resolve_topics(request, ctx, created, denied)]
    response.topics = EncodedStructs.joined([_encoded_topic(ctx, entry, False) for entry in denied] + described)
    if created:
        await store.wait_durable()
    return response


def _check_named_by_name(request: MetadataRequest, version: int) -> None:
    """Before v12 every requested topic has a name and no id (Kafka's InvalidRequestException)."""
    if version >= 12 or not request.topics:
        return
    for topic in request.topics:
        if topic.name is None:
            raise CloseConnection(f"Topic name can not be null for version {version}")
        if version >= 10 and topic.topic_id != ZERO_UUID:
            raise CloseConnection(f"Topic IDs are not supported in requests for version {version}")


def _broker_entry(b: BrokerInfo) -> MetadataResponse.MetadataResponseBroker:
    return MetadataResponse.MetadataResponseBroker(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)


def _wants_all_topics(request: MetadataRequest, version: int) -> bool:
    if version == 0:
        return not request.topics
    return request.topics is None


def _cluster_operations(ctx: RequestContext, requested: bool) -> int:
    if requested and not DESCRIBE_CLUSTER.allows(ctx):
        return 0
    return authorized_operations(ctx, CLUSTER, CLUSTER_NAME, requested)


def _resolve_topics(
    request: MetadataRequest, ctx: RequestContext, created: list[str], denied: list[TopicEntry]
) -> Iterator[TopicEntry]:
    """Yields TopicInfo for topics that exist, or (name, topic_id, error code) for the others;
    appends to `denied` the (name, topic_id, TOPIC_AUTHORIZATION_FAILED) answers."""
    store = ctx.services.metadata
    if _wants_all_topics(request, ctx.api_version):
        topics = sorted(store.topics().values(), key=lambda t: t.name)
        yield from [t for t in topics if DESCRIBE_TOPIC.allows(ctx, t.name, log_if_denied=False)]
        return
    requested = request.topics or []  # not null here: null asks for all topics
    if ctx.api_version >= 12:
        topic_ids = [t.topic_id for t in requested if t.topic_id != ZERO_UUID]
        if topic_ids:
            for entry in _lookup_by_ids(store, topic_ids):
                if isinstance(entry, TopicInfo) and not DESCRIBE_TOPIC.allows(ctx, entry.name):
                    denied.append((None, entry.topic_id, DESCRIBE_TOPIC.denied))
                else:
                    yield entry
            return
    allow_auto_create = ctx.api_version < 4 or request.allow_auto_topic_creation
    may_create_any = None  # CREATE on the cluster, asked once when needed
    for wanted in requested:
        if wanted.name is None:
            yield _lookup_by_id(store, wanted.topic_id)
            continue
        if not DESCRIBE_TOPIC.allows(ctx, wanted.name):
            denied.append((wanted.name, ZERO_UUID, DESCRIBE_TOPIC.denied))
            continue
        info = store.topic(wanted.name)
        if info is not None:
            yield info
        elif allow_auto_create and ctx.services.topic_creator.auto_create_enabled:
            if may_create_any is None:
                may_create_any = CREATE_ON_CLUSTER.allows(ctx, log_if_denied=False)
            if may_create_any or CREATE_TOPIC.allows(ctx, wanted.name):
                yield _auto_create(ctx, wanted.name, created)
            else:
                denied.append((wanted.name, ZERO_UUID, CREATE_TOPIC.denied))
        else:
            yield (wanted.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


def _lookup_by_ids(store: MetadataStore, topic_ids: list[uuid.UUID]) -> Iterator[TopicEntry]:
    """As Kafka: once any topic is named by a (non-zero) id, only the ids count (a name next
    to an id, such as the empty name the Java client sends, is ignored); unknown ids come
    first with UNKNOWN_TOPIC_ID, then the known topics, each once."""
    found = [_lookup_by_id(store, topic_id) for topic_id in dict.fromkeys(topic_ids)]
    yield from [entry for entry in found if not isinstance(entry, TopicInfo)]
    yield from [entry for entry in found if isinstance(entry, TopicInfo)]


def _lookup_by_id(store: MetadataStore, topic_id: uuid.UUID) -> TopicEntry:
    info = store.topic_by_id(topic_id)
    if info is None:
        return (None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID)
    return info


def _auto_create(ctx: RequestContext, name: str, created: list[str]) -> TopicEntry:
    try:
        # Auto-creation follows the rules of CreateTopics: a name that collides with an
        # existing topic's on '.' versus '_' is refused (INVALID_TOPIC_EXCEPTION), as in Kafka.
        check_new_topic_name(name, ctx.services.metadata.topics())
        info = ctx.services.topic_creator.auto_create(name)
        created.append(name)
        return info
    except KafkaError as exc:
        return (name, ZERO_UUID, exc.code)


def _encoded_topic(ctx: RequestContext, entry: TopicEntry, include_ops: bool) -> EncodedStructs:
    """One topic's entry, encoded for the request's version; an existing topic's entry without
    authorized operations comes from the store's memo."""
    version = ctx.api_version
    if isinstance(entry, TopicInfo) and not include_ops:

        def encode(info: TopicInfo) -> EncodedStructs:
            return _encode_topics([_describe_topic(ctx, info, False)], version)

        return ctx.services.metadata.derived(entry, f"metadata topic v{version}", encode)
    return _encode_topics([_describe_topic(ctx, entry, include_ops)], version)


def _encode_topics(topics: list[MetadataResponse.MetadataResponseTopic], version: int) -> EncodedStructs:
    return RESPONSE.encode_structs("MetadataResponseTopic", topics, version=version)


def _describe_topic(
    ctx: RequestContext, entry: TopicEntry, include_ops: bool
) -> MetadataResponse.MetadataResponseTopic:
    if not isinstance(entry, TopicInfo):
        name, topic_id, error = entry
        return MetadataResponse.MetadataResponseTopic(
            error_code=error,
            name=name,
            topic_id=topic_id,
            is_internal=name in INTERNAL_TOPICS,
            topic_authorized_operations=authorized_operations(ctx, TOPIC, name or "", include_ops),
        )
    return MetadataResponse.MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=entry.name,
        topic_id=entry.topic_id,
        is_internal=entry.is_internal,
        partitions=ctx.services.metadata.derived(entry, "metadata partitions", _describe_partitions),
        topic_authorized_operations=authorized_operations(ctx, TOPIC, entry.name, include_ops),
    )


def _describe_partitions(info: TopicInfo) -> list[MetadataResponse.MetadataResponsePartition]:
    """The topic's partitions as a response lists them; the store keeps this list until the
    topic changes (responses share it: encoding reads it, nothing changes it)."""
    return [_describe_partition(p) for p in sorted(info.partitions.values(), key=lambda p: p.partition)]


def _describe_partition(state: PartitionState) -> MetadataResponse.MetadataResponsePartition:
    return MetadataResponse.MetadataResponsePartition(
        error_code=ErrorCode.LEADER_NOT_AVAILABLE if state.leader < 0 else ErrorCode.NONE,
        partition_index=state.partition,
        leader_id=state.leader,
        leader_epoch=state.leader_epoch,
        replica_nodes=list(state.replicas),
        isr_nodes=list(state.isr),
        offline_replicas=list(state.offline_replicas),
    )
