"""confluent-kafka (librdkafka): Producer, Consumer and AdminClient."""
from __future__ import annotations

import importlib.metadata
import time

from ..scenarios import (ABORTED, COMMITTED_AFTER, COMMITTED_FIRST, FENCED_VALUE, INPUT, T0,
                         WAIT_SECONDS, WINNER_VALUE, Got, check_output, check_round_trip,
                         check_transactions_read, create_topic, expect, expect_equal, keyed,
                         output_topic, transactional_id, transformed, unpack, wait_until)
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

    def read_exactly(self, bootstrap, topic, partitions, count, isolation) -> list[Got]:
        """`count` records of the topic from the beginning, read with `isolation`, and whatever
        more a second of polling brings (nothing, in the scenarios)."""
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition

        consumer = self.consumer(bootstrap, f"{topic}-reader", **{"isolation.level": isolation})
        try:
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
            got = self.poll(consumer, count)
            return got + self.poll(consumer, 1, seconds=1)  # nothing more comes
        finally:
            consumer.close()

    @staticmethod
    def transactional_producer(bootstrap, transactional_id):
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                             "transaction.timeout.ms": 60000})
        producer.init_transactions(WAIT_SECONDS)
        return producer

    @staticmethod
    def send(producer, topic, records):
        """Produces (key, value[, headers, partition, timestamp]) records and waits until each
        is acknowledged."""
        reports = []
        for record in records:
            key, value, _, partition, _ = unpack(record)
            extra = {} if partition is None else {"partition": partition}
            producer.produce(topic, key=key, value=value,
                             on_delivery=lambda error, _: reports.append(error), **extra)
        expect_equal(0, producer.flush(WAIT_SECONDS), "records left undelivered")
        expect_equal([None] * len(records), reports, "delivery reports")

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

    def transactions(self, bootstrap, topic):
        producer = self.transactional_producer(bootstrap, transactional_id(topic))
        for records, commit in ((COMMITTED_FIRST, True), (ABORTED, False),
                                (COMMITTED_AFTER, True)):
            producer.begin_transaction()
            self.send(producer, topic, records)
            if commit:
                producer.commit_transaction(WAIT_SECONDS)
            else:
                producer.abort_transaction(WAIT_SECONDS)
        committed = len(COMMITTED_FIRST) + len(COMMITTED_AFTER)
        check_transactions_read(
            self.read_exactly(bootstrap, topic, 2, committed, "read_committed"),
            self.read_exactly(bootstrap, topic, 2, committed + len(ABORTED), "read_uncommitted"))

    def transactional_offsets(self, bootstrap, topic):
        from confluent_kafka import TopicPartition

        output, group = output_topic(topic), f"{topic}-group"
        create_topic(bootstrap, output, 1)
        self.produce(bootstrap, topic, INPUT)
        producer = self.transactional_producer(bootstrap, transactional_id(topic))

        def process(member, records, commit):
            producer.begin_transaction()
            self.send(producer, output, [(r.key, transformed(r.value)) for r in records])
            producer.send_offsets_to_transaction(
                [TopicPartition(topic, 0, records[-1].offset + 1)],
                member.consumer_group_metadata(), WAIT_SECONDS)
            if commit:
                producer.commit_transaction(WAIT_SECONDS)
            else:
                producer.abort_transaction(WAIT_SECONDS)

        def committed_offset(member):
            [tp] = member.committed([TopicPartition(topic, 0)], timeout=WAIT_SECONDS)
            return tp.offset

        first = self.consumer(bootstrap, group, **{"isolation.level": "read_committed"})
        try:
            first.subscribe([topic])
            records = self.poll(first, 10)
            expect_equal([v for _, v in INPUT], [r.value for r in records], "input read")
            process(first, records[:5], commit=True)
            process(first, records[5:], commit=False)
            expect_equal(5, committed_offset(first), "committed offset after the abort")
        finally:
            first.close()
        second = self.consumer(bootstrap, group, **{"isolation.level": "read_committed"})
        try:
            second.subscribe([topic])
            records = self.poll(second, 5)
            records += self.poll(second, 1, seconds=1)  # nothing more comes
            expect_equal([v for _, v in INPUT[5:]], [r.value for r in records],
                         "input read by the new member")
            process(second, records, commit=True)
            # The commit's offsets reach the group when the coordinator's marker does, just
            # after commit_transaction returns.
            wait_until(lambda: committed_offset(second) == 10, "the committed offset 10")
        finally:
            second.close()
        check_output(self.read_exactly(bootstrap, output, 1, 10, "read_committed"),
                     self.read_exactly(bootstrap, output, 1, 15, "read_uncommitted"))

    def transaction_fencing(self, bootstrap, topic):
        from confluent_kafka import KafkaError, KafkaException

        first = self.transactional_producer(bootstrap, transactional_id(topic))
        first.begin_transaction()
        self.send(first, topic, [(b"key", FENCED_VALUE)])
        second = self.transactional_producer(bootstrap, transactional_id(topic))
        second.begin_transaction()
        self.send(second, topic, [(b"key", WINNER_VALUE)])
        second.commit_transaction(WAIT_SECONDS)
        try:
            first.commit_transaction(WAIT_SECONDS)
        except KafkaException as failure:
            error = failure.args[0]
            expect_equal(KafkaError._FENCED, error.code(), f"the first producer's error {error}")
            expect(error.fatal(), "being fenced is fatal")
        else:
            raise AssertionError("the fenced producer committed")
        expect_equal([WINNER_VALUE],
                     [r.value for r in self.read_exactly(bootstrap, topic, 1, 1,
                                                         "read_committed")],
                     "read_committed")
        expect_equal([FENCED_VALUE, WINNER_VALUE],
                     [r.value for r in self.read_exactly(bootstrap, topic, 1, 2,
                                                         "read_uncommitted")],
                     "read_uncommitted")
