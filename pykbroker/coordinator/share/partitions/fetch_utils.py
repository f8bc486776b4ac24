"""What a share fetch does with the bytes it read (Kafka's `ShareFetchUtils`): the batches'
offsets from their headers (records are never decoded), the batches of aborted transactions
for read_committed groups, and the bytes of only the batches holding acquired records."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ....log.results import AbortedTransaction
from ....records import batch as record_batch
from .states import AcquiredRange, FetchedBatch


def fetched_batches(data: bytes) -> list[FetchedBatch]:
    """The complete record batches in `data`, from their headers."""
    return [
        FetchedBatch(
            header.base_offset,
            header.last_offset,
            position,
            header.size,
            header.producer_id,
            header.is_transactional,
            header.is_control,
        )
        for position, header in record_batch.iter_headers(data)
    ]


def aborted_batches(batches: Sequence[FetchedBatch], aborted: Iterable[AbortedTransaction]) -> frozenset[int]:
    """First offsets of the transactional batches that belong to aborted transactions: a
    producer's batches from its aborted transaction's first offset up to its abort marker."""
    pending = sorted(aborted, key=lambda txn: txn.first_offset)
    aborting: set[int] = set()
    found: set[int] = set()
    for batch in batches:
        while pending and pending[0].first_offset <= batch.last_offset:
            aborting.add(pending.pop(0).producer_id)
        if batch.producer_id not in aborting:
            continue
        if batch.is_control:
            aborting.discard(batch.producer_id)  # the abort marker ends the transaction
        elif batch.is_transactional:
            found.add(batch.first_offset)
    return frozenset(found)


def acquired_bytes(data: bytes, batches: Sequence[FetchedBatch], acquired: Sequence[AcquiredRange]) -> bytes:
    """The batches of `data` holding at least one acquired offset, as stored."""
    parts = []
    for batch in batches:
        if any(r.first_offset <= batch.last_offset and r.last_offset >= batch.first_offset for r in acquired):
            parts.append(data[batch.position : batch.position + batch.size])
    return b"".join(parts)


_DURATION = re.compile(
    r"^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$",
    re.IGNORECASE,
)


def parse_duration_ms(text: str) -> int:
    """An ISO-8601 duration as Java's `Duration.parse` reads it (PnDTnHnMn.nS), in milliseconds.
    ValueError when it is not one."""
    match = _DURATION.match(text.strip())
    if match is None or text.strip().upper() in ("P", "PT") or text.strip().upper().endswith("T"):
        raise ValueError(f"Invalid duration {text!r}")
    sign, days, hours, minutes, seconds, fraction = match.groups()
    total = (
        int(days or 0) * 86_400_000
        + int(hours or 0) * 3_600_000
        + int(minutes or 0) * 60_000
        + int(seconds or 0) * 1000
    )
    if fraction:
        millis = int((fraction + "000")[:3])
        total += -millis if (seconds or "").startswith("-") else millis
    return -total if sign == "-" else total
