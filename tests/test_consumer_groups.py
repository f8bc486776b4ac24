"""Consumer groups (KIP-848): the ConsumerGroupHeartbeat state machine on the wire, and
confluent-kafka consumers with `group.protocol=consumer` sharing topics through the broker."""

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.wire import WireClient

SHORT_SESSIONS = {
    "group.consumer.min.session.timeout.ms": 2000,
    "group.consumer.session.timeout.ms": 4000,
    "group.consumer.min.heartbeat.interval.ms": 300,
    "group.consumer.heartbeat.interval.ms": 300,
}
Heartbeat = messages.request(ApiKey.CONSUMER_GROUP_HEARTBEAT).cls
Describe = messages.request(ApiKey.CONSUMER_GROUP_DESCRIBE).cls


@pytest.fixture(scope="module")
def broker():
    with EmbeddedBroker(SHORT_SESSIONS) as running:
        yield running


def create_topic(bootstrap, name, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result()


def heartbeat(client, group, member_id, epoch, version=1, **fields):
    body = Heartbeat(group_id=group, member_id=member_id, member_epoch=epoch, **fields)
    return client.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, version, body)


def join(client, group, topics, member_id=None, **fields):
    wait_for_coordinator(client, group)
    return heartbeat(
        client,
        group,
        member_id or str(uuid.uuid4()),
        0,
        rebalance_timeout_ms=30000,
        subscribed_topic_names=topics,
        topic_partitions=[],
        **fields,
    )


def wait_for_coordinator(client, group):
    """Until the group's coordinator serves it (the first request creates __consumer_offsets)."""
    find = messages.request(ApiKey.FIND_COORDINATOR).cls(key=group, key_type=0)
    deadline = time.time() + 30
    while client.request(ApiKey.FIND_COORDINATOR, 3, find).error_code != 0 and time.time() < deadline:
        time.sleep(0.1)
    probe = Describe(group_ids=[group])
    while time.time() < deadline:
        error = client.request(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, probe).groups[0].error_code
        if error not in (
            ErrorCode.NOT_COORDINATOR,
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
            ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ):
            return
        time.sleep(0.1)


def assigned(response):
    return {p for tp in response.assignment.topic_partitions for p in tp.partitions}


def owned(response):
    Tp = Heartbeat.TopicPartitions
    return [Tp(topic_id=tp.topic_id, partitions=tp.partitions) for tp in response.assignment.topic_partitions]


def test_a_joining_member_gets_every_partition_and_the_first_epoch(broker):
    create_topic(broker.bootstrap, "cg-solo", 3)
    with WireClient(broker.bootstrap) as client:
        response = join(client, "g-solo", ["cg-solo"])
        assert response.error_code == 0
        assert response.member_epoch == 1 and response.heartbeat_interval_ms == 300
        assert assigned(response) == {0, 1, 2}
        again = heartbeat(client, "g-solo", response.member_id, 1, topic_partitions=owned(response))
        assert again.error_code == 0 and again.member_epoch == 1 and again.assignment is None


def test_a_partition_moves_only_once_its_owner_revoked_it(broker):
    create_topic(broker.bootstrap, "cg-move", 2)
    with WireClient(broker.bootstrap) as client:
        first = join(client, "g-move", ["cg-move"])
        assert assigned(first) == {0, 1}
        second = join(client, "g-move", ["cg-move"])
        assert second.member_epoch == 2 and assigned(second) == set()  # unreleased until revoked
        # the first member is asked to give one partition up: its epoch holds until it does
        revoke = heartbeat(client, "g-move", first.member_id, 1, topic_partitions=owned(first))
        assert revoke.member_epoch == 1 and len(assigned(revoke)) == 1
        done = heartbeat(client, "g-move", first.member_id, 1, topic_partitions=owned(revoke))
        assert done.member_epoch == 2
        taken = heartbeat(client, "g-move", second.member_id, 2, topic_partitions=[])
        assert assigned(taken) == {0, 1} - assigned(revoke)


def test_bad_heartbeats_get_kafkas_errors(broker):
    create_topic(broker.bootstrap, "cg-errors", 1)
    with WireClient(broker.bootstrap) as client:
        wait_for_coordinator(client, "g-err")
        no_timeout = heartbeat(client, "g-err", "m", 0, subscribed_topic_names=["cg-errors"], topic_partitions=[])
        assert no_timeout.error_code == ErrorCode.INVALID_REQUEST
        assert no_timeout.error_message == "RebalanceTimeoutMs must be provided in first request."
        empty_id = heartbeat(
            client, "g-err", "", 0, rebalance_timeout_ms=1, subscribed_topic_names=[], topic_partitions=[]
        )
        assert (empty_id.error_code, empty_id.error_message) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        assert (
            join(client, "g-err", ["cg-errors"], server_assignor="sticky").error_code == ErrorCode.UNSUPPORTED_ASSIGNOR
        )
        member = join(client, "g-err", ["cg-errors"])
        assert heartbeat(client, "g-err", member.member_id, 5).error_code == ErrorCode.FENCED_MEMBER_EPOCH
        assert heartbeat(client, "g-err", "nobody", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
        assert heartbeat(client, "g-none", "nobody", 1).error_code == ErrorCode.GROUP_ID_NOT_FOUND
        left = heartbeat(client, "g-err", member.member_id, -1)
        assert left.error_code == 0 and left.member_epoch == -1


def test_a_static_member_back_within_its_session_keeps_its_partitions(broker):
    create_topic(broker.bootstrap, "cg-static", 4)
    with WireClient(broker.bootstrap) as client:
        a = join(client, "g-static", ["cg-static"], instance_id="a")
        b = join(client, "g-static", ["cg-static"], instance_id="b")
        a = heartbeat(client, "g-static", a.member_id, 1, topic_partitions=owned(a))
        a = heartbeat(client, "g-static", a.member_id, a.member_epoch, topic_partitions=owned(a))
        b = heartbeat(client, "g-static", b.member_id, 2, topic_partitions=[])
        before = assigned(b)
        assert (
            before
            and heartbeat(
                client,
                "g-static",
                b.member_id,
                2,
                instance_id="b",
            ).error_code
            == 0
        )
        gone = heartbeat(client, "g-static", b.member_id, -2, instance_id="b")
        assert gone.member_epoch == -2
        taken = join(client, "g-static", ["cg-static"], instance_id="a")
        assert taken.error_code == ErrorCode.UNRELEASED_INSTANCE_ID
        back = join(client, "g-static", ["cg-static"], instance_id="b")
        assert back.error_code == 0 and assigned(back) == before


def poll_until(consumers, condition, timeout=30.0, seen=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for consumer in consumers:
            message = consumer.poll(0.1)
            if message is not None and not message.error() and seen is not None:
                seen.add((message.topic(), message.partition(), message.offset()))
                consumer.commit(message=message, asynchronous=False)
        if condition():
            return True
    return False


def consumer(bootstrap, group, **extra):
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **extra,
        }
    )


def test_three_consumers_share_a_topic_and_one_leaving_hands_its_partitions_over(broker):
    create_topic(broker.bootstrap, "cg-share", 6)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(120):
        producer.produce("cg-share", str(i).encode(), partition=i % 6)
    producer.flush()
    consumers = [consumer(broker.bootstrap, "g-share") for _ in range(3)]
    for c in consumers:
        c.subscribe(["cg-share"])
    seen: set = set()
    assert poll_until(
        consumers, lambda: sum(len(c.assignment()) for c in consumers) == 6 and len(seen) == 120, seen=seen
    )
    consumers[0].close()
    rest = consumers[1:]
    assert poll_until(rest, lambda: sum(len(c.assignment()) for c in rest) == 6, seen=seen)
    committed = rest[0].committed([TopicPartition("cg-share", p) for p in range(6)], timeout=10)
    assert [tp.offset for tp in committed] == [20] * 6
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    description = admin.describe_consumer_groups(["g-share"])
    assert len(description["g-share"].result().members) == 2
    for c in rest:
        c.close()


def test_a_regex_subscription_picks_up_a_topic_created_later(broker):
    create_topic(broker.bootstrap, "cgre-one", 1)
    c = consumer(broker.bootstrap, "g-regex")
    c.subscribe(["^cgre-.*"])
    assert poll_until([c], lambda: {tp.topic for tp in c.assignment()} == {"cgre-one"})
    create_topic(broker.bootstrap, "cgre-two", 2)
    assert poll_until([c], lambda: {tp.topic for tp in c.assignment()} == {"cgre-one", "cgre-two"}, timeout=60)
    c.close()


def test_a_restarted_broker_resumes_the_group_with_its_epochs_and_assignment(tmp_path):
    with EmbeddedBroker(SHORT_SESSIONS, directory=tmp_path) as running:
        create_topic(running.bootstrap, "cg-restart", 2)
        with WireClient(running.bootstrap) as client:
            member = join(client, "g-restart", ["cg-restart"])
    with EmbeddedBroker(SHORT_SESSIONS, directory=tmp_path) as running:
        with WireClient(running.bootstrap) as client:
            deadline = time.time() + 30
            while True:
                again = heartbeat(client, "g-restart", member.member_id, 1, topic_partitions=owned(member))
                if (
                    again.error_code
                    not in (
                        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                        ErrorCode.NOT_COORDINATOR,
                        ErrorCode.COORDINATOR_NOT_AVAILABLE,
                    )
                    or time.time() > deadline
                ):
                    break
                time.sleep(0.2)
            assert again.error_code == 0 and again.member_epoch == 1
            described = client.request(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, Describe(group_ids=["g-restart"])).groups[0]
            assert (described.group_state, described.group_epoch, described.assignment_epoch) == ("Stable", 1, 1)
            assert {p for tp in described.members[0].assignment.topic_partitions for p in tp.partitions} == {0, 1}


def test_list_groups_shows_the_type_and_delete_groups_refuses_a_group_with_members(broker):
    create_topic(broker.bootstrap, "cg-admin", 1)
    ListGroups = messages.request(ApiKey.LIST_GROUPS).cls
    DeleteGroups = messages.request(ApiKey.DELETE_GROUPS).cls
    with WireClient(broker.bootstrap) as client:
        member = join(client, "g-admin", ["cg-admin"])
        listed = client.request(ApiKey.LIST_GROUPS, 5, ListGroups(types_filter=["consumer"]))
        mine = [g for g in listed.groups if g.group_id == "g-admin"]
        assert [(g.protocol_type, g.group_state, g.group_type) for g in mine] == [("consumer", "Stable", "consumer")]
        classic_only = client.request(ApiKey.LIST_GROUPS, 5, ListGroups(types_filter=["classic"]))
        assert "g-admin" not in [g.group_id for g in classic_only.groups]
        refused = client.request(ApiKey.DELETE_GROUPS, 2, DeleteGroups(groups_names=["g-admin"])).results[0]
        assert refused.error_code == ErrorCode.NON_EMPTY_GROUP
        heartbeat(client, "g-admin", member.member_id, -1)
        deleted = client.request(ApiKey.DELETE_GROUPS, 2, DeleteGroups(groups_names=["g-admin"])).results[0]
        assert deleted.error_code == 0
        gone = client.request(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, Describe(group_ids=["g-admin"])).groups[0]
        assert gone.error_code == ErrorCode.GROUP_ID_NOT_FOUND


@pytest.mark.parametrize("settings,message", [
    ({"group.coordinator.rebalance.protocols": "classic,streams"}, "streams"),
    ({"group.coordinator.rebalance.protocols": "consumer"}, "Disabling the 'classic' protocol is not supported."),
    ({"group.consumer.heartbeat.interval.ms": "45000", "group.consumer.max.heartbeat.interval.ms": "60000"},
     "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
    ({"group.consumer.migration.policy": "sideways"}, "sideways"),
])
def test_group_coordinator_settings_the_broker_cannot_honour_stop_it_at_start(settings, message):
    from pykbroker.config import BrokerConfig
    from pykbroker.config.types import ConfigError

    with pytest.raises(ConfigError, match=message):
        BrokerConfig({"log.dirs": "/tmp/unused", **settings})


def consume_and_commit(c, topic, count, timeout=30.0):
    """Read `count` records of `topic` with `c`, committing each; their values."""
    values = []
    deadline = time.time() + timeout
    while len(values) < count and time.time() < deadline:
        message = c.poll(0.1)
        if message is not None and not message.error():
            values.append(int(message.value()))
            c.commit(message=message, asynchronous=False)
    return values


def test_a_group_switches_protocol_once_empty_and_keeps_its_committed_offsets(broker):
    """Offline migration: the classic consumers stop, consumer-protocol ones go on from the
    committed offsets, then classic ones again."""
    create_topic(broker.bootstrap, "cg-switch", 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(30):
        producer.produce("cg-switch", str(i).encode())
    producer.flush()
    rounds = [{"group.protocol": "classic", "session.timeout.ms": 6000}, {"group.protocol": "consumer"},
              {"group.protocol": "classic", "session.timeout.ms": 6000}]
    read = []
    for settings in rounds:
        c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g-switch", "auto.offset.reset": "earliest",
                      "enable.auto.commit": False, **settings})
        c.subscribe(["cg-switch"])
        read += consume_and_commit(c, "cg-switch", 10)
        c.close()
    assert read == list(range(30))


def test_a_member_that_stops_heartbeating_is_removed_after_its_session_timeout(broker):
    create_topic(broker.bootstrap, "cg-expire", 2)
    with WireClient(broker.bootstrap) as client:
        silent = join(client, "g-expire", ["cg-expire"])
        assert assigned(silent) == {0, 1}
        survivor = join(client, "g-expire", ["cg-expire"])
        owned_now, epoch = [], survivor.member_epoch
        deadline = time.time() + 30
        while time.time() < deadline:  # the silent member never revokes: its session ends
            answer = heartbeat(client, "g-expire", survivor.member_id, epoch, topic_partitions=owned_now)
            assert answer.error_code == 0
            epoch = answer.member_epoch
            if answer.assignment is not None:
                owned_now = owned(answer)
                if assigned(answer) == {0, 1}:
                    break
            time.sleep(0.3)
        assert {p for tp in owned_now for p in tp.partitions} == {0, 1}
        assert heartbeat(client, "g-expire", silent.member_id, 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_more_partitions_or_a_deleted_topic_move_the_group_epoch(broker):
    from confluent_kafka.admin import NewPartitions

    create_topic(broker.bootstrap, "cg-grow", 1)
    create_topic(broker.bootstrap, "cg-doomed", 1)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    with WireClient(broker.bootstrap) as client:
        member = join(client, "g-grow", ["cg-grow", "cg-doomed"])
        assert member.member_epoch == 1 and len(member.assignment.topic_partitions) == 2
        admin.create_partitions([NewPartitions("cg-grow", 3)])["cg-grow"].result()
        admin.delete_topics(["cg-doomed"])["cg-doomed"].result()
        deadline, answer = time.time() + 30, member
        while time.time() < deadline:
            answer = heartbeat(client, "g-grow", member.member_id, answer.member_epoch, topic_partitions=owned(answer)
                               if answer.assignment is not None else None)
            if answer.assignment is not None and assigned(answer) == {0, 1, 2}:
                break
            time.sleep(0.2)
        assert answer.member_epoch > 1
        assert [sorted(tp.partitions) for tp in answer.assignment.topic_partitions] == [[0, 1, 2]]


def test_a_restarted_static_consumer_gets_its_partitions_back():
    """Within the session timeout (20 s here, as the restart may be slow on a busy machine)."""
    with EmbeddedBroker({**SHORT_SESSIONS, "group.consumer.session.timeout.ms": 20000,
                         "group.consumer.max.session.timeout.ms": 20000}) as broker:
        create_topic(broker.bootstrap, "cg-static-e2e", 4)
        static = {"group.instance.id": "static-a"}
        a, b = consumer(broker.bootstrap, "g-static-e2e", **static), consumer(broker.bootstrap, "g-static-e2e")
        for c in (a, b):
            c.subscribe(["cg-static-e2e"])
        assert poll_until([a, b], lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2)
        before = {tp.partition for tp in a.assignment()}
        a.close()
        restarted = consumer(broker.bootstrap, "g-static-e2e", **static)
        restarted.subscribe(["cg-static-e2e"])
        assert poll_until([restarted, b], lambda: {tp.partition for tp in restarted.assignment()} == before)
        assert len(b.assignment()) == 2
        for c in (restarted, b):
            c.close()

def test_offset_delete_keeps_the_offsets_of_topics_a_consumer_group_subscribes_to(broker):
    create_topic(broker.bootstrap, "cg-keep", 1)
    create_topic(broker.bootstrap, "cg-drop", 1)
    OffsetCommit = messages.request(ApiKey.OFFSET_COMMIT).cls
    OffsetDelete = messages.request(ApiKey.OFFSET_DELETE).cls
    with WireClient(broker.bootstrap) as client:
        member = join(client, "g-odel", ["cg-keep"])
        commit = OffsetCommit(group_id="g-odel", generation_id_or_member_epoch=member.member_epoch,
                              member_id=member.member_id, topics=[
                                  OffsetCommit.OffsetCommitRequestTopic(name=name, partitions=[
                                      OffsetCommit.OffsetCommitRequestPartition(partition_index=0,
                                                                                committed_offset=1)])
                                  for name in ("cg-keep", "cg-drop")])
        committed = client.request(ApiKey.OFFSET_COMMIT, 9, commit)
        assert [p.error_code for t in committed.topics for p in t.partitions] == [0, 0]
        stale = client.request(ApiKey.OFFSET_COMMIT, 9, OffsetCommit(
            group_id="g-odel", generation_id_or_member_epoch=member.member_epoch + 1, member_id=member.member_id,
            topics=commit.topics))
        assert {p.error_code for t in stale.topics for p in t.partitions} == {ErrorCode.STALE_MEMBER_EPOCH}
        deleted = client.request(ApiKey.OFFSET_DELETE, 0, OffsetDelete(group_id="g-odel", topics=[
            OffsetDelete.OffsetDeleteRequestTopic(name=name, partitions=[
                OffsetDelete.OffsetDeleteRequestPartition(partition_index=0)]) for name in ("cg-keep", "cg-drop")]))
        assert {t.name: t.partitions[0].error_code for t in deleted.topics} == {
            "cg-keep": ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, "cg-drop": 0}


def test_a_classic_group_upgraded_member_by_member_and_back_keeps_consuming(broker):
    """Online migration (policy bidirectional): classic members replaced one by one by
    consumer-protocol members, then back; every record is read, the committed offsets go on."""
    create_topic(broker.bootstrap, "cg-migrate", 4)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    sent = 0

    def produce(count):
        nonlocal sent
        for _ in range(count):
            producer.produce("cg-migrate", str(sent).encode(), partition=sent % 4)
            sent += 1
        producer.flush()

    def member(protocol):
        extra = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500} if protocol == "classic" else {}
        c = consumer(broker.bootstrap, "g-migrate", **{"group.protocol": protocol, **extra})
        c.subscribe(["cg-migrate"])
        return c

    seen: set = set()
    first, second = member("classic"), member("classic")
    produce(40)
    assert poll_until([first, second], lambda: len(seen) == 40 and first.assignment() and second.assignment(),
                      seen=seen)
    members = [first, second]
    for index, protocol in enumerate(["consumer", "consumer", "classic", "classic"]):
        members[index % 2].close()
        members[index % 2] = member(protocol)
        produce(20)
        assert poll_until(members, lambda: len(seen) == sent and all(len(c.assignment()) == 2 for c in members),
                          timeout=60, seen=seen)
    assert len(seen) == sent == 120
    committed = members[0].committed([TopicPartition("cg-migrate", p) for p in range(4)], timeout=10)
    assert [tp.offset for tp in committed] == [30] * 4
    for c in members:
        c.close()
