"""Transaction markers: the control batch a COMMIT or ABORT writes, and how it reads back."""
import pytest
from kafka.record.default_records import ControlRecord, DefaultRecordBatch

from pykbroker.records import batch
from pykbroker.records.control import (
    ABORT,
    COMMIT,
    ControlType,
    EndTxnMarker,
    build_end_txn_marker,
    is_end_txn_marker_batch,
    parse_control_record,
    parse_control_type,
    read_end_txn_marker,
)
from pykbroker.records.errors import InvalidRecordError
from pykbroker.records.records import Record, build_batch, decode_batch

T0 = 1_700_000_000_000


@pytest.mark.parametrize("commit,control_type", [(True, COMMIT), (False, ABORT)])
def test_marker_is_a_transactional_control_batch_of_one_record(commit, control_type):
    data = build_end_txn_marker(4001, 3, commit, coordinator_epoch=17, base_offset=250,
                                timestamp=T0, partition_leader_epoch=5)
    header, records = decode_batch(data)
    assert header.is_control and header.is_transactional
    assert is_end_txn_marker_batch(header)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (4001, 3, -1)
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (250, 0, 1)
    assert (header.base_timestamp, header.max_timestamp) == (T0, T0)
    assert header.partition_leader_epoch == 5 and header.compression == 0
    assert not header.is_log_append_time
    (record,) = records
    assert record.key == bytes([0, 0, 0, control_type])  # version 0, type
    assert record.value == bytes([0, 0, 0, 0, 0, 17])  # version 0, coordinator epoch
    assert record.headers == []
    assert parse_control_record(record) == (control_type, 17)


@pytest.mark.parametrize("commit", [True, False])
def test_kafka_python_sees_a_control_record(commit):
    theirs = DefaultRecordBatch(build_end_txn_marker(1, 0, commit, 2, timestamp=T0))
    assert theirs.validate_crc() and theirs.is_control_batch and theirs.is_transactional
    (record,) = list(theirs)
    assert isinstance(record, ControlRecord)
    assert (record.commit, record.abort, record.version) == (commit, not commit, 0)


def test_read_end_txn_marker():
    data = build_end_txn_marker(77, 4, False, coordinator_epoch=9, base_offset=12, timestamp=T0)
    assert read_end_txn_marker(data) == EndTxnMarker(
        producer_id=77, producer_epoch=4, commit=False, coordinator_epoch=9, offset=12,
        timestamp=T0)


def test_marker_timestamp_defaults_to_now():
    header = batch.parse_header(build_end_txn_marker(1, 0, True, 0))
    assert header.base_timestamp > T0


def test_newer_key_and_value_versions_are_read_as_version_0():
    record = Record(0, 0, b"\x00\x01\x00\x01extra", b"\x00\x01\x00\x00\x00\x05more")
    assert parse_control_record(record) == (COMMIT, 5)


@pytest.mark.parametrize("key,value", [
    (None, b"\x00\x00\x00\x00\x00\x01"),
    (b"\x00\x00\x00", b"\x00\x00\x00\x00\x00\x01"),
    (b"\x00\x00\x00\x01", None),
    (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00"),
], ids=["no key", "short key", "no value", "short value"])
def test_short_control_records_are_invalid(key, value):
    with pytest.raises(InvalidRecordError):
        parse_control_record(Record(0, 0, key, value))


def test_other_control_types_are_not_transaction_markers():
    record = Record(0, 0, b"\x00\x00\x00\x02", b"")
    assert parse_control_type(record.key) == ControlType.LEADER_CHANGE
    with pytest.raises(InvalidRecordError):
        parse_control_record(record)


def test_a_data_batch_is_not_a_marker():
    data = build_batch([(b"k", b"v")], producer_id=1, producer_epoch=0, base_sequence=0,
                       is_transactional=True)
    assert not is_end_txn_marker_batch(batch.parse_header(data))
    with pytest.raises(InvalidRecordError):
        read_end_txn_marker(data)
