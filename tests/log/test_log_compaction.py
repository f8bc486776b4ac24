"""Compaction (cleanup.policy=compact): the latest record per key survives, offsets never change."""
import os

from pykbroker.records.batch import DELETE_HORIZON_MASK
from pykbroker.records.compression import GZIP
from pykbroker.records.records import iter_batches

from .helpers import T0, Clock, all_records, batch, open_log, producer_batch, reopen

DAY = 86_400_000


def compacted_log(tmp_path, clock=None, **config):
    settings = {"cleanup.policy": "compact", "segment.bytes": 300, "retention.ms": -1}
    settings.update(config)
    return open_log(tmp_path, clock or Clock(), config=settings)


def put(log, *pairs, **options):
    info = log.append_as_leader(batch(*pairs, **options), leader_epoch=0)
    log.high_watermark = log.log_end_offset
    return info


def close_active_segment(log):
    log.roll()
    log.high_watermark = log.log_end_offset


def latest_values(log) -> dict:
    return {key: (offset, value) for offset, key, value in all_records(log)}


def test_only_the_latest_record_of_each_key_remains_with_its_original_offset(tmp_path):
    log = compacted_log(tmp_path)
    for round_ in range(5):
        put(log, ("a", f"a{round_}"), ("b", f"b{round_}"))
    put(log, ("c", "c0"))
    close_active_segment(log)
    before = latest_values(log)

    stats = log.compact(now_ms=T0)
    assert stats is not None and stats.bytes_written < stats.bytes_read
    records = all_records(log)
    assert [(offset, key) for offset, key, _ in records] == [(8, b"a"), (9, b"b"), (10, b"c")]
    assert latest_values(log) == before
    assert log.log_end_offset == 11


def test_the_active_segment_is_never_compacted(tmp_path):
    log = compacted_log(tmp_path, **{"segment.bytes": 10_000})
    for round_ in range(3):
        put(log, ("a", f"a{round_}"))
    assert log.compact(now_ms=T0) is None
    assert len(all_records(log)) == 3


def test_compaction_stops_at_the_high_watermark(tmp_path):
    log = compacted_log(tmp_path)
    for round_ in range(6):
        put(log, ("a", f"a{round_}"), ("b", "x"))
    close_active_segment(log)
    log.high_watermark = 4
    log.compact(now_ms=T0)
    offsets = [offset for offset, _, _ in all_records(log)]
    assert offsets[:2] == [2, 3] and offsets[2:] == list(range(4, 12))


def test_reading_a_removed_offset_returns_the_next_batch(tmp_path):
    log = compacted_log(tmp_path)
    for round_ in range(4):
        put(log, ("a", f"a{round_}"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    assert [offset for offset, _, _ in all_records(log)] == [3]
    fetch = log.read(1, 1 << 20)
    assert [header.last_offset for header, _ in iter_batches(fetch.read_bytes())][-1] == 3


def test_tombstones_are_kept_until_delete_retention_ms_after_the_first_pass(tmp_path):
    clock = Clock()
    log = compacted_log(tmp_path, clock, **{"delete.retention.ms": DAY})
    put(log, ("a", "1"), ("b", "1"))
    put(log, ("a", None))
    close_active_segment(log)

    log.compact(now_ms=T0)
    assert latest_values(log) == {b"a": (2, None), b"b": (1, b"1")}
    tombstone_batches = [h for h, records in iter_batches(log.read(2, 1 << 20).read_bytes())
                         if any(r.value is None for r in records)]
    assert tombstone_batches[0].attributes & DELETE_HORIZON_MASK
    assert tombstone_batches[0].base_timestamp == T0 + DAY

    put(log, ("c", "1"))
    close_active_segment(log)
    log.compact(now_ms=T0 + DAY - 1)
    assert b"a" in latest_values(log)

    put(log, ("d", "1"))
    close_active_segment(log)
    log.compact(now_ms=T0 + DAY)
    assert set(latest_values(log)) == {b"b", b"c", b"d"}


def test_record_timestamps_survive_the_delete_horizon_rewrite(tmp_path):
    log = compacted_log(tmp_path)
    put(log, ("a", "1", [], T0 + 7), ("b", None, [], T0 + 9))
    put(log, ("a", "2", [], T0 + 11))
    close_active_segment(log)
    log.compact(now_ms=T0 + 100)
    stamped = {record.key: record.timestamp for _, records in iter_batches(log.read(0, 1 << 20).read_bytes())
               for record in records}
    assert stamped == {b"b": T0 + 9, b"a": T0 + 11}


def test_compressed_batches_are_rewritten_with_their_codec(tmp_path):
    log = compacted_log(tmp_path)
    put(log, ("a", "1"), ("b", "1"), ("c", "1"), compression=GZIP)
    put(log, ("a", "2"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    headers = [header for header, _ in iter_batches(log.read(0, 1 << 20).read_bytes())]
    assert headers[0].compression == GZIP
    assert latest_values(log) == {b"a": (3, b"2"), b"b": (1, b"1"), b"c": (2, b"1")}


def test_the_last_batch_of_an_active_producer_stays_as_an_empty_batch(tmp_path):
    log = compacted_log(tmp_path)
    log.append_as_leader(producer_batch(77, 0, 0, 1, prefix="same"), leader_epoch=0)
    log.append_as_leader(batch(("same0", "newer")), leader_epoch=0)
    close_active_segment(log)
    log.compact(now_ms=T0)

    headers = [header for header, _ in iter_batches(log.read(0, 1 << 20).read_bytes())]
    kept = [h for h in headers if h.producer_id == 77]
    assert len(kept) == 1 and kept[0].records_count == 0 and kept[0].base_sequence == 0
    log.flush()
    log.close()
    reopened = reopen(log, clean=True)
    assert reopened.append_as_leader(producer_batch(77, 0, 0, 1), leader_epoch=0).duplicate


def test_small_cleaned_segments_are_merged_by_later_passes(tmp_path):
    log = compacted_log(tmp_path, **{"segment.bytes": 400})
    for round_ in range(20):
        put(log, ("a", f"{round_}"), ("b", f"{round_}"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    segments_after_first_pass = len(log.segments)
    put(log, ("a", "last"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    assert len(log.segments) < segments_after_first_pass
    assert [(offset, key) for offset, key, _ in all_records(log)] == [(39, b"b"), (40, b"a")]
    assert not any(name.endswith((".cleaned", ".swap")) for name in os.listdir(log.directory))


def test_min_compaction_lag_protects_recent_segments(tmp_path):
    log = compacted_log(tmp_path, **{"min.compaction.lag.ms": 10_000})
    for round_ in range(3):
        put(log, ("a", f"{round_}", [], T0 + round_))
    close_active_segment(log)
    assert log.compact(now_ms=T0 + 5_000) is None
    assert log.compact(now_ms=T0 + 20_000) is not None
    assert [offset for offset, _, _ in all_records(log)] == [2]


def test_a_second_pass_without_new_data_has_nothing_to_do(tmp_path):
    log = compacted_log(tmp_path)
    for round_ in range(3):
        put(log, ("a", f"{round_}"))
    close_active_segment(log)
    assert log.compact(now_ms=T0).end_offset == 3
    assert log.compact(now_ms=T0) is None


def test_a_compacted_log_reopens_intact(tmp_path):
    log = compacted_log(tmp_path)
    for round_ in range(6):
        put(log, ("a", f"{round_}"), ("b", f"{round_}"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    expected = all_records(log)
    log.flush()
    log.close()
    assert all_records(reopen(log, clean=True)) == expected
    assert all_records(reopen(log, clean=False, recovery_point=0)) == expected


def test_regions_read_before_a_compaction_stay_readable(tmp_path):
    log = compacted_log(tmp_path)
    for round_ in range(4):
        put(log, ("a", f"{round_}"))
    close_active_segment(log)
    region = log.read(0, 1 << 20).regions[0]
    before = region.read_bytes()
    log.compact(now_ms=T0)
    assert region.read_bytes() == before


def test_a_full_offset_map_ends_the_pass_early_and_the_next_pass_goes_on(tmp_path):
    log = compacted_log(tmp_path)
    for round_ in range(2):
        for key in "abcd":
            put(log, (key, f"{key}{round_}"))
    close_active_segment(log)

    first = log.compact(now_ms=T0, max_map_entries=2)
    assert first.end_offset < log.log_end_offset
    while log.compact(now_ms=T0, max_map_entries=2) is not None:
        pass
    assert {key: value for _, key, value in all_records(log)} == {
        b"a": b"a1", b"b": b"b1", b"c": b"c1", b"d": b"d1"}
    assert [offset for offset, _, _ in all_records(log)] == [4, 5, 6, 7]


# -- record-less batches and emptied segments ---------------------------------------------

def batches_read(log, offset, **options):
    """(header, records) of every batch a read from `offset` returns."""
    return list(iter_batches(log.read(offset, 1 << 20, **options).read_bytes()))


def one_batch_per_segment(tmp_path, rounds, **config):
    """A log of `rounds` batches of keys a..e, one batch a segment, then an empty active one."""
    log = compacted_log(tmp_path, **{"segment.bytes": 200, **config})
    for round_ in range(rounds):
        put(log, *[(key, f"{key}{round_}") for key in "abcde"])
    close_active_segment(log)
    return log


def test_batches_emptied_by_compaction_are_dropped_with_their_segments(tmp_path):
    log = one_batch_per_segment(tmp_path, 8)
    assert len(log.segments) == 9
    log.compact(now_ms=T0)

    assert [(offset, key) for offset, key, _ in all_records(log)] == [
        (35, b"a"), (36, b"b"), (37, b"c"), (38, b"d"), (39, b"e")]
    # the log's first segment stays (empty: it keeps the log start offset); the others went
    assert [(s.base_offset, s.size > 0) for s in log.segments] == [(0, False), (35, True), (40, False)]
    assert log.log_start_offset == 0
    for offset in range(log.log_end_offset):
        headers = [header for header, _ in batches_read(log, offset)]
        assert all(header.records_count > 0 for header in headers)
        assert headers[0].base_offset == 35
    assert not leftovers(log)


def test_no_cleaned_group_keeps_its_last_batch_when_it_lost_all_records(tmp_path):
    log = one_batch_per_segment(tmp_path, 6, **{"segment.bytes": 300})  # two batches a segment
    assert len(log.segments) == 4
    log.compact(now_ms=T0)
    headers = [header for header, _ in batches_read(log, 0)]
    assert [(h.base_offset, h.records_count) for h in headers] == [(25, 5)]
    assert [s.base_offset for s in log.segments if s.size > 0] == [20]


def test_the_batch_ending_at_the_first_uncleanable_offset_stays_even_when_emptied(tmp_path):
    log = compacted_log(tmp_path, **{"segment.bytes": 200, "cleanup.policy": "delete"})
    put(log, ("a", "1"), ("b", "1"))
    put(log, (None, "keyless"), (None, "keyless"))  # written before the topic turned compacted
    close_active_segment(log)
    log.update_config({"cleanup.policy": "compact"})
    log.compact(now_ms=T0)
    headers = [header for header, _ in batches_read(log, 0)]
    assert [(h.base_offset, h.last_offset, h.records_count) for h in headers] == [(0, 1, 2), (2, 3, 0)]
    assert log.log_end_offset == 4


def test_reads_inside_a_compaction_gap_return_the_next_batch_of_a_later_segment(tmp_path):
    log = compacted_log(tmp_path, **{"segment.bytes": 200})
    put(log, ("keep", "x"))
    for round_ in range(6):
        put(log, ("a", f"{round_}"), ("b", f"{round_}"))
    put(log, ("c", "1"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    assert [(offset, key) for offset, key, _ in all_records(log)] == [
        (0, b"keep"), (11, b"a"), (12, b"b"), (13, b"c")]
    for offset in range(1, 14):
        headers = [header for header, _ in batches_read(log, offset)]
        assert headers and headers[0].last_offset >= offset and headers[0].records_count > 0
    # within the high watermark and the last stable offset too
    assert [h.base_offset for h, _ in batches_read(log, 3, max_offset=13)] == [11]
    assert [h.base_offset for h, _ in batches_read(log, 3, max_offset=13, read_committed=True)] == [11]
    assert batches_read(log, 3, max_offset=11) == []


def test_an_idempotent_producer_keeps_its_last_batch_but_not_earlier_ones(tmp_path):
    log = compacted_log(tmp_path, **{"segment.bytes": 200})
    for sequence in range(3):
        log.append_as_leader(producer_batch(77, 0, sequence, 1, prefix="same"), leader_epoch=0)
    put(log, ("same0", "newer"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    headers = [header for header, _ in batches_read(log, 0)]
    assert [(h.base_offset, h.producer_id, h.records_count) for h in headers] == [(2, 77, 0), (3, -1, 1)]


def test_an_empty_first_segment_is_merged_into_the_next_group_by_a_later_pass(tmp_path):
    log = one_batch_per_segment(tmp_path, 4)
    log.compact(now_ms=T0)
    assert [(s.base_offset, s.size > 0) for s in log.segments] == [(0, False), (15, True), (20, False)]
    put(log, ("f", "1"))
    close_active_segment(log)
    log.compact(now_ms=T0)
    assert [s.base_offset for s in log.segments][0] == 0
    assert [(offset, key) for offset, key, _ in all_records(log)][-2:] == [(19, b"e"), (20, b"f")]
    assert log.log_start_offset == 0


# -- crash safety of the swap -------------------------------------------------------------

class SimulatedCrash(Exception):
    pass


def three_groups(path, name="topic-0"):
    """Groups of four one-batch segments: the first keeps only k0 (its tail is dropped), the
    second loses every record, the third keeps the latest a..e."""
    log = open_log(path, Clock(), name=name, config={"cleanup.policy": "compact", "segment.bytes": 200})
    put(log, ("k0", "x"), *[(key, f"{key}0") for key in "abcde"])
    for round_ in range(1, 12):
        put(log, *[(key, f"{key}{round_}") for key in "abcde"])
    close_active_segment(log)
    log.update_config({"segment.bytes": 500})
    assert len(log.segments) == 13
    return log


def crash_at(monkeypatch, when):
    """Make the directory fsync fail (a crash there) once `when(names in the directory)` holds."""
    from pykbroker.log import files
    real = files.fsync_dir

    def fsync_dir(path):
        if when(os.listdir(path)):
            raise SimulatedCrash()
        real(path)
    monkeypatch.setattr(files, "fsync_dir", fsync_dir)


def swaps(names, base_offset=None):
    return [name for name in names if name.endswith(".log.swap")
            and (base_offset is None or int(name[:20]) == base_offset)]


def reference_records(tmp_path):
    log = three_groups(tmp_path, name="reference-0")
    log.compact(now_ms=T0)
    return all_records(log)


def leftovers(log):
    """Files of unfinished compactions (`.deleted` ones wait for file.delete.delay.ms)."""
    return [name for name in os.listdir(log.directory) if name.endswith((".swapend", ".cleaned", ".swap"))]


def test_a_swap_interrupted_after_its_commit_replaces_exactly_its_group(tmp_path, monkeypatch):
    expected = reference_records(tmp_path)
    log = three_groups(tmp_path)
    second_group = log.segments[4].base_offset
    before = all_records(log)
    crash_at(monkeypatch, lambda names: swaps(names, 0))
    try:
        log.compact(now_ms=T0)
    except SimulatedCrash:
        pass
    else:
        raise AssertionError("no crash")
    monkeypatch.undo()

    reopened = reopen(log, clean=False, recovery_point=0)
    # the cleaned first group ends at offset 0: its old segments holding 1..20 are gone anyway
    assert all_records(reopened) == [before[0]] + [r for r in before if r[0] >= second_group]
    assert not leftovers(reopened)
    reopened.high_watermark = reopened.log_end_offset
    reopened.compact(now_ms=T0)
    assert all_records(reopened) == expected


def test_an_emptied_group_whose_swap_was_interrupted_leaves_no_segment(tmp_path, monkeypatch):
    expected = reference_records(tmp_path)
    log = three_groups(tmp_path)
    second_group, third_group = log.segments[4].base_offset, log.segments[8].base_offset
    before = all_records(log)
    crash_at(monkeypatch, lambda names: swaps(names, second_group))
    try:
        log.compact(now_ms=T0)
    except SimulatedCrash:
        pass
    else:
        raise AssertionError("no crash")
    monkeypatch.undo()

    reopened = reopen(log, clean=False, recovery_point=0)
    assert all_records(reopened) == [before[0]] + [r for r in before if r[0] >= third_group]
    assert second_group not in [s.base_offset for s in reopened.segments]
    assert not leftovers(reopened)
    reopened.high_watermark = reopened.log_end_offset
    reopened.compact(now_ms=T0)
    assert all_records(reopened) == expected


def test_a_swap_interrupted_before_its_commit_leaves_the_log_as_it_was(tmp_path, monkeypatch):
    log = three_groups(tmp_path)
    before, bases = all_records(log), [s.base_offset for s in log.segments]
    crash_at(monkeypatch, lambda names: any(n.endswith(".swapend") for n in names) and not swaps(names))
    try:
        log.compact(now_ms=T0)
    except SimulatedCrash:
        pass
    else:
        raise AssertionError("no crash")
    monkeypatch.undo()

    reopened = reopen(log, clean=False, recovery_point=0)
    assert all_records(reopened) == before
    assert [s.base_offset for s in reopened.segments] == bases
    assert not leftovers(reopened)


def aborted_listed(log, offset=0):
    """The first offsets of the aborted transactions a read_committed read from `offset` lists."""
    return [txn.first_offset for txn in log.read(offset, 1 << 20, read_committed=True).aborted_transactions]


def test_an_aborted_transaction_stays_indexed_while_a_pass_finds_its_batches(tmp_path):
    """As Kafka's CleanedTransactionMetadata: the pass that drops an aborted transaction's records
    keeps its entry in the cleaned segment's .txnindex (its ABORT marker stays), so read_committed
    fetches still list it."""
    from pykbroker.records.control import build_end_txn_marker

    log = compacted_log(tmp_path)
    log.append_as_leader(producer_batch(55, 0, 0, 2, prefix="k", is_transactional=True), leader_epoch=0,
                         origin="coordinator")
    log.append_as_leader(bytearray(build_end_txn_marker(55, 0, commit=False, coordinator_epoch=0)),
                         leader_epoch=0, origin="coordinator")
    put(log, ("k0", "plain"))
    close_active_segment(log)
    assert aborted_listed(log) == [0]

    log.compact(now_ms=T0)
    keys = [key for _, key, _ in all_records(log)]
    assert b"k1" not in keys and keys.count(b"k0") == 1  # the aborted records are gone, the marker stays
    assert aborted_listed(log) == [0]
