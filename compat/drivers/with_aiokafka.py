"""aiokafka: AIOKafkaProducer, AIOKafkaConsumer and AIOKafkaAdminClient, each scenario in an
event loop of its own."""
from __future__ import annotations

import asyncio
import importlib.metadata
import time

from ..scenarios import (ABORTED, COMMITTED_AFTER, COMMITTED_FIRST, FENCED_VALUE, INPUT, T0,
                         WAIT_SECONDS, WINNER_VALUE, Got, check_output, check_round_trip,
                         check_transactions_read, create_topic, expect, expect_equal, keyed,
                         output_topic, transactional_id, transformed, unpack)
from . import Driver


def synchronous(scenario):
    def run(self, *args):
        return asyncio.run(asyncio.wait_for(scenario(self, *args), 4 * WAIT_SECONDS))
    run.__name__ = scenario.__name__
    return run


async def wait_until(condition, what: str, seconds: float = WAIT_SECONDS):
    deadline = time.monotonic() + seconds
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


class AioKafkaDriver(Driver):
    name = "aiokafka"

    def unavailable(self):
        try:
            self.version = importlib.metadata.version("aiokafka")
        except importlib.metadata.PackageNotFoundError:
            return "aiokafka is not installed"
        return None

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    async def produce(bootstrap, topic, records, **settings):
        """records: (key, value) or (key, value, headers, partition, timestamp)."""
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", **settings)
        await producer.start()
        try:
            futures = []
            for record in records:
                key, value, headers, partition, timestamp = unpack(record)
                futures.append(await producer.send(topic, key=key, value=value,
                                                   headers=list(headers), partition=partition,
                                                   timestamp_ms=timestamp))
            return [await f for f in futures]
        finally:
            await producer.stop()

    @staticmethod
    def consumer(bootstrap, **settings):
        from aiokafka import AIOKafkaConsumer

        return AIOKafkaConsumer(**{"bootstrap_servers": bootstrap, "group_id": None,
                                   "enable_auto_commit": False, "auto_offset_reset": "earliest",
                                   **settings})

    @staticmethod
    def admin(bootstrap):
        from aiokafka.admin import AIOKafkaAdminClient

        return AIOKafkaAdminClient(bootstrap_servers=bootstrap)

    @staticmethod
    async def poll(consumer, count, seconds=WAIT_SECONDS) -> list[Got]:
        got: list[Got] = []
        deadline = time.monotonic() + seconds
        while len(got) < count and time.monotonic() < deadline:
            for messages in (await consumer.getmany(timeout_ms=200)).values():
                got += [Got(m.partition, m.offset, m.key, m.value,
                            tuple((k, v) for k, v in m.headers or ()), m.timestamp)
                        for m in messages]
        return got

    async def read(self, bootstrap, topic, partitions, count) -> list[Got]:
        from aiokafka import TopicPartition

        consumer = self.consumer(bootstrap)
        await consumer.start()
        try:
            assigned = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(assigned)
            await consumer.seek_to_beginning(*assigned)
            return await self.poll(consumer, count)
        finally:
            await consumer.stop()

    async def read_exactly(self, bootstrap, topic, partitions, count, isolation) -> list[Got]:
        """`count` records of the topic from the beginning, read with `isolation`, and whatever
        more a second of polling brings (nothing, in the scenarios)."""
        from aiokafka import TopicPartition

        consumer = self.consumer(bootstrap, isolation_level=isolation)
        await consumer.start()
        try:
            assigned = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(assigned)
            await consumer.seek_to_beginning(*assigned)
            got = await self.poll(consumer, count)
            return got + await self.poll(consumer, 1, seconds=1)  # nothing more comes
        finally:
            await consumer.stop()

    async def end_offsets(self, bootstrap, topic) -> str:
        """Partition 0's end offset for read_committed (the last stable offset) and for
        read_uncommitted (the high watermark)."""
        from aiokafka import TopicPartition

        tp, found = TopicPartition(topic, 0), []
        for isolation in ("read_committed", "read_uncommitted"):
            consumer = self.consumer(bootstrap, isolation_level=isolation)
            await consumer.start()
            try:
                found.append((await consumer.end_offsets([tp]))[tp])
            finally:
                await consumer.stop()
        return "last stable offset {}, high watermark {}".format(*found)

    @staticmethod
    async def transactional_producer(bootstrap, transactional_id):
        """A started producer: AIOKafkaProducer.start() initialises its transactions."""
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id,
                                    transaction_timeout_ms=60000)
        await producer.start()
        return producer

    @staticmethod
    async def send(producer, topic, records):
        """Produces (key, value[, headers, partition, timestamp]) records and waits until each
        is acknowledged."""
        futures = []
        for record in records:
            key, value, _, partition, _ = unpack(record)
            futures.append(await producer.send(topic, key=key, value=value, partition=partition))
        for future in futures:
            await future

    # -- scenarios ----------------------------------------------------------------------------

    @synchronous
    async def metadata(self, bootstrap, topic):
        from aiokafka import AIOKafkaProducer

        consumer = self.consumer(bootstrap)
        await consumer.start()
        try:
            expect(topic in await consumer.topics(), "topics() lists the topic")
        finally:
            await consumer.stop()
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            expect_equal({0, 1, 2}, await producer.partitions_for(topic), "partitions")
        finally:
            await producer.stop()
        admin = self.admin(bootstrap)
        await admin.start()
        try:
            [described] = await admin.describe_topics([topic])
            brokers = {b["node_id"] for b in (await admin.describe_cluster())["brokers"]}
            expect(all(p["leader"] in brokers for p in described["partitions"]),
                   f"leaders among the brokers {brokers}")
        finally:
            await admin.close()

    @synchronous
    async def produce_consume(self, bootstrap, topic):
        sent = keyed(30)
        acked = await self.produce(bootstrap, topic, sent)
        expect(all(m.offset >= 0 for m in acked), "acknowledged with offsets")
        check_round_trip(sent, await self.read(bootstrap, topic, 3, len(sent)))

    @synchronous
    async def compression(self, bootstrap, topic, codec):
        sent = [(f"key-{i}".encode(), f"{codec} value {i} ".encode() * 20) for i in range(50)]
        await self.produce(bootstrap, topic, sent, compression_type=codec, linger_ms=100)
        check_round_trip(sent, await self.read(bootstrap, topic, 1, len(sent)))

    @synchronous
    async def headers_nulls(self, bootstrap, topic):
        headers = (("trace", b"1"), ("trace", b"2"), ("empty", b""), ("null", None))
        sent = [(b"key", b"value", headers), (None, b"null key"), (b"tombstone", None)]
        await self.produce(bootstrap, topic, sent)
        got = await self.read(bootstrap, topic, 1, len(sent))
        expect_equal([(b"key", b"value", headers), (None, b"null key", ()),
                      (b"tombstone", None, ())],
                     [(r.key, r.value, r.headers) for r in got], "records")

    @synchronous
    async def offsets_by_timestamp(self, bootstrap, topic):
        from aiokafka import TopicPartition

        await self.produce(bootstrap, topic,
                           [(b"k", b"v%d" % i, (), 0, T0 + i * 1000) for i in range(6)])
        consumer = self.consumer(bootstrap)
        await consumer.start()
        try:
            tp = TopicPartition(topic, 0)
            found = (await consumer.offsets_for_times({tp: T0 + 2500}))[tp]
            expect_equal((3, T0 + 3000), (found.offset, found.timestamp), "offset and time")
            expect_equal(None, (await consumer.offsets_for_times({tp: T0 + 9000}))[tp],
                         "after the last")
        finally:
            await consumer.stop()

    @synchronous
    async def consumer_group(self, bootstrap, topic):
        from aiokafka import TopicPartition

        group = f"{topic}-group"
        await self.produce(bootstrap, topic, keyed(10, "first"))
        first = self.consumer(bootstrap, group_id=group)
        await first.start()
        try:
            first.subscribe([topic])
            expect_equal(10, len(await self.poll(first, 10)), "records read by the first member")
            await first.commit()
        finally:
            await first.stop()
        await self.produce(bootstrap, topic, keyed(5, "second"))
        second = self.consumer(bootstrap, group_id=group)
        await second.start()
        try:
            second.subscribe([topic])
            got = await self.poll(second, 5)
            got += await self.poll(second, 1, seconds=1)  # nothing more comes
            expect_equal(sorted(keyed(5, "second")), sorted((r.key, r.value) for r in got),
                         "records read after the commit")
            committed = [await second.committed(TopicPartition(topic, p)) for p in (0, 1)]
            expect_equal(10, sum(c or 0 for c in committed), "committed offsets")
        finally:
            await second.stop()

    @synchronous
    async def admin_topics(self, bootstrap, topic):
        from aiokafka.admin import NewPartitions, NewTopic

        admin = self.admin(bootstrap)
        await admin.start()

        async def partitions():
            if topic not in await admin.list_topics():
                return None
            [described] = await admin.describe_topics([topic])
            return len(described["partitions"]) if described["error_code"] == 0 else None

        try:
            await admin.create_topics([NewTopic(topic, 2, 1)])
            await wait_until(lambda: self._is(partitions, 2), "the topic with two partitions")
            await admin.create_partitions({topic: NewPartitions(4)})
            await wait_until(lambda: self._is(partitions, 4), "four partitions")
            await admin.delete_topics([topic])
            await wait_until(lambda: self._is(partitions, None), "the topic to be gone")
        finally:
            await admin.close()

    @staticmethod
    async def _is(value, expected) -> bool:
        return await value() == expected

    @synchronous
    async def admin_configs(self, bootstrap, topic):
        from aiokafka.admin import NewTopic
        from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

        admin = self.admin(bootstrap)
        await admin.start()

        async def retention():
            [response] = await admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic)])
            [(error, _, _, _, entries)] = response.resources
            expect_equal(0, error, "describe_configs error code")
            return {entry[0]: entry[1] for entry in entries}["retention.ms"]

        try:
            await admin.create_topics([NewTopic(topic, 1, 1,
                                                topic_configs={"retention.ms": "86400000"})])
            expect_equal("86400000", await retention(), "retention.ms")
            await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                      configs={"retention.ms": "3600000"})])
            await wait_until(lambda: self._is(retention, "3600000"), "retention.ms to change")
        finally:
            await admin.close()

    @synchronous
    async def transactions(self, bootstrap, topic):
        producer = await self.transactional_producer(bootstrap, transactional_id(topic))
        try:
            for records, commit in ((COMMITTED_FIRST, True), (ABORTED, False),
                                    (COMMITTED_AFTER, True)):
                await producer.begin_transaction()
                await self.send(producer, topic, records)
                if commit:
                    await producer.commit_transaction()
                else:
                    await producer.abort_transaction()
        finally:
            await producer.stop()
        committed = len(COMMITTED_FIRST) + len(COMMITTED_AFTER)
        check_transactions_read(
            await self.read_exactly(bootstrap, topic, 2, committed, "read_committed"),
            await self.read_exactly(bootstrap, topic, 2, committed + len(ABORTED),
                                    "read_uncommitted"))

    @synchronous
    async def transactional_offsets(self, bootstrap, topic):
        """aiokafka's send_offsets_to_transaction takes the group id (no generation or member)."""
        from aiokafka import TopicPartition
        from aiokafka.structs import OffsetAndMetadata

        output, group, tp = output_topic(topic), f"{topic}-group", TopicPartition(topic, 0)
        create_topic(bootstrap, output, 1)
        await self.produce(bootstrap, topic, INPUT)
        producer = await self.transactional_producer(bootstrap, transactional_id(topic))

        async def process(records, commit):
            await producer.begin_transaction()
            await self.send(producer, output, [(r.key, transformed(r.value)) for r in records])
            await producer.send_offsets_to_transaction(
                {tp: OffsetAndMetadata(records[-1].offset + 1, "")}, group)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()

        async def member():
            consumer = self.consumer(bootstrap, group_id=group, isolation_level="read_committed")
            await consumer.start()
            consumer.subscribe([topic])
            return consumer

        try:
            first = await member()
            try:
                records = await self.poll(first, 10)
                expect_equal([v for _, v in INPUT], [r.value for r in records], "input read")
                await process(records[:5], commit=True)
                await process(records[5:], commit=False)
                expect_equal(5, await first.committed(tp), "committed offset after the abort")
            finally:
                await first.stop()
            second = await member()
            try:
                records = await self.poll(second, 5)
                records += await self.poll(second, 1, seconds=1)  # nothing more comes
                expect_equal([v for _, v in INPUT[5:]], [r.value for r in records],
                             "input read by the new member")
                await process(records, commit=True)
                # The commit's offsets reach the group when the coordinator's marker does,
                # just after commit_transaction returns.
                await wait_until(lambda: self._is(lambda: second.committed(tp), 10),
                                 "the committed offset 10")
            finally:
                await second.stop()
        finally:
            await producer.stop()
        read_committed = await self.read_exactly(bootstrap, output, 1, 10, "read_committed")
        read_uncommitted = await self.read_exactly(bootstrap, output, 1, 15, "read_uncommitted")
        try:
            check_output(read_committed, read_uncommitted)
        except AssertionError as failure:
            # what tells a last stable offset held back by the broker from records the client
            # dropped: the end offsets, and where each record is
            raise AssertionError(
                f"{failure}; {await self.end_offsets(bootstrap, output)}, read_uncommitted "
                f"{[(r.offset, r.value) for r in read_uncommitted]}") from None

    @synchronous
    async def transaction_fencing(self, bootstrap, topic):
        from aiokafka.errors import ProducerFenced

        first = await self.transactional_producer(bootstrap, transactional_id(topic))
        try:
            await first.begin_transaction()
            await self.send(first, topic, [(b"key", FENCED_VALUE)])
            second = await self.transactional_producer(bootstrap, transactional_id(topic))
            try:
                await second.begin_transaction()
                await self.send(second, topic, [(b"key", WINNER_VALUE)])
                await second.commit_transaction()
            finally:
                await second.stop()
            try:
                await first.commit_transaction()
            except ProducerFenced:
                pass
            else:
                raise AssertionError("the fenced producer committed")
        finally:
            await first.stop()
        expect_equal([WINNER_VALUE],
                     [r.value for r in await self.read_exactly(bootstrap, topic, 1, 1,
                                                               "read_committed")],
                     "read_committed")
        expect_equal([FENCED_VALUE, WINNER_VALUE],
                     [r.value for r in await self.read_exactly(bootstrap, topic, 1, 2,
                                                               "read_uncommitted")],
                     "read_uncommitted")
