"""kafka-python: KafkaProducer, KafkaConsumer and KafkaAdminClient."""
from __future__ import annotations

import importlib.metadata
import time

from ..scenarios import (T0, WAIT_SECONDS, Got, check_round_trip, expect, expect_equal, keyed,
                         unpack, wait_until)
from . import Driver


class KafkaPythonDriver(Driver):
    name = "kafka-python"

    def unavailable(self):
        try:
            self.version = importlib.metadata.version("kafka-python")
        except importlib.metadata.PackageNotFoundError:
            return "kafka-python is not installed"
        return None

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def producer(bootstrap, **settings):
        from kafka import KafkaProducer

        return KafkaProducer(bootstrap_servers=bootstrap, acks="all", **settings)

    @staticmethod
    def consumer(bootstrap, **settings):
        from kafka import KafkaConsumer

        return KafkaConsumer(**{"bootstrap_servers": bootstrap, "group_id": None,
                                "enable_auto_commit": False, "auto_offset_reset": "earliest",
                                **settings})

    @staticmethod
    def admin(bootstrap):
        from kafka import KafkaAdminClient

        return KafkaAdminClient(bootstrap_servers=bootstrap)

    def produce(self, bootstrap, topic, records, **settings):
        """records: (key, value) or (key, value, headers, partition, timestamp)."""
        producer = self.producer(bootstrap, **settings)
        try:
            futures = []
            for record in records:
                key, value, headers, partition, timestamp = unpack(record)
                futures.append(producer.send(topic, key=key, value=value, headers=list(headers),
                                             partition=partition, timestamp_ms=timestamp))
            producer.flush(WAIT_SECONDS)
            return [f.get(WAIT_SECONDS) for f in futures]
        finally:
            producer.close(timeout=5)

    @staticmethod
    def poll(consumer, count, seconds=WAIT_SECONDS) -> list[Got]:
        got: list[Got] = []
        deadline = time.monotonic() + seconds
        while len(got) < count and time.monotonic() < deadline:
            for messages in consumer.poll(timeout_ms=1000).values():
                got += [Got(m.partition, m.offset, m.key, m.value,
                            tuple((k, v) for k, v in m.headers or ()), m.timestamp)
                        for m in messages]
        return got

    def read(self, bootstrap, topic, partitions, count) -> list[Got]:
        from kafka import TopicPartition

        consumer = self.consumer(bootstrap)
        try:
            assigned = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(assigned)
            consumer.seek_to_beginning(*assigned)
            return self.poll(consumer, count)
        finally:
            consumer.close()

    # -- scenarios ----------------------------------------------------------------------------

    def metadata(self, bootstrap, topic):
        consumer = self.consumer(bootstrap)
        try:
            expect(topic in consumer.topics(), "topics() lists the topic")
            expect_equal({0, 1, 2}, consumer.partitions_for_topic(topic), "partitions")
        finally:
            consumer.close()
        admin = self.admin(bootstrap)
        try:
            [described] = admin.describe_topics([topic])
            expect(all(p["leader_id"] >= 0 for p in described["partitions"]), "leaders")
            brokers = {b["broker_id"] for b in admin.describe_cluster()["brokers"]}
            expect(all(p["leader_id"] in brokers for p in described["partitions"]),
                   f"leaders among the brokers {brokers}")
        finally:
            admin.close()

    def produce_consume(self, bootstrap, topic):
        sent = keyed(30)
        acked = self.produce(bootstrap, topic, sent)
        expect(all(m.offset >= 0 for m in acked), "acknowledged with offsets")
        check_round_trip(sent, self.read(bootstrap, topic, 3, len(sent)))

    def compression(self, bootstrap, topic, codec):
        sent = [(f"key-{i}".encode(), f"{codec} value {i} ".encode() * 20) for i in range(50)]
        self.produce(bootstrap, topic, sent, compression_type=codec, linger_ms=100)
        check_round_trip(sent, self.read(bootstrap, topic, 1, len(sent)))

    def headers_nulls(self, bootstrap, topic):
        headers = (("trace", b"1"), ("trace", b"2"), ("empty", b""))
        sent = [(b"key", b"value", headers), (None, b"null key"), (b"tombstone", None)]
        self.produce(bootstrap, topic, sent)
        got = self.read(bootstrap, topic, 1, len(sent))
        expect_equal([(b"key", b"value", headers), (None, b"null key", ()),
                      (b"tombstone", None, ())],
                     [(r.key, r.value, r.headers) for r in got], "records")

    def offsets_by_timestamp(self, bootstrap, topic):
        from kafka import TopicPartition

        self.produce(bootstrap, topic, [(b"k", b"v%d" % i, (), 0, T0 + i * 1000) for i in range(6)])
        consumer = self.consumer(bootstrap)
        try:
            tp = TopicPartition(topic, 0)
            found = consumer.offsets_for_times({tp: T0 + 2500})[tp]
            expect_equal((3, T0 + 3000), (found.offset, found.timestamp), "offset and time")
            expect_equal(None, consumer.offsets_for_times({tp: T0 + 9000})[tp], "after the last")
        finally:
            consumer.close()

    def consumer_group(self, bootstrap, topic):
        """Each member learns the topic's partitions before it joins. kafka-python 3.0 loses
        the assignment of a rebalance that a metadata change started when poll()'s timeout ends
        while the join is under way (the finished join is never applied): a member that joins
        before it knows the partitions gets an empty assignment and then such a rebalance."""
        from kafka import TopicPartition

        group = f"{topic}-group"
        self.produce(bootstrap, topic, keyed(10, "first"))
        first = self.consumer(bootstrap, group_id=group)
        try:
            first.partitions_for_topic(topic)
            first.subscribe([topic])
            expect_equal(10, len(self.poll(first, 10)), "records read by the first member")
            first.commit()
        finally:
            first.close()
        self.produce(bootstrap, topic, keyed(5, "second"))
        second = self.consumer(bootstrap, group_id=group)
        try:
            second.partitions_for_topic(topic)
            second.subscribe([topic])
            got = self.poll(second, 5)
            got += self.poll(second, 1, seconds=1)  # nothing more comes
            expect_equal(sorted(keyed(5, "second")), sorted((r.key, r.value) for r in got),
                         "records read after the commit")
            committed = sum(second.committed(TopicPartition(topic, p)) or 0 for p in (0, 1))
            expect_equal(10, committed, "committed offsets")
        finally:
            second.close()

    def admin_topics(self, bootstrap, topic):
        admin = self.admin(bootstrap)
        try:
            admin.create_topics({topic: {"num_partitions": 2, "replication_factor": 1}})
            admin.wait_for_topics([topic], timeout_ms=WAIT_SECONDS * 1000)
            expect(topic in admin.list_topics(), "listed")
            [described] = admin.describe_topics([topic])
            expect_equal(2, len(described["partitions"]), "partitions")
            admin.create_partitions({topic: 4})
            wait_until(lambda: len(admin.describe_topics([topic])[0]["partitions"]) == 4,
                       "four partitions")
            admin.delete_topics([topic])
            wait_until(lambda: topic not in admin.list_topics(), "the topic to be gone")
        finally:
            admin.close()

    def admin_configs(self, bootstrap, topic):
        from kafka.admin import ConfigResource

        admin = self.admin(bootstrap)
        try:
            admin.create_topics({topic: {"num_partitions": 1, "replication_factor": 1,
                                         "configs": {"retention.ms": "86400000"}}})
            resource = ConfigResource("TOPIC", topic)

            def retention():
                return admin.describe_configs([resource])["topic"][topic]["retention.ms"]["value"]

            expect_equal("86400000", retention(), "retention.ms")
            admin.alter_configs([ConfigResource("TOPIC", topic,
                                                configs={"retention.ms": "3600000"})])
            wait_until(lambda: retention() == "3600000", "retention.ms to change")
        finally:
            admin.close()
