"""I/O errors injected at the file layer (no device-mapper here to make them for real): a log
directory that fails goes offline, once, and only it.

- The first error of a directory is logged once at ERROR, naming the directory, the file and the
  errno; its partitions answer KAFKA_STORAGE_ERROR to Produce, Fetch and ListOffsets, and
  DescribeLogDirs reports the directory with KAFKA_STORAGE_ERROR. With several `log.dirs` the
  others keep serving and new partitions are only created in them.
- An internal topic's partition in the failed directory fails the same way: its coordinator
  resigns (NOT_COORDINATOR) and FindCoordinator has no coordinator to give.
- An acks=all produce whose fsync fails, or that waits for its followers when its directory
  fails, is answered KAFKA_STORAGE_ERROR, never a time-out; a broker with no directory left stops
  with exit code 1 (here, in this process: `halted_with`).

The slow disk (fsync latency injected) during which other clients are answered is
`tests/test_fsync_off_the_loop.py`; the faults the kernel makes (a full tmpfs, a read-only
remount) are in `test_disk_faults_in_a_namespace.py`.
"""
import errno
import logging
import os

import anyio

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

from ..client_helpers import ListOffsets, create_topic, fetch, produce_batch
from ..log.helpers import kv_batch
from ..replication.helpers import TP, let_waiters_run, replica_manager

DescribeLogDirs = messages.request(ApiKey.DESCRIBE_LOG_DIRS).cls
FindCoordinator = messages.request(ApiKey.FIND_COORDINATOR).cls
OffsetCommit = messages.request(ApiKey.OFFSET_COMMIT).cls
STORAGE = ErrorCode.KAFKA_STORAGE_ERROR


def failing_under(directory, call):
    """The system call `call` (os.pwrite, os.fdatasync: its first argument a descriptor), failing
    with EIO on the files under `directory`, as a failing disk's."""
    def failing(fd, *args):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(f"{directory}/"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return call(fd, *args)
    return failing


def produce(bootstrap: str, topic: str, partition: int, acks: int = -1) -> ErrorCode:
    with WireClient(bootstrap) as client:
        answer = produce_batch(client, topic, build_batch([(b"k", b"v")]), partition, acks=acks)
    return ErrorCode(answer.error_code)


def list_offsets_error(bootstrap: str, topic: str, partition: int) -> ErrorCode:
    request = ListOffsets(replica_id=-1, isolation_level=0, topics=[ListOffsets.ListOffsetsTopic(
        name=topic, partitions=[ListOffsets.ListOffsetsPartition(partition_index=partition, timestamp=-1)])])
    with WireClient(bootstrap) as client:
        [answer] = client.request(ApiKey.LIST_OFFSETS, 7, request).topics[0].partitions
    return ErrorCode(answer.error_code)


def log_dir_errors(bootstrap: str) -> dict[str, ErrorCode]:
    with WireClient(bootstrap) as client:
        answer = client.request(ApiKey.DESCRIBE_LOG_DIRS, 4, DescribeLogDirs(topics=None))
    return {result.log_dir: ErrorCode(result.error_code) for result in answer.results}


def log_dir_of(embedded: EmbeddedBroker, topic: str, partition: int) -> str | None:
    return embedded.call(lambda: embedded.broker.log_manager.log_dir_of(topic, partition))


def error_lines(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.levelno >= logging.ERROR and record.name.startswith("pykbroker")]


def test_an_injected_eio_takes_its_log_dir_offline_while_the_other_keeps_serving(tmp_path, monkeypatch, caplog):
    healthy, failing = str(tmp_path / "healthy"), str(tmp_path / "failing")
    with EmbeddedBroker({"log.dirs": f"{healthy},{failing}"}) as embedded:
        bootstrap = embedded.bootstrap
        create_topic(bootstrap, "jbod", 2)
        assert [log_dir_of(embedded, "jbod", p) for p in (0, 1)] == [healthy, failing]
        monkeypatch.setattr(os, "pwrite", failing_under(failing, os.pwrite))

        assert produce(bootstrap, "jbod", 1) == STORAGE
        assert produce(bootstrap, "jbod", 1) == STORAGE  # offline now: no second ERROR
        assert ErrorCode(fetch(bootstrap, "jbod", 0, partition=1).error_code) == STORAGE
        assert list_offsets_error(bootstrap, "jbod", 1) == STORAGE
        assert log_dir_errors(bootstrap) == {healthy: ErrorCode.NONE, failing: STORAGE}

        assert produce(bootstrap, "jbod", 0) == ErrorCode.NONE
        assert ErrorCode(fetch(bootstrap, "jbod", 0, partition=0).error_code) == ErrorCode.NONE
        create_topic(bootstrap, "after", 2)
        assert [log_dir_of(embedded, "after", p) for p in (0, 1)] == [healthy, healthy]
        assert embedded.is_running() and embedded.halted_with is None

    [line] = error_lines(caplog)
    assert f"Log directory {failing} failed" in line
    assert f"file {failing}/jbod-1/00000000000000000000.log" in line and "EIO" in line


def test_a_failed_dir_holding_the_group_coordinators_partition_resigns_it(tmp_path, monkeypatch, caplog):
    healthy, failing = str(tmp_path / "healthy"), str(tmp_path / "failing")
    settings = {"log.dirs": f"{healthy},{failing}", "offsets.topic.num.partitions": "1"}
    with EmbeddedBroker(settings) as embedded:
        bootstrap = embedded.bootstrap
        create_topic(bootstrap, "data", 1)  # in the first dir: __consumer_offsets goes to the second
        assert find_coordinator(bootstrap, "group") == ErrorCode.NONE
        assert log_dir_of(embedded, "__consumer_offsets", 0) == failing
        monkeypatch.setattr(os, "pwrite", failing_under(failing, os.pwrite))

        assert commit_offset(bootstrap, "group", "data") == ErrorCode.NOT_COORDINATOR
        wait_until(lambda: find_coordinator(bootstrap, "group") == ErrorCode.COORDINATOR_NOT_AVAILABLE,
                   "the coordinator resigned", timeout=10)
        assert commit_offset(bootstrap, "group", "data") == ErrorCode.NOT_COORDINATOR
        assert produce(bootstrap, "data", 0) == ErrorCode.NONE

    [line] = error_lines(caplog)
    assert f"{failing}/__consumer_offsets-0/" in line and "EIO" in line


def find_coordinator(bootstrap: str, group: str) -> ErrorCode:
    with WireClient(bootstrap) as client:
        answer = client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(key=group, key_type=0))
    return ErrorCode(answer.error_code)


def commit_offset(bootstrap: str, group: str, topic: str) -> ErrorCode:
    request = OffsetCommit(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                           group_instance_id=None, retention_time_ms=-1, topics=[OffsetCommit.OffsetCommitRequestTopic(
                               name=topic, partitions=[OffsetCommit.OffsetCommitRequestPartition(
                                   partition_index=0, committed_offset=0, committed_leader_epoch=-1,
                                   commit_timestamp=-1, committed_metadata="")])])
    with WireClient(bootstrap) as client:
        answer = client.request(ApiKey.OFFSET_COMMIT, 8, request)
    return ErrorCode(answer.topics[0].partitions[0].error_code)


def test_an_acks_all_produce_whose_fsync_fails_is_answered_kafka_storage_error_and_the_broker_stops(
        tmp_path, monkeypatch, caplog):
    data = str(tmp_path / "data")
    with EmbeddedBroker({"log.dirs": data, "pykbroker.fsync.before.ack": "true"}) as embedded:
        bootstrap = embedded.bootstrap
        create_topic(bootstrap, "durable", 1)
        monkeypatch.setattr(os, "fdatasync", failing_under(data, os.fdatasync))

        assert produce(bootstrap, "durable", 0, acks=-1) == STORAGE

        wait_until(lambda: not embedded.is_running(), "the broker stopped", timeout=10)
        assert embedded.halted_with == 1

    dir_line, shutdown_line = error_lines(caplog)
    assert f"Log directory {data} failed" in dir_line and "EIO" in dir_line
    assert shutdown_line == f"Shutdown broker because all log dirs in {data} have failed"


def test_an_acks_all_produce_waiting_for_its_followers_is_answered_kafka_storage_error_when_its_dir_fails(tmp_path):
    manager = replica_manager(tmp_path)  # leads orders-0; its follower, in the ISR, never fetches
    answers = {}

    async def main():
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tasks:
                async def produce():
                    answers.update(await manager.append_records({TP: kv_batch(1)}, required_acks=-1,
                                                                timeout_ms=30_000))
                tasks.start_soon(produce)
                await let_waiters_run()
                assert not answers  # waiting for the follower
                manager.log_manager.dir_failures.fail(str(tmp_path), "a test", OSError(errno.EIO, "injected"))
                manager.handle_log_dir_failure(str(tmp_path))

    anyio.run(main)
    assert answers[TP].error == STORAGE
    assert manager.is_offline(*TP)
