"""A group consumer of one client library in a process of its own, so that a test can kill it
without warning (SIGKILL) or close it cleanly.

    python -m tests.coordinator.member_process LIBRARY BOOTSTRAP GROUP TOPIC SESSION_MS [STRATEGY]

It subscribes to TOPIC in GROUP and prints one JSON object per line on stdout:
{"assignment": [partitions]} whenever its assignment changes, and with confluent-kafka also
{"assign": [...]} / {"revoke": [...]} for each rebalance callback (incremental ones with
cooperative-sticky). A line "close" on stdin closes the consumer (leaving the group) and exits.
"""
from __future__ import annotations

import asyncio
import json
import sys
import threading


def emit(**event) -> None:
    print(json.dumps(event), flush=True)


def watch_stdin() -> threading.Event:
    closing = threading.Event()

    def read() -> None:
        for line in sys.stdin:
            if line.strip() == "close":
                break
        closing.set()
    threading.Thread(target=read, daemon=True).start()
    return closing


class AssignmentReporter:
    def __init__(self) -> None:
        self.last = None

    def report(self, partitions) -> None:
        current = sorted(partitions)
        if current != self.last:
            self.last = current
            emit(assignment=current)


def run_kafka_python(bootstrap, group, topic, session_ms, strategy, closing) -> None:
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    assignors = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                             session_timeout_ms=session_ms, heartbeat_interval_ms=session_ms // 6,
                             partition_assignment_strategy=[assignors[strategy]],
                             auto_offset_reset="earliest", enable_auto_commit=False)
    consumer.subscribe([topic])
    reporter = AssignmentReporter()
    while not closing.is_set():
        consumer.poll(timeout_ms=100)
        reporter.report(tp.partition for tp in consumer.assignment())
    consumer.close()


def run_confluent(bootstrap, group, topic, session_ms, strategy, closing) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "session.timeout.ms": session_ms,
                         "heartbeat.interval.ms": session_ms // 6,
                         "partition.assignment.strategy": strategy,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic],
                       on_assign=lambda c, ps: emit(assign=sorted(p.partition for p in ps)),
                       on_revoke=lambda c, ps: emit(revoke=sorted(p.partition for p in ps)))
    reporter = AssignmentReporter()
    while not closing.is_set():
        consumer.poll(0.1)
        reporter.report(tp.partition for tp in consumer.assignment())
    consumer.close()


def run_aiokafka(bootstrap, group, topic, session_ms, strategy, closing) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    assignors = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}

    async def main() -> None:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                    session_timeout_ms=session_ms,
                                    heartbeat_interval_ms=session_ms // 6,
                                    partition_assignment_strategy=[assignors[strategy]],
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        reporter = AssignmentReporter()
        try:
            while not closing.is_set():
                await consumer.getmany(timeout_ms=100)
                reporter.report(tp.partition for tp in consumer.assignment())
        finally:
            await consumer.stop()
    asyncio.run(main())


DRIVERS = {"kafka-python": run_kafka_python, "confluent-kafka": run_confluent,
           "aiokafka": run_aiokafka}

if __name__ == "__main__":
    library, bootstrap, group, topic, session_ms = sys.argv[1:6]
    strategy = sys.argv[6] if len(sys.argv) > 6 else "range"
    DRIVERS[library](bootstrap, group, topic, int(session_ms), strategy, watch_stdin())
    emit(closed=True)
