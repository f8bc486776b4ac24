"""The generated codec: every message in every version round-trips, and bad input is rejected."""
import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.codegen import DecodeError, read_uvarint, write_uvarint
from pykbroker.protocol.schema import SCHEMA_DIR

from .samples import sample

ALL_MESSAGES = sorted(p.stem for p in SCHEMA_DIR.glob("*.json"))
ALL_MESSAGE_VERSIONS = [
    (name, version) for name in ALL_MESSAGES for version in messages.by_name(name).versions
]


@pytest.mark.parametrize("name,version", ALL_MESSAGE_VERSIONS)
def test_every_message_version_round_trips_with_every_field_set(name, version):
    message = messages.by_name(name)
    original = sample(message, version)
    encoded = message.encode_bytes(original, version=version)
    decoded, end = message.decode(encoded, 0, version=version)
    assert end == len(encoded)
    assert decoded == original
    assert message.encode_bytes(decoded, version=version) == encoded


@pytest.mark.parametrize("name,version", ALL_MESSAGE_VERSIONS[::7])
def test_every_proper_prefix_of_a_message_is_rejected_as_truncated(name, version):
    message = messages.by_name(name)
    encoded = message.encode_bytes(sample(message, version, array_length=1), version=version)
    for cut in range(len(encoded)):
        with pytest.raises(DecodeError):
            message.decode(encoded[:cut], 0, version=version)


def test_flexible_versions_use_compact_lengths_and_tagged_fields():
    metadata_request = messages.by_name("MetadataRequest")
    body = metadata_request.cls(topics=[metadata_request.cls.MetadataRequestTopic(name="t")])
    assert metadata_request.encode_bytes(body, version=8) == (
        b"\x00\x00\x00\x01" b"\x00\x01t" b"\x01" b"\x00" b"\x00")
    # v9: compact array (n+1), compact string (n+1), tagged fields after each struct
    assert metadata_request.encode_bytes(body, version=9) == b"\x02" b"\x02t" b"\x00" b"\x01\x00\x00" b"\x00"


def test_null_array_and_null_string_encodings():
    metadata_request = messages.by_name("MetadataRequest")
    all_topics = metadata_request.cls(topics=None)
    assert metadata_request.encode_bytes(all_topics, version=1) == b"\xff\xff\xff\xff"
    assert metadata_request.encode_bytes(all_topics, version=9)[:1] == b"\x00"
    decoded, _ = metadata_request.decode(b"\xff\xff\xff\xff", version=1)
    assert decoded.topics is None


def test_tagged_fields_are_written_only_when_not_default_and_read_back():
    response = messages.by_name("ApiVersionsResponse")
    plain = response.encode_bytes(response.cls(), version=3)
    with_tags = response.encode_bytes(response.cls(finalized_features_epoch=5), version=3)
    assert len(with_tags) > len(plain)
    decoded, _ = response.decode(with_tags, version=3)
    assert decoded.finalized_features_epoch == 5


def test_unknown_tagged_fields_are_skipped():
    request = messages.by_name("MetadataRequest")
    encoded = bytearray(request.encode_bytes(request.cls(topics=[]), version=12))
    assert encoded[-1] == 0
    encoded[-1:] = b"\x01" b"\x63" b"\x03abc"  # one tagged field, tag 99, three bytes
    decoded, end = request.decode(bytes(encoded), version=12)
    assert end == len(encoded) and decoded.topics == []


def test_negative_lengths_other_than_null_are_rejected():
    request = messages.by_name("MetadataRequest")
    with pytest.raises(DecodeError):
        request.decode(b"\xff\xff\xff\xfe", version=1)
    with pytest.raises(DecodeError):
        request.decode(b"\xff\xff\xff\xff", version=0)  # null is not allowed in v0


def test_huge_array_counts_fail_fast():
    request = messages.by_name("MetadataRequest")
    with pytest.raises(DecodeError):
        request.decode(b"\x7f\xff\xff\xff\x00\x01a", version=1)


def test_invalid_utf8_is_a_decode_error():
    request = messages.by_name("MetadataRequest")
    with pytest.raises(DecodeError):
        request.decode(b"\x00\x00\x00\x01\x00\x02\xff\xfe", version=1)


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1, 2**32 - 1])
def test_unsigned_varints_round_trip(value):
    encoded = write_uvarint(value)
    assert read_uvarint(encoded, 0) == (value, len(encoded))


def test_overlong_varint_is_rejected():
    with pytest.raises(DecodeError):
        read_uvarint(b"\xff\xff\xff\xff\xff\xff\x01", 0)


def test_records_field_keeps_a_bytearray_frame_mutable():
    produce = messages.by_name("ProduceRequest")
    body = produce.cls(acks=1, timeout_ms=100, topic_data=[produce.cls.TopicProduceData(
        name="t", partition_data=[produce.cls.PartitionProduceData(index=0, records=b"abc")])])
    frame = bytearray(produce.encode_bytes(body, version=9))
    decoded, _ = produce.decode(frame, version=9)
    records = decoded.topic_data[0].partition_data[0].records
    assert isinstance(records, bytearray) and records == b"abc"


def test_records_field_accepts_a_file_region_and_emits_it_as_one_piece():
    class Region:
        def __len__(self):
            return 10

    fetch = messages.by_name("FetchResponse")
    region = Region()
    body = fetch.cls(responses=[fetch.cls.FetchableTopicResponse(topic="t", partitions=[
        fetch.cls.PartitionData(partition_index=0, records=region)])])
    pieces = fetch.encode(body, version=4)
    assert region in pieces
    assert pieces[pieces.index(region) - 1] == b"\x00\x00\x00\x0a"


def test_a_compact_string_longer_than_an_int16_allows_is_refused_as_kafkas_readers_refuse_it():
    """Kafka's generated readers refuse a string of more than 32767 bytes in any version, so a
    flexible request cannot smuggle in a name no non-flexible record or response can carry."""
    import pytest

    from pykbroker.protocol import messages
    from pykbroker.protocol.api_keys import ApiKey
    from pykbroker.protocol.codegen import DecodeError

    request = messages.request(ApiKey.API_VERSIONS)
    name = b"n" * 40000
    body = _uvarint(len(name) + 1) + name + _uvarint(2) + b"1" + b"\x00"
    with pytest.raises(DecodeError, match="longer than 32767"):
        request.decode(body, version=3)
    fits = b"n" * 32767
    decoded, _ = request.decode(_uvarint(len(fits) + 1) + fits + _uvarint(2) + b"1" + b"\x00", version=3)
    assert decoded.client_software_name == fits.decode()


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
