"""What the transaction tests share: the brokers they run against (pykbroker, and Apache Kafka
3.9.0 from `../shared/realkafka` to check that a test describes Kafka's behaviour), transactional
producers that commit or are left open in a process of their own (to be killed with kill -9),
reading a topic to its end under an isolation level, and the raw requests that show a
partition's last stable offset and a transactional id's coordinator.

The tests run against pykbroker; `TXN_TARGETS=pykbroker,kafka` (or `kafka`) runs them against
Kafka 3.9.0 too, with the same broker settings, which is how they were validated.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

from compat import realkafka
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

from .ci import skip_or_fail_in_ci

WAIT_SECONDS = 30
READ_UNCOMMITTED, READ_COMMITTED = "read_uncommitted", "read_committed"
LATEST = -1
COORDINATOR_KEY_TRANSACTION = 1  # FindCoordinator key_type of a transactional id

ListOffsets = messages.request(ApiKey.LIST_OFFSETS).cls
FindCoordinator = messages.request(ApiKey.FIND_COORDINATOR).cls
DescribeTransactions = messages.request(ApiKey.DESCRIBE_TRANSACTIONS).cls


# -- the brokers --------------------------------------------------------------------------

def target_names() -> list[str]:
    """The brokers the transaction tests run against: `TXN_TARGETS`, default pykbroker."""
    return os.environ.get("TXN_TARGETS", "pykbroker").split(",")


class PykTarget:
    """One pykbroker; kill -9 and restart on its port and data."""

    label = "pykbroker"

    def __init__(self, directory: Path, settings: dict[str, str]) -> None:
        self.broker = BrokerProcess(directory, settings, keep_port_on_restart=True)

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def start(self) -> PykTarget:
        self.broker.start()
        return self

    def kill(self) -> None:
        self.broker.kill()

    def restart(self) -> None:
        self.broker.start()

    def stop(self) -> None:
        self.broker.stop()

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.broker.log_text().splitlines()[-lines:])


class KafkaTarget:
    """One Kafka 3.9.0 broker with its ZooKeeper (kafka.sh); kill -9 and restart on its data.
    ZooKeeper sessions of 6 s, so that a restart does not wait 18 s for the old one to expire."""

    label = realkafka.LABEL

    def __init__(self, directory: Path, settings: dict[str, str]) -> None:
        self.kafka = realkafka.KafkaBroker(directory)
        self.settings = {"zookeeper.session.timeout.ms": "6000", **settings}

    @property
    def bootstrap(self) -> str:
        return self.kafka.bootstrap

    def start(self) -> KafkaTarget:
        def start_on(port: int) -> None:
            self.kafka.port = port
            self.kafka.script("start", str(port), str(port + 1),
                              *(f"{k}={v}" for k, v in self.settings.items()))

        realkafka.on_free_ports(2, start_on)
        return self

    def kill(self) -> None:
        self.kafka.script("kill", str(self.kafka.port))

    def restart(self) -> None:
        self.kafka.script("broker", str(self.kafka.port))

    def stop(self) -> None:
        self.kafka.stop()

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.kafka.script.log_text().splitlines()[-lines:])


def start_target(name: str, directory: Path, settings: dict[str, str]):
    """A started broker of the named kind; Kafka skips (fails in CI) where it cannot run."""
    if name == "kafka":
        reason = realkafka.unavailable()
        if reason:
            skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
        return KafkaTarget(directory, settings).start()
    return PykTarget(directory, settings).start()


# -- producers ----------------------------------------------------------------------------

def transactional_producer(bootstrap: str, transactional_id: str, **config) -> Producer:
    """An initialised transactional producer (confluent-kafka)."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": 60000, "log_level": 3, **config})
    producer.init_transactions(WAIT_SECONDS)
    return producer


def send(producer: Producer, topic: str, records) -> None:
    """Produces (partition, value) records and waits until every one is acknowledged."""
    errors: list = []
    for partition, value in records:
        producer.produce(topic, value=value, partition=partition,
                         on_delivery=lambda error, _: errors.append(error))
    assert producer.flush(WAIT_SECONDS) == 0, "records left undelivered"
    assert errors == [None] * len(records), errors


def commit_in_transaction(bootstrap: str, transactional_id: str, topic: str, records) -> None:
    """A new producer with the transactional id (init_transactions fences and aborts whatever
    an earlier one left open) commits the (partition, value) records in one transaction."""
    producer = transactional_producer(bootstrap, transactional_id)
    producer.begin_transaction()
    send(producer, topic, records)
    producer.commit_transaction(WAIT_SECONDS)


OPEN_TRANSACTION = textwrap.dedent("""
    import sys, time
    from confluent_kafka import Producer
    bootstrap, transactional_id, timeout_ms, topic, *records = sys.argv[1:]
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": int(timeout_ms)})
    producer.init_transactions(30)
    producer.begin_transaction()
    for record in records:
        partition, value = record.split(":", 1)
        producer.produce(topic, value=value.encode(), partition=int(partition))
    assert producer.flush(30) == 0
    print("SENT", flush=True)
    time.sleep(3600)
""")


class OpenTransaction:
    """A transactional producer in a process of its own that sends (partition, value) records
    in a transaction, sees them acknowledged and then never commits: it only waits to be
    killed (kill -9), so that nothing but the broker can end its transaction."""

    def __init__(self, bootstrap: str, transactional_id: str, topic: str, records,
                 transaction_timeout_ms: int) -> None:
        args = [bootstrap, transactional_id, str(transaction_timeout_ms), topic,
                *(f"{p}:{v.decode()}" for p, v in records)]
        self.process = subprocess.Popen([sys.executable, "-c", OPEN_TRANSACTION, *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if line.strip() != "SENT":
            self.kill()
            raise AssertionError(f"the producer did not send: {line}{self.process.stderr.read()}")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


# -- reading ------------------------------------------------------------------------------

def read_values(bootstrap: str, topic: str, isolation: str, partitions: int = 1
                ) -> dict[int, list[bytes]]:
    """{partition: values} of every record a consumer with the isolation level reads from the
    beginning up to where it reports the partition's end (the last stable offset for
    read_committed, the high watermark for read_uncommitted)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": isolation, "fetch.wait.max.ms": 50,
                         "log_level": 3})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    values: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    at_end: set[int] = set()
    try:
        while len(at_end) < partitions:
            message = consumer.poll(WAIT_SECONDS)
            assert message is not None, f"{topic}: no end of partition reported"
            if message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                at_end.add(message.partition())
            else:
                values[message.partition()].append(message.value())
    finally:
        consumer.close()
    return values


def list_offset(bootstrap: str, topic: str, isolation: str, partition: int = 0) -> int:
    """ListOffsets (v7) for the latest offset: the high watermark under read_uncommitted, the
    last stable offset under read_committed."""
    request = ListOffsets(
        replica_id=-1, isolation_level=int(isolation == READ_COMMITTED),
        topics=[ListOffsets.ListOffsetsTopic(name=topic, partitions=[
            ListOffsets.ListOffsetsPartition(partition_index=partition, timestamp=LATEST)])])
    with WireClient(bootstrap) as client:
        [answer] = client.request(ApiKey.LIST_OFFSETS, 7, request).topics[0].partitions
    assert answer.error_code == 0, answer
    return answer.offset


def stable_and_end(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """(last stable offset, high watermark) of the partition."""
    return (list_offset(bootstrap, topic, READ_COMMITTED, partition),
            list_offset(bootstrap, topic, READ_UNCOMMITTED, partition))


def transaction_coordinator(bootstrap: str, transactional_id: str) -> int:
    """The node id of the transactional id's coordinator (FindCoordinator v4, key type 1), as
    the first broker of `bootstrap` knows it."""
    request = FindCoordinator(key_type=COORDINATOR_KEY_TRANSACTION,
                              coordinator_keys=[transactional_id])
    with WireClient(bootstrap.split(",")[0]) as client:
        [found] = client.request(ApiKey.FIND_COORDINATOR, 4, request).coordinators
    assert found.error_code == 0, found
    return found.node_id


def describe_transaction(bootstrap: str, transactional_id: str):
    """DescribeTransactions (v0) of the transactional id, asked of the first broker of
    `bootstrap`: its TransactionState (error_code NONE from the id's coordinator, NOT_COORDINATOR
    or COORDINATOR_LOAD_IN_PROGRESS from another broker), with transaction_state in Kafka's names
    (Ongoing, PrepareCommit, CompleteCommit, ...), producer_id, producer_epoch and topics."""
    request = DescribeTransactions(transactional_ids=[transactional_id])
    with WireClient(bootstrap.split(",")[0]) as client:
        [state] = client.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, request).transaction_states
    return state


def wait_for_committed(bootstrap: str, topic: str, partitions: int,
                       expected: dict[int, list[bytes]],
                       before: dict[int, list[bytes]] | None = None) -> None:
    """Reads the topic with read_committed until every partition holds `expected`. The markers
    of a committed transaction reach its partitions just after the producer's commit returns,
    each partition on its own: until then a partition reads as `before` (by default: a prefix of
    `expected`), never with part of a transaction."""
    def arrived() -> bool:
        got = read_values(bootstrap, topic, READ_COMMITTED, partitions)
        for p in range(partitions):
            allowed = (before[p],) if before else tuple(
                expected[p][:n] for n in range(len(expected[p]) + 1))
            assert got[p] == expected[p] or got[p] in allowed, \
                f"partition {p} read with read_committed: {got[p]}"
        return got == expected

    wait_until(arrived, f"the committed transactions on {topic}", timeout=60)
