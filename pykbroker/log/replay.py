"""Rebuilding producer state from stored batches, headers only (markers excepted).

Used when a log is opened (from the newest snapshot up to the log end) and after a
truncation. Transaction markers are the only batches decoded: a COMMIT/ABORT control record
ends a transaction.
"""

from __future__ import annotations

from collections.abc import Callable

from pykbroker.records.batch import BatchHeader
from pykbroker.records.control import read_end_txn_marker
from pykbroker.records.errors import InvalidRecordError

from ..common.files import Bytes
from .producer_snapshot import SnapshotFiles
from .producer_state import CompletedTxn, EndTxnMarker, ProducerStateManager
from .segment import Segment
from .segments import LogSegments


def is_marker_candidate(header: BatchHeader) -> bool:
    return header.is_control and header.producer_id >= 0 and header.records_count > 0


def read_marker(batch_bytes: Bytes, header: BatchHeader) -> EndTxnMarker | None:
    """The COMMIT/ABORT marker in a control batch; None for anything else."""
    if not is_marker_candidate(header):
        return None
    try:
        marker = read_end_txn_marker(batch_bytes)
    except InvalidRecordError:
        return None
    return EndTxnMarker(marker.commit, marker.coordinator_epoch, marker.timestamp)


def replay_segment(
    producers: ProducerStateManager,
    segment: Segment,
    start: int,
    end: int,
    on_completed: Callable[[Segment, CompletedTxn], None] | None = None,
) -> None:
    """Apply the batches of `segment` that end at or after `start` and begin before `end`."""
    position = segment.offset_index.lookup(start).position
    for pos, header in segment.iter_headers(position):
        if header.last_offset < start:
            continue
        if header.base_offset >= end:
            return
        marker = read_marker(segment.read_batch(pos, header.size), header) if is_marker_candidate(header) else None
        completed = producers.apply_stored_batch(header, marker)
        if completed is not None and on_completed is not None:
            on_completed(segment, completed)


def replay(producers: ProducerStateManager, segments: LogSegments, start: int, end: int) -> None:
    """Bring `producers` from offset `start` to `end`."""
    if start < end:
        for segment in segments.overlapping(start, end):
            replay_segment(producers, segment, start, end)
    producers.update_map_end_offset(end)


def rebuild_producer_state(
    producers: ProducerStateManager,
    snapshots: SnapshotFiles,
    segments: LogSegments,
    log_start_offset: int,
    end_offset: int,
    now_ms: int,
) -> None:
    """State as of `end_offset`: the newest usable snapshot, then the batches after it."""
    snapshots.delete_where(lambda offset: offset > end_offset or offset < log_start_offset)
    loaded = snapshots.latest_readable(end_offset)
    if loaded is None:
        producers.clear(log_start_offset)
    else:
        offset, entries = loaded
        producers.load(entries, offset, now_ms)
    replay(producers, segments, producers.map_end_offset, end_offset)
