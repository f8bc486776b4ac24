"""Answers the compatibility suite's wire comparison found differing from Kafka 3.9.0, now as
Kafka gives them (compat/wire_probes.py compares the whole answers against Kafka itself)."""
from __future__ import annotations

import pytest

from compat.wire_probes import ask
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.wire import WireClient

TOPIC = "parity"


@pytest.fixture(scope="module")
def client(broker):
    with WireClient(broker.bootstrap) as wire:
        ask(wire, ApiKey.CREATE_TOPICS, 7, timeout_ms=10000, validate_only=False, topics=[
            {"name": TOPIC, "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": []}])
        produced = ask(wire, ApiKey.PRODUCE, 9, transactional_id=None, acks=-1, timeout_ms=10000,
                       topic_data=[{"name": TOPIC, "partition_data": [
                           {"index": 0, "records": build_batch([(b"k", b"v")] * 3)}]}])
        assert produced["responses"][TOPIC]["partition_responses"]["0"]["error_code"] == 0
        yield wire


def list_offsets(client, timestamp: int, version: int, **extra) -> dict:
    answer = ask(client, ApiKey.LIST_OFFSETS, version, replica_id=-1, isolation_level=0,
                 topics=[{"name": TOPIC, "partitions": [
                     {"partition_index": 0, "timestamp": timestamp, **extra}]}])
    return answer["topics"][TOPIC]["partitions"]["0"]


@pytest.mark.parametrize("timestamp, version", [(-6, 9), (-7, 7), (-4, 7), (-5, 8)])
def test_list_offsets_for_a_timestamp_the_version_does_not_know_is_unsupported_version(
        client, timestamp, version):
    answer = list_offsets(client, timestamp, version)
    assert (answer["error_code"], answer["offset"], answer["timestamp"]) == (
        ErrorCode.UNSUPPORTED_VERSION, -1, -1)


def test_list_offsets_v0_latest_lists_the_high_watermark_then_the_segment_bases(client):
    assert list_offsets(client, -1, 0, max_num_offsets=10)["old_style_offsets"] == [3, 0]
    assert list_offsets(client, -1, 0, max_num_offsets=1)["old_style_offsets"] == [3]


def test_metadata_marks_a_missing_internal_topic_internal(client):
    answer = ask(client, ApiKey.METADATA, 12, topics=[{"name": "__transaction_state"}],
                 allow_auto_topic_creation=False)
    topic = answer["topics"]["__transaction_state"]
    assert (topic["error_code"], topic["is_internal"]) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                           True)


def test_fetch_from_an_unknown_partition_has_an_empty_aborted_transactions_list(client):
    answer = ask(client, ApiKey.FETCH, 11, replica_id=-1, max_wait_ms=0, min_bytes=1,
                 max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
                 topics=[{"topic": TOPIC, "partitions": [
                     {"partition": 5, "fetch_offset": 0, "log_start_offset": -1,
                      "partition_max_bytes": 1 << 20, "current_leader_epoch": -1}]}],
                 forgotten_topics_data=[], rack_id="")
    partition = answer["responses"][TOPIC]["partitions"]["5"]
    assert (partition["error_code"], partition["aborted_transactions"]) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])


def test_init_producer_id_refused_for_a_transactional_id_has_no_producer_id_or_epoch(client):
    """Sent before any FindCoordinator created `__transaction_state`: this broker coordinates no
    transactional id yet."""
    answer = ask(client, ApiKey.INIT_PRODUCER_ID, 4, transactional_id="txn",
                 transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)
    assert (answer["error_code"], answer["producer_id"], answer["producer_epoch"]) == (
        ErrorCode.NOT_COORDINATOR, -1, -1)
