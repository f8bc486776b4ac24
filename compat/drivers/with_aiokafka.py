"""aiokafka: AIOKafkaProducer, AIOKafkaConsumer and AIOKafkaAdminClient, each scenario in an
event loop of its own."""
from __future__ import annotations

import asyncio
import importlib.metadata
import time

from ..scenarios import (T0, WAIT_SECONDS, Got, check_round_trip, expect, expect_equal, keyed,
                         unpack)
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
