"""ShareFetch and ShareAcknowledge v1 on the wire, driven with hand-made member ids (no share
group heartbeat needed): share sessions and their epochs, acquisition and redelivery,
acknowledgements (in ShareFetch and in ShareAcknowledge), long polling, and bad input answered
with Kafka's error codes."""
from __future__ import annotations

import itertools
import uuid

import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records import batch as record_batch
from pykbroker.records.records import build_batch
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient, metadata

from .client_helpers import produce_batch

ShareFetch = messages.request(ApiKey.SHARE_FETCH).cls
ShareAcknowledge = messages.request(ApiKey.SHARE_ACKNOWLEDGE).cls
ACCEPT, RELEASE, REJECT = 1, 2, 3
LOCK_MS = 1000  # the smallest lock duration Kafka allows


@pytest.fixture(scope="module")
def broker():
    with EmbeddedBroker({"group.share.record.lock.duration.ms": LOCK_MS}) as running:
        yield running


TOPICS = itertools.count()


@pytest.fixture
def topic(broker):
    name = f"share-wire-{next(TOPICS)}"
    broker.create_topic(name)
    [found] = metadata(broker.bootstrap, [name]).topics
    return name, found.topic_id


class ShareMember:
    """One share consumer on the wire: its own connection, member id and session epoch."""

    def __init__(self, broker, group: str, topic_id: uuid.UUID) -> None:
        self.client = WireClient(broker.bootstrap, timeout=30)
        self.group, self.topic_id = group, topic_id
        self.member_id = str(uuid.uuid4())
        self.epoch = 0

    def fetch(self, acknowledgements=(), *, max_wait_ms=0, max_records=500, forget=False, epoch=None, send_only=False):
        partition = ShareFetch.FetchPartition(partition_index=0, acknowledgement_batches=[
            ShareFetch.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=list(types))
            for f, last, types in acknowledgements])
        request = ShareFetch(
            group_id=self.group, member_id=self.member_id,
            share_session_epoch=self.epoch if epoch is None else epoch,
            max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, max_records=max_records, batch_size=500,
            topics=[] if forget else [ShareFetch.FetchTopic(topic_id=self.topic_id, partitions=[partition])],
            forgotten_topics_data=[ShareFetch.ForgottenTopic(topic_id=self.topic_id, partitions=[0])] if forget else [])
        if send_only:
            self.client.send(ApiKey.SHARE_FETCH, 1, request)
            return None
        return self._answered(self.client.request(ApiKey.SHARE_FETCH, 1, request), epoch)

    def receive(self):
        _, response = self.client.receive(ApiKey.SHARE_FETCH, 1)
        return self._answered(response, None)

    def _answered(self, response, epoch):
        if response.error_code == 0 and epoch is None:
            self.epoch = self.epoch + 1 if self.epoch != -1 else 0
        return response

    def acknowledge(self, first, last, *types, epoch=None):
        request = ShareAcknowledge(
            group_id=self.group, member_id=self.member_id,
            share_session_epoch=self.epoch if epoch is None else epoch,
            topics=[ShareAcknowledge.AcknowledgeTopic(topic_id=self.topic_id, partitions=[
                ShareAcknowledge.AcknowledgePartition(partition_index=0, acknowledgement_batches=[
                    ShareAcknowledge.AcknowledgementBatch(first_offset=first, last_offset=last,
                                                          acknowledge_types=list(types))])])])
        response = self.client.request(ApiKey.SHARE_ACKNOWLEDGE, 1, request)
        if response.error_code == 0 and epoch is None:
            self.epoch += 1
        return response

    def close(self):
        self.client.close()


@pytest.fixture
def members(broker, topic):
    made = []

    def member(group="wire-share-group"):
        made.append(ShareMember(broker, group, topic[1]))
        return made[-1]

    yield member
    for one in made:
        one.close()


def produce_batches(broker, topic: str, count: int, per_batch: int = 2) -> None:
    """`count` batches of `per_batch` records each."""
    with WireClient(broker.bootstrap) as client:
        for b in range(count):
            batch = build_batch([(None, f"{b}-{r}".encode()) for r in range(per_batch)])
            assert produce_batch(client, topic, batch).error_code == 0


def partition_of(response):
    [topic] = response.responses
    [partition] = topic.partitions
    return partition


def acquired(response):
    partition = partition_of(response)
    return [(r.first_offset, r.last_offset, r.delivery_count) for r in partition.acquired_records]


def batch_offsets(response):
    data = bytes(partition_of(response).records or b"")
    return [(h.base_offset, h.last_offset) for _, h in record_batch.iter_headers(data)]


def test_a_session_opens_at_epoch_zero_and_records_produced_afterwards_are_acquired(broker, topic, members):
    member = members()
    first = member.fetch()
    assert first.error_code == 0 and first.acquisition_lock_timeout_ms == LOCK_MS
    assert acquired(first) == []  # share.auto.offset.reset=latest: the log was empty
    produce_batches(broker, topic[0], 2)
    response = member.fetch()
    assert acquired(response) == [(0, 3, 1)]
    assert batch_offsets(response) == [(0, 1), (2, 3)]  # the batches as stored


def test_members_acquire_disjoint_records(broker, topic, members):
    one, two = members(), members()
    one.fetch(), two.fetch()
    produce_batches(broker, topic[0], 3)
    assert acquired(one.fetch(max_records=1)) == [(0, 1, 1)]  # whole batches
    assert acquired(two.fetch(max_records=1)) == [(2, 3, 1)]
    assert acquired(one.fetch()) == [(4, 5, 1)]
    assert partition_of(two.fetch()).acquired_records == []


def test_released_records_go_to_another_member_with_delivery_count_two(broker, topic, members):
    one, two = members(), members()
    one.fetch(), two.fetch()
    produce_batches(broker, topic[0], 1)
    assert acquired(one.fetch()) == [(0, 1, 1)]
    answer = one.acknowledge(0, 1, RELEASE)
    assert answer.error_code == 0 and answer.responses[0].partitions[0].error_code == 0
    assert acquired(two.fetch()) == [(0, 1, 2)]


def test_accepted_and_rejected_records_are_never_delivered_again(broker, topic, members):
    one, two = members(), members()
    one.fetch(), two.fetch()
    produce_batches(broker, topic[0], 1)
    assert acquired(one.fetch()) == [(0, 1, 1)]
    response = one.fetch(acknowledgements=[(0, 1, (ACCEPT, REJECT))], max_wait_ms=50)
    assert partition_of(response).acknowledge_error_code == 0
    assert partition_of(two.fetch(max_wait_ms=LOCK_MS + 500)).acquired_records == []


def test_a_member_that_does_not_acknowledge_loses_its_records_after_the_lock_duration(broker, topic, members):
    one, two = members(), members()
    one.fetch(), two.fetch()
    produce_batches(broker, topic[0], 1)
    assert acquired(one.fetch()) == [(0, 1, 1)]
    redelivered = wait_until(lambda: acquired(two.fetch(max_wait_ms=200)), "redelivery after the lock expired")
    assert redelivered == [(0, 1, 2)]
    assert partition_of(one.fetch(acknowledgements=[(0, 1, (ACCEPT,))])).acknowledge_error_code == (
        ErrorCode.INVALID_RECORD_STATE)


def test_a_waiting_fetch_is_answered_when_records_arrive(broker, topic, members):
    member = members()
    member.fetch()
    member.fetch(max_wait_ms=20000, send_only=True)
    produce_batches(broker, topic[0], 1)
    assert acquired(member.receive()) == [(0, 1, 1)]


def test_forgotten_partitions_are_no_longer_fetched(broker, topic, members):
    member = members()
    member.fetch()
    produce_batches(broker, topic[0], 1)
    response = member.fetch(forget=True)
    assert response.error_code == 0 and response.responses == []


def test_closing_the_session_applies_its_acknowledgements_and_a_new_epoch_is_needed(broker, topic, members):
    member = members()
    member.fetch()
    produce_batches(broker, topic[0], 1)
    assert acquired(member.fetch()) == [(0, 1, 1)]
    member.epoch = -1
    closed = member.fetch(acknowledgements=[(0, 1, (ACCEPT,))])
    assert closed.error_code == 0 and partition_of(closed).acknowledge_error_code == 0
    assert member.fetch(epoch=1).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND


# -- sessions and bad input ---------------------------------------------------------------------

def test_an_epoch_without_a_session_is_share_session_not_found(members):
    assert members().fetch(epoch=5).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND


def test_a_wrong_epoch_is_invalid_share_session_epoch(members):
    member = members()
    member.fetch()
    assert member.fetch(epoch=7).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert member.acknowledge(0, 0, ACCEPT, epoch=7).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH


def test_share_acknowledge_cannot_open_a_session(members):
    assert members().acknowledge(0, 0, ACCEPT, epoch=0).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH


def test_acknowledgements_in_the_opening_fetch_are_an_invalid_request(members):
    assert members().fetch(acknowledgements=[(0, 0, (ACCEPT,))]).error_code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("first, last, types", [
    (5, 4, (ACCEPT,)),          # last before first
    (0, 2, (ACCEPT, ACCEPT)),   # neither one type nor one per offset
    (0, 0, (9,)),               # no such acknowledge type
    (0, 0, ()),                 # no type
])
def test_malformed_acknowledgements_are_invalid_request_for_the_partition(members, first, last, types):
    member = members()
    member.fetch()
    assert partition_of(member.fetch(acknowledgements=[(first, last, types)])).acknowledge_error_code == (
        ErrorCode.INVALID_REQUEST)


def test_acknowledging_records_never_acquired_is_invalid_record_state(members):
    member = members()
    member.fetch()
    answer = member.acknowledge(100, 101, ACCEPT)
    assert answer.responses[0].partitions[0].error_code == ErrorCode.INVALID_RECORD_STATE


def test_an_unknown_topic_id_is_unknown_topic_id(broker):
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.SHARE_FETCH, 1, ShareFetch(
            group_id="g", member_id=str(uuid.uuid4()), share_session_epoch=0, max_wait_ms=0, min_bytes=1,
            max_bytes=1024, max_records=10, batch_size=10,
            topics=[ShareFetch.FetchTopic(topic_id=uuid.uuid4(), partitions=[
                ShareFetch.FetchPartition(partition_index=0, acknowledgement_batches=[])])],
            forgotten_topics_data=[]))
    assert response.error_code == 0
    assert partition_of(response).error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_an_unknown_partition_is_unknown_topic_or_partition(broker, topic):
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.SHARE_FETCH, 1, ShareFetch(
            group_id="g", member_id=str(uuid.uuid4()), share_session_epoch=0, max_wait_ms=0, min_bytes=1,
            max_bytes=1024, max_records=10, batch_size=10,
            topics=[ShareFetch.FetchTopic(topic_id=topic[1], partitions=[
                ShareFetch.FetchPartition(partition_index=9, acknowledgement_batches=[])])],
            forgotten_topics_data=[]))
    assert partition_of(response).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize("group, member, error", [
    ("", "m", ErrorCode.INVALID_GROUP_ID), ("g", "", ErrorCode.INVALID_REQUEST), ("g", "m" * 37, ErrorCode.INVALID_REQUEST)])
def test_a_missing_group_or_member_id_is_refused(broker, group, member, error):
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.SHARE_FETCH, 1, ShareFetch(
            group_id=group, member_id=member, share_session_epoch=0, max_wait_ms=0, min_bytes=1,
            max_bytes=1024, max_records=10, batch_size=10, topics=[], forgotten_topics_data=[]))
    assert response.error_code == error
