"""Compression codecs: what we write Kafka clients read, what they write we read."""
import gzip
import importlib.util
import struct

import lz4.frame
import pytest
import snappy
import zstandard
from kafka import codec as kafka_codec

from pykbroker.records import compression
from pykbroker.records.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD, compress, decompress
from pykbroker.records.errors import InvalidRecordError, UnsupportedCompressionError
from pykbroker.records.lz4_kafka import MAGIC_0_HEADER_CHECKSUM

SMALL = b"the quick brown fox jumps over the lazy dog " * 3
LARGE = bytes(range(256)) * 300 + b"tail" * 10_000  # > 32 KiB and > 64 KiB: several blocks
PAYLOADS = [b"", b"x", SMALL, LARGE]
CODECS = [NONE, GZIP, SNAPPY, LZ4, ZSTD]

THEIR_ENCODERS = {
    GZIP: kafka_codec.gzip_encode,
    SNAPPY: kafka_codec.snappy_encode,
    LZ4: kafka_codec.lz4_encode,
    ZSTD: kafka_codec.zstd_encode,
}
THEIR_DECODERS = {
    GZIP: kafka_codec.gzip_decode,
    SNAPPY: kafka_codec.snappy_decode,
    LZ4: kafka_codec.lz4_decode,
    ZSTD: kafka_codec.zstd_decode,
}
has_xxhash = importlib.util.find_spec("xxhash") is not None


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("data", PAYLOADS, ids=len)
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_round_trip(codec, data, magic):
    assert decompress(codec, compress(codec, data, magic), magic) == data


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
@pytest.mark.parametrize("data", PAYLOADS[1:], ids=len)
def test_kafka_python_reads_what_we_write(codec, data):
    assert THEIR_DECODERS[codec](compress(codec, data)) == data


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
@pytest.mark.parametrize("data", PAYLOADS[1:], ids=len)
def test_we_read_what_kafka_python_writes(codec, data):
    assert decompress(codec, THEIR_ENCODERS[codec](data)) == data


@pytest.mark.parametrize("data", PAYLOADS, ids=len)
def test_snappy_is_xerial_framed_exactly_as_kafka_python_frames_it(data):
    ours = compress(SNAPPY, data)
    assert ours[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    if data:
        assert ours == kafka_codec.snappy_encode(data)


def test_snappy_xerial_blocks_hold_at_most_32_kib():
    framed = compress(SNAPPY, LARGE)
    pos, blocks = 16, []
    while pos < len(framed):
        (length,) = struct.unpack_from(">i", framed, pos)
        blocks.append(snappy.decompress(framed[pos + 4:pos + 4 + length]))
        pos += 4 + length
    assert [len(block) for block in blocks[:-1]] == [32 * 1024] * (len(blocks) - 1)
    assert b"".join(blocks) == LARGE


def test_snappy_raw_block_is_read():
    assert decompress(SNAPPY, snappy.compress(SMALL)) == SMALL
    assert decompress(SNAPPY, kafka_codec.snappy_encode(SMALL, xerial_compatible=False)) == SMALL


def test_snappy_xerial_with_little_endian_version_is_read():
    framed = bytearray(compress(SNAPPY, SMALL))
    framed[8:16] = struct.pack("<ii", 1, 1)
    assert decompress(SNAPPY, bytes(framed)) == SMALL


def test_concatenated_snappy_xerial_streams_are_read():
    assert decompress(SNAPPY, compress(SNAPPY, b"one") + compress(SNAPPY, b"two")) == b"onetwo"


@pytest.mark.parametrize("data", PAYLOADS, ids=len)
def test_zstd_output_matches_kafka_python(data):
    assert compress(ZSTD, data) == kafka_codec.zstd_encode(data)


def test_zstd_frames_without_content_size_are_read():
    streamed = zstandard.ZstdCompressor(write_content_size=False).compress(LARGE)
    assert zstandard.get_frame_parameters(streamed).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(ZSTD, streamed) == LARGE


def test_zstd_written_by_a_streaming_compressor_is_read():
    compressor = zstandard.ZstdCompressor().compressobj()
    streamed = compressor.compress(SMALL) + compressor.compress(LARGE) + compressor.flush()
    assert decompress(ZSTD, streamed) == SMALL + LARGE


def test_concatenated_zstd_frames_are_read():
    assert decompress(ZSTD, compress(ZSTD, b"one") + compress(ZSTD, b"two")) == b"onetwo"


def test_gzip_is_standard_and_reproducible():
    assert gzip.decompress(compress(GZIP, SMALL)) == SMALL
    assert compress(GZIP, SMALL) == compress(GZIP, SMALL)


def test_lz4_frame_has_the_descriptor_kafka_writes():
    frame = compress(LZ4, SMALL)
    assert frame[:6] == b"\x04\x22\x4d\x18\x60\x40"  # magic, FLG (independent blocks), BD (64 KiB)
    assert lz4.frame.decompress(frame) == SMALL  # a standard frame: checksum correct


def test_lz4_for_magic_0_carries_kafkas_broken_header_checksum():
    frame = compress(LZ4, SMALL, magic=0)
    assert frame[6] == MAGIC_0_HEADER_CHECKSUM
    assert frame[7:] == compress(LZ4, SMALL)[7:]
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(frame)  # a strict reader refuses it
    with pytest.raises(InvalidRecordError):
        decompress(LZ4, frame, magic=1)  # and so do we outside magic 0


@pytest.mark.parametrize("frame", [
    kafka_codec.lz4_encode(SMALL),  # standard, with content size
    compress(LZ4, SMALL),  # standard, without
    compress(LZ4, SMALL, magic=0),  # broken checksum
    lz4.frame.compress(SMALL, content_checksum=True, block_checksum=True),
], ids=["content-size", "kafka", "broken-checksum", "checksums"])
def test_lz4_for_magic_0_ignores_the_header_checksum(frame):
    assert decompress(LZ4, frame, magic=0) == SMALL


def test_lz4_magic_0_reader_still_rejects_garbage():
    with pytest.raises(InvalidRecordError):
        decompress(LZ4, b"\x04\x22\x4d\x18\x60\x40\x00garbage", magic=0)


@pytest.mark.skipif(not has_xxhash, reason="kafka-python needs xxhash for 0.8/0.9 lz4 frames")
def test_lz4_magic_0_agrees_with_kafka_pythons_old_kafka_framing():
    assert compress(LZ4, SMALL, magic=0)[:7] == kafka_codec.lz4_encode_old_kafka(SMALL)[:7]
    assert kafka_codec.lz4_decode_old_kafka(compress(LZ4, SMALL, magic=0)) == SMALL
    assert decompress(LZ4, kafka_codec.lz4_encode_old_kafka(SMALL), magic=0) == SMALL


@pytest.mark.parametrize("codec", [5, 6, 7, -1])
def test_unknown_codec_is_unsupported(codec):
    with pytest.raises(UnsupportedCompressionError):
        compress(codec, SMALL)
    with pytest.raises(UnsupportedCompressionError):
        decompress(codec, SMALL)


def test_unsupported_compression_is_an_invalid_record():
    assert issubclass(UnsupportedCompressionError, InvalidRecordError)


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
@pytest.mark.parametrize("garbage", [
    b"", b"\xff", b"not compressed at all", b"\x82SNAPPY\x00" + b"\x00" * 8 + b"\x7f\xff\xff\xff",
    b"\x04\x22\x4d\x18\x60\x40\x82\xff\xff\xff\x7f", b"\x28\xb5\x2f\xfd" + b"\xff" * 12,
    b"\x1f\x8b\x08\x00" + b"\x00" * 12,
], ids=range(7))
def test_garbage_is_an_invalid_record(codec, garbage):
    with pytest.raises(InvalidRecordError):
        decompress(codec, garbage)


@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD])
@pytest.mark.parametrize("magic", [0, 2])
def test_every_truncation_is_an_invalid_record(codec, magic):
    data = compress(codec, SMALL, magic)
    for cut in range(len(data)):
        with pytest.raises(InvalidRecordError):
            decompress(codec, data[:cut], magic)


def test_truncated_snappy_is_invalid_unless_cut_between_blocks():
    # xerial framing has no end mark: a cut between blocks leaves a shorter valid stream
    # (the batch decoder then finds records missing).
    data = compress(SNAPPY, LARGE)
    for cut in range(len(data)):
        try:
            content = decompress(SNAPPY, data[:cut])
        except InvalidRecordError:
            continue
        assert len(content) % (32 * 1024) == 0 and LARGE.startswith(content)


def test_codec_names():
    assert [compression.codec_name(codec) for codec in CODECS] == [
        "none", "gzip", "snappy", "lz4", "zstd"]
