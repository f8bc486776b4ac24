"""Merging share-partition state batches into one non-overlapping list.

Kafka's PersisterStateBatchCombiner: batches before the start offset are pruned (a batch that
straddles it keeps only its part from the start offset on); overlapping batches are resolved in
favour of the higher (delivery count, delivery state); contiguous batches with the same delivery
information are joined. A batch whose first offset is above its last is left out (the share
coordinator refuses such writes).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PersisterStateBatch:
    """One run of offsets with the same delivery state and count (Kafka's RecordState codes:
    0 AVAILABLE, 1 ACQUIRED, 2 ACKNOWLEDGED, 4 ARCHIVED)."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int

    def sort_key(self) -> tuple[int, int, int, int]:
        """Kafka's compareTo order: first offset, last offset, delivery count, delivery state."""
        return (self.first_offset, self.last_offset, self.delivery_count, self.delivery_state)


def _delivery_rank(batch: PersisterStateBatch) -> tuple[int, int]:
    return (batch.delivery_count, batch.delivery_state)


def _compare_delivery(b1: PersisterStateBatch, b2: PersisterStateBatch) -> int:
    r1, r2 = _delivery_rank(b1), _delivery_rank(b2)
    return (r1 > r2) - (r1 < r2)


def _prune(batches: Iterable[PersisterStateBatch], start_offset: int) -> list[PersisterStateBatch]:
    if start_offset == -1:
        return list(batches)
    kept = []
    for batch in batches:
        if batch.last_offset < start_offset:
            continue
        if batch.first_offset >= start_offset:
            kept.append(batch)
        else:
            kept.append(
                PersisterStateBatch(start_offset, batch.last_offset, batch.delivery_state, batch.delivery_count)
            )
    return kept


class _SortedBatches:
    """A sorted set of batches (Java's TreeSet of PersisterStateBatch)."""

    def __init__(self, batches: Iterable[PersisterStateBatch]) -> None:
        self.items = sorted(set(batches), key=PersisterStateBatch.sort_key)

    def _index(self, batch: PersisterStateBatch) -> int:
        return bisect.bisect_left(self.items, batch.sort_key(), key=PersisterStateBatch.sort_key)

    def add(self, batch: PersisterStateBatch) -> None:
        index = self._index(batch)
        if index == len(self.items) or self.items[index] != batch:
            self.items.insert(index, batch)

    def remove(self, batch: PersisterStateBatch) -> None:
        index = self._index(batch)
        if index < len(self.items) and self.items[index] == batch:
            del self.items[index]


def _mergeable(prev: PersisterStateBatch, candidate: PersisterStateBatch) -> bool:
    if candidate.first_offset <= prev.last_offset:
        return True
    return prev.last_offset + 1 == candidate.first_offset and _compare_delivery(prev, candidate) == 0


def _next_pair(
    batches: _SortedBatches, final: list[PersisterStateBatch]
) -> tuple[PersisterStateBatch, PersisterStateBatch] | None:
    """The first mergeable pair; batches before it can no longer merge and move to `final`."""
    items = batches.items
    for index in range(len(items) - 1):
        if _mergeable(items[index], items[index + 1]):
            pair = (items[index], items[index + 1])
            final.extend(items[:index])
            del items[:index]
            return pair
    return None


def _resolve_overlap(prev: PersisterStateBatch, cand: PersisterStateBatch) -> list[PersisterStateBatch]:
    """Batches replacing an overlapping pair with different delivery information."""
    cand_lower = _compare_delivery(cand, prev) < 0

    def piece(first: int, last: int, like: PersisterStateBatch) -> PersisterStateBatch:
        return PersisterStateBatch(first, last, like.delivery_state, like.delivery_count)

    if cand.first_offset == prev.first_offset:
        if cand.last_offset == prev.last_offset or not cand_lower:
            return [cand]
        return [prev, piece(prev.last_offset + 1, cand.last_offset, cand)]
    if cand.last_offset < prev.last_offset:
        if cand_lower:
            return [prev]
        return [
            piece(prev.first_offset, cand.first_offset - 1, prev),
            cand,
            piece(cand.last_offset + 1, prev.last_offset, prev),
        ]
    if cand.last_offset == prev.last_offset:
        if cand_lower:
            return [prev]
        return [piece(prev.first_offset, cand.first_offset - 1, prev), cand]
    if cand_lower:
        return [prev, piece(prev.last_offset + 1, cand.last_offset, cand)]
    return [piece(prev.first_offset, cand.first_offset - 1, prev), cand]


def combine_state_batches(
    batches_so_far: Sequence[PersisterStateBatch], new_batches: Sequence[PersisterStateBatch], start_offset: int
) -> list[PersisterStateBatch]:
    """Kafka's PersisterStateBatchCombiner.combineStateBatches."""
    well_formed = (b for b in [*batches_so_far, *new_batches] if b.first_offset <= b.last_offset)
    combined = _prune(well_formed, start_offset)
    if len(combined) < 2:
        return combined
    final: list[PersisterStateBatch] = []
    batches = _SortedBatches(combined)
    pair = _next_pair(batches, final)
    while pair is not None:
        prev, cand = pair
        batches.remove(prev)
        batches.remove(cand)
        if _compare_delivery(cand, prev) == 0:
            merged = PersisterStateBatch(
                prev.first_offset, max(cand.last_offset, prev.last_offset), prev.delivery_state, prev.delivery_count
            )
            replacements = [merged]
        else:
            replacements = _resolve_overlap(prev, cand)
        for batch in replacements:
            batches.add(batch)
        pair = _next_pair(batches, final)
    final.extend(batches.items)
    return final
