"""LZ4 frames as Kafka writes them, including the broken header checksum of magic 0.

Kafka compresses with the standard LZ4 frame format, independent 64 KiB blocks, no block
or content checksum and no content size: frame descriptor FLG=0x60, BD=0x40.

The frame descriptor ends with a header checksum HC, the second byte of xxh32 (seed 0)
of the descriptor (FLG, BD and the optional content size / dictionary id). Kafka 0.8 and
0.9 hashed from the start of the frame instead, the 4 magic bytes included. Kafka kept
that mistake for magic 0 messages: it writes the wrong checksum there and ignores the
checksum when it reads magic 0 (magic 1 and 2 use correct frames).

* Writing magic 0: our descriptor is always FLG=0x60 BD=0x40, whose wrong checksum is the
  constant `MAGIC_0_HEADER_CHECKSUM` (xxh32 of 04 22 4D 18 60 40, second byte).
* Reading magic 0: we replace the stored checksum with the correct one and then decode
  the frame normally. The correct checksum comes from the lz4 library itself: we have
  it write the header of a frame with the same descriptor and take its last byte.
"""

from __future__ import annotations

import struct

import lz4.frame

from .errors import InvalidRecordError

FRAME_MAGIC = b"\x04\x22\x4d\x18"
KAFKA_FLG = 0x60  # version 01, independent blocks, no checksums, no content size
KAFKA_BD = 0x40  # 64 KiB blocks
MAGIC_0_HEADER_CHECKSUM = 0x1A  # the checksum Kafka 0.8/0.9 wrote for FLG=0x60 BD=0x40

_FLG_VERSION_MASK = 0xC0
_FLG_VERSION_01 = 0x40
_FLG_INDEPENDENT_BLOCKS = 0x20
_FLG_BLOCK_CHECKSUM = 0x10
_FLG_CONTENT_SIZE = 0x08
_FLG_CONTENT_CHECKSUM = 0x04
_FLG_RESERVED = 0x02
_FLG_DICTIONARY_ID = 0x01
_BD_BLOCK_SIZE_ID_SHIFT = 4
_BD_BLOCK_SIZE_IDS = {
    4: lz4.frame.BLOCKSIZE_MAX64KB,
    5: lz4.frame.BLOCKSIZE_MAX256KB,
    6: lz4.frame.BLOCKSIZE_MAX1MB,
    7: lz4.frame.BLOCKSIZE_MAX4MB,
}
_FLG_OFFSET = 4
_BD_OFFSET = 5
_CONTENT_SIZE_OFFSET = 6
_CHECKSUM_OFFSET_WITHOUT_CONTENT_SIZE = 6
_CONTENT_SIZE = struct.Struct("<Q")


def compress(data: bytes) -> bytes:
    """`data` as one standard LZ4 frame, in the shape Kafka writes."""
    return lz4.frame.compress(
        data,
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        block_linked=False,
        content_checksum=False,
        block_checksum=False,
        store_size=False,
    )


def compress_for_magic_0(data: bytes) -> bytes:
    """`data` as the LZ4 frame Kafka writes into magic 0 messages (wrong header checksum)."""
    frame = bytearray(compress(data))
    if frame[_FLG_OFFSET] != KAFKA_FLG or frame[_BD_OFFSET] != KAFKA_BD:
        raise AssertionError("the lz4 library wrote an unexpected frame descriptor")
    frame[_CHECKSUM_OFFSET_WITHOUT_CONTENT_SIZE] = MAGIC_0_HEADER_CHECKSUM
    return bytes(frame)


def decompress(data: bytes) -> bytes:
    """The content of a standard LZ4 frame (checksums verified)."""
    return lz4.frame.decompress(data)


def decompress_ignoring_header_checksum(data: bytes) -> bytes:
    """The content of an LZ4 frame whatever its header checksum says (magic 0 messages)."""
    return decompress(with_correct_header_checksum(data))


def with_correct_header_checksum(frame: bytes) -> bytes:
    """`frame` with its header checksum byte replaced by the correct one."""
    flg, bd = _read_descriptor(frame)
    content_size = _read_content_size(frame, flg)
    header = _standard_frame_header(flg, bd, content_size)
    if len(frame) < len(header) or frame[: len(header) - 1] != header[:-1]:
        raise InvalidRecordError("lz4 frame descriptor is not one Kafka could have written")
    return header + frame[len(header) :]


def _read_descriptor(frame: bytes) -> tuple[int, int]:
    if len(frame) < _CONTENT_SIZE_OFFSET + 1 or not frame.startswith(FRAME_MAGIC):
        raise InvalidRecordError("not an lz4 frame")
    flg, bd = frame[_FLG_OFFSET], frame[_BD_OFFSET]
    if flg & _FLG_VERSION_MASK != _FLG_VERSION_01 or flg & _FLG_RESERVED:
        raise InvalidRecordError(f"unsupported lz4 frame flags {flg:#04x}")
    if flg & _FLG_DICTIONARY_ID:
        raise InvalidRecordError("lz4 frames with a dictionary id are not supported")
    if bd & 0x8F or (bd >> _BD_BLOCK_SIZE_ID_SHIFT) not in _BD_BLOCK_SIZE_IDS:
        raise InvalidRecordError(f"unsupported lz4 block descriptor {bd:#04x}")
    return flg, bd


def _read_content_size(frame: bytes, flg: int) -> int:
    if not flg & _FLG_CONTENT_SIZE:
        return 0
    if len(frame) < _CONTENT_SIZE_OFFSET + _CONTENT_SIZE.size:
        raise InvalidRecordError("lz4 frame content size is truncated")
    (size,) = _CONTENT_SIZE.unpack_from(frame, _CONTENT_SIZE_OFFSET)
    if size == 0:
        raise InvalidRecordError("lz4 frame declares a content size of 0")
    return size


def _standard_frame_header(flg: int, bd: int, content_size: int) -> bytes:
    """The header (magic, descriptor, checksum) that lz4 writes for this descriptor."""
    context = lz4.frame.create_compression_context()
    return lz4.frame.compress_begin(
        context,
        source_size=content_size,
        block_size=_BD_BLOCK_SIZE_IDS[bd >> _BD_BLOCK_SIZE_ID_SHIFT],
        block_linked=not flg & _FLG_INDEPENDENT_BLOCKS,
        block_checksum=bool(flg & _FLG_BLOCK_CHECKSUM),
        content_checksum=bool(flg & _FLG_CONTENT_CHECKSUM),
        auto_flush=True,
    )
