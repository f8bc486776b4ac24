"""Kafka record batches and message sets: headers, records, compression, conversion.

A library on its own (it imports nothing else from pykbroker):

* `batch`: magic 2 batch headers, CRC32C, in-place offset/epoch/LogAppendTime rewrites.
* `records`: full decode/encode of magic 2 records (tests and tools).
* `compression`: Kafka's codecs (none, gzip, snappy, lz4, zstd).
* `legacy`: magic 0/1 message sets, up-conversion to and down-conversion from magic 2.
* `control`: control records, transaction markers.

The names of `legacy` are imported on first use: a broker whose clients all speak magic 2 never
loads it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .batch import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    check_crc,
    is_crc_valid,
    iter_headers,
    parse_header,
    read_magic,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
)
from .compression import GZIP, LZ4, NONE, SNAPPY, ZSTD, compress, decompress
from .control import (
    ABORT,
    COMMIT,
    ControlType,
    EndTxnMarker,
    build_end_txn_marker,
    parse_control_record,
    read_end_txn_marker,
)
from .errors import CorruptRecordError, InvalidRecordError, UnsupportedCompressionError
from .records import Record, build_batch, decode_batch, iter_batches, iter_records

if TYPE_CHECKING:
    from .legacy import (
        LegacyMessage,
        build_message_set,
        decode_message_set,
        downconvert,
        parse_message_set,
        upconvert_to_v2,
    )

_LEGACY_NAMES = frozenset(
    ("LegacyMessage", "build_message_set", "decode_message_set", "downconvert", "parse_message_set", "upconvert_to_v2")
)


def __getattr__(name: str) -> Any:
    if name not in _LEGACY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.legacy"), name)


__all__ = [
    "ABORT",
    "BATCH_HEADER_SIZE",
    "COMMIT",
    "GZIP",
    "LOG_OVERHEAD",
    "LZ4",
    "NONE",
    "SNAPPY",
    "ZSTD",
    "BatchHeader",
    "ControlType",
    "CorruptRecordError",
    "EndTxnMarker",
    "InvalidRecordError",
    "LegacyMessage",
    "Record",
    "UnsupportedCompressionError",
    "build_batch",
    "build_end_txn_marker",
    "build_message_set",
    "check_crc",
    "compress",
    "decode_batch",
    "decode_message_set",
    "decompress",
    "downconvert",
    "is_crc_valid",
    "iter_batches",
    "iter_headers",
    "iter_records",
    "parse_control_record",
    "parse_header",
    "parse_message_set",
    "read_end_txn_marker",
    "read_magic",
    "set_base_offset",
    "set_log_append_time",
    "set_partition_leader_epoch",
    "upconvert_to_v2",
]
