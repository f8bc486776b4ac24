"""DeleteTopics (key 20), versions 0-6.

Deletes topics named in `topic_names` (v0-5) or in `topics` by name or by id (v6), answering as
Kafka 3.9's controller does:

* `delete.topic.enable=false` fails every topic: INVALID_REQUEST before v3, TOPIC_DELETION_DISABLED
  from v3;
* a non-positive `timeout_ms` fails every topic with REQUEST_TIMED_OUT (controller_rules);
* an entry with neither or both of name and id, a name or id given twice, or a name that maps to
  an id given too, fails with INVALID_REQUEST and its reason;
* an unknown name fails with UNKNOWN_TOPIC_OR_PARTITION, an unknown id with UNKNOWN_TOPIC_ID (no
  message, as Kafka).

Internal topics are deleted like any other, as Kafka does. Every result carries the topic's id
(v6); errors carry a message from v5. Whole-request failures carry none.

Authorization as Kafka: DELETE on each topic (TOPIC_AUTHORIZATION_FAILED, checked before its
existence); a topic named by id whose name the caller may not DESCRIBE is answered without it.

The client's `controller_mutation_rate` quota counts the partitions of the topics deleted; from v5 a topic is refused
with THROTTLING_QUOTA_EXCEEDED while the quota is exceeded, before v5 the change is made and the
response throttled (Kafka's strict and permissive controller mutation quotas).
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from typing import TypeVar

from ..protocol.api_keys import ApiKey
from ..protocol.codegen import ZERO_UUID
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import DeleteTopicsRequest, DeleteTopicsResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.controller_rules import deadline_passed, duplicated
from .support.quota_requests import (
    ControllerMutationQuota,
    controller_mutation_quota,
    record_mutations,
    throttle_mutations,
)

STRICT_QUOTA_SINCE_VERSION = 5  # the first version that knows THROTTLING_QUOTA_EXCEEDED
API_KEY = ApiKey.DELETE_TOPICS
MIN_VERSION = 0
MAX_VERSION = 6

Result = DeleteTopicsResponse.DeletableTopicResult
Entry = tuple[str | None, uuid.UUID]  # a requested topic: (name, id), a zero id standing for "by name"
DESCRIBE_TOPIC = check(API_KEY, "describe")
DELETE_TOPIC = check(API_KEY, "topic")

_Name = TypeVar("_Name", bound=Hashable)  # a topic name or a topic id


async def handle(request: DeleteTopicsRequest, ctx: RequestContext) -> DeleteTopicsResponse:
    entries = _requested(request, ctx.api_version)
    refusal = _whole_request_refusal(request, entries, ctx)
    if refusal is not None:
        return DeleteTopicsResponse(
            responses=[Result(name=name, topic_id=topic_id, error_code=refusal) for name, topic_id in entries]
        )
    quota = controller_mutation_quota(ctx, STRICT_QUOTA_SINCE_VERSION)
    deleted = _delete(entries, ctx, quota)
    throttle_mutations(ctx, quota)
    await ctx.services.metadata.wait_durable()  # the deletions are on disk before they are acknowledged
    return DeleteTopicsResponse(responses=deleted)


def _requested(request: DeleteTopicsRequest, version: int) -> list[Entry]:
    """(name, id) of each entry, in request order; a zero id stands for 'by name'."""
    if version < 6:
        return [(name, ZERO_UUID) for name in request.topic_names]
    return [(topic.name, topic.topic_id) for topic in request.topics]


def _whole_request_refusal(request: DeleteTopicsRequest, entries: list[Entry], ctx: RequestContext) -> ErrorCode | None:
    if not ctx.services.config["delete.topic.enable"]:
        return ErrorCode.INVALID_REQUEST if ctx.api_version < 3 else ErrorCode.TOPIC_DELETION_DISABLED
    if deadline_passed(request.timeout_ms) and _lookups(entries):
        return ErrorCode.REQUEST_TIMED_OUT
    return None


def _lookups(entries: list[Entry]) -> list[Entry]:
    """The entries that name a topic one way (by name or by id), the only ones looked up."""
    return [(name, topic_id) for name, topic_id in entries if (name is None) != (topic_id == ZERO_UUID)]


def _delete(entries: list[Entry], ctx: RequestContext, quota: ControllerMutationQuota | None = None) -> list[Result]:
    by_name = [name for name, topic_id in entries if name is not None and topic_id == ZERO_UUID]
    by_id = [topic_id for name, topic_id in entries if name is None and topic_id != ZERO_UUID]
    refused = _malformed(entries) + _duplicates(by_name, by_id)
    to_delete, not_found = _resolve(_given_once(by_name), _given_once(by_id), duplicated(by_id), ctx)
    return refused + not_found + [_deleted(topic_id, name, ctx, quota) for topic_id, name in to_delete.items()]


def _malformed(entries: list[Entry]) -> list[Result]:
    results: list[Result] = []
    for name, topic_id in entries:
        if name is None and topic_id == ZERO_UUID:
            results.append(
                _failure(None, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified.")
            )
        elif name is not None and topic_id != ZERO_UUID:
            results.append(
                _failure(name, topic_id, ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id.")
            )
    return results


def _duplicates(by_name: list[str], by_id: list[uuid.UUID]) -> list[Result]:
    twice_named, twice_id = duplicated(by_name), duplicated(by_id)
    return [
        _failure(name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
        for name in dict.fromkeys(by_name)
        if name in twice_named
    ] + [
        _failure(None, topic_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")
        for topic_id in dict.fromkeys(by_id)
        if topic_id in twice_id
    ]


def _given_once(items: list[_Name]) -> list[_Name]:
    twice = duplicated(items)
    return [item for item in dict.fromkeys(items) if item not in twice]


def _deleted(topic_id: uuid.UUID, name: str, ctx: RequestContext, quota: ControllerMutationQuota | None) -> Result:
    info = ctx.services.metadata.topic(name)
    try:
        record_mutations(quota, len(info.partitions) if info is not None else 0)
    except KafkaError as exc:
        return _failure(name, topic_id, exc.code, exc.message)
    ctx.services.metadata.delete_topic(name)
    return Result(name=name, topic_id=topic_id, error_code=ErrorCode.NONE)


def _resolve(
    names: list[str], ids: list[uuid.UUID], twice_id: set[uuid.UUID], ctx: RequestContext
) -> tuple[dict[uuid.UUID, str], list[Result]]:
    """({id: name} of the topics to delete, failures of the names and ids that are not found)."""
    store = ctx.services.metadata
    to_delete: dict[uuid.UUID, str] = {}
    failures: list[Result] = []
    for topic_id in ids:
        info = store.topic_by_id(topic_id)
        if info is None:
            failures.append(_failure(None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID, None))
        elif not DESCRIBE_TOPIC.allows(ctx, info.name):
            failures.append(_failure(None, topic_id, DESCRIBE_TOPIC.denied, None))
        elif not DELETE_TOPIC.allows(ctx, info.name):
            failures.append(_failure(info.name, topic_id, DELETE_TOPIC.denied, None))
        else:
            to_delete[topic_id] = info.name
    for name in names:
        info = store.topic(name)
        if not DELETE_TOPIC.allows(ctx, name):
            failures.append(_failure(name, ZERO_UUID, DELETE_TOPIC.denied, None))
        elif info is None:
            failures.append(
                _failure(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
            )  # as Kafka: no message
        elif info.topic_id in to_delete or info.topic_id in twice_id:
            to_delete.pop(info.topic_id, None)
            failures.append(
                _failure(
                    name,
                    info.topic_id,
                    ErrorCode.INVALID_REQUEST,
                    "The provided topic name maps to an ID that was already supplied.",
                )
            )
        else:
            to_delete[info.topic_id] = name
    return to_delete, failures


def _failure(name: str | None, topic_id: uuid.UUID, code: ErrorCode, message: str | None) -> Result:
    return Result(name=name, topic_id=topic_id, error_code=code, error_message=message)
