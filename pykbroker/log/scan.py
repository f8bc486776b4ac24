"""Walking the record batches stored in a segment file, reading it in chunks.

`iter_headers` yields only headers (reads and lookups: data below the segment size was
validated when it was appended or recovered). `iter_batches` yields whole batches and stops
at the first one whose framing is broken or that runs past the end (recovery, compaction).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from pykbroker.records.batch import BATCH_HEADER_SIZE, LOG_OVERHEAD, BatchHeader, unpack_header

from .files import OpenFile

MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD
HEADER_CHUNK = 16 * 1024
BATCH_CHUNK = 1024 * 1024


class StoredBatch(NamedTuple):
    position: int
    header: BatchHeader
    data: memoryview  # the whole batch


def iter_headers(file: OpenFile, start: int, end: int, chunk: int = HEADER_CHUNK) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of each batch in `[start, end)`."""
    pos = start
    buf = b""
    buf_start = start
    while end - pos >= BATCH_HEADER_SIZE:
        at = pos - buf_start
        if at + BATCH_HEADER_SIZE > len(buf):
            buf = file.pread(min(max(chunk, BATCH_HEADER_SIZE), end - pos), pos)
            buf_start, at = pos, 0
            if len(buf) < BATCH_HEADER_SIZE:
                return
        header = unpack_header(buf, at)
        if header.batch_length < MIN_BATCH_LENGTH or pos + header.size > end:
            return
        yield pos, header
        pos += header.size


def iter_batches(file: OpenFile, start: int, end: int, chunk: int = BATCH_CHUNK) -> Iterator[StoredBatch]:
    """Each whole magic 2 batch in `[start, end)`; stops at the first malformed or partial one."""
    pos = start
    buf = b""
    buf_start = start
    while end - pos >= BATCH_HEADER_SIZE:
        at = pos - buf_start
        if at + BATCH_HEADER_SIZE > len(buf):
            buf, buf_start, at = file.pread(min(chunk, end - pos), pos), pos, 0
            if len(buf) < BATCH_HEADER_SIZE:
                return
        header = unpack_header(buf, at)
        if header.batch_length < MIN_BATCH_LENGTH or header.magic != 2 or pos + header.size > end:
            return
        if at + header.size > len(buf):
            buf, buf_start, at = file.pread(min(max(chunk, header.size), end - pos), pos), pos, 0
            if len(buf) < header.size:
                return
        yield StoredBatch(pos, header, memoryview(buf)[at : at + header.size])
        pos += header.size
