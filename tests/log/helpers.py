"""Building batches and logs for the log tests."""
from __future__ import annotations

import os

from pykbroker.common.time import FAKE_EPOCH_MS, FakeClock
from pykbroker.log import LogConfig
from pykbroker.log.log import Log
from pykbroker.records.records import build_batch, iter_batches

T0 = FAKE_EPOCH_MS  # a fixed "now" for the tests' clocks


class Clock(FakeClock):
    """The broker's fake clock, handed to logs as their `time_ms` callable."""

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        super().advance(ms)
        return self.now


def batch(*records, timestamp: int = T0, **options) -> bytearray:
    """A batch of (key, value) records, all stamped `timestamp` unless a record carries its own."""
    items = [record if len(record) == 4 else (record[0], record[1], [], timestamp) for record in records]
    return bytearray(build_batch(items, **options))


def kv_batch(count: int, *, prefix: str = "k", timestamp: int = T0, value_size: int = 10, **options) -> bytearray:
    return batch(*[(f"{prefix}{i}", b"v" * value_size) for i in range(count)], timestamp=timestamp, **options)


def producer_batch(producer_id: int, epoch: int, base_sequence: int, count: int = 1, **options) -> bytearray:
    return kv_batch(count, producer_id=producer_id, producer_epoch=epoch, base_sequence=base_sequence, **options)


def open_log(path, clock: Clock | None = None, *, name: str = "topic-0", **kwargs) -> Log:
    config = kwargs.pop("config", None)
    return Log.open(os.path.join(path, name), LogConfig.from_dict(config or {}), time_ms=clock or Clock(), **kwargs)


def reopen(log: Log, clock: Clock | None = None, *, clean: bool, **kwargs) -> Log:
    """Open the directory of `log` again, as after a clean close (or a crash)."""
    kwargs.setdefault("recovery_point", log.recovery_point)
    kwargs.setdefault("log_start_offset", log.log_start_offset)
    return Log.open(log.directory, log.config, time_ms=clock or Clock(), clean_shutdown=clean, **kwargs)


def records_of(fetch) -> list:
    """(offset, key, value) of every record in a read's bytes (a partial last batch ignored)."""
    result = []
    for _, records in iter_batches(fetch.read_bytes(), allow_partial_tail=True):
        result.extend((record.offset, record.key, record.value) for record in records)
    return result


def all_records(log: Log) -> list:
    """Every record from the log start to the log end."""
    found, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        fetch = log.read(offset, 1 << 20)
        found.extend(record for record in records_of(fetch) if record[0] >= offset)
        last = last_offset_read(fetch)
        if last < offset:
            break
        offset = last + 1
    return found


def last_offset_read(fetch) -> int:
    last = -1
    for header, _ in iter_batches(fetch.read_bytes(), allow_partial_tail=True):
        last = header.last_offset
    return last


def offsets_of(log: Log) -> list[int]:
    return [offset for offset, _, _ in all_records(log)]


def segment_files(log: Log, suffix: str = ".log") -> list[str]:
    return sorted(name for name in os.listdir(log.directory) if name.endswith(suffix))
