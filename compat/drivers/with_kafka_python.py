"""kafka-python: KafkaProducer, KafkaConsumer and KafkaAdminClient."""
from __future__ import annotations

import importlib.metadata
import time

from ..scenarios import (ABORTED, COMMITTED_AFTER, COMMITTED_FIRST, FENCED_VALUE, INPUT, T0,
                         WAIT_SECONDS, WINNER_VALUE, Got, check_output, check_round_trip,
                         check_transactions_read, create_topic, expect, expect_equal, keyed,
                         output_topic, transactional_id, transformed, unpack, wait_until)
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

    def read_exactly(self, bootstrap, topic, partitions, count, isolation) -> list[Got]:
        """`count` records of the topic from the beginning, read with `isolation`, and whatever
        more a second of polling brings (nothing, in the scenarios)."""
        from kafka import TopicPartition

        consumer = self.consumer(bootstrap, isolation_level=isolation)
        try:
            assigned = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(assigned)
            consumer.seek_to_beginning(*assigned)
            got = self.poll(consumer, count)
            return got + self.poll(consumer, 1, seconds=1)  # nothing more comes
        finally:
            consumer.close()

    def transactional_producer(self, bootstrap, transactional_id):
        producer = self.producer(bootstrap, transactional_id=transactional_id,
                                 transaction_timeout_ms=60000)
        producer.init_transactions()
        return producer

    @staticmethod
    def send(producer, topic, records):
        """Produces (key, value[, headers, partition, timestamp]) records and waits until each
        is acknowledged."""
        futures = []
        for record in records:
            key, value, _, partition, _ = unpack(record)
            futures.append(producer.send(topic, key=key, value=value, partition=partition))
        producer.flush(WAIT_SECONDS)
        for future in futures:
            future.get(WAIT_SECONDS)

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

    def transactions(self, bootstrap, topic):
        producer = self.transactional_producer(bootstrap, transactional_id(topic))
        try:
            for records, commit in ((COMMITTED_FIRST, True), (ABORTED, False),
                                    (COMMITTED_AFTER, True)):
                producer.begin_transaction()
                self.send(producer, topic, records)
                if commit:
                    producer.commit_transaction()
                else:
                    producer.abort_transaction()
        finally:
            producer.close(timeout=5)
        committed = len(COMMITTED_FIRST) + len(COMMITTED_AFTER)
        check_transactions_read(
            self.read_exactly(bootstrap, topic, 2, committed, "read_committed"),
            self.read_exactly(bootstrap, topic, 2, committed + len(ABORTED), "read_uncommitted"))

    def transactional_offsets(self, bootstrap, topic):
        """Each member learns the topic's partitions before it joins (see consumer_group)."""
        from kafka import OffsetAndMetadata, TopicPartition

        output, group, tp = output_topic(topic), f"{topic}-group", TopicPartition(topic, 0)
        create_topic(bootstrap, output, 1)
        self.produce(bootstrap, topic, INPUT)
        producer = self.transactional_producer(bootstrap, transactional_id(topic))

        def process(member, records, commit):
            producer.begin_transaction()
            self.send(producer, output, [(r.key, transformed(r.value)) for r in records])
            producer.send_offsets_to_transaction(
                {tp: OffsetAndMetadata(records[-1].offset + 1, "", -1)},
                member.group_metadata())
            if commit:
                producer.commit_transaction()
            else:
                producer.abort_transaction()

        def member():
            consumer = self.consumer(bootstrap, group_id=group, isolation_level="read_committed")
            consumer.partitions_for_topic(topic)
            consumer.subscribe([topic])
            return consumer

        try:
            first = member()
            try:
                records = self.poll(first, 10)
                expect_equal([v for _, v in INPUT], [r.value for r in records], "input read")
                process(first, records[:5], commit=True)
                process(first, records[5:], commit=False)
                expect_equal(5, first.committed(tp), "committed offset after the abort")
            finally:
                first.close()
            second = member()
            try:
                records = self.poll(second, 5)
                records += self.poll(second, 1, seconds=1)  # nothing more comes
                expect_equal([v for _, v in INPUT[5:]], [r.value for r in records],
                             "input read by the new member")
                process(second, records, commit=True)
                # The commit's offsets reach the group when the coordinator's marker does,
                # just after commit_transaction returns.
                wait_until(lambda: second.committed(tp) == 10, "the committed offset 10")
            finally:
                second.close()
        finally:
            producer.close(timeout=5)
        check_output(self.read_exactly(bootstrap, output, 1, 10, "read_committed"),
                     self.read_exactly(bootstrap, output, 1, 15, "read_uncommitted"))

    def transaction_fencing(self, bootstrap, topic):
        from kafka.errors import ProducerFencedError

        first = self.transactional_producer(bootstrap, transactional_id(topic))
        try:
            first.begin_transaction()
            self.send(first, topic, [(b"key", FENCED_VALUE)])
            second = self.transactional_producer(bootstrap, transactional_id(topic))
            try:
                second.begin_transaction()
                self.send(second, topic, [(b"key", WINNER_VALUE)])
                second.commit_transaction()
            finally:
                second.close(timeout=5)
            try:
                first.commit_transaction()
            except ProducerFencedError:
                pass
            else:
                raise AssertionError("the fenced producer committed")
        finally:
            first.close(timeout=5)
        expect_equal([WINNER_VALUE],
                     [r.value for r in self.read_exactly(bootstrap, topic, 1, 1,
                                                         "read_committed")],
                     "read_committed")
        expect_equal([FENCED_VALUE, WINNER_VALUE],
                     [r.value for r in self.read_exactly(bootstrap, topic, 1, 2,
                                                         "read_uncommitted")],
                     "read_uncommitted")
