"""Drivers for real Kafka clients (kafka-python, confluent-kafka, aiokafka, kcat), for tests that
produce and consume through them, plus raw-protocol helpers to create topics and inspect what the
broker stored.

Every driver speaks in `Record`s: `produce(bootstrap, topic, records, **options)` returns the
records as the broker acknowledged them (partition and offset; offset None with acks=0), and
`consume(bootstrap, topic, start, count)` reads `count` records from the given start offsets
({partition: offset}; `from_start(n)` for all of n partitions from offset 0), with manual
assignment and no offset commits, so that nothing depends on consumer groups.

Common producer options, translated to each client's own setting: `acks` (0, 1, "all"),
`compression` ("none", "gzip", "snappy", "lz4", "zstd"), `max_request_size` (bytes) and `batch`
(True: hold the records until all are queued, so that they go out in one batch per partition).
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import time
from dataclasses import dataclass, replace
from types import SimpleNamespace

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.records import batch as record_batch
from pykbroker.testkit.wire import WireClient

Headers = tuple[tuple[str, "bytes | None"], ...]
WAIT_SECONDS = 20  # how long a driver waits for records before giving up


@dataclass(frozen=True)
class Record:
    key: bytes | None
    value: bytes | None
    headers: Headers = ()
    partition: int | None = None  # when producing: None lets the client's partitioner choose
    timestamp: int | None = None  # when producing: None lets the client take the current time
    offset: int | None = None

    @property
    def content(self) -> tuple:
        return (self.key, self.value, self.headers)


def contents(records) -> list[tuple]:
    return [r.content for r in records]


def from_start(partitions: int) -> dict[int, int]:
    return {p: 0 for p in range(partitions)}


def by_partition(records) -> dict[int, list[Record]]:
    grouped: dict[int, list[Record]] = {}
    for r in sorted(records, key=lambda r: (r.partition, r.offset)):
        grouped.setdefault(r.partition, []).append(r)
    return grouped


def _acknowledged(records, metadata, acks) -> list[Record]:
    """The records with the partition and offset the producer was told; with acks=0 there is
    no answer: kafka-python then makes up offsets and aiokafka reports nothing."""
    if acks == 0:
        return [replace(r, partition=getattr(m, "partition", r.partition), offset=None)
                for r, m in zip(records, metadata)]
    return [replace(r, partition=m.partition, offset=m.offset) for r, m in zip(records, metadata)]


def _headers(raw) -> Headers:
    return tuple((k, None if v is None else bytes(v)) for k, v in (raw or ()))


# -- raw protocol -----------------------------------------------------------------------------

CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls
Fetch = messages.request(ApiKey.FETCH).cls


def create_topic(bootstrap: str, name: str, partitions: int = 1,
                 configs: dict[str, str] | None = None) -> None:
    topic = CreateTopics.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=1, assignments=[],
        configs=[CreateTopics.CreatableTopicConfig(name=k, value=v)
                 for k, v in (configs or {}).items()])
    with WireClient(bootstrap) as client:
        response = client.request(ApiKey.CREATE_TOPICS, 7,
                                  CreateTopics(topics=[topic], timeout_ms=30000))
    [result] = response.topics
    assert result.error_code == 0, (name, result.error_code, result.error_message)


def stored_batches(bootstrap: str, topic: str, partition: int = 0) -> list:
    """The headers of the record batches the broker holds for a partition, in offset order."""
    headers, offset = [], 0
    with WireClient(bootstrap) as client:
        while True:
            request = Fetch(
                replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=64 << 20, isolation_level=0,
                session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="",
                topics=[Fetch.FetchTopic(topic=topic, partitions=[Fetch.FetchPartition(
                    partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                    last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=64 << 20)])])
            [data] = client.request(ApiKey.FETCH, 11, request).responses[0].partitions
            assert data.error_code == 0, data.error_code
            records = bytes(data.records or b"")
            found = [header for pos, header in record_batch.iter_headers(records)
                     if pos + header.size <= len(records)]  # whole batches only
            if not found:
                return headers
            headers += found
            offset = found[-1].next_offset


# -- kafka-python -----------------------------------------------------------------------------

class KafkaPython:
    name = "kafka-python"
    null_header_values = False  # its producer takes (str, bytes) headers only
    null_key_and_value = False  # and wants a key or a value

    @staticmethod
    def producer(bootstrap: str, acks=1, compression="none", max_request_size=None, batch=False,
                 **extra):
        from kafka import KafkaProducer

        config = dict(bootstrap_servers=bootstrap, acks=acks, **extra)
        if compression != "none":
            config["compression_type"] = compression
        if max_request_size is not None:
            config["max_request_size"] = max_request_size
        if batch:
            config.update(linger_ms=60_000, batch_size=1 << 20)
        return KafkaProducer(**config)

    @classmethod
    def produce(cls, bootstrap: str, topic: str, records, **options) -> list[Record]:
        producer = cls.producer(bootstrap, **options)
        try:
            futures = [producer.send(topic, key=r.key, value=r.value, headers=list(r.headers),
                                     partition=r.partition, timestamp_ms=r.timestamp)
                       for r in records]
            producer.flush(WAIT_SECONDS)
            metadata = [f.get(WAIT_SECONDS) for f in futures]
        finally:
            producer.close(timeout=5)
        return _acknowledged(records, metadata, options.get("acks", 1))

    @staticmethod
    def consumer(bootstrap: str, **extra):
        from kafka import KafkaConsumer

        return KafkaConsumer(**{"bootstrap_servers": bootstrap, "group_id": None,
                                "enable_auto_commit": False, "auto_offset_reset": "earliest",
                                **extra})

    @staticmethod
    def record(message) -> Record:
        return Record(message.key, message.value, _headers(message.headers), message.partition,
                      message.timestamp, message.offset)

    @classmethod
    def poll(cls, consumer, count: int, seconds: float = WAIT_SECONDS) -> list[Record]:
        got: list[Record] = []
        deadline = time.monotonic() + seconds
        while len(got) < count and time.monotonic() < deadline:
            for messages_ in consumer.poll(timeout_ms=500).values():
                got += [cls.record(m) for m in messages_]
        return got

    @classmethod
    def consume(cls, bootstrap: str, topic: str, start, count: int, **extra) -> list[Record]:
        from kafka import TopicPartition

        consumer = cls.consumer(bootstrap, **extra)
        try:
            consumer.assign([TopicPartition(topic, p) for p in start])
            for p, offset in start.items():
                consumer.seek(TopicPartition(topic, p), offset)
            return cls.poll(consumer, count)
        finally:
            consumer.close()


# -- confluent-kafka --------------------------------------------------------------------------

class Confluent:
    name = "confluent-kafka"
    null_header_values = True
    null_key_and_value = True

    @staticmethod
    def producer(bootstrap: str, acks=1, compression="none", max_request_size=None, batch=False,
                 **extra):
        from confluent_kafka import Producer

        config = {"bootstrap.servers": bootstrap, "acks": str(acks),
                  "compression.type": compression, **extra}
        if max_request_size is not None:
            config["message.max.bytes"] = max_request_size
        if batch:
            config.update({"linger.ms": 60_000, "batch.num.messages": 100_000})
        return Producer(config)

    @classmethod
    def produce(cls, bootstrap: str, topic: str, records, **options) -> list[Record]:
        producer = cls.producer(bootstrap, **options)
        if options.get("batch"):
            # Know the partitions first: records queued before the metadata arrives would go out
            # one by one as they are assigned while `flush()` runs.
            producer.list_topics(topic, timeout=WAIT_SECONDS)
        reports: list = [None] * len(records)

        def on_delivery(index):
            def callback(error, message):
                reports[index] = (error, message.partition(), message.offset())
            return callback

        for index, r in enumerate(records):
            extra = {} if r.partition is None else {"partition": r.partition}
            producer.produce(topic, key=r.key, value=r.value, headers=list(r.headers) or None,
                             timestamp=r.timestamp or 0, on_delivery=on_delivery(index), **extra)
        assert producer.flush(WAIT_SECONDS) == 0, "records still undelivered"
        errors = [report[0] for report in reports if report[0] is not None]
        assert not errors, errors
        return [replace(r, partition=p, offset=None if offset is None or offset < 0 else offset)
                for r, (_, p, offset) in zip(records, reports)]  # acks=0: no offsets

    @staticmethod
    def consumer(bootstrap: str, **extra):
        from confluent_kafka import Consumer

        return Consumer({"bootstrap.servers": bootstrap, "group.id": "roundtrip",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest", **extra})

    @staticmethod
    def record(message) -> Record:
        assert message.error() is None, message.error()
        return Record(message.key(), message.value(), _headers(message.headers()),
                      message.partition(), message.timestamp()[1], message.offset())

    @classmethod
    def poll(cls, consumer, count: int, seconds: float = WAIT_SECONDS) -> list[Record]:
        got: list[Record] = []
        deadline = time.monotonic() + seconds
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not cls.is_partition_eof(message):
                got.append(cls.record(message))
        return got

    @staticmethod
    def is_partition_eof(message) -> bool:
        """The event `enable.partition.eof` consumers get on reaching the end of a partition."""
        from confluent_kafka import KafkaError

        return message.error() is not None and message.error().code() == KafkaError._PARTITION_EOF

    @classmethod
    def consume(cls, bootstrap: str, topic: str, start, count: int, **extra) -> list[Record]:
        from confluent_kafka import TopicPartition

        consumer = cls.consumer(bootstrap, **extra)
        try:
            consumer.assign([TopicPartition(topic, p, offset) for p, offset in start.items()])
            return cls.poll(consumer, count)
        finally:
            consumer.close()


# -- aiokafka ---------------------------------------------------------------------------------

class AioKafka:
    name = "aiokafka"
    null_header_values = True
    null_key_and_value = False  # its producer wants a key or a value

    @staticmethod
    def producer(bootstrap: str, acks=1, compression="none", max_request_size=None, batch=False,
                 **extra):
        from aiokafka import AIOKafkaProducer

        config = dict(bootstrap_servers=bootstrap, acks=acks, **extra)
        if compression != "none":
            config["compression_type"] = compression
        if max_request_size is not None:
            config["max_request_size"] = max_request_size
        if batch:
            config.update(max_batch_size=1 << 20)  # the records go out by `send_batch`
        return AIOKafkaProducer(**config)

    @classmethod
    def produce(cls, bootstrap: str, topic: str, records, **options) -> list[Record]:
        return asyncio.run(asyncio.wait_for(cls.produce_async(bootstrap, topic, records, **options),
                                            WAIT_SECONDS))

    @classmethod
    async def produce_async(cls, bootstrap: str, topic: str, records, **options) -> list[Record]:
        """With `batch`, the records go out through aiokafka's batch interface (its `flush()`
        would wait out a long linger), one batch per partition: they must name their partition."""
        producer = cls.producer(bootstrap, **options)
        await producer.start()
        try:
            if options.get("batch"):
                metadata = await cls._send_batches(producer, topic, records)
            else:
                futures = [await producer.send(topic, key=r.key, value=r.value,
                                               headers=list(r.headers), partition=r.partition,
                                               timestamp_ms=r.timestamp)
                           for r in records]
                metadata = [await f for f in futures]
        finally:
            await producer.stop()
        return _acknowledged(records, metadata, options.get("acks", 1))

    @staticmethod
    async def _send_batches(producer, topic: str, records) -> list:
        partitions = [r.partition for r in records]
        assert None not in partitions, "batched records name their partition"
        metadata = {}
        for partition in dict.fromkeys(partitions):
            mine = [(i, r) for i, r in enumerate(records) if r.partition == partition]
            builder = producer.create_batch()
            for _, r in mine:
                assert builder.append(key=r.key, value=r.value, timestamp=r.timestamp,
                                      headers=list(r.headers)) is not None, "batch is full"
            sent = await (await producer.send_batch(builder, topic, partition=partition))
            for delta, (i, r) in enumerate(mine):
                offset = sent.offset + delta if sent.offset >= 0 else -1
                metadata[i] = SimpleNamespace(partition=partition, offset=offset)
        return [metadata[i] for i in range(len(records))]

    @staticmethod
    def consumer(bootstrap: str, **extra):
        from aiokafka import AIOKafkaConsumer

        return AIOKafkaConsumer(**{"bootstrap_servers": bootstrap, "group_id": None,
                                   "enable_auto_commit": False, "auto_offset_reset": "earliest",
                                   **extra})

    @staticmethod
    def record(message) -> Record:
        return Record(message.key, message.value, _headers(message.headers), message.partition,
                      message.timestamp, message.offset)

    @classmethod
    async def poll(cls, consumer, count: int, seconds: float = WAIT_SECONDS) -> list[Record]:
        got: list[Record] = []
        deadline = time.monotonic() + seconds
        while len(got) < count and time.monotonic() < deadline:
            for messages_ in (await consumer.getmany(timeout_ms=500)).values():
                got += [cls.record(m) for m in messages_]
        return got

    @classmethod
    def consume(cls, bootstrap: str, topic: str, start, count: int, **extra) -> list[Record]:
        from aiokafka import TopicPartition

        async def run():
            consumer = cls.consumer(bootstrap, **extra)
            await consumer.start()
            try:
                consumer.assign([TopicPartition(topic, p) for p in start])
                for p, offset in start.items():
                    consumer.seek(TopicPartition(topic, p), offset)
                return await cls.poll(consumer, count)
            finally:
                await consumer.stop()

        return asyncio.run(run())


# -- kcat -------------------------------------------------------------------------------------

class Kcat:
    """kcat (librdkafka) through its command line: `-P` reads `key:value` lines (`-K:`), `-Z`
    sends empty keys and values as null, `-H` adds headers to every record; `-C -J` prints one
    JSON object per record."""

    name = "kcat"

    @staticmethod
    def run(bootstrap: str, *args: str, stdin: bytes | None = None) -> str:
        result = subprocess.run(["kcat", "-b", bootstrap, *args], input=stdin,
                                capture_output=True, timeout=WAIT_SECONDS)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        return result.stdout.decode()

    @classmethod
    def produce(cls, bootstrap: str, topic: str, records, acks=1, compression="none",
                max_request_size=None, batch=False) -> list[Record]:
        """Every record must carry the same headers (kcat's `-H` applies to all of them), text
        keys and values without ':' or newlines, and no timestamp. Offsets are not reported."""
        [headers] = {r.headers for r in records}
        assert all(r.timestamp is None for r in records)
        assert len({r.partition for r in records}) == 1, "one partition, or the partitioner"
        args = ["-P", "-t", topic, "-K:", "-Z", "-z", compression, "-X", f"acks={acks}"]
        if records[0].partition is not None:
            args += ["-p", str(records[0].partition)]
        for key, value in headers:
            args += ["-H", f"{key}={value.decode()}"]
        if max_request_size is not None:
            args += ["-X", f"message.max.bytes={max_request_size}"]
        if batch:  # kcat does not flush at the end of its input: it waits out a linger
            args += ["-X", "linger.ms=100"]
        lines = b"".join((r.key or b"") + b":" + (r.value or b"") + b"\n" for r in records)
        cls.run(bootstrap, *args, stdin=lines)
        return list(records)

    @staticmethod
    def record(line: str) -> Record:
        data = json.loads(line)
        raw = data.get("headers") or []
        headers = tuple((raw[i], raw[i + 1].encode()) for i in range(0, len(raw), 2))
        encode = lambda text: None if text is None else text.encode()  # noqa: E731
        return Record(encode(data["key"]), encode(data["payload"]), headers, data["partition"],
                      data["ts"], data["offset"])

    @classmethod
    def consume(cls, bootstrap: str, topic: str, start, count: int, **config) -> list[Record]:
        """Reads to the end of the partitions (`-e`) and returns at most `count` records; start
        offsets are kcat's `-o` (also "-3" for three from the end, "s@<ms>" for a timestamp), all
        0 meaning the whole topic from the beginning. `config`: librdkafka properties (`-X`)."""
        if set(start.values()) == {0}:
            where = [["-o", "beginning"]]  # every partition, in one run
        else:
            where = [["-p", str(p), "-o", str(offset)] for p, offset in start.items()]
        settings = [arg for name, value in config.items() for arg in ("-X", f"{name}={value}")]
        got = []
        for position in where:
            output = cls.run(bootstrap, "-C", "-t", topic, *position, "-e", "-J", "-c",
                             str(count), *settings)
            got += [cls.record(line) for line in output.splitlines() if line.strip()]
        return got[:count]


CLIENTS = [KafkaPython, Confluent, AioKafka, Kcat]
LIBRARIES = [KafkaPython, Confluent, AioKafka]  # the clients with a programming interface
