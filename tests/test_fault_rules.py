"""The fault registry on its own (`server/faults/`): what a rule accepts, which requests it
matches, how often it fires, and that every injectable error response encodes in every version."""

from __future__ import annotations

import random
from types import SimpleNamespace

import anyio
import pytest

from pykbroker.handlers.support.context import CloseConnection, RequestContext
from pykbroker.handlers.support.registry import build_registry, default_modules
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.server.faults import (
    PARTITIONED_APIS,
    FaultInjector,
    FaultInterceptor,
    FaultRule,
    can_carry_error,
    error_response,
)

REGISTRY = build_registry(default_modules())
# the APIs whose injected error is the response's own (not its partitions' or topics')
TOP_LEVEL_ERRORS = sorted(
    key for key in REGISTRY if can_carry_error(key) and key not in PARTITIONED_APIS and key != ApiKey.METADATA
)


def context(api_key: int, version: int = 0, client_id: str | None = "client") -> RequestContext:
    return RequestContext(api_key, version, 7, client_id, "127.0.0.1", "PLAINTEXT", services=None)  # type: ignore[arg-type]


def serve(injector: FaultInjector, api_key: int, request=None, client_id: str | None = "client", handler=None):
    """The response to one request under the injector's faults (the handler answers "served")."""

    async def handle(_request, _ctx):
        return "served" if handler is None else handler(_request)

    async def run():
        faults = injector.for_request(api_key, client_id)
        ctx = context(api_key, client_id=client_id)
        return await (handle(request, ctx) if faults is None else faults.serve(handle, request, ctx))

    return anyio.run(run)


def test_a_rule_names_apis_and_errors_by_kafka_name_or_number():
    rule = FaultRule(api="Produce", error="NOT_LEADER_OR_FOLLOWER")
    assert (rule.api_key, rule.error_code) == (ApiKey.PRODUCE, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert FaultRule(api=0, error=6).to_dict() == {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"}
    assert FaultRule(api="ListOffsets", latency_ms=5).api_key == ApiKey.LIST_OFFSETS


@pytest.mark.parametrize(
    "fields, complaint",
    [
        ({"api": "Produce"}, "needs an effect"),
        ({"error": 6}, "needs an API"),
        ({"api": "Produce", "error": "NO_SUCH_ERROR"}, "unknown error"),
        ({"api": "NoSuchApi", "latency_ms": 1}, "unknown API"),
        ({"api": "Produce", "pause_fetch": True}, "Fetch requests only"),
        ({"api": "Produce", "partition": 0, "error": 6}, "needs its topic"),
        ({"api": "Produce", "error": 6, "count": 0}, "at least 1"),
        ({"api": "Produce", "error": 6, "probability": 1.5}, "between 0 and 1"),
    ],
)
def test_a_rule_that_cannot_work_is_refused(fields, complaint):
    with pytest.raises(ValueError, match=complaint):
        FaultRule(**fields)


def test_ids_count_up_and_removal_is_reported():
    injector = FaultInjector()
    first = injector.add(FaultRule(api="Metadata", latency_ms=1))
    second = injector.add(FaultRule(api="Fetch", pause_fetch=True, topic="t"))
    assert (first, second) == (1, 2)
    assert [fault_id for fault_id, _ in injector.list()] == [1, 2]
    assert injector.remove(first) and not injector.remove(first)
    injector.clear()
    assert injector.list() == []


def test_a_fault_fires_count_times_then_goes():
    injector = FaultInjector()
    injector.add(FaultRule(api="Heartbeat", error="REBALANCE_IN_PROGRESS", count=2))
    answers = [serve(injector, ApiKey.HEARTBEAT).error_code for _ in range(2)]
    assert answers == [ErrorCode.REBALANCE_IN_PROGRESS] * 2
    assert serve(injector, ApiKey.HEARTBEAT) == "served"
    assert injector.list() == []


def test_a_fault_matches_its_client_id_and_api_only():
    injector = FaultInjector()
    injector.add(FaultRule(api="Heartbeat", client_id="victim", error="REBALANCE_IN_PROGRESS"))
    assert serve(injector, ApiKey.HEARTBEAT, client_id="bystander") == "served"
    assert serve(injector, ApiKey.SYNC_GROUP, client_id="victim") == "served"
    assert serve(injector, ApiKey.HEARTBEAT, client_id="victim").error_code == ErrorCode.REBALANCE_IN_PROGRESS


def test_a_probability_fires_as_the_seeded_dice_say():
    injector = FaultInjector(random.Random(14))
    injector.add(FaultRule(api="Heartbeat", error="REBALANCE_IN_PROGRESS", probability=0.25))
    answers = [serve(injector, ApiKey.HEARTBEAT) != "served" for _ in range(400)]
    expected = random.Random(14)
    assert answers == [expected.random() < 0.25 for _ in range(400)]
    assert 60 < sum(answers) < 140


def test_probability_zero_never_fires():
    injector = FaultInjector()
    injector.add(FaultRule(api="Heartbeat", error="REBALANCE_IN_PROGRESS", probability=0.0))
    assert all(serve(injector, ApiKey.HEARTBEAT) == "served" for _ in range(100))


def test_a_dropped_connection_is_closed_after_the_handler_ran():
    injector = FaultInjector()
    injector.add(FaultRule(api="Heartbeat", drop_connection=True))
    handled = []
    with pytest.raises(CloseConnection, match="fault 1 drops the connection"):
        serve(injector, ApiKey.HEARTBEAT, request="r", handler=handled.append)
    assert handled == ["r"]


def test_only_the_matching_partitions_reach_no_handler():
    Request = messages.request(ApiKey.DELETE_RECORDS).cls
    request = Request(
        topics=[
            Request.DeleteRecordsTopic(name="t", partitions=[Request.DeleteRecordsPartition(partition_index=p)])
            for p in (0, 1)
        ]
    )
    injector = FaultInjector()
    injector.add(FaultRule(api="DeleteRecords", topic="t", partition=1, error="NOT_LEADER_OR_FOLLOWER"))
    seen = []

    def handler(request):
        seen.extend((t.name, p.partition_index) for t in request.topics for p in t.partitions)
        Response = messages.response(ApiKey.DELETE_RECORDS).cls
        partition = Response.DeleteRecordsPartitionResult(partition_index=0, low_watermark=0)
        return Response(topics=[Response.DeleteRecordsTopicResult(name="t", partitions=[partition])])

    response = serve(injector, ApiKey.DELETE_RECORDS, request, handler=handler)

    assert seen == [("t", 0)]
    results = {p.partition_index: (p.error_code, p.low_watermark) for p in response.topics[0].partitions}
    assert results == {0: (ErrorCode.NONE, 0), 1: (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)}


@pytest.mark.parametrize("api_key", TOP_LEVEL_ERRORS, ids=lambda key: ApiKey(key).name)
def test_every_top_level_error_response_encodes_in_every_served_version(api_key):
    entry = REGISTRY[api_key]
    request = messages.request(api_key).cls()
    for version in range(entry.min_version, entry.max_version + 1):
        response = error_response(api_key, request, ErrorCode.UNKNOWN_SERVER_ERROR)
        encoded = b"".join(bytes(piece) for piece in entry.response_type.encode(response, version=version))
        decoded, _ = entry.response_type.decode(encoded, 0, version=version)
        assert decoded is not None


@pytest.mark.parametrize("api_key", sorted(PARTITIONED_APIS), ids=lambda key: ApiKey(key).name)
def test_every_partition_error_response_encodes_in_every_served_version(api_key):
    shape, entry = PARTITIONED_APIS[api_key], REGISTRY[api_key]
    request_type = messages.request(api_key)
    topic_class = _element_class(request_type, request_type.cls, shape.request_topics)
    partition_class = _element_class(request_type, topic_class, shape.request_partitions)
    injector = FaultInjector()
    injector.add(FaultRule(api=api_key, topic="t", error="NOT_LEADER_OR_FOLLOWER"))
    for version in range(entry.min_version, entry.max_version + 1):
        partition = partition_class(**{shape.partition_index: 3})
        request = request_type.cls(
            **{shape.request_topics: [topic_class(**{shape.topic: "t", shape.request_partitions: [partition]})]}
        )
        if api_key == ApiKey.PRODUCE:
            request.acks = -1
        response = serve(injector, api_key, request, handler=lambda _request: pytest.fail("no partition to serve"))
        encoded = b"".join(bytes(piece) for piece in entry.response_type.encode(response, version=version))
        decoded, _ = entry.response_type.decode(encoded, 0, version=version)
        [topic] = getattr(decoded, shape.response_topics)
        [answer] = getattr(topic, shape.response_partitions)
        assert (getattr(topic, shape.topic), getattr(answer, shape.partition_index)) == ("t", 3)
        assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def _element_class(message_type, owner_class, attr: str):
    specs = [message_type.spec.root]
    while specs:
        spec = specs.pop()
        if spec.name == owner_class.__name__:
            return message_type.classes[next(f for f in spec.fields if f.attr == attr).struct.name]
        specs.extend(f.struct for f in spec.fields if f.struct is not None)
    raise AssertionError(attr)


def test_a_metadata_error_hits_the_matching_topics_only():
    Response = messages.response(ApiKey.METADATA).cls
    partition = Response.MetadataResponsePartition(partition_index=0, leader_id=0)

    def handler(_request):
        topics = [Response.MetadataResponseTopic(name=name, partitions=[partition]) for name in ("a", "b")]
        return Response(topics=topics)

    injector = FaultInjector()
    injector.add(FaultRule(api="Metadata", topic="a", error="LEADER_NOT_AVAILABLE", count=1))
    response = serve(injector, ApiKey.METADATA, handler=handler)

    answers = {t.name: (t.error_code, len(t.partitions)) for t in response.topics}
    assert answers == {"a": (ErrorCode.LEADER_NOT_AVAILABLE, 0), "b": (ErrorCode.NONE, 1)}
    assert injector.list() == []


# -- the config keys, answered beside the config handlers ------------------------------------------


def intercepted(api_key: int, request, handler):
    """The answer to a config request passed through a FaultInterceptor; the handler answers
    `handler(request)`."""

    async def handle(_request, _ctx):
        return handler(_request)

    async def run():
        ctx = RequestContext(
            api_key, 1, 7, "client", "127.0.0.1", "PLAINTEXT", services=SimpleNamespace(broker_id=0, authorizer=None)
        )  # type: ignore[arg-type]
        return await interceptor.serve(handle, request, ctx)

    interceptor = FaultInterceptor(FaultInjector())
    return interceptor, anyio.run(run)


def test_the_incremental_alter_configs_handler_gets_no_fault_key_and_answers_in_order():
    Request = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls
    Response = messages.response(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls
    append = Request.AlterableConfig(
        name="pykbroker.fault.injection", config_operation=2, value='{"api": 0, "error": 6}'
    )
    threads = Request.AlterableConfig(name="log.cleaner.threads", config_operation=0, value="2")
    resources = [
        Request.AlterConfigsResource(resource_type=2, resource_name="t", configs=[threads]),
        Request.AlterConfigsResource(resource_type=4, resource_name="0", configs=[append]),
        Request.AlterConfigsResource(resource_type=4, resource_name="", configs=[threads]),
    ]
    seen = []

    def handler(request):
        seen.extend((r.resource_name, [c.name for c in r.configs]) for r in request.resources)
        answer = Response.AlterConfigsResourceResponse
        return Response(
            responses=[
                answer(resource_type=r.resource_type, resource_name=r.resource_name, error_code=0)
                for r in request.resources
            ]
        )

    interceptor, response = intercepted(
        ApiKey.INCREMENTAL_ALTER_CONFIGS, Request(resources=resources, validate_only=False), handler
    )

    assert seen == [("t", ["log.cleaner.threads"]), ("", ["log.cleaner.threads"])]
    assert [(r.resource_name, r.error_code) for r in response.responses] == [("t", 0), ("0", 0), ("", 0)]
    assert [rule.to_dict() for _, rule in interceptor.injector.list()] == [
        {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"}
    ]


def test_the_alter_configs_handler_gets_no_fault_key():
    Request = messages.request(ApiKey.ALTER_CONFIGS).cls
    entries = [
        Request.AlterableConfig(name="pykbroker.fault.injection", value="[]"),
        Request.AlterableConfig(name="log.cleaner.threads", value="1"),
    ]
    request = Request(resources=[Request.AlterConfigsResource(resource_type=4, resource_name="0", configs=entries)])
    seen = []

    def handler(request):
        seen.extend(c.name for r in request.resources for c in r.configs)
        return "answered"

    assert intercepted(ApiKey.ALTER_CONFIGS, request, handler)[1] == "answered"
    assert seen == ["log.cleaner.threads"]
