"""confluent-kafka (librdkafka): Producer, Consumer and AdminClient."""
from __future__ import annotations

import importlib.metadata
import time

from ..scenarios import (T0, WAIT_SECONDS, Got, check_round_trip, expect, expect_equal, keyed,
                         unpack, wait_until)
from . import Driver


class ConfluentDriver(Driver):
    name = "confluent-kafka"

    def unavailable(self):
        try:
            import confluent_kafka
        except ImportError:
            return "confluent-kafka is not installed"
        self.version = (f"{importlib.metadata.version('confluent-kafka')} "
                        f"(librdkafka {confluent_kafka.libversion()[0]})")
        return None

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def consumer(bootstrap, group, **settings):
        from confluent_kafka import Consumer

        return Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         **settings})

    @staticmethod
    def admin(bootstrap):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})  # warnings and worse

    @staticmethod
    def produce(bootstrap, topic, records, **settings):
        """records: (key, value) or (key, value, headers, partition, timestamp)."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", **settings})
        reports = []
        for record in records:
            key, value, headers, partition, timestamp = unpack(record)
            extra = {} if partition is None else {"partition": partition}
            producer.produce(topic, key=key, value=value, headers=list(headers) or None,
                             timestamp=timestamp or 0,
                             on_delivery=lambda error, message: reports.append(
                                 (error, message.offset())), **extra)
        expect_equal(0, producer.flush(WAIT_SECONDS), "records left undelivered")
        errors = [error for error, _ in reports if error is not None]
        expect(not errors, f"delivery errors: {errors}")
        return reports

    @staticmethod
    def poll(consumer, count, seconds=WAIT_SECONDS) -> list[Got]:
        got: list[Got] = []
        deadline = time.monotonic() + seconds
        while len(got) < count and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is None:
                continue
            expect(m.error() is None, f"consumer error: {m.error()}")
            got.append(Got(m.partition(), m.offset(), m.key(), m.value(),
                           tuple(m.headers() or ()), m.timestamp()[1]))
        return got

    def read(self, bootstrap, topic, partitions, count) -> list[Got]:
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition

        consumer = self.consumer(bootstrap, f"{topic}-reader")
        try:
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
            return self.poll(consumer, count)
        finally:
            consumer.close()

    # -- scenarios ----------------------------------------------------------------------------

    def metadata(self, bootstrap, topic):
        metadata = self.admin(bootstrap).list_topics(topic, timeout=WAIT_SECONDS)
        partitions = metadata.topics[topic].partitions
        expect_equal({0, 1, 2}, set(partitions), "partitions")
        expect(all(p.leader in metadata.brokers for p in partitions.values()),
               f"leaders among the brokers {metadata.brokers}")

    def produce_consume(self, bootstrap, topic):
        sent = keyed(30)
        reports = self.produce(bootstrap, topic, sent)
        expect(all(offset >= 0 for _, offset in reports), "acknowledged with offsets")
        check_round_trip(sent, self.read(bootstrap, topic, 3, len(sent)))

    def compression(self, bootstrap, topic, codec):
        sent = [(f"key-{i}".encode(), f"{codec} value {i} ".encode() * 20) for i in range(50)]
        self.produce(bootstrap, topic, sent, **{"compression.type": codec, "linger.ms": 100})
        check_round_trip(sent, self.read(bootstrap, topic, 1, len(sent)))

    def headers_nulls(self, bootstrap, topic):
        headers = (("trace", b"1"), ("trace", b"2"), ("empty", b""), ("null", None))
        sent = [(b"key", b"value", headers), (None, b"null key"), (b"tombstone", None),
                (None, None)]
        self.produce(bootstrap, topic, sent)
        got = self.read(bootstrap, topic, 1, len(sent))
        expect_equal([(b"key", b"value", headers), (None, b"null key", ()),
                      (b"tombstone", None, ()), (None, None, ())],
                     [(r.key, r.value, r.headers) for r in got], "records")

    def offsets_by_timestamp(self, bootstrap, topic):
        from confluent_kafka import TopicPartition

        self.produce(bootstrap, topic, [(b"k", b"v%d" % i, (), 0, T0 + i * 1000) for i in range(6)])
        consumer = self.consumer(bootstrap, f"{topic}-reader")
        try:
            [found] = consumer.offsets_for_times([TopicPartition(topic, 0, T0 + 2500)],
                                                 timeout=WAIT_SECONDS)
            expect_equal(3, found.offset, "offset")
            [after] = consumer.offsets_for_times([TopicPartition(topic, 0, T0 + 9000)],
                                                 timeout=WAIT_SECONDS)
            expect_equal(-1, after.offset, "after the last (OFFSET_END)")
        finally:
            consumer.close()

    def consumer_group(self, bootstrap, topic):
        from confluent_kafka import TopicPartition

        group = f"{topic}-group"
        self.produce(bootstrap, topic, keyed(10, "first"))
        first = self.consumer(bootstrap, group)
        try:
            first.subscribe([topic])
            expect_equal(10, len(self.poll(first, 10)), "records read by the first member")
            first.commit(asynchronous=False)
        finally:
            first.close()
        self.produce(bootstrap, topic, keyed(5, "second"))
        second = self.consumer(bootstrap, group)
        try:
            second.subscribe([topic])
            got = self.poll(second, 5)
            got += self.poll(second, 1, seconds=1)  # nothing more comes
            expect_equal(sorted(keyed(5, "second")), sorted((r.key, r.value) for r in got),
                         "records read after the commit")
            committed = second.committed([TopicPartition(topic, p) for p in (0, 1)],
                                         timeout=WAIT_SECONDS)
            expect_equal(10, sum(tp.offset for tp in committed), "committed offsets")
        finally:
            second.close()

    def admin_topics(self, bootstrap, topic):
        from confluent_kafka.admin import NewPartitions, NewTopic

        admin = self.admin(bootstrap)

        def partitions():
            found = admin.list_topics(timeout=WAIT_SECONDS).topics.get(topic)
            return None if found is None or found.error else len(found.partitions)

        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(WAIT_SECONDS)
        wait_until(lambda: partitions() == 2, "the topic with two partitions")
        admin.create_partitions([NewPartitions(topic, 4)])[topic].result(WAIT_SECONDS)
        wait_until(lambda: partitions() == 4, "four partitions")
        admin.delete_topics([topic])[topic].result(WAIT_SECONDS)
        wait_until(lambda: partitions() is None, "the topic to be gone")

    def admin_configs(self, bootstrap, topic):
        from confluent_kafka.admin import (AlterConfigOpType, ConfigEntry, ConfigResource,
                                           NewTopic, ResourceType)

        admin = self.admin(bootstrap)
        admin.create_topics([NewTopic(topic, 1, 1, config={"retention.ms": "86400000"})])[
            topic].result(WAIT_SECONDS)

        def retention():
            [future] = admin.describe_configs(
                [ConfigResource(ResourceType.TOPIC, topic)]).values()
            return future.result(WAIT_SECONDS)["retention.ms"].value

        expect_equal("86400000", retention(), "retention.ms")
        change = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
            ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
        [future] = admin.incremental_alter_configs([change]).values()
        future.result(WAIT_SECONDS)
        wait_until(lambda: retention() == "3600000", "retention.ms to change")
