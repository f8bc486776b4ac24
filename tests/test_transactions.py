"""Acceptance (issue 12): transactions on one broker, as Apache Kafka 3.9 does them, where the
compatibility suite's client scenarios cannot go: a transaction whose producer died is aborted by
the broker once `transaction.timeout.ms` passes, and the last stable offset moves on; a broker
killed with kill -9 in the middle of a transaction restarts with the transaction still open (its
LSO held), and a producer that re-initialises with the same transactional id aborts it and
commits; a Java consume-transform-produce loop (sendOffsetsToTransaction with the consumer's
group metadata) killed with kill -9 in the middle of a transaction and restarted leaves every
input record in the output exactly once for read_committed readers, and the group's offsets at
the end of the input.

Every test needs pykbroker's transaction support (marker `transactions`). The broker checks
for timed-out transactions every 500 ms (`transaction.abort.timed.out.transaction.cleanup.
interval.ms`; Kafka's default is 10 s). `TXN_TARGETS=pykbroker,kafka` runs the module against
Kafka 3.9.0 as well (tests/txn_support.py), which is how each test was validated.
"""
from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from compat import java
from pykbroker.testkit.waiting import wait_until

from .client_helpers import create_topic, produce_all
from .txn_support import (
    READ_COMMITTED, READ_UNCOMMITTED, OpenTransaction, commit_in_transaction, read_values,
    stable_and_end, start_target, target_names, wait_for_committed,
)

pytestmark = pytest.mark.transactions

BROKER_SETTINGS = {
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
    "group.initial.rebalance.delay.ms": "0",
}
LOOP_SOURCE = Path(__file__).parent / "java" / "ExactlyOnceLoop.java"


@pytest.fixture(scope="module", params=target_names())
def target(request, tmp_path_factory):
    running = start_target(request.param, tmp_path_factory.mktemp(f"txn-{request.param}"),
                           BROKER_SETTINGS)
    yield running
    running.stop()


@pytest.fixture
def topic(request) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name).strip("-")[:120]


def settled(bootstrap: str, topic: str, partition: int = 0):
    """(last stable offset, high watermark), or None while the broker cannot answer (just
    restarted)."""
    try:
        return stable_and_end(bootstrap, topic, partition)
    except (AssertionError, OSError, EOFError):
        return None


# -- a transaction left open -------------------------------------------------------------------

def test_a_transaction_left_open_past_its_timeout_is_aborted_by_the_broker(target, topic):
    """The producer sends two records in a transaction with transaction.timeout.ms=3000 and is
    killed; another producer then commits two records after them. Once the timeout passes the
    coordinator aborts the first transaction: the last stable offset reaches the high watermark
    (6: two records, the other transaction's two and its COMMIT marker, the ABORT marker), and
    read_committed consumers see the committed records and never the aborted ones."""
    create_topic(target.bootstrap, topic, 1)
    abandoned = OpenTransaction(target.bootstrap, f"{topic}-abandoned", topic,
                                [(0, b"abandoned-0"), (0, b"abandoned-1")],
                                transaction_timeout_ms=3000)
    abandoned.kill()  # kill -9: only the broker can end its transaction now
    commit_in_transaction(target.bootstrap, f"{topic}-later", topic,
                          [(0, b"later-0"), (0, b"later-1")])

    wait_until(lambda: stable_and_end(target.bootstrap, topic) == (6, 6),
               "the broker to abort the timed-out transaction", timeout=60)

    assert read_values(target.bootstrap, topic, READ_COMMITTED) == {0: [b"later-0", b"later-1"]}
    assert read_values(target.bootstrap, topic, READ_UNCOMMITTED) == {
        0: [b"abandoned-0", b"abandoned-1", b"later-0", b"later-1"]}


# -- kill -9 of the broker ---------------------------------------------------------------------

def test_after_kill_9_of_the_broker_mid_transaction_the_transaction_stays_invisible(
        target, topic):
    """A committed transaction, then one that has sent records to both partitions and not
    committed (its producer killed too): the LSO of each partition stays at the open
    transaction's first record (2) before and after the broker is killed (-9) and restarted,
    read_committed consumers read only the committed records, and a new producer with the same
    transactional id re-initialises (aborting the open transaction) and commits."""
    transactional_id = f"{topic}-txn"
    create_topic(target.bootstrap, topic, 2)
    commit_in_transaction(target.bootstrap, transactional_id, topic,
                          [(0, b"before-0"), (1, b"before-1")])
    partial = OpenTransaction(target.bootstrap, transactional_id, topic,
                              [(0, b"partial-0"), (1, b"partial-1")],
                              transaction_timeout_ms=300_000)
    partial.kill()
    for p in (0, 1):  # record 0, COMMIT marker 1, the open transaction's record 2
        assert stable_and_end(target.bootstrap, topic, p) == (2, 3)

    target.kill()
    target.restart()

    for p in (0, 1):
        wait_until(lambda p=p: settled(target.bootstrap, topic, p) == (2, 3),
                   f"partition {p} back with its transaction still open", timeout=60)
    assert read_values(target.bootstrap, topic, READ_COMMITTED, 2) == {
        0: [b"before-0"], 1: [b"before-1"]}

    commit_in_transaction(target.bootstrap, transactional_id, topic,
                          [(0, b"after-0"), (1, b"after-1")])

    wait_for_committed(target.bootstrap, topic, 2, {
        0: [b"before-0", b"after-0"], 1: [b"before-1", b"after-1"]})
    assert read_values(target.bootstrap, topic, READ_UNCOMMITTED, 2) == {
        0: [b"before-0", b"partial-0", b"after-0"], 1: [b"before-1", b"partial-1", b"after-1"]}
    for p in (0, 1):  # ... ABORT marker 3, record 4, COMMIT marker 5
        assert stable_and_end(target.bootstrap, topic, p) == (6, 6)


# -- a Java consume-transform-produce loop killed with kill -9 ----------------------------------

@pytest.fixture(scope="module")
def loop_classes(tmp_path_factory) -> Path:
    return java.compile_sources([LOOP_SOURCE], tmp_path_factory.mktemp("eos-loop"))


class Loop:
    """ExactlyOnceLoop.java running in a JVM of its own; its output lines are collected."""

    def __init__(self, classes: Path, *args: str) -> None:
        cp = ":".join(map(str, [classes, *java.class_path()]))
        self.process = subprocess.Popen(
            [java.tool("java"), *java.JVM_OPTIONS, "-cp", cp, "ExactlyOnceLoop", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def wait_for(self, line: str, timeout: float = 120) -> None:
        wait_until(lambda: line in self.lines or self.process.poll() is not None,
                   f"the loop to print {line}", timeout=timeout)
        assert line in self.lines, self.output()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def finish(self, timeout: float = 150) -> int:
        self.process.wait(timeout)
        self.reader.join(5)
        return self.process.returncode

    def output(self) -> str:
        return "\n".join(self.lines) + "\n" + java.without_logging_noise(
            self.process.stderr.read() if self.process.poll() is not None else "")


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "isolation.level": READ_COMMITTED})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)],
                                   timeout=30)
        return [tp.offset for tp in found]
    finally:
        consumer.close()


def test_a_java_exactly_once_loop_killed_midway_and_restarted_outputs_every_record_once(
        loop_classes, target, topic):
    """60 input records over 2 partitions; the loop commits two transactions of up to 10
    records, then is killed (-9) with a third transaction's output and offsets sent but not
    committed; a new loop process with the same group and transactional id takes over. The
    output read with read_committed holds each input record, transformed, exactly once and in
    input order per partition; the group's committed offsets are at the end of the input; and
    read_uncommitted shows the killed transaction's records too (so the kill did leave one
    open)."""
    source, output, group, transactional_id = topic, f"{topic}-out", f"{topic}-group", \
        f"{topic}-txn"
    create_topic(target.bootstrap, source, 2)
    create_topic(target.bootstrap, output, 2)
    produce_all(target.bootstrap, source,
                [(p, None, f"in-{p}-{i}".encode()) for i in range(30) for p in (0, 1)])
    args = (target.bootstrap, source, output, group, transactional_id, "2")

    killed = Loop(loop_classes, *args, "2")
    killed.wait_for("HANGING")
    killed.kill()
    restarted = Loop(loop_classes, *args)
    assert restarted.finish() == 0, restarted.output()
    assert "DONE" in restarted.lines

    expected = {p: [f"out-in-{p}-{i}".encode() for i in range(30)] for p in (0, 1)}
    wait_for_committed(target.bootstrap, output, 2, expected)
    assert committed_offsets(target.bootstrap, group, source, 2) == [30, 30]
    uncommitted = read_values(target.bootstrap, output, READ_UNCOMMITTED, 2)
    assert sum(map(len, uncommitted.values())) > 60
