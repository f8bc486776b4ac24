"""Compression codecs of Kafka record batches and legacy wrapper messages.

Codec ids are Kafka's (the low three bits of the attributes): 0 none, 1 gzip,
2 snappy, 3 lz4, 4 zstd. What each writes and reads:

* gzip: standard gzip members (stdlib); the header's mtime is 0 so output is reproducible.
* snappy: written in the xerial block framing that Java clients write (see `snappy_xerial`);
  read either that framing or a raw snappy block.
* lz4: the standard LZ4 frame format with independent 64 KiB blocks and no content size
  (what Kafka writes). Magic 0 messages are the exception: Kafka 0.8/0.9 computed the
  frame's header checksum wrongly, so for magic 0 we write that wrong checksum and read
  while ignoring the checksum, as Kafka does (see `lz4_kafka`).
* zstd: standard frames; frames without a content size (as streaming writers such as the
  Java client produce) and concatenated frames are read too.

Any failure to decompress is reported as InvalidRecordError; an unknown codec id as
UnsupportedCompressionError.

Each codec's library is imported on the first use of that codec, so a broker whose clients
never compress loads none of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .buffers import ReadableBuffer
from .errors import InvalidRecordError, UnsupportedCompressionError

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
GZIP_LEVEL = 6  # zlib's default, as Java's GZIPOutputStream uses
ZSTD_LEVEL = 3  # zstd's default


def codec_name(codec: int) -> str:
    check_codec(codec)
    return CODEC_NAMES[codec]


def check_codec(codec: int) -> None:
    if codec not in CODEC_NAMES:
        raise UnsupportedCompressionError(f"unknown compression codec id {codec}")


def compress(codec: int, data: bytes, magic: int = 2) -> bytes:
    """`data` compressed with `codec` as Kafka writes it into a batch or message of `magic`."""
    check_codec(codec)
    data = bytes(data)
    if codec == NONE:
        return data
    if codec == GZIP:
        import gzip

        return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)
    if codec == SNAPPY:
        from . import snappy_xerial

        return snappy_xerial.compress(data)
    if codec == LZ4:
        from . import lz4_kafka

        return lz4_kafka.compress_for_magic_0(data) if magic == 0 else lz4_kafka.compress(data)
    import zstandard

    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)


def decompress(codec: int, data: ReadableBuffer, magic: int = 2) -> bytes:
    """The bytes that `data` (compressed with `codec` in a batch or message of `magic`) holds."""
    check_codec(codec)
    data = bytes(data)
    if codec == NONE:
        return data
    if not data:
        raise InvalidRecordError(f"empty {CODEC_NAMES[codec]} data")
    with _invalid_record_on_failure(codec):
        if codec == GZIP:
            import gzip

            return gzip.decompress(data)
        if codec == SNAPPY:
            from . import snappy_xerial

            return snappy_xerial.decompress(data)
        if codec == LZ4:
            from . import lz4_kafka

            return lz4_kafka.decompress_ignoring_header_checksum(data) if magic == 0 else lz4_kafka.decompress(data)
        return zstd_decompress(data)


def zstd_decompress(data: bytes) -> bytes:
    """All the zstd frames in `data`, whether or not their headers give the content size."""
    import zstandard

    out = bytearray()
    while data:
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        out += decompressor.decompress(data)
        if not decompressor.eof:
            raise InvalidRecordError("zstd data ends inside a frame")
        data = decompressor.unused_data
    return bytes(out)


@contextlib.contextmanager
def _invalid_record_on_failure(codec: int) -> Iterator[None]:
    """Turn whatever a codec library raises on bad input into InvalidRecordError."""
    try:
        yield
    except InvalidRecordError:
        raise
    except MemoryError:
        raise
    except Exception as error:
        raise InvalidRecordError(f"cannot decompress {CODEC_NAMES[codec]} data: {error}") from error
