"""Acceptance: consumer groups of unmodified clients share a topic's partitions through the
broker's group coordinator, as with Apache Kafka 3.9.

For kafka-python, confluent-kafka and aiokafka, three consumers of one group over a 6-partition
topic get disjoint assignments covering all partitions; when one closes (LeaveGroup) the other
two take its partitions over at once; when one is killed (SIGKILL, no LeaveGroup) its partitions
move after its session timeout. Members run in processes of their own. A restarted static
member (group.instance.id) takes its partitions back without a rebalance.
"""
from __future__ import annotations

import pytest

from .clients import create_topic
from .coordinator.live import MemberProcess, covers_exactly, group_broker, wait_until

PARTITIONS = 6
LIBRARIES = ["kafka-python", "confluent-kafka", "aiokafka"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with group_broker(tmp_path_factory.mktemp("groups")) as running:
        yield running


@pytest.fixture
def members():
    started: list[MemberProcess] = []
    yield started
    for member in started:
        member.stop()


@pytest.mark.parametrize("library", LIBRARIES)
def test_three_consumers_share_partitions_and_take_over_from_closed_and_killed_members(
        broker, members, library):
    topic = group = f"share-{library}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    members += [MemberProcess(library, broker.bootstrap, group, topic) for _ in range(3)]
    wait_until(lambda: covers_exactly(members, PARTITIONS), what="three disjoint assignments")
    assert sorted(len(m.assignment) for m in members) == [2, 2, 2]

    leaving, killed, survivor = members
    leaving.close()
    wait_until(lambda: covers_exactly([killed, survivor], PARTITIONS),
               what="the two remaining members to take over")

    killed.kill()
    wait_until(lambda: survivor.assignment == frozenset(range(PARTITIONS)),
               what="the survivor to own every partition after the session timeout")


def test_a_restarted_static_member_takes_its_partitions_back_without_a_rebalance(broker):
    """KIP-345 with confluent-kafka: a static member does not leave the group when it closes;
    its successor under the same group.instance.id replaces it without a rebalance."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient

    create_topic(broker.bootstrap, "static-members", 4)

    def member(instance: str):
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "static",
                             "group.instance.id": instance, "session.timeout.ms": 10000,
                             "heartbeat.interval.ms": 500})
        consumer.subscribe(["static-members"])
        return consumer

    def owned(*consumers):
        for consumer in consumers:
            consumer.poll(0.1)
        return [frozenset(tp.partition for tp in c.assignment()) for c in consumers]

    def describe():
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        return admin.describe_consumer_groups(["static"], request_timeout=10)["static"].result()

    def both_assigned():
        a, b = owned(first, other)
        return (a, b) if a and b and len(a | b) == 4 else None

    first, other = member("instance-a"), member("instance-b")
    try:
        before = wait_until(both_assigned, what="both static members assigned")
        old_id = {m.group_instance_id: m.member_id for m in describe().members}["instance-a"]
        first.close()
        first = member("instance-a")
        wait_until(lambda: owned(first, other)[0], what="the restarted member's assignment")
        assert owned(first, other) == list(before), "same partitions, the other one untouched"
        members = {m.group_instance_id: m.member_id for m in describe().members}
        assert members["instance-a"] != old_id and members["instance-a"].startswith("instance-a-")
    finally:
        first.close()
        other.close()
