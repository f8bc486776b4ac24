"""What a leader append refuses, with Kafka's error codes."""
import struct

import pytest

from pykbroker.log import RecordValidationError
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.records.batch import ATTRIBUTES_OFFSET, is_crc_valid, parse_header, write_crc

from .helpers import T0, batch, kv_batch, open_log


def refused(log, data, **kwargs) -> KafkaError:
    kwargs.setdefault("leader_epoch", 0)
    with pytest.raises(KafkaError) as raised:
        log.append_as_leader(data, **kwargs)
    assert log.log_end_offset == 0
    return raised.value


def with_header_field(data: bytearray, offset: int, fmt: str, value, *, fix_crc: bool = True) -> bytearray:
    struct.pack_into(fmt, data, offset, value)
    if fix_crc:
        write_crc(data, 0, parse_header(data))
    return data


def test_a_corrupt_crc_is_refused_with_corrupt_message(tmp_path):
    data = kv_batch(3)
    data[-1] ^= 0xFF
    assert refused(open_log(tmp_path), data).code == ErrorCode.CORRUPT_MESSAGE


def test_a_batch_above_max_message_bytes_is_message_too_large(tmp_path):
    log = open_log(tmp_path, config={"max.message.bytes": 200})
    assert refused(log, kv_batch(5, value_size=100)).code == ErrorCode.MESSAGE_TOO_LARGE


def test_the_max_message_bytes_argument_overrides_the_config(tmp_path):
    assert refused(open_log(tmp_path), kv_batch(5, value_size=100),
                   max_message_bytes=100).code == ErrorCode.MESSAGE_TOO_LARGE


def test_an_append_larger_than_a_segment_is_record_list_too_large(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300, "max.message.bytes": 10_000})
    assert refused(log, kv_batch(5, value_size=100)).code == ErrorCode.RECORD_LIST_TOO_LARGE


def test_a_client_batch_must_have_base_offset_zero(tmp_path):
    assert refused(open_log(tmp_path), kv_batch(1, base_offset=5)).code == ErrorCode.INVALID_RECORD


def test_record_count_must_match_the_offset_range(tmp_path):
    data = with_header_field(kv_batch(3), 57, ">i", 2)
    assert refused(open_log(tmp_path), data).code == ErrorCode.INVALID_RECORD


def test_clients_may_not_write_control_batches(tmp_path):
    data = kv_batch(1)
    header = parse_header(data)
    with_header_field(data, ATTRIBUTES_OFFSET, ">h", header.attributes | 0x20)
    assert refused(open_log(tmp_path), data).code == ErrorCode.INVALID_RECORD


def test_an_idempotent_batch_needs_a_sequence(tmp_path):
    data = kv_batch(1, producer_id=7, producer_epoch=0, base_sequence=-1)
    assert refused(open_log(tmp_path), data).code == ErrorCode.INVALID_RECORD


def test_only_magic_2_is_accepted(tmp_path):
    data = kv_batch(1)
    data[16] = 1
    assert refused(open_log(tmp_path), data).code == ErrorCode.INVALID_RECORD


def test_a_length_below_the_batch_header_is_corrupt(tmp_path):
    data = with_header_field(kv_batch(1), 8, ">i", 20, fix_crc=False)
    assert refused(open_log(tmp_path), data).code == ErrorCode.CORRUPT_MESSAGE


def test_an_empty_append_is_invalid(tmp_path):
    assert refused(open_log(tmp_path), bytearray()).code == ErrorCode.INVALID_RECORD


def test_an_unknown_compression_codec_fails_like_kafka(tmp_path):
    data = kv_batch(1)
    with_header_field(data, ATTRIBUTES_OFFSET, ">h", parse_header(data).attributes | 0x07)
    assert refused(open_log(tmp_path), data).code == ErrorCode.UNKNOWN_SERVER_ERROR


def test_a_partial_trailing_batch_is_ignored(tmp_path):
    log = open_log(tmp_path)
    data = kv_batch(2) + kv_batch(3)[:30]
    info = log.append_as_leader(data, leader_epoch=0)
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (0, 1, 2)


def test_keyless_records_are_refused_on_compacted_topics(tmp_path):
    log = open_log(tmp_path, config={"cleanup.policy": "compact"})
    error = refused(log, batch(("a", "1"), (None, "2")))
    assert error.code == ErrorCode.INVALID_RECORD
    assert isinstance(error, RecordValidationError)
    assert [index for index, _ in error.record_errors] == [1]


def test_keyless_records_are_fine_on_delete_topics(tmp_path):
    log = open_log(tmp_path)
    assert log.append_as_leader(batch((None, "x")), leader_epoch=0).first_offset == 0


def test_timestamps_outside_the_configured_bounds_are_invalid(tmp_path):
    log = open_log(tmp_path, config={"message.timestamp.after.max.ms": 1000,
                                     "message.timestamp.before.max.ms": 1000})
    future = batch(("a", "1", [], T0), ("b", "2", [], T0 + 5000))
    error = refused(log, future, now_ms=T0)
    assert error.code == ErrorCode.INVALID_TIMESTAMP
    assert [index for index, _ in error.record_errors] == [1]
    assert refused(log, kv_batch(1, timestamp=T0 - 5000), now_ms=T0).code == ErrorCode.INVALID_TIMESTAMP
    assert log.append_as_leader(kv_batch(1, timestamp=T0 + 999), leader_epoch=0, now_ms=T0).first_offset == 0


def test_the_deprecated_difference_config_still_bounds_timestamps(tmp_path):
    log = open_log(tmp_path, config={"message.timestamp.difference.max.ms": 10})
    assert refused(log, kv_batch(1, timestamp=T0 + 100), now_ms=T0).code == ErrorCode.INVALID_TIMESTAMP


def test_producers_may_not_send_log_append_time_batches_to_log_append_time_topics(tmp_path):
    log = open_log(tmp_path, config={"message.timestamp.type": "LogAppendTime"})
    assert refused(log, kv_batch(1, log_append_time=True)).code == ErrorCode.INVALID_TIMESTAMP


def test_a_log_append_time_batch_with_a_timestamp_is_stored_as_create_time(tmp_path):
    log = open_log(tmp_path)
    assert log.append_as_leader(kv_batch(1, log_append_time=True), leader_epoch=0).first_offset == 0
    stored = log.read(0, 1 << 20).read_bytes()
    assert not parse_header(stored).is_log_append_time
    assert is_crc_valid(stored, 0, parse_header(stored))
