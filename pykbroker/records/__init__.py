"""Kafka record batches and message sets: headers, records, compression, conversion.

A library on its own (it imports nothing else from pykbroker):

* `batch`: magic 2 batch headers, CRC32C, in-place offset/epoch/LogAppendTime rewrites.
* `records`: full decode/encode of magic 2 records (tests and tools).
* `compression`: Kafka's codecs (none, gzip, snappy, lz4, zstd).
* `legacy`: magic 0/1 message sets, up-conversion to and down-conversion from magic 2.
* `control`: control records, transaction markers.

The package's names are imported from their modules on first use: a broker loads only the
modules it needs (none before its first log, and never `legacy` while its clients all speak
magic 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy_names import names_from_modules

if TYPE_CHECKING:
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
    from .legacy import (
        LegacyMessage,
        build_message_set,
        decode_message_set,
        downconvert,
        parse_message_set,
        upconvert_to_v2,
    )
    from .records import Record, build_batch, decode_batch, iter_batches, iter_records

_MODULE_OF = {
    **dict.fromkeys(
        (
            "BATCH_HEADER_SIZE",
            "LOG_OVERHEAD",
            "BatchHeader",
            "check_crc",
            "is_crc_valid",
            "iter_headers",
            "parse_header",
            "read_magic",
            "set_base_offset",
            "set_log_append_time",
            "set_partition_leader_epoch",
        ),
        "batch",
    ),
    **dict.fromkeys(("GZIP", "LZ4", "NONE", "SNAPPY", "ZSTD", "compress", "decompress"), "compression"),
    **dict.fromkeys(
        (
            "ABORT",
            "COMMIT",
            "ControlType",
            "EndTxnMarker",
            "build_end_txn_marker",
            "parse_control_record",
            "read_end_txn_marker",
        ),
        "control",
    ),
    **dict.fromkeys(("CorruptRecordError", "InvalidRecordError", "UnsupportedCompressionError"), "errors"),
    **dict.fromkeys(
        (
            "LegacyMessage",
            "build_message_set",
            "decode_message_set",
            "downconvert",
            "parse_message_set",
            "upconvert_to_v2",
        ),
        "legacy",
    ),
    **dict.fromkeys(("Record", "build_batch", "decode_batch", "iter_batches", "iter_records"), "records"),
}


__getattr__ = names_from_modules(__name__, _MODULE_OF)


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
