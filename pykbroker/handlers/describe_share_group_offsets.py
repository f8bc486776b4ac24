"""DescribeShareGroupOffsets (key 90), version 0 (Kafka 4.1).

For each share group, the share-partition start offset and leader epoch of the partitions asked
for, read through the share persister's state summary. As Kafka: an unknown topic (listed last,
with a zero topic id) or a partition without share state is "no data", start offset -1 and no
error. With `topics` null, every partition with initialized share state; a group of another type
or an unknown group is then GROUP_ID_NOT_FOUND for the group. DESCRIBE on the group
(GROUP_AUTHORIZATION_FAILED for the group) and on each topic (TOPIC_AUTHORIZATION_FAILED per
partition; all-partitions answers leave unauthorized topics out).
"""

from ..common.uuids import ZERO_UUID
from ..coordinator.group.share.results import OffsetsResult, PartitionResult, TopicResult
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
from .support import share_requests
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS
MIN_VERSION = 0
MAX_VERSION = 0

DESCRIBE_GROUP = check(API_KEY, "group")
DESCRIBE_TOPIC = check(API_KEY, "topic")

Response = DescribeShareGroupOffsetsResponse
RequestGroup = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup


async def handle(request: DescribeShareGroupOffsetsRequest, ctx: RequestContext) -> DescribeShareGroupOffsetsResponse:
    return Response(groups=[await _describe_group(group, ctx) for group in request.groups])


async def _describe_group(group: RequestGroup, ctx: RequestContext) -> Response.DescribeShareGroupOffsetsResponseGroup:
    service = share_requests.share_group_service(ctx)
    if service is None:
        return _group(group.group_id, OffsetsResult(ErrorCode.UNSUPPORTED_VERSION))
    if not DESCRIBE_GROUP.allows(ctx, group.group_id):
        error = DESCRIBE_GROUP.denied
        return _group(group.group_id, OffsetsResult(error, error.message))
    if group.topics is None:
        result = await service.describe_share_group_offsets(group.group_id, None)
        allowed = DESCRIBE_TOPIC.allowed(ctx, [t.name for t in result.topics])
        result = OffsetsResult(result.error, result.message, [t for t in result.topics if t.name in allowed])
        return _group(group.group_id, result)
    asked = [(t.topic_name, list(t.partitions)) for t in group.topics]
    allowed = DESCRIBE_TOPIC.allowed(ctx, [name for name, _ in asked])
    result = await service.describe_share_group_offsets(group.group_id, [t for t in asked if t[0] in allowed])
    if result.error != ErrorCode.NONE:
        return _group(group.group_id, result)
    by_name = {t.name: t for t in result.topics}
    denied = DESCRIBE_TOPIC.denied
    topics = [by_name.get(name) or _denied(name, partitions, denied) for name, partitions in asked]
    return _group(group.group_id, OffsetsResult(topics=topics))


def _denied(name: str, partitions: list[int], error: ErrorCode) -> TopicResult:
    return TopicResult(name, ZERO_UUID, [PartitionResult(p, error, error.message) for p in partitions])


def _group(group_id: str, result: OffsetsResult) -> Response.DescribeShareGroupOffsetsResponseGroup:
    return Response.DescribeShareGroupOffsetsResponseGroup(
        group_id=group_id,
        error_code=result.error,
        error_message=result.message,
        topics=[
            Response.DescribeShareGroupOffsetsResponseTopic(
                topic_name=topic.name,
                topic_id=topic.topic_id,
                partitions=[
                    Response.DescribeShareGroupOffsetsResponsePartition(
                        partition_index=p.partition,
                        start_offset=p.start_offset,
                        leader_epoch=p.leader_epoch,
                        error_code=p.error,
                        error_message=p.message,
                    )
                    for p in topic.partitions
                ],
            )
            for topic in result.topics
        ],
    )
