"""Failures beyond the basic ones: offline partitions and unclean leader election enabled while
they are offline, what a broker shutting down does to the ISRs, and a follower that returns to
a log whose start moved inside a batch.

Topics here have three replicas.
"""
import json
import time

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch

from .test_failover import ContinuousProducer, produce_once

UNCLEAN = "unclean.leader.election.enable"
TOPIC, BROKER = 2, 4  # config resource types
IncrementalAlterConfigs = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls
ProduceRequest = messages.request(ApiKey.PRODUCE).cls
ListOffsetsRequest = messages.request(ApiKey.LIST_OFFSETS).cls
EARLIEST, LATEST = -2, -1


def create_topic(cluster, name: str, partitions: int, **configs) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 3, config=configs)])[name].result(timeout=30)
    cluster.wait_for_leaders(name, partitions)


def alter(cluster, resource_type: int, name: str, key: str, value: str | None) -> None:
    """IncrementalAlterConfigs SET (or DELETE when `value` is None) of one config."""
    request = IncrementalAlterConfigs(resources=[IncrementalAlterConfigs.AlterConfigsResource(
        resource_type=resource_type, resource_name=name, configs=[
            IncrementalAlterConfigs.AlterableConfig(name=key, value=value,
                                                    config_operation=0 if value else 1)])],
        validate_only=False)
    with cluster.wire(cluster.running()[0]) as client:
        [result] = client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, request).responses
    assert result.error_code == ErrorCode.NONE, result


def isr_of_leader_alone(cluster, topic: str) -> tuple[int, list[int]]:
    """Pause partition 0's followers until the leader drops them from the ISR, write records
    only the leader has (acks=1), and leave the followers paused; (leader, followers)."""
    leader = cluster.leader(topic, 0)
    followers = [b for b in cluster.replicas(topic)[0] if b != leader]
    for follower in followers:
        cluster.brokers[follower].pause()
    try:
        cluster.wait_until(lambda: cluster.isr(topic, 0) == [leader], timeout=30,
                           what="an ISR of the leader alone")
        for _ in range(3):
            assert produce_once(cluster, leader, topic, acks=1) == ErrorCode.NONE
    except BaseException:
        for follower in followers:
            cluster.brokers[follower].resume()
        raise
    return leader, followers


def take_offline(cluster, topic: str) -> tuple[int, list[int]]:
    """Partition 0 led by a broker that dies when only it is in sync: the followers live on
    outside the ISR. Returns (dead leader, followers)."""
    leader, followers = isr_of_leader_alone(cluster, topic)
    cluster.kill(leader)
    for follower in followers:
        cluster.brokers[follower].resume()
    cluster.wait_until(lambda: (cluster.state(topic, 0)["leader"] == -1
                                and leader not in cluster.live_broker_ids()),
                       what="the partition offline")
    return leader, followers


def leader_seen_by(cluster, broker_id: int, topic: str) -> int:
    return cluster.metadata(broker_id, [topic]).topics[0].partitions[0].leader_id


def test_enabling_unclean_election_for_a_topic_elects_a_leader_of_its_offline_partition(
        all_running):
    cluster = all_running
    create_topic(cluster, "stranded", 1, **{"min.insync.replicas": "1"})
    leader, followers = take_offline(cluster, "stranded")
    # unclean.leader.election.enable=false: the out-of-sync replicas do not lead.
    assert cluster.state("stranded", 0)["isr"] == [leader]
    cluster.wait_until(lambda: all(leader_seen_by(cluster, b, "stranded") == -1
                                   for b in followers), what="no leader in the metadata")
    assert produce_once(cluster, followers[0], "stranded") == ErrorCode.NOT_LEADER_OR_FOLLOWER

    alter(cluster, TOPIC, "stranded", UNCLEAN, "true")  # Kafka elects at once
    new_leader = cluster.wait_until(
        lambda: (state := cluster.state("stranded", 0))["leader"] in followers and state["leader"],
        what="an unclean leader")
    cluster.wait_until(lambda: produce_once(cluster, new_leader, "stranded") == ErrorCode.NONE,
                       what="the partition writable again")


def test_enabling_unclean_election_for_the_cluster_elects_leaders_of_offline_partitions(
        all_running):
    cluster = all_running
    create_topic(cluster, "marooned", 1, **{"min.insync.replicas": "1"})
    leader, followers = take_offline(cluster, "marooned")
    cluster.wait_until(lambda: all(leader_seen_by(cluster, b, "marooned") == -1
                                   for b in followers), what="no leader in the metadata")
    alter(cluster, BROKER, "", UNCLEAN, "true")  # the cluster-wide dynamic default
    try:
        cluster.wait_until(lambda: cluster.leader("marooned", 0) in followers,
                           what="an unclean leader")
    finally:
        alter(cluster, BROKER, "", UNCLEAN, None)


def test_an_out_of_sync_replica_returning_leads_an_offline_partition_with_unclean_election(
        all_running):
    cluster = all_running
    controller = cluster.controller_id()
    replicas = [b for b in cluster.running() if b != controller]  # the controller stays up
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = NewTopic("adrift", 1, replica_assignment=[replicas],
                     config={"min.insync.replicas": "1", UNCLEAN: "true"})
    admin.create_topics([topic])["adrift"].result(timeout=30)
    cluster.wait_for_leaders("adrift", 1)
    leader, [follower] = isr_of_leader_alone(cluster, "adrift")
    cluster.kill(follower)  # out of sync when it died
    cluster.kill(leader)
    cluster.wait_until(lambda: cluster.state("adrift", 0)["leader"] == -1
                       and not {leader, follower} & set(cluster.live_broker_ids()),
                       what="the partition offline, no replica alive")

    cluster.restart(follower)  # unclean.leader.election.enable=true: it leads
    cluster.wait_until(lambda: cluster.leader("adrift", 0) == follower, what="an unclean leader")
    assert cluster.isr("adrift", 0) == [follower]
    cluster.wait_until(lambda: produce_once(cluster, follower, "adrift") == ErrorCode.NONE,
                       what="the partition writable again")


def test_a_broker_shutting_down_is_not_taken_back_into_the_isrs(all_running):
    cluster = all_running
    create_topic(cluster, "departures", 6)
    victim = next(b for b in cluster.running() if b != cluster.controller_id())
    seen = {p: [] for p in range(6)}  # (partition epoch, isr) of every state read
    watching = True

    def watch(p):
        def record(data, stat, *_):
            if not watching:
                return False
            if data is not None:
                seen[p].append((stat.version, json.loads(data)["isr"]))
            return None
        cluster.zk.DataWatch(f"/brokers/topics/departures/partitions/{p}/state", record)
    for p in range(6):
        watch(p)
    producer = ContinuousProducer(cluster.bootstrap, "departures").start()
    try:  # records keep arriving: followers fetch all the time
        cluster.wait_until(lambda: len(producer.acknowledged) > 100, what="records acknowledged")
        assert cluster.shut_down(victim) == 0
        cluster.wait_until(lambda: victim not in cluster.live_broker_ids(),
                           what="the victim gone")
        cluster.wait_until(lambda: all(victim not in cluster.isr("departures", p)
                                       for p in range(6)), what="the victim out of every ISR")
    finally:
        watching = False
        producer.stop()
    # Once the controller took the victim out of an ISR, no leader took it back in (as it
    # would if the victim kept fetching while it shut down).
    for p, states in seen.items():
        isrs = [isr for _, isr in sorted(states)]
        first_without = next(i for i, isr in enumerate(isrs) if victim not in isr)
        assert all(victim not in isr for isr in isrs[first_without:]), (p, isrs)
    assert not producer.failed


def produce_batch(cluster, broker_id: int, topic: str, count: int) -> None:
    """One batch of `count` records to partition 0 (acks=all)."""
    now = int(time.time() * 1000)
    batch = bytes(build_batch([(None, b"record %d" % i, [], now) for i in range(count)]))
    request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    with cluster.wire(broker_id) as client:
        response = client.request(ApiKey.PRODUCE, 9, request)
    assert response.responses[0].partition_responses[0].error_code == ErrorCode.NONE


def log_offsets(cluster, broker_id: int, topic: str) -> tuple[int, int]:
    """(log start, log end) of partition 0 on `broker_id`, asked as the debugging replica."""
    offsets = []
    for timestamp in (EARLIEST, LATEST):
        request = ListOffsetsRequest(replica_id=-2, isolation_level=0, topics=[
            ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[
                ListOffsetsRequest.ListOffsetsPartition(partition_index=0,
                                                        timestamp=timestamp)])])
        with cluster.wire(broker_id) as client:
            response = client.request(ApiKey.LIST_OFFSETS, 4, request)
        offsets.append(response.topics[0].partitions[0].offset)
    return offsets[0], offsets[1]


def test_a_follower_behind_a_log_start_inside_a_batch_catches_up(all_running):
    cluster = all_running
    create_topic(cluster, "trimmed", 1, **{"min.insync.replicas": "1"})
    leader = cluster.leader("trimmed", 0)
    follower = next(b for b in cluster.running() if b != leader)
    cluster.kill(follower)
    cluster.wait_until(lambda: follower not in cluster.isr("trimmed", 0), what="a smaller ISR")
    produce_batch(cluster, leader, "trimmed", 20)
    produce_batch(cluster, leader, "trimmed", 20)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for future in admin.delete_records([TopicPartition("trimmed", 0, 25)]).values():
        assert future.result(timeout=30).low_watermark == 25  # inside the batch 20-39

    # The returning follower starts over at the leader's log start: the leader's first batch
    # begins before it. The follower's log starts at that batch (as Kafka's does), and catches up.
    cluster.restart(follower)
    cluster.wait_until(lambda: cluster.isr("trimmed", 0) == [1, 2, 3], what="the full ISR")
    assert cluster.brokers[follower].is_running()
    cluster.wait_until(lambda: log_offsets(cluster, follower, "trimmed") == (25, 40),
                       what="the follower's log from 25 to 40")
