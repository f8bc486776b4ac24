"""Share groups end to end with `confluent_kafka.ShareConsumer` (librdkafka 2.16): records are
shared among consumers of one partition, redelivered when a consumer holds them past the
record lock, never again once rejected, archived at the delivery count limit, and what was
acknowledged stays acknowledged across a kill -9 of the broker.

These need the share group protocol (ShareGroupHeartbeat) and, for the restart, the share
coordinator's persister: they are skipped while this broker does not serve them."""
from __future__ import annotations

import itertools
import time

import pytest
from confluent_kafka import AcknowledgeType, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from pykbroker.handlers.support.registry import build_registry, default_modules
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.process import BrokerProcess

from .client_helpers import produce_all, restart_on_same_port

SERVED = build_registry(default_modules())
pytestmark = pytest.mark.skipif(
    ApiKey.SHARE_GROUP_HEARTBEAT not in SERVED, reason="share groups (ShareGroupHeartbeat) not served yet")
NEEDS_SHARE_COORDINATOR = pytest.mark.skipif(
    ApiKey.WRITE_SHARE_GROUP_STATE not in SERVED, reason="the share coordinator's persister is not there yet")

LOCK_MS = 1000
DELIVERY_LIMIT = 2
BROKER_SETTINGS = {
    "group.coordinator.rebalance.protocols": "classic,consumer,share",
    "group.share.record.lock.duration.ms": LOCK_MS,
    "group.share.delivery.count.limit": DELIVERY_LIMIT,
}
NAMES = itertools.count()


@pytest.fixture(scope="module")
def broker():
    with EmbeddedBroker(BROKER_SETTINGS) as running:
        yield running


@pytest.fixture
def topic(broker):
    name = f"share-e2e-{next(NAMES)}"
    broker.create_topic(name)
    return name


def share_group(bootstrap: str, **configs: str) -> str:
    """A new share group reading from the earliest offset, with `configs` of its own."""
    group = f"share-e2e-group-{next(NAMES)}"
    resource = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[
        ConfigEntry(key.replace("_", "."), value, incremental_operation=AlterConfigOpType.SET)
        for key, value in {"share_auto_offset_reset": "earliest", **configs}.items()])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    next(iter(admin.incremental_alter_configs([resource]).values())).result(timeout=15)
    return group


def consumer(bootstrap: str, group: str, topic: str, *, explicit: bool = False) -> ShareConsumer:
    share = ShareConsumer({
        "bootstrap.servers": bootstrap, "group.id": group,
        "share.acknowledgement.mode": "explicit" if explicit else "implicit",
    })
    share.subscribe([topic])
    return share


def produce(bootstrap: str, topic: str, count: int) -> None:
    produce_all(bootstrap, topic, [(0, None, f"v{i}".encode()) for i in range(count)], linger_ms=0)


def poll_records(share: ShareConsumer, seconds: float = 1.0) -> list:
    return [m for m in share.poll(seconds) if m.error() is None]


def poll_until(share: ShareConsumer, condition, what: str, timeout: float = 60.0) -> list:
    """Poll, collecting records, until `condition(collected)` holds."""
    collected: list = []
    deadline = time.monotonic() + timeout
    while not condition(collected):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        collected += poll_records(share)
    return collected


def test_three_share_consumers_of_one_partition_receive_disjoint_records(broker, topic):
    group = share_group(broker.bootstrap, share_record_lock_duration_ms="60000")
    consumers = [consumer(broker.bootstrap, group, topic) for _ in range(3)]
    try:
        produce(broker.bootstrap, topic, 60)
        seen: list[list[int]] = [[], [], []]
        deadline = time.monotonic() + 60
        while sum(map(len, seen)) < 60:
            assert time.monotonic() < deadline, f"only {sum(map(len, seen))} of 60 records delivered"
            for index, share in enumerate(consumers):
                seen[index] += [m.offset() for m in poll_records(share, 0.5)]
        every = [offset for offsets in seen for offset in offsets]
        assert sorted(every) == list(range(60))  # each record to exactly one consumer
    finally:
        for share in consumers:
            share.close()


def test_records_a_consumer_holds_without_acknowledging_are_delivered_again_after_the_lock(broker, topic):
    group = share_group(broker.bootstrap)
    holder = consumer(broker.bootstrap, group, topic, explicit=True)
    other = consumer(broker.bootstrap, group, topic, explicit=True)
    try:
        produce(broker.bootstrap, topic, 5)
        held = poll_until(holder, lambda got: len(got) >= 5, "the first delivery")
        assert {m.offset() for m in held} == set(range(5))
        # the holder goes silent: after the record lock the others get its records
        again = poll_until(other, lambda got: {m.offset() for m in got} >= set(range(5)), "the redelivery")
        assert all(m.delivery_count() >= 2 for m in again)
        for message in again:
            other.acknowledge(message)
        other.commit_sync()
    finally:
        other.close()
        holder.close()


def test_rejected_records_are_never_delivered_again(broker, topic):
    group = share_group(broker.bootstrap)
    share = consumer(broker.bootstrap, group, topic, explicit=True)
    try:
        produce(broker.bootstrap, topic, 3)
        for message in poll_until(share, lambda got: len(got) >= 3, "the records"):
            share.acknowledge(message, AcknowledgeType.REJECT)
        share.commit_sync()
        deadline = time.monotonic() + 3 * LOCK_MS / 1000
        while time.monotonic() < deadline:
            assert poll_records(share) == []
    finally:
        share.close()


def test_a_record_is_archived_after_the_delivery_count_limit(broker, topic):
    group = share_group(broker.bootstrap)
    share = consumer(broker.bootstrap, group, topic, explicit=True)
    try:
        produce(broker.bootstrap, topic, 1)
        for delivery in range(1, DELIVERY_LIMIT + 1):
            [message] = poll_until(share, lambda got: len(got) >= 1, f"delivery {delivery}")
            assert message.delivery_count() == delivery
            share.acknowledge(message, AcknowledgeType.RELEASE)
            share.commit_sync()
        deadline = time.monotonic() + 3 * LOCK_MS / 1000
        while time.monotonic() < deadline:
            assert poll_records(share) == []
    finally:
        share.close()


@NEEDS_SHARE_COORDINATOR
def test_acknowledged_records_stay_acknowledged_after_a_kill_9(tmp_path):
    with BrokerProcess(tmp_path / "broker", overrides=dict(BROKER_SETTINGS)) as running:
        topic = "share-e2e-kill"
        running.create_topic(topic)
        group = share_group(running.bootstrap)
        produce(running.bootstrap, topic, 10)
        share = consumer(running.bootstrap, group, topic, explicit=True)
        got = poll_until(share, lambda got: len(got) >= 10, "the records")
        for message in got:
            if message.offset() < 6:
                share.acknowledge(message, AcknowledgeType.ACCEPT)
            else:
                share.acknowledge(message, AcknowledgeType.RELEASE)
        share.commit_sync()
        share.close()
        restart_on_same_port(running, kill=True)
        again = consumer(running.bootstrap, group, topic, explicit=True)
        try:
            redelivered = poll_until(again, lambda got: len(got) >= 4, "the records not acknowledged")
            assert sorted(m.offset() for m in redelivered) == [6, 7, 8, 9]
            deadline = time.monotonic() + 3 * LOCK_MS / 1000
            while time.monotonic() < deadline:
                assert all(m.offset() >= 6 for m in poll_records(again))
        finally:
            again.close()
