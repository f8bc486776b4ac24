"""The history checker on hand-made histories: each anomaly of Jepsen's Kafka queue workload is
found and named with the events around it, and clean histories pass."""

from __future__ import annotations

import threading

from tests.history import (
    ABORTED_READ,
    ACKED_BUT_TRUNCATED,
    COMMIT_BEYOND_END,
    DISAGREEING_OFFSETS,
    DUPLICATED,
    LOST,
    READ_UNCOMMITTED,
    REORDERED,
    UNCOMMITTED_READ,
    WRITTEN_AFTER_FAILURE,
    FinalLog,
    History,
    Polled,
    check,
)

TOPIC = "events"


def acked(history: History, value: str, offset: int, partition: int = 0, workload: str = "idempotent") -> None:
    history.send_invoked(workload, TOPIC, value)
    history.send_acknowledged(workload, TOPIC, value, partition=partition, offset=offset)


def log_of(*values: str, partition: int = 0, isolation: str = "read_committed") -> FinalLog:
    log = FinalLog(isolation)
    for offset, value in enumerate(values):
        log.add(TOPIC, partition, offset, value)
    return log


def transaction(history: History, txn: int, values: list[str], first_offset: int, *, commit: bool) -> None:
    history.txn_begun("transactional", txn)
    for index, value in enumerate(values):
        history.send_invoked("transactional", TOPIC, value, transactional=True)
        history.send_acknowledged("transactional", TOPIC, value, partition=0, offset=first_offset + index)
    if commit:
        history.txn_committed("transactional", txn, values)
    else:
        history.txn_aborted("transactional", txn, values)


def clean_history() -> tuple[History, FinalLog, FinalLog]:
    """Two acknowledged writes, a committed and an aborted transaction, polls and commits."""
    history = History()
    acked(history, "idempotent-0", 0)
    acked(history, "idempotent-1", 1)
    transaction(history, 1, ["transactional-0", "transactional-1"], 2, commit=True)
    transaction(history, 2, ["transactional-2"], 5, commit=False)  # offset 4: the commit marker
    history.polled("consumer-0", TOPIC, "idempotent-0", partition=0, offset=0)
    history.polled("consumer-1", TOPIC, "idempotent-0", partition=0, offset=0)  # re-read after a rebalance
    history.polled("consumer-1", TOPIC, "transactional-1", partition=0, offset=3)
    history.committed("history-group", "consumer-1", TOPIC, partition=0, offset=4)
    committed = FinalLog("read_committed")
    uncommitted = FinalLog(READ_UNCOMMITTED)
    for offset, value in enumerate(["idempotent-0", "idempotent-1", "transactional-0", "transactional-1"]):
        committed.add(TOPIC, 0, offset, value)
        uncommitted.add(TOPIC, 0, offset, value)
    uncommitted.add(TOPIC, 0, 5, "transactional-2")
    committed.end_offsets[(TOPIC, 0)] = uncommitted.end_offsets[(TOPIC, 0)] = 7
    return history, committed, uncommitted


def test_a_clean_history_passes() -> None:
    history, committed, uncommitted = clean_history()
    verdict = check(history, committed, uncommitted)
    assert verdict.ok, verdict.summary()
    assert verdict.summary().startswith("history check: OK")


def test_a_clean_history_passes_without_the_read_uncommitted_log() -> None:
    history, committed, _ = clean_history()
    verdict = check(history, committed)
    assert verdict.ok, verdict.summary()


def test_failed_and_unknown_writes_may_be_absent_or_present() -> None:
    history = History()
    history.send_invoked("idempotent", TOPIC, "idempotent-0")
    history.send_failed("idempotent", TOPIC, "idempotent-0", error="_MSG_TIMED_OUT")
    history.send_invoked("idempotent", TOPIC, "idempotent-1")
    history.send_failed("idempotent", TOPIC, "idempotent-1", error="_MSG_TIMED_OUT")
    history.txn_indeterminate("transactional", 1, ["transactional-0"], error="_TIMED_OUT")
    verdict = check(history, log_of("idempotent-1", "transactional-0"))
    assert verdict.ok, verdict.summary()


def test_an_acknowledged_write_missing_from_the_log_is_lost() -> None:
    history = History()
    acked(history, "idempotent-0", 0)
    history.note("cut the leader from its followers")
    acked(history, "idempotent-1", 1)
    verdict = check(history, log_of("idempotent-0"))
    assert verdict.kinds == {LOST}
    summary = verdict.summary()
    assert "lost" in summary and "'idempotent-1'" in summary
    assert "cut the leader from its followers" in summary  # the events around it


def test_a_committed_transaction_missing_from_the_log_is_lost() -> None:
    history = History()
    history.txn_begun("transactional", 1)
    history.send_invoked("transactional", TOPIC, "transactional-0", transactional=True)
    history.txn_committed("transactional", 1, ["transactional-0"])
    verdict = check(history, log_of())
    assert verdict.kinds == {LOST}


def test_a_value_at_two_offsets_is_duplicated() -> None:
    history = History()
    acked(history, "idempotent-0", 0)
    verdict = check(history, log_of("idempotent-0", "idempotent-0"))
    assert verdict.kinds == {DUPLICATED}
    assert "[0]@0, events[0]@1" in verdict.summary()


def test_acknowledged_values_out_of_send_order_are_reordered() -> None:
    history = History()
    history.send_invoked("idempotent", TOPIC, "idempotent-0")
    history.send_invoked("idempotent", TOPIC, "idempotent-1")
    history.send_acknowledged("idempotent", TOPIC, "idempotent-1", partition=0, offset=0)
    history.send_acknowledged("idempotent", TOPIC, "idempotent-0", partition=0, offset=1)
    verdict = check(history, log_of("idempotent-1", "idempotent-0"))
    assert verdict.kinds == {REORDERED}
    assert "sent 'idempotent-0' before 'idempotent-1'" in verdict.summary()


def test_order_across_partitions_is_not_an_anomaly() -> None:
    history = History()
    history.send_invoked("idempotent", TOPIC, "idempotent-0")
    history.send_invoked("idempotent", TOPIC, "idempotent-1")
    history.send_acknowledged("idempotent", TOPIC, "idempotent-1", partition=1, offset=0)
    history.send_acknowledged("idempotent", TOPIC, "idempotent-0", partition=0, offset=5)
    final = log_of(*[f"other-{n}" for n in range(5)], "idempotent-0")
    final.add(TOPIC, 1, 0, "idempotent-1")
    assert check(history, final).ok


def test_an_acknowledgement_without_an_offset_is_checked_for_loss_only() -> None:
    """librdkafka acknowledges a batch whose response was lost without an offset ("implicit ack")
    once a later batch of the partition is acknowledged."""
    history = History()
    acked(history, "idempotent-0", 0)
    history.send_invoked("idempotent", TOPIC, "idempotent-1")
    history.send_acknowledged("idempotent", TOPIC, "idempotent-1", partition=0, offset=None)
    acked(history, "idempotent-2", 2)
    assert check(history, log_of("idempotent-0", "idempotent-1", "idempotent-2")).ok

    verdict = check(history, log_of("idempotent-0", "other", "idempotent-2"))
    assert verdict.kinds == {LOST}
    assert "'idempotent-1' acknowledged at events[0]@? is not in the final log" in verdict.summary()


def test_reading_an_aborted_transaction_under_read_committed_is_an_aborted_read() -> None:
    history = History()
    transaction(history, 1, ["transactional-0"], 0, commit=False)
    history.polled("consumer-0", TOPIC, "transactional-0", partition=0, offset=0)
    uncommitted = log_of("transactional-0", isolation=READ_UNCOMMITTED)
    verdict = check(history, log_of(), uncommitted)
    assert verdict.kinds == {ABORTED_READ}
    assert "consumer-0 read 'transactional-0' of aborted transactional txn 1" in verdict.summary()


def test_an_aborted_transaction_in_the_read_committed_log_is_an_aborted_read() -> None:
    history = History()
    transaction(history, 1, ["transactional-0"], 0, commit=False)
    verdict = check(history, log_of("transactional-0"))
    assert verdict.kinds == {ABORTED_READ}


def test_reading_aborted_records_under_read_uncommitted_is_allowed() -> None:
    history = History()
    transaction(history, 1, ["transactional-0"], 0, commit=False)
    history.polled("audit", TOPIC, "transactional-0", partition=0, offset=0, isolation=READ_UNCOMMITTED)
    assert check(history, log_of(), log_of("transactional-0", isolation=READ_UNCOMMITTED)).ok


def test_reading_a_transaction_that_never_committed_is_an_uncommitted_read() -> None:
    history = History()
    history.txn_begun("transactional", 1)
    history.send_invoked("transactional", TOPIC, "transactional-0", transactional=True)
    history.send_acknowledged("transactional", TOPIC, "transactional-0", partition=0, offset=0)
    history.polled("consumer-0", TOPIC, "transactional-0", partition=0, offset=0)
    history.txn_indeterminate("transactional", 1, ["transactional-0"], error="fenced")
    uncommitted = log_of("transactional-0", isolation=READ_UNCOMMITTED)
    verdict = check(history, log_of(), uncommitted)
    assert verdict.kinds == {UNCOMMITTED_READ}


def test_a_poll_at_an_offset_that_now_holds_another_value_disagrees() -> None:
    history = History()
    acked(history, "idempotent-0", 0)
    history.polled("consumer-0", TOPIC, "stale-0", partition=0, offset=0)
    verdict = check(history, log_of("idempotent-0"))
    assert verdict.kinds == {DISAGREEING_OFFSETS}
    assert "holds 'idempotent-0'" in verdict.summary()


def test_reading_a_write_that_was_later_truncated_disagrees() -> None:
    history = History()
    history.send_invoked("idempotent", TOPIC, "idempotent-0")
    history.polled("consumer-0", TOPIC, "idempotent-0", partition=0, offset=3)
    history.send_failed("idempotent", TOPIC, "idempotent-0", error="_MSG_TIMED_OUT")
    verdict = check(history, log_of())
    assert verdict.kinds == {DISAGREEING_OFFSETS}
    assert "not in the final log (truncated)" in verdict.summary()


def test_two_consumers_reading_different_values_at_one_offset_disagree() -> None:
    history = History()
    history.polled("consumer-0", TOPIC, "a-0", partition=0, offset=0)
    history.polled("consumer-1", TOPIC, "b-0", partition=0, offset=0)
    verdict = check(history, log_of("a-0", "b-0"))
    assert DISAGREEING_OFFSETS in verdict.kinds
    assert "consumer-0 read 'a-0' and consumer-1 read 'b-0'" in verdict.summary()


def test_an_acknowledgement_whose_offset_holds_another_value_is_acked_but_truncated() -> None:
    history = History()
    acked(history, "idempotent-0", 0)
    verdict = check(history, log_of("zombie-0", "idempotent-0"))
    assert verdict.kinds == {ACKED_BUT_TRUNCATED}
    assert "holds 'zombie-0'" in verdict.summary()


def test_a_write_reported_never_written_that_is_in_the_log() -> None:
    history = History()
    history.send_invoked("idempotent", TOPIC, "idempotent-0")
    history.send_failed("idempotent", TOPIC, "idempotent-0", error="_PURGE_QUEUE", definitely_not_written=True)
    verdict = check(history, log_of("idempotent-0"))
    assert verdict.kinds == {WRITTEN_AFTER_FAILURE}


def test_a_committed_offset_beyond_the_log_end() -> None:
    history = History()
    acked(history, "idempotent-0", 0)
    history.polled("consumer-0", TOPIC, "idempotent-0", partition=0, offset=0)
    history.committed("history-group", "consumer-0", TOPIC, partition=0, offset=1)
    history.committed("history-group", "consumer-0", TOPIC, partition=0, offset=9)
    verdict = check(history, log_of("idempotent-0"))
    assert verdict.kinds == {COMMIT_BEYOND_END}
    assert "committed offset 9 of events[0], whose log ends at 1" in verdict.summary()


def test_the_summary_names_each_anomaly_with_the_events_around_it() -> None:
    history = History()
    for n in range(10):
        acked(history, f"idempotent-{n}", n)
    history.note("healed")
    verdict = check(history, log_of(*[f"idempotent-{n}" for n in range(5)]))
    summary = verdict.summary(examples=2)
    assert summary.splitlines()[0] == "history check: ANOMALIES: lost x5"
    assert "lost: ... and 3 more" in summary
    assert "> #" in summary  # the anomaly's own events are marked among their neighbours
    assert "healed" in summary


def test_the_history_is_thread_safe_and_ordered() -> None:
    history = History()

    def poll_many(consumer: str) -> None:
        for offset in range(500):
            history.polled(consumer, TOPIC, f"v-{offset}", partition=0, offset=offset)

    threads = [threading.Thread(target=poll_many, args=(f"consumer-{k}",)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = history.events()
    assert len(events) == 2000
    assert [event.seq for event in events] == list(range(2000))
    assert all(a.time <= b.time for a, b in zip(events, events[1:]))
    assert len(history.of_type(Polled)) == 2000
