"""The cluster scenarios of the compatibility suite: what a client sees of three brokers, run
with confluent-kafka (librdkafka) against any cluster object with `bootstrap`, `ids`,
`kill(id)` and `restart(id)` (`compat/realkafka.KafkaCluster`, `compat/pykbroker_targets.PykCluster`).

Topics are created with replication factor 3; both clusters run with min.insync.replicas=2.
Every scenario leaves all three brokers running.
"""
from __future__ import annotations

import uuid

from pykbroker.testkit.waiting import wait_until

from .drivers import FAIL, Result, outcome
from .scenarios import (WAIT_SECONDS, check_round_trip, create_topic, expect_equal,
                        keyed)

CLIENT = "confluent-kafka"
FAILOVER_SECONDS = 120  # a killed leader's ZooKeeper session expires, then a new leader is elected
RECORDS_BEFORE_KILL, RECORDS = 100, 300

# name: (what the client does and must get back, partitions of the RF=3 topic created beforehand)
CLUSTER_SCENARIOS: dict[str, tuple[str, int]] = {
    "cluster-metadata": ("lists the three brokers, and for a 3-partition topic with replication "
                         "factor 3: three replicas per partition, all in sync, leaders among "
                         "the brokers", 3),
    "cluster-acks-all": ("30 keyed records to 3 partitions (replication factor 3) with "
                         "acks=all, read back from the beginning: each once, in order per key", 3),
    "cluster-leader-kill": (f"an idempotent producer writes {RECORDS} records; the partition "
                            f"leader is killed (-9) after {RECORDS_BEFORE_KILL} are "
                            "acknowledged: every record is acknowledged and read back exactly "
                            "once, in order; the broker restarts and rejoins the ISR", 1),
}


def admin(bootstrap):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})  # warnings and worse


def partitions_of(bootstrap, topic) -> dict:
    """partition id -> librdkafka's PartitionMetadata (leader, replicas, isrs)."""
    return admin(bootstrap).list_topics(topic, timeout=WAIT_SECONDS).topics[topic].partitions


def wait_for_full_isr(cluster, topic, seconds=FAILOVER_SECONDS) -> None:
    def in_sync():
        partitions = partitions_of(cluster.bootstrap, topic)
        return all(sorted(p.isrs) == list(cluster.ids) and p.leader in cluster.ids
                   for p in partitions.values())

    wait_until(in_sync, f"every replica of {topic} in sync", timeout=seconds)


def producer(bootstrap, **settings):
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": bootstrap, "acks": "all", "log_level": 3, **settings})


def read_all(bootstrap, topic, partitions, count):
    from compat.drivers.with_confluent import ConfluentDriver

    return ConfluentDriver().read(bootstrap, topic, partitions, count)


def end_offset(bootstrap, topic) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-offsets"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), WAIT_SECONDS)[1]
    finally:
        consumer.close()


# -- the scenarios ----------------------------------------------------------------------------

def cluster_metadata(cluster, topic):
    metadata = admin(cluster.bootstrap).list_topics(topic, timeout=WAIT_SECONDS)
    expect_equal(set(cluster.ids), set(metadata.brokers), "brokers")
    wait_for_full_isr(cluster, topic, WAIT_SECONDS)
    for p in partitions_of(cluster.bootstrap, topic).values():
        expect_equal(list(cluster.ids), sorted(p.replicas), f"replicas of partition {p.id}")


def cluster_acks_all(cluster, topic):
    sent = keyed(30)
    reports = []
    writer = producer(cluster.bootstrap)
    for key, value in sent:
        writer.produce(topic, key=key, value=value,
                       on_delivery=lambda error, message: reports.append(error))
    expect_equal(0, writer.flush(WAIT_SECONDS), "records left undelivered")
    expect_equal([None] * len(sent), reports, "delivery reports")
    check_round_trip(sent, read_all(cluster.bootstrap, topic, 3, len(sent)))


def cluster_leader_kill(cluster, topic):
    wait_for_full_isr(cluster, topic)
    leader = partitions_of(cluster.bootstrap, topic)[0].leader
    acknowledged, errors = [], []

    def delivered(error, message):
        (errors if error else acknowledged).append(error or message.value())

    writer = producer(cluster.bootstrap, **{"enable.idempotence": True, "linger.ms": 5})
    sent = [b"record-%03d" % i for i in range(RECORDS)]
    for value in sent[:RECORDS_BEFORE_KILL]:
        writer.produce(topic, value=value, on_delivery=delivered)
    writer.flush(WAIT_SECONDS)
    for value in sent[RECORDS_BEFORE_KILL:]:  # in flight while the leader dies
        writer.produce(topic, value=value, on_delivery=delivered)
    cluster.kill(leader)
    try:
        expect_equal(0, writer.flush(FAILOVER_SECONDS), "records left undelivered")
        expect_equal([], errors, "delivery errors")
        expect_equal(sent, acknowledged, "acknowledged records, in order")
        got = read_all(cluster.bootstrap, topic, 1, RECORDS)
        expect_equal(sent, [r.value for r in got], "records read back")
        expect_equal(RECORDS, end_offset(cluster.bootstrap, topic), "end offset (no duplicates)")
    finally:
        cluster.restart(leader)
        wait_for_full_isr(cluster, topic)


SCENARIO_RUNS = {"cluster-metadata": cluster_metadata, "cluster-acks-all": cluster_acks_all,
                 "cluster-leader-kill": cluster_leader_kill}


def run_cluster_suite(cluster, scenarios: list[str] | None = None, *, tries: int = 1) -> dict[str, Result]:
    """Runs the cluster scenarios against `cluster`, each on a topic of its own; a scenario that
    fails is run again on a fresh topic up to `tries` times in all (for the reference broker,
    whose own failover can miss a client's deadline on a loaded machine)."""
    run_id = uuid.uuid4().hex[:8]
    results = {}
    for scenario in scenarios or list(CLUSTER_SCENARIOS):
        for attempt in range(tries):
            topic = f"compat-{scenario}-{run_id}-{attempt}"

            def scenario_run(topic=topic, scenario=scenario):
                create_topic(cluster.bootstrap, topic, CLUSTER_SCENARIOS[scenario][1], 3)
                SCENARIO_RUNS[scenario](cluster, topic)

            results[scenario] = outcome(scenario_run)
            if results[scenario].status != FAIL:
                break
    return results
