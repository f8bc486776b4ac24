"""The broker's caps on a consumer's fetch: Kafka's `fetch.max.bytes` (KIP-541) and this project's
`pykbroker.fetch.response.max.bytes`. A response holds no more than the smaller, whatever the
request's own limits, and still at least the first batch."""
from __future__ import annotations

import pytest

from pykbroker.protocol.api_keys import ApiKey
from pykbroker.records.records import build_batch, iter_batches
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.wire import WireClient

from .client_helpers import Fetch, create_topic, produce_batch

BROKER_FETCH_MAX_BYTES = 4096
BATCH_VALUE = b"v" * 1500  # one record of it makes a batch of a bit more than 1500 bytes
BATCHES = 8


@pytest.fixture(scope="module", params=["fetch.max.bytes", "pykbroker.fetch.response.max.bytes"])
def broker(request):
    with EmbeddedBroker({request.param: str(BROKER_FETCH_MAX_BYTES)}) as running:
        create_topic(running.bootstrap, "capped")
        create_topic(running.bootstrap, "big-batch")
        with WireClient(running.bootstrap) as client:
            for _ in range(BATCHES):
                assert produce_batch(client, "capped", build_batch([(None, BATCH_VALUE)])).error_code == 0
            big = build_batch([(None, b"b" * 3000), (None, b"c" * 3000)])
            assert produce_batch(client, "big-batch", big).error_code == 0
        yield running


def fetch(bootstrap: str, topic: str, *, replica_id: int = -1, max_bytes: int = 1 << 20):
    request = Fetch(replica_id=replica_id, max_wait_ms=0, min_bytes=0, max_bytes=max_bytes, isolation_level=0,
                    session_id=0, session_epoch=-1, topics=[Fetch.FetchTopic(topic=topic, partitions=[
                        Fetch.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    with WireClient(bootstrap) as client:
        answer = client.request(ApiKey.FETCH, 11, request).responses[0].partitions[0]
    assert answer.error_code == 0, answer
    return bytes(answer.records)


def whole_batches(records: bytes) -> int:
    return sum(1 for _ in iter_batches(records, allow_partial_tail=True))


def test_a_consumer_fetch_returns_no_more_than_the_broker_cap(broker):
    records = fetch(broker.bootstrap, "capped")

    assert len(records) == BROKER_FETCH_MAX_BYTES  # filled up to the cap, a partial batch last
    assert whole_batches(records) == 2


def test_a_request_asking_for_less_than_the_broker_cap_keeps_its_own_limit(broker):
    assert len(fetch(broker.bootstrap, "capped", max_bytes=2048)) == 2048


def test_a_first_batch_larger_than_the_broker_cap_is_still_returned_whole(broker):
    records = fetch(broker.bootstrap, "big-batch")

    assert len(records) > BROKER_FETCH_MAX_BYTES
    assert whole_batches(records) == 1
