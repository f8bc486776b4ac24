"""The leader epoch cache: the start offset of each leader epoch, kept in `leader-epoch-checkpoint`.

Semantics are Kafka's LeaderEpochFileCache: an epoch is assigned once, a new entry removes any
entry that would break monotonicity, and `end_offset_for` answers OffsetForLeaderEpoch.
Changes are written to the checkpoint file at once (page cache; no fsync on the append path)
and made durable by `flush()`, which the log calls when it flushes.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right

from . import checkpoint

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    """epoch -> start offset, sorted by both (entries never go backwards in either)."""

    def __init__(self, path: str, entries: list[tuple[int, int]] | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file_lock = threading.Lock()
        self._dirty = False
        self.needs_rebuild = False  # the checkpoint file was unreadable: rebuild from the log
        if entries is None:
            try:
                entries = checkpoint.read_epochs(path)
            except checkpoint.CorruptCheckpointError:
                entries, self.needs_rebuild = [], True
        loaded = entries
        self._epochs: list[int] = []
        self._offsets: list[int] = []
        for epoch, offset in loaded:
            self._assign(epoch, offset)
        self._dirty = False

    # -- reads ----------------------------------------------------------------------------

    def entries(self) -> list[tuple[int, int]]:
        with self._lock:
            return list(zip(self._epochs, self._offsets))

    @property
    def latest_epoch(self) -> int | None:
        return self._epochs[-1] if self._epochs else None

    def earliest_entry(self) -> tuple[int, int] | None:
        with self._lock:
            return (self._epochs[0], self._offsets[0]) if self._epochs else None

    def latest_entry(self) -> tuple[int, int] | None:
        with self._lock:
            return (self._epochs[-1], self._offsets[-1]) if self._epochs else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch the record at `offset` was written in, as far as the cache knows."""
        with self._lock:
            index = bisect_right(self._offsets, offset) - 1
            return self._epochs[index] if index >= 0 else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetForLeaderEpoch; (-1, -1) when undefined."""
        with self._lock:
            if requested_epoch == UNDEFINED_EPOCH:
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if self._epochs and self._epochs[-1] == requested_epoch:
                return requested_epoch, log_end_offset
            higher = bisect_right(self._epochs, requested_epoch)
            if higher == len(self._epochs):
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if higher == 0:
                return requested_epoch, self._offsets[0]
            return self._epochs[higher - 1], self._offsets[higher]

    # -- updates --------------------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that `epoch` starts at `start_offset` (ignored if it changes nothing)."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid leader epoch entry ({epoch}, {start_offset})")
        with self._lock:
            changed = self._assign(epoch, start_offset)
        if changed:
            self._write(fsync=False)
        return changed

    def _assign(self, epoch: int, start_offset: int) -> bool:
        if self._epochs and not (epoch != self._epochs[-1] or start_offset < self._offsets[-1]):
            return False
        while self._epochs and (self._epochs[-1] >= epoch or self._offsets[-1] >= start_offset):
            self._epochs.pop()
            self._offsets.pop()
        self._epochs.append(epoch)
        self._offsets.append(start_offset)
        self._dirty = True
        return True

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove the entries starting at or after `end_offset`."""
        with self._lock:
            keep = bisect_left(self._offsets, end_offset)
            changed = keep < len(self._offsets)
            del self._epochs[keep:]
            del self._offsets[keep:]
            self._dirty |= changed
        if changed:
            self._write(fsync=False)

    def truncate_from_start(self, start_offset: int) -> None:
        """Remove entries before `start_offset`; the epoch covering it now starts there."""
        with self._lock:
            covering = bisect_right(self._offsets, start_offset) - 1
            if covering < 0 or (covering == 0 and self._offsets[0] == start_offset):
                return
            epoch = self._epochs[covering]
            del self._epochs[: covering + 1]
            del self._offsets[: covering + 1]
            self._epochs.insert(0, epoch)
            self._offsets.insert(0, start_offset)
            self._dirty = True
        self._write(fsync=False)

    def clear(self) -> None:
        with self._lock:
            self._epochs.clear()
            self._offsets.clear()
            self._dirty = True
        self._write(fsync=False)

    # -- persistence ----------------------------------------------------------------------

    def flush(self) -> None:
        """Make the checkpoint file durable if it changed since the last flush."""
        if self._dirty:
            self._write(fsync=True)

    def _write(self, *, fsync: bool) -> None:
        """Write the entries as they are now; writers take turns, the last one writes the latest."""
        with self._file_lock:
            with self._lock:
                entries = list(zip(self._epochs, self._offsets))
                if fsync:
                    self._dirty = False
            checkpoint.write_epochs(self.path, entries, fsync=fsync)
