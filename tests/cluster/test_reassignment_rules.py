"""The rules under partition reassignment and replication throttles, without ZooKeeper: Kafka's
ReplicaAssignment arithmetic, its checks of a target, the topic znode's adding/removing fields,
the throttled replica lists and the sampled rate."""
import uuid

from pykbroker.cluster import zk_data
from pykbroker.cluster.controller.reassignment import ReplicaAssignment, invalid_target
from pykbroker.cluster.zk_data import TopicAssignment
from pykbroker.protocol.errors import ErrorCode
from pykbroker.quota.sensor import SampledRate, WindowConfig
from pykbroker.replication.replication_quota import ReplicationQuota, parse_throttled_partitions


def test_a_reassignment_lists_the_original_replicas_then_the_new_ones():
    moving = ReplicaAssignment([1, 2]).reassign_to([2, 3])
    assert moving == ReplicaAssignment([2, 3, 1], adding=[3], removing=[1])
    assert (moving.origin, moving.target, moving.being_reassigned) == ([2, 1], [2, 3], True)


def test_a_new_target_replaces_a_running_reassignment_and_the_origin_cancels_it():
    moving = ReplicaAssignment([1, 2]).reassign_to([2, 3])
    assert moving.reassign_to([4]) == ReplicaAssignment([4, 2, 1], adding=[4], removing=[2, 1])
    assert moving.reassign_to(moving.origin) == ReplicaAssignment([2, 1])
    assert not moving.reassign_to(moving.origin).being_reassigned


def test_targets_are_checked_as_kafkas_controller_checks_them():
    current = ReplicaAssignment([1, 2])
    live = {1, 2, 3}
    assert invalid_target(current, [], live) == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment.")
    assert invalid_target(current, [2, 2], live)[1] == (
        "Duplicate replica ids in partition reassignment replica list: ArrayBuffer(2, 2)")
    assert invalid_target(current, [-1], live)[1] == "Invalid broker id in replica list: ArrayBuffer(-1)"
    assert invalid_target(current, [1, 7], live)[1] == (
        "Replica assignment has brokers that are not alive. Replica list: ArrayBuffer(7), "
        "live broker list: Set(1, 2, 3)")
    assert invalid_target(current, [2, 3], live) is None


def test_the_topic_znode_carries_adding_and_removing_replicas_as_kafka_writes_them():
    topic_id = uuid.UUID(int=5)
    assignment = TopicAssignment(topic_id, {0: [2, 3, 1], 1: [1]}, adding={0: [3]}, removing={0: [1]})
    data = zk_data.encode_topic(assignment)
    assert b'"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}' in data
    assert zk_data.decode_topic(data) == assignment
    settled = zk_data.encode_topic(TopicAssignment(topic_id, {0: [2, 3]}))
    assert b'"adding_replicas":{},"removing_replicas":{}' in settled


def test_the_legacy_reassignment_znode_round_trips():
    data = zk_data.encode_reassignments({("t", 0): [2, 3]})
    assert data == b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}'
    assert zk_data.decode_reassignments(data) == {("t", 0): [2, 3]}


def test_throttled_replica_lists_name_this_brokers_partitions():
    assert parse_throttled_partitions("0:1,1:2,2:1", 1) == frozenset({0, 2})
    assert parse_throttled_partitions("0:2", 1) == frozenset()
    assert parse_throttled_partitions("*", 1) is None  # every partition
    quota = ReplicationQuota(broker_id=1)
    quota.configure(1000, samples=11, window_s=1)
    quota.update_topic("t", "0:1")
    quota.update_topic("all", "*")
    assert quota.is_throttled(("t", 0)) and not quota.is_throttled(("t", 1)) and quota.is_throttled(("all", 7))
    quota.update_topic("t", "")
    assert not quota.is_throttled(("t", 0))


def test_the_quota_is_exceeded_while_the_sampled_rate_is_above_the_limit():
    quota = ReplicationQuota(broker_id=1)
    quota.configure(1000, samples=11, window_s=1)
    quota.record(5000, now_ms=0)  # judged over at least ten windows: 500 B/s
    assert not quota.is_quota_exceeded(now_ms=100)
    quota.record(20000, now_ms=200)  # 2500 B/s
    assert quota.is_quota_exceeded(now_ms=300)
    assert quota.throttle_time_ms(now_ms=300) > 0
    assert not quota.is_quota_exceeded(now_ms=12_000)  # the windows have passed


def test_the_rate_counts_the_span_of_its_windows():
    rate = SampledRate(WindowConfig(samples=3, window_ms=1000))
    rate.record(3000, now_ms=0)
    assert rate.measure(now_ms=0) == 1500  # at least the two windows before the current one
    rate.record(3000, now_ms=2500)
    assert rate.measure(now_ms=2500) == 6000 / 2.5
