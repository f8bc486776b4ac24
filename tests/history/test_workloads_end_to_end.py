"""The recording workloads over real clients, run briefly without faults, on one pykbroker and on
one Kafka 3.9.0 broker: an idempotent producer, a transactional producer that aborts some of its
transactions and a churning read_committed consumer group leave a history that passes the checker
against the final log, on both."""

from __future__ import annotations

import pytest

from compat import realkafka
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.waiting import wait_until
from tests.ci import skip_or_fail_in_ci
from tests.history import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    Committed,
    ConsumerGroupWorkload,
    History,
    Polled,
    SendAcknowledged,
    TxnAborted,
    TxnCommitted,
    check,
    create_topic,
    final_read,
    queue_workloads,
    running,
    wait_for_progress,
)

TOPIC = "queue"
# few partitions of the internal topics, so that a fresh broker creates them quickly
SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
}


class KafkaWithSettings(realkafka.KafkaBroker):
    def extra_settings(self, port: int) -> dict[str, str]:
        return SETTINGS


@pytest.fixture(scope="module", params=["pykbroker", "kafka"])
def bootstrap(request, tmp_path_factory):
    """The bootstrap of a started broker; Kafka skipped where it cannot run (failed in CI)."""
    if request.param == "kafka":
        reason = realkafka.unavailable()
        if reason:
            skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
        with KafkaWithSettings(tmp_path_factory.mktemp("kafka-history")) as kafka:
            yield kafka.bootstrap
    else:
        with EmbeddedBroker(SETTINGS) as broker:
            yield broker.bootstrap


def test_a_short_run_of_every_workload_passes_the_checker(bootstrap: str) -> None:
    create_topic(bootstrap, TOPIC, partitions=3)
    history = History()
    workloads = queue_workloads(history, bootstrap, TOPIC, consumers=2, churn_every=1.0)
    group = workloads[-1]
    assert isinstance(group, ConsumerGroupWorkload)
    with running(*workloads):
        wait_for_progress(workloads, at_least=5)
        history.note("every workload made progress")
        wait_until(lambda: len(group.all_members) >= 3, "a member left and another joined", timeout=60)
        wait_until(lambda: len(consumers_that_read(history)) >= 2, "two members read records", timeout=60)
        wait_for_progress(workloads, at_least=5)

    verdict = check(
        history,
        final_read(bootstrap, TOPIC, READ_COMMITTED),
        final_read(bootstrap, TOPIC, READ_UNCOMMITTED),
    )
    assert verdict.ok, verdict.summary()
    assert history.of_type(SendAcknowledged)
    assert history.of_type(TxnCommitted) and history.of_type(TxnAborted)
    assert history.of_type(Committed)


def consumers_that_read(history: History) -> set[str]:
    return {poll.consumer for poll in history.of_type(Polled)}
