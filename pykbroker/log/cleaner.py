"""Log compaction (cleanup.policy=compact): keep the latest record of each key.

One pass, as Kafka's cleaner does it:
1. map each key of the dirty section [first dirty offset, first uncleanable offset) to its
   last offset (`OffsetMap`, bounded: when full the pass stops there);
2. rewrite the segments up to the end of the map, in groups of at most segment.bytes, into
   `<base>.log.cleaned` files, keeping a record if no later record has its key;
3. the log swaps each cleaned group in atomically (see `LocalLog.replace_segments`); a group
   that kept nothing leaves no segment behind (but the log's first segment stays, empty).

What is kept, and how (Kafka's rules): offsets never change (a rewritten batch keeps its
base offset, last offset delta, producer id, epoch and base sequence; gaps are fine); a
batch that lost all its records is dropped, except the last batch of a still active
producer (its sequence numbers and epoch matter) and the batch that ends where the pass's
cleanable range ends (the first uncleanable offset), which stay as record-less batches;
keyless records are dropped. A tombstone (null value) is kept by the first pass that sees
it, which stamps its batch with a delete horizon of now + delete.retention.ms (attribute
bit 6, the base timestamp holding the horizon); a later pass after the horizon drops it.
Records of aborted transactions are dropped; transaction markers are kept. An aborted
transaction stays in the cleaned segment's `.txnindex` while the pass still finds batches of it
(see `AbortedRanges`).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import NamedTuple

from pykbroker.records.batch import (
    ATTRIBUTES_OFFSET,
    DELETE_HORIZON_MASK,
    BatchHeader,
    parse_header,
    write_crc,
)
from pykbroker.records.records import Record, build_batch, decode_batch, offset_of, timestamp_of

from .config import DEFAULT_MAX_MAP_ENTRIES as DEFAULT_MAX_MAP_ENTRIES
from .scan import StoredBatch
from .segment import Segment
from .txn_index import AbortedTxn


def key_digest(key: bytes) -> bytes:
    return hashlib.md5(key).digest()


class OffsetMap:
    """key -> last offset, holding at most `max_entries` keys (by 16-byte digest, as Kafka).

    `latest_offset` is the last offset the map covers: records after it are not judged by
    the map (they stay). Like Kafka's it follows every mapped batch (keyless, control and
    aborted ones too) and, once a segment is mapped whole, the segment's end.
    """

    def __init__(self, max_entries: int = DEFAULT_MAX_MAP_ENTRIES) -> None:
        self.max_entries = max_entries
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def is_full(self) -> bool:
        return len(self._offsets) >= self.max_entries

    def put(self, key: bytes, offset: int) -> None:
        self._offsets[key_digest(key)] = offset
        self.latest_offset = offset

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        return self._offsets.get(key_digest(key), -1)


class AbortedRanges:
    """The aborted transactions of the log (from the segments' `.txnindex`), by producer id, and
    which of them one pass still finds batches of.

    As Kafka's `CleanedTransactionMetadata`: an aborted transaction's entry goes into the cleaned
    segment's `.txnindex` when its ABORT marker is read after at least one of its batches in the
    same pass, so that fetches keep listing it while its records are dropped; a later pass, which
    finds no batch of it any more, leaves the entry out."""

    def __init__(self, aborted: list[AbortedTxn]) -> None:
        self._by_producer: dict[int, list[AbortedTxn]] = {}
        for txn in aborted:
            self._by_producer.setdefault(txn.producer_id, []).append(txn)
        self._observed: set[AbortedTxn] = set()

    def _containing(self, header: BatchHeader) -> AbortedTxn | None:
        if not header.is_transactional:
            return None
        for txn in self._by_producer.get(header.producer_id, ()):
            if txn.first_offset <= header.base_offset <= txn.last_offset:
                return txn
        return None

    def contains(self, header: BatchHeader) -> bool:
        return self._containing(header) is not None

    def observe(self, header: BatchHeader) -> None:
        """A data batch the pass read: if it belongs to an aborted transaction, note it."""
        txn = self._containing(header)
        if txn is not None:
            self._observed.add(txn)

    def completed_with_batches(self, header: BatchHeader) -> AbortedTxn | None:
        """For a control batch: the aborted transaction it ends, if the pass read batches of it."""
        for txn in self._by_producer.get(header.producer_id, ()):
            if txn.last_offset == header.base_offset and txn in self._observed:
                return txn
        return None


# -- 1. the offset map --------------------------------------------------------------------


def build_offset_map(
    segments: list[Segment], start: int, end: int, offset_map: OffsetMap, aborted: AbortedRanges
) -> None:
    """Map the keys of records in [start, end); stops early when the map is full."""
    for index, segment in enumerate(segments):
        segment_end = min(segments[index + 1].base_offset, end) if index + 1 < len(segments) else end
        if not map_segment(segment, start, end, offset_map, aborted):
            return
        if segment_end - 1 > offset_map.latest_offset:
            offset_map.update_latest_offset(segment_end - 1)  # over the gaps compaction left


def map_segment(segment: Segment, start: int, end: int, offset_map: OffsetMap, aborted: AbortedRanges) -> bool:
    """Add one segment's keys; False once the map is full."""
    position = segment.offset_index.lookup(start).position
    for batch in segment.iter_batches(position):
        header = batch.header
        if header.last_offset < start:
            continue
        if header.base_offset >= end:
            return True
        if not (header.is_control or aborted.contains(header)):
            for record in decode_batch(batch.data, verify_crc=False)[1]:
                if record.key is None or not start <= offset_of(record) < end:
                    continue
                if offset_map.is_full:
                    return False
                offset_map.put(record.key, offset_of(record))
        offset_map.update_latest_offset(header.last_offset)
    return True


# -- 2. grouping and rewriting ------------------------------------------------------------


def group_segments_by_size(
    segments: list[Segment], max_size: int, max_index_size: int, first_uncleanable_offset: int
) -> list[list[Segment]]:
    """Consecutive segments merged while their data and indexes fit one segment (Kafka's rule)."""
    groups = []
    remaining = list(segments)
    while remaining:
        group = [remaining.pop(0)]
        log_size = group[0].size
        index_size = group[0].offset_index.size_in_bytes
        time_index_size = group[0].time_index.size_in_bytes
        while remaining and fits(
            group, remaining, log_size, index_size, time_index_size, max_size, max_index_size, first_uncleanable_offset
        ):
            following = remaining.pop(0)
            group.append(following)
            log_size += following.size
            index_size += following.offset_index.size_in_bytes
            time_index_size += following.time_index.size_in_bytes
        groups.append(group)
    return groups


def fits(
    group: list[Segment],
    remaining: list[Segment],
    log_size: int,
    index_size: int,
    time_index_size: int,
    max_size: int,
    max_index_size: int,
    first_uncleanable_offset: int,
) -> bool:
    candidate = remaining[0]
    last_offset = remaining[1].base_offset - 1 if len(remaining) > 1 else first_uncleanable_offset - 1
    return (
        log_size + candidate.size <= max_size
        and index_size + candidate.offset_index.size_in_bytes <= max_index_size
        and time_index_size + candidate.time_index.size_in_bytes <= max_index_size
        and (candidate.size == 0 or last_offset - group[0].base_offset <= 0x7FFFFFFF)
    )


class CleaningRules(NamedTuple):
    """What decides the fate of each record and batch in one pass."""

    offset_map: OffsetMap
    now_ms: int
    delete_retention_ms: int
    last_records: dict[int, tuple[int, int]]  # producer id -> (last data offset, epoch)
    aborted: AbortedRanges
    upper_bound: int  # where the pass's cleanable range ends (Kafka's upperBoundOffsetOfCleaningRound)


def clean_group(
    group: list[Segment], rules: CleaningRules, new_segment: Callable[[int], Segment]
) -> tuple[Segment, int, int]:
    """Write the retained batches of `group` into a new `.cleaned` segment.

    Returns (cleaned segment, bytes read, bytes written); the segment is flushed and closed
    for appends.
    """
    cleaned = new_segment(group[0].base_offset)
    read = written = 0
    for segment in group:
        for batch in segment.iter_batches():
            read += batch.header.size
            if batch.header.is_control:
                txn = rules.aborted.completed_with_batches(batch.header)
                if txn is not None:
                    cleaned.txn_index.append(txn)
            else:
                rules.aborted.observe(batch.header)
            kept = filter_batch(batch, rules)
            if kept is not None:
                append_batch(cleaned, kept)
                written += len(kept)
    cleaned.on_become_inactive()
    cleaned.flush()
    cleaned.set_last_modified_ms(group[-1].last_modified_ms())
    return cleaned, read, written


def append_batch(segment: Segment, data: bytes) -> None:
    header = parse_header(data)
    segment.append(header.last_offset, header.max_timestamp, header.last_offset, data)


def filter_batch(batch: StoredBatch, rules: CleaningRules) -> bytes | None:
    """The batch as it stays in the log: unchanged, rewritten, emptied, or None (dropped)."""
    header = batch.header
    if header.is_control:
        return bytes(batch.data)
    retain_empty = (
        is_last_batch_of_active_producer(header, rules.last_records) or header.next_offset == rules.upper_bound
    )
    if rules.aborted.contains(header):
        return empty_batch(header) if retain_empty else None
    records = decode_batch(batch.data, verify_crc=False)[1]
    retained = [record for record in records if should_retain(header, record, rules)]
    if not retained:
        return empty_batch(header) if retain_empty else None
    has_horizon = bool(header.attributes & DELETE_HORIZON_MASK)
    needs_horizon = not has_horizon and any(record.value is None for record in retained)
    if len(retained) == len(records) and not needs_horizon:
        return bytes(batch.data)
    horizon = (
        rules.now_ms + rules.delete_retention_ms if needs_horizon else (header.base_timestamp if has_horizon else None)
    )
    return rebuild_batch(header, retained, horizon)


def is_last_batch_of_active_producer(header: BatchHeader, last_records: dict[int, tuple[int, int]]) -> bool:
    last = last_records.get(header.producer_id) if header.producer_id >= 0 else None
    return last is not None and last[0] == header.last_offset


def should_retain(header: BatchHeader, record: Record, rules: CleaningRules) -> bool:
    offset = offset_of(record)
    if offset > rules.offset_map.latest_offset:
        return True
    if record.key is None:
        return False
    if offset < rules.offset_map.get(record.key):
        return False
    if record.value is not None:
        return True
    horizon_passed = bool(header.attributes & DELETE_HORIZON_MASK) and rules.now_ms >= header.base_timestamp
    return not horizon_passed


def rebuild_batch(header: BatchHeader, retained: list[Record], delete_horizon: int | None) -> bytes:
    """A batch of `retained` records that keeps `header`'s offsets and producer metadata."""
    base_timestamp = delete_horizon if delete_horizon is not None else timestamp_of(retained[0])
    records = [
        Record(
            offset_delta=offset_of(record) - header.base_offset,
            timestamp_delta=timestamp_of(record) - base_timestamp,
            key=record.key,
            value=record.value,
            headers=record.headers,
        )
        for record in retained
    ]
    max_timestamp = header.max_timestamp if header.is_log_append_time else max(timestamp_of(r) for r in retained)
    data = bytearray(
        build_batch(
            records,
            base_offset=header.base_offset,
            compression=header.compression,
            producer_id=header.producer_id,
            producer_epoch=header.producer_epoch,
            base_sequence=header.base_sequence,
            is_transactional=header.is_transactional,
            log_append_time=header.is_log_append_time,
            partition_leader_epoch=header.partition_leader_epoch,
            base_timestamp=base_timestamp,
            max_timestamp=max_timestamp,
            last_offset_delta=header.last_offset_delta,
        )
    )
    if delete_horizon is not None:
        set_delete_horizon_flag(data)
    return bytes(data)


def set_delete_horizon_flag(data: bytearray) -> None:
    header = parse_header(data)
    struct.pack_into(">h", data, ATTRIBUTES_OFFSET, header.attributes | DELETE_HORIZON_MASK)
    write_crc(data, 0, header)


def empty_batch(header: BatchHeader) -> bytes:
    """A record-less batch keeping `header`'s offset range and producer metadata."""
    return build_batch(
        [],
        base_offset=header.base_offset,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=header.is_transactional,
        is_control=header.is_control,
        log_append_time=header.is_log_append_time,
        partition_leader_epoch=header.partition_leader_epoch,
        base_timestamp=header.max_timestamp,
        max_timestamp=header.max_timestamp,
        last_offset_delta=header.last_offset_delta,
    )
