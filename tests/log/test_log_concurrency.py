"""Maintenance on a worker thread while the event loop thread appends and reads."""
import threading

from pykbroker.log import LogManager

from .helpers import T0, Clock, all_records, batch, offsets_of, records_of


def test_appends_and_reads_stay_consistent_while_maintenance_runs(tmp_path):
    clock = Clock()
    manager = LogManager([str(tmp_path)], {"segment.bytes": "600", "retention.bytes": "3000",
                                           "file.delete.delay.ms": "0"}, time_ms=clock)
    deleting = manager.get_or_create("deleting", 0)
    compacted = manager.get_or_create("compacted", 0, {"cleanup.policy": "compact",
                                                       "min.cleanable.dirty.ratio": "0.01"})
    stop = threading.Event()
    failures = []

    def maintenance():
        try:
            while not stop.is_set():
                manager.run_flush(T0)
                manager.run_retention(T0)
                manager.run_compaction(T0)
        except Exception as error:  # pragma: no cover - reported below
            failures.append(error)

    worker = threading.Thread(target=maintenance)
    worker.start()
    try:
        for round_ in range(400):
            for log in (deleting, compacted):
                log.append_as_leader(batch((f"k{round_ % 7}", f"v{round_}")), leader_epoch=0)
                log.high_watermark = log.log_end_offset
            start = deleting.log_start_offset
            fetched = records_of(deleting.read(start, 2000, max_offset=deleting.high_watermark))
            assert fetched and fetched[0][0] >= start
    finally:
        stop.set()
        worker.join()
    assert not failures
    assert deleting.log_end_offset == compacted.log_end_offset == 400
    assert offsets_of(deleting) == list(range(deleting.log_start_offset, 400))
    latest = {key: value for _, key, value in all_records(compacted)}
    assert latest == {f"k{r % 7}".encode(): f"v{r}".encode() for r in range(393, 400)}
    manager.close()
