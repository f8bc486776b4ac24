"""What the log's operations return: append results, fetch regions, offset lookups.

A read returns regions of segment files to send with `sendfile`, not copies: a `FileRegion`
holds its segment file open, so it stays valid after the read returns even if retention
deletes the segment meanwhile (deleted files linger as `.deleted` for `file.delete.delay.ms`,
and an open descriptor outlives the unlink anyway).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .files import OpenFile


class FileRegion:
    """`length` bytes at `position` of an open segment file."""

    __slots__ = ("_file", "position", "length")

    def __init__(self, file: OpenFile, position: int, length: int) -> None:
        self._file = file
        self.position = position
        self.length = length

    @property
    def fd(self) -> int:
        return self._file.fd

    def __len__(self) -> int:
        return self.length

    def read_bytes(self) -> bytes:
        """The region's bytes (fewer if the file was truncated since the read)."""
        return self._file.pread(self.length, self.position)

    def __repr__(self) -> str:
        return f"FileRegion({self._file.path!r}, position={self.position}, length={self.length})"


class AbortedTransaction(NamedTuple):
    """An aborted transaction overlapping a fetch (FetchResponse's aborted_transactions)."""

    producer_id: int
    first_offset: int


@dataclass(eq=False)  # one read's outcome, never compared
class FetchDataInfo:
    """The result of `Log.read`: where the read started and the file regions to send.

    `regions` is empty when there is nothing to return at `fetch_offset`. As in Kafka the
    bytes come from one segment and may end with a partial batch when `max_bytes` cuts one
    (clients discard it). `first_entry_incomplete` is set when the first batch alone is
    larger than `max_bytes` and `min_one_message` was false.
    """

    fetch_offset: int
    segment_base_offset: int = -1
    position: int = -1
    regions: list[FileRegion] = field(default_factory=list)
    first_entry_incomplete: bool = False
    aborted_transactions: list[AbortedTransaction] | None = None

    @property
    def size(self) -> int:
        return sum(region.length for region in self.regions)

    def read_bytes(self) -> bytes:
        return b"".join(region.read_bytes() for region in self.regions)


class TimestampAndOffset(NamedTuple):
    """A ListOffsets answer: leader_epoch is -1 when unknown, timestamp -1 for earliest/latest."""

    offset: int
    timestamp: int
    leader_epoch: int


@dataclass(eq=False)  # one append's outcome, never compared
class LogAppendInfo:
    """The outcome of an append (what the ProduceResponse and replication need).

    For a duplicate of one of the producer's last 5 batches nothing is appended; the offsets
    are those of the original batch and `log_append_time` is its timestamp, as in Kafka.
    """

    first_offset: int
    last_offset: int
    max_timestamp: int = -1
    offset_of_max_timestamp: int = -1
    log_append_time: int = -1
    log_start_offset: int = 0
    record_count: int = 0
    valid_bytes: int = 0
    duplicate: bool = False
    last_leader_epoch: int = -1


class CleanerStats(NamedTuple):
    """What one compaction of a log did."""

    end_offset: int
    segments_cleaned: int
    bytes_read: int
    bytes_written: int


@dataclass
class RecoveryStats:
    """What recovering logs after an unclean shutdown did (one log, or summed over a directory)."""

    logs: int = 0
    segments_scanned: int = 0
    bytes_truncated: int = 0
    segments_dropped: int = 0

    def add(self, other: RecoveryStats) -> None:
        self.logs += other.logs
        self.segments_scanned += other.segments_scanned
        self.bytes_truncated += other.bytes_truncated
        self.segments_dropped += other.segments_dropped
