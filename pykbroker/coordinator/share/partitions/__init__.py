"""Share partitions (KIP-932): the in-flight records of each share group's topic partitions that
this broker leads, share sessions, and the ShareFetch purgatory.

    manager = SharePartitionManager(replica_manager, persister, timer, lambda: config, group_config)
    await manager.run()                                   # background state writes
    results = await manager.fetch(group, member, partitions, max_wait_ms=..., min_bytes=..., ...)
    errors = await manager.acknowledge(group, member, {partition: [AcknowledgementBatch(...)]})
    await manager.release_member(group, member)           # a member left its share group
"""

from ..persister import InMemorySharePersister
from .manager import ShareFetchResult, SharePartitionManager, ShareTopicPartition
from .sessions import FINAL_EPOCH, INITIAL_EPOCH, SessionError, ShareSessionCache, ShareSessionKey
from .share_partition import SharePartition
from .states import AcknowledgementBatch, AcknowledgeType, AcquiredRange, RecordState, ShareSettings

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "AcknowledgeType",
    "AcknowledgementBatch",
    "AcquiredRange",
    "InMemorySharePersister",
    "RecordState",
    "SessionError",
    "ShareFetchResult",
    "SharePartition",
    "SharePartitionManager",
    "ShareSessionCache",
    "ShareSessionKey",
    "ShareSettings",
    "ShareTopicPartition",
]
