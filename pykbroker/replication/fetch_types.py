"""The fetch vocabulary: what one partition of a Fetch asks for, and what reading it gave.

One request type and one result type travel the whole fetch path:

    wire FetchPartition --handlers/fetch.py--> PartitionFetchRequest
        --> fetch session (remembers it per partition) --> ReplicaManager.fetch_records
        --> PartitionFetchResult --> fetch session (chooses what to list) --> wire PartitionData

The replica manager fills a result with the file regions it read (`records`, a list of
`FileRegion`s); the Fetch handler turns those into what its request version carries
(`dataclasses.replace`): one region, sent with `sendfile`, or bytes (several regions joined, or
records down-converted for an old version, or none). The session never looks at `records` or
`aborted_transactions`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

from ..protocol.errors import ErrorCode

if TYPE_CHECKING:
    from ..log.results import AbortedTransaction, FileRegion

    # What a result's `records` holds: the regions as read, then one region or bytes for the response.
    FetchedRecords: TypeAlias = list[FileRegion] | FileRegion | bytes

NO_PREFERRED_READ_REPLICA = -1
NO_EPOCH = -1
READ_COMMITTED = 1  # the isolation level of transactional consumers


class PartitionFetchRequest(NamedTuple):
    """One partition's fetch parameters (FetchRequest's FetchPartition); -1 epochs mean none."""

    fetch_offset: int
    log_start_offset: int = -1  # the fetcher's own log start offset (followers); -1 for consumers
    max_bytes: int = 1048576  # partition_max_bytes
    current_leader_epoch: int = NO_EPOCH
    last_fetched_epoch: int = NO_EPOCH


class EpochEndOffset(NamedTuple):
    """FetchResponse's diverging_epoch: where the fetcher's log diverges from the leader's."""

    epoch: int
    end_offset: int


@dataclass(frozen=True, slots=True)
class PartitionFetchResult:
    """What reading one partition produced, as the response will report it.

    `records_size` is the byte count of the records returned (0 for none). A failed partition
    reports no high watermark, last stable offset or log start (-1), as Kafka's
    createLogReadResult.
    """

    error_code: int = ErrorCode.NONE
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records_size: int = 0
    preferred_read_replica: int = NO_PREFERRED_READ_REPLICA
    diverging_epoch: EpochEndOffset | None = None
    aborted_transactions: list[AbortedTransaction] | None = None  # read_committed: those overlapping `records`
    records: FetchedRecords | None = None  # file regions as read, then what the response version carries
    more_to_read: bool = False  # records were readable at the fetch offset but left out (size limit)

    @classmethod
    def for_error(cls, error_code: int) -> PartitionFetchResult:
        """A partition answered with `error_code` only: offsets -1 and no records."""
        return cls(error_code=error_code)

    @property
    def has_records(self) -> bool:
        return self.records_size > 0

    @property
    def has_preferred_read_replica(self) -> bool:
        return self.preferred_read_replica != NO_PREFERRED_READ_REPLICA

    @property
    def has_diverging_epoch(self) -> bool:
        return self.diverging_epoch is not None and self.diverging_epoch.epoch >= 0


PartitionsToRead = list[tuple[tuple[str, int], PartitionFetchRequest]]


class SessionWait(NamedTuple):
    """How a fetch on an incremental session that found nothing waits for its session's other
    partitions: it watches `key` (which the session cache's change notices complete), `peek()`
    gives the partitions that changed since it read, and `take()` hands them over to be read
    when it wakes."""

    key: Hashable
    peek: Callable[[], PartitionsToRead]
    take: Callable[[], PartitionsToRead]
