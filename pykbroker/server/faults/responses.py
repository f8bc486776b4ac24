"""Injected errors written into responses, shaped for the request's API and version: where the
requests of an API name partitions (`PARTITIONED_APIS`), the partitions given an error are added
to the handler's response; Metadata's matching topics get the error; every other API answers
with the error at its top level (`error_response`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...protocol import messages
from ...protocol.api_keys import ApiKey
from ...protocol.codegen import EncodedStructs
from ...protocol.errors import ErrorCode
from ...protocol.schema import StructSpec

METADATA_RESPONSE = messages.response(ApiKey.METADATA)


@dataclass(frozen=True)
class PartitionedApi:
    """Where a request and its response name partitions: topics[topic].partitions[partition]."""

    request_topics: str
    response_topics: str
    topic: str
    request_partitions: str
    response_partitions: str
    partition_index: str


def _shape(topic: str = "name", partition_index: str = "partition_index") -> PartitionedApi:
    """topics[topic].partitions[partition_index] in the request and the response."""
    return PartitionedApi("topics", "topics", topic, "partitions", "partitions", partition_index)


PARTITIONED_APIS: dict[int, PartitionedApi] = {
    ApiKey.PRODUCE: PartitionedApi(
        "topic_data",
        "responses",
        "name",
        request_partitions="partition_data",
        response_partitions="partition_responses",
        partition_index="index",
    ),
    ApiKey.LIST_OFFSETS: _shape(),
    ApiKey.OFFSET_COMMIT: _shape(),
    ApiKey.TXN_OFFSET_COMMIT: _shape(),
    ApiKey.DELETE_RECORDS: _shape(),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: _shape(topic="topic", partition_index="partition"),
}
# the APIs whose injected errors go to partitions (or Metadata's topics), not to the response itself
ERRORS_BELOW_THE_TOP = {*PARTITIONED_APIS, ApiKey.FETCH, ApiKey.METADATA}
# offsets and epochs of a partition answered with an error: -1, as Kafka's error responses
_UNKNOWN_WHEN_FAILED = {
    "base_offset",
    "log_append_time_ms",
    "log_start_offset",
    "timestamp",
    "offset",
    "leader_epoch",
    "end_offset",
    "low_watermark",
}

# {topic: [(partition, error code)]} of the partitions of a request answered with an error
FailedPartitions = dict[str, list[tuple[int, int]]]


def add_partition_errors(response: Any, api_key: int, failed: FailedPartitions) -> None:
    """Add the failed partitions to a response of a partitioned API, each with its error and
    unknown (-1) offsets."""
    shape = PARTITIONED_APIS[api_key]
    response_type = messages.response(api_key)
    topic_class = _struct_class(response_type, response_type.cls, shape.response_topics)
    partition_class = _struct_class(response_type, topic_class, shape.response_partitions)
    topics = {getattr(t, shape.topic): t for t in getattr(response, shape.response_topics)}
    for name, errors in failed.items():
        topic = topics.get(name)
        if topic is None:
            topic = topic_class(**{shape.topic: name, shape.response_partitions: []})
            getattr(response, shape.response_topics).append(topic)
            topics[name] = topic
        for index, error in errors:
            partition = partition_class(**{shape.partition_index: index, "error_code": error})
            for attr in _UNKNOWN_WHEN_FAILED:
                if hasattr(partition, attr):
                    setattr(partition, attr, -1)
            getattr(topic, shape.response_partitions).append(partition)


def empty_response(api_key: int) -> Any:
    """A response of the API with every field at its default."""
    return messages.response(api_key).cls()


def metadata_topics(response: Any, version: int) -> list[Any]:
    """A Metadata response's topics as structs (the handler may have pre-encoded them)."""
    if isinstance(response.topics, EncodedStructs):
        encoded = response.topics
        response.topics = METADATA_RESPONSE.decode_structs("MetadataResponseTopic", encoded, version=version)
    return list(response.topics)


def error_response(api_key: int, request: Any, error: ErrorCode) -> Any:
    """A response of the API carrying `error` at its top level, every other field at its default
    (FindCoordinator from v4: the error for each key asked)."""
    response_type = messages.response(api_key)
    response = response_type.cls()
    response.error_code = error
    if api_key == ApiKey.FIND_COORDINATOR:
        keys = getattr(request, "coordinator_keys", None) or []
        response.node_id, response.port = -1, -1
        response.coordinators = [
            response_type.cls.Coordinator(key=key, node_id=-1, host="", port=-1, error_code=error) for key in keys
        ]
    return response


def _struct_class(message_type: messages.MessageType, owner_class: type, attr: str) -> Any:
    spec = next(s for s in _struct_specs(message_type) if s.name == owner_class.__name__)
    field_spec = next(f for f in spec.fields if f.attr == attr)
    assert field_spec.struct is not None
    return message_type.classes[field_spec.struct.name]


def _struct_specs(message_type: messages.MessageType) -> Iterator[StructSpec]:
    pending = [message_type.spec.root]
    while pending:
        spec = pending.pop()
        yield spec
        pending.extend(f.struct for f in spec.fields if f.struct is not None)
