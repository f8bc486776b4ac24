"""The partition side of transactions in the replica manager: produce-path verification
(KIP-890 part 1, against a fake coordinator), transaction markers as leader, and read_committed
fetches that wait for the last stable offset."""
import anyio
import pytest

from pykbroker.common.txn_marker import TxnMarker
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.control import build_end_txn_marker
from pykbroker.replication.fetch_types import PartitionFetchRequest
from pykbroker.replication.txn_markers import TxnMarkerWriter
from tests.log.helpers import kv_batch

from .helpers import BROKER, TP, let_waiters_run, replica_manager

PID, EPOCH, TXN_ID = 7000, 3, "txn-1"
OTHER = ("orders", 1)


def txn_batch(sequence: int = 0, count: int = 2, producer_id: int = PID) -> bytearray:
    return kv_batch(count, producer_id=producer_id, producer_epoch=EPOCH, base_sequence=sequence,
                    is_transactional=True)


class FakeVerifier:
    """The transaction coordinator's answer for every partition asked, and what it was asked."""

    def __init__(self, error: ErrorCode = ErrorCode.NONE, meanwhile=None) -> None:
        self.error = error
        self.meanwhile = meanwhile  # runs while the coordinator "thinks"
        self.asked: list[tuple] = []

    async def verify(self, transactional_id, producer_id, producer_epoch, partitions):
        self.asked.append((transactional_id, producer_id, producer_epoch, sorted(partitions)))
        if self.meanwhile is not None:
            self.meanwhile()
        return {tp: self.error for tp in partitions}


def single_replica(tmp_path, **config):
    manager = replica_manager(tmp_path, replicas=(BROKER,))
    manager.config = manager.config.with_dynamic(config, {}) if config else manager.config
    return manager


def produce(manager, entries, verifier, *, api_version=11, transactional_id=TXN_ID):
    async def run():
        return await manager.handle_produce_append(entries, required_acks=1, timeout_ms=30_000,
                                                   transactional_id=transactional_id, verifier=verifier,
                                                   api_version=api_version)
    return anyio.run(run)


def write_markers(writer, markers):
    async def run():
        return await writer.write_txn_markers(markers)
    return anyio.run(run)


def marker(committed=False, coordinator_epoch=1, partitions=(TP,), epoch=EPOCH):
    return TxnMarker(PID, epoch, committed, coordinator_epoch, tuple(partitions))


class TestProduceVerification:
    def test_the_first_batch_of_a_transaction_is_appended_once_the_coordinator_confirms(self, tmp_path):
        manager, verifier = single_replica(tmp_path), FakeVerifier()
        results = produce(manager, {TP: txn_batch()}, verifier)
        assert (results[TP].error, results[TP].base_offset) == (ErrorCode.NONE, 0)
        assert verifier.asked == [(TXN_ID, PID, EPOCH, [TP])]

    def test_later_batches_of_the_ongoing_transaction_are_not_verified_again(self, tmp_path):
        manager, verifier = single_replica(tmp_path), FakeVerifier()
        produce(manager, {TP: txn_batch(0)}, verifier)
        results = produce(manager, {TP: txn_batch(2)}, verifier)
        assert results[TP].error == ErrorCode.NONE
        assert len(verifier.asked) == 1

    @pytest.mark.parametrize("error, api_version, answer", [
        (ErrorCode.INVALID_TXN_STATE, 11, ErrorCode.INVALID_TXN_STATE),
        (ErrorCode.TRANSACTION_ABORTABLE, 11, ErrorCode.TRANSACTION_ABORTABLE),
        (ErrorCode.TRANSACTION_ABORTABLE, 10, ErrorCode.INVALID_TXN_STATE),
        (ErrorCode.PRODUCER_FENCED, 11, ErrorCode.INVALID_PRODUCER_EPOCH),
        (ErrorCode.INVALID_PRODUCER_EPOCH, 11, ErrorCode.INVALID_PRODUCER_EPOCH),
    ])
    def test_a_partition_outside_the_transaction_is_refused(self, tmp_path, error, api_version, answer):
        manager = single_replica(tmp_path)
        results = produce(manager, {TP: txn_batch()}, FakeVerifier(error), api_version=api_version)
        assert results[TP].error == answer
        if answer == ErrorCode.INVALID_TXN_STATE:
            assert results[TP].error_message == "Partition was not added to the transaction"
        assert manager.partitions[TP].log_end_offset == 0

    @pytest.mark.parametrize("error", [
        ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
    ])
    def test_retriable_coordinator_errors_become_not_enough_replicas(self, tmp_path, error):
        manager = single_replica(tmp_path)
        results = produce(manager, {TP: txn_batch()}, FakeVerifier(error))
        assert results[TP].error == ErrorCode.NOT_ENOUGH_REPLICAS
        assert results[TP].error_message == (
            f"Unable to verify the partition has been added to the transaction. Underlying error: {error.name}")

    def test_an_abort_during_the_verification_voids_it(self, tmp_path):
        manager = single_replica(tmp_path)
        partition = manager.partitions[TP]
        abort = bytearray(build_end_txn_marker(PID, EPOCH, False, coordinator_epoch=1))

        def coordinator_aborts():
            partition.append_as_leader(abort, required_acks=1, min_insync_replicas=1, now_ms=0, origin="coordinator")

        results = produce(manager, {TP: txn_batch()}, FakeVerifier(meanwhile=coordinator_aborts))
        assert results[TP].error == ErrorCode.INVALID_TXN_STATE
        assert partition.last_stable_offset == partition.log_end_offset == 1  # only the marker: nothing hangs

    def test_only_the_partitions_that_failed_are_refused(self, tmp_path):
        manager = single_replica(tmp_path)

        class Partly(FakeVerifier):
            async def verify(self, transactional_id, producer_id, producer_epoch, partitions):
                return {TP: ErrorCode.NONE, ("unknown", 0): ErrorCode.INVALID_TXN_STATE}

        results = produce(manager, {TP: txn_batch(), ("unknown", 0): txn_batch()}, Partly())
        assert results[TP].error == ErrorCode.NONE
        assert results[("unknown", 0)].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # never verified

    def test_batches_of_two_producers_are_an_invalid_producer_id_mapping(self, tmp_path):
        manager = replica_manager(tmp_path, replicas=(BROKER,))
        manager.metadata.create_topic("other", 1, 1, assignments={0: [BROKER]})
        results = produce(manager, {TP: txn_batch(), ("other", 0): txn_batch(producer_id=PID + 1)}, FakeVerifier())
        assert {r.error for r in results.values()} == {ErrorCode.INVALID_PRODUCER_ID_MAPPING}

    def test_without_verification_the_coordinator_is_not_asked(self, tmp_path):
        manager = single_replica(tmp_path, **{"transaction.partition.verification.enable": "false"})
        verifier = FakeVerifier(ErrorCode.INVALID_TXN_STATE)
        results = produce(manager, {TP: txn_batch()}, verifier)
        assert (results[TP].error, verifier.asked) == (ErrorCode.NONE, [])

    def test_without_a_transactional_id_a_transactional_batch_cannot_start_a_transaction(self, tmp_path):
        manager = single_replica(tmp_path)
        results = produce(manager, {TP: txn_batch()}, FakeVerifier(), transactional_id=None)
        assert results[TP].error == ErrorCode.INVALID_TXN_STATE

    def test_idempotent_batches_are_not_verified(self, tmp_path):
        manager, verifier = single_replica(tmp_path), FakeVerifier(ErrorCode.INVALID_TXN_STATE)
        batch = kv_batch(1, producer_id=PID, producer_epoch=0, base_sequence=0)
        assert produce(manager, {TP: batch}, verifier)[TP].error == ErrorCode.NONE
        assert verifier.asked == []


class TestTxnMarkerWriter:
    def test_a_marker_ends_the_transaction_and_releases_the_last_stable_offset(self, tmp_path):
        manager = single_replica(tmp_path)
        produce(manager, {TP: txn_batch()}, FakeVerifier())
        partition = manager.partitions[TP]
        assert partition.last_stable_offset == 0
        assert write_markers(TxnMarkerWriter(manager), [marker(committed=False)]) == [{TP: ErrorCode.NONE}]
        assert partition.last_stable_offset == partition.high_watermark == 3
        read = partition.read(0, 1 << 20, for_follower=False, min_one_message=True, read_committed=True)
        assert [(t.producer_id, t.first_offset) for t in read.aborted_transactions] == [(PID, 0)]

    def test_errors_per_partition(self, tmp_path):
        manager = single_replica(tmp_path)
        manager.metadata.create_topic("followed", 1, 2, assignments={0: [1, BROKER]})
        writer = TxnMarkerWriter(manager)
        produce(manager, {TP: txn_batch()}, FakeVerifier())
        assert write_markers(writer, [marker(coordinator_epoch=5)]) == [{TP: ErrorCode.NONE}]
        answers = write_markers(writer, [
            marker(coordinator_epoch=4),  # a zombie coordinator
            marker(partitions=[("nowhere", 0), ("followed", 0)], coordinator_epoch=5),
            marker(epoch=EPOCH - 1, coordinator_epoch=5),
        ])
        assert answers == [
            {TP: ErrorCode.TRANSACTION_COORDINATOR_FENCED},
            {("nowhere", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("followed", 0): ErrorCode.NOT_LEADER_OR_FOLLOWER},
            {TP: ErrorCode.INVALID_PRODUCER_EPOCH},
        ]

    def test_a_marker_in_the_offsets_topic_tells_the_group_coordinator(self, tmp_path):
        manager = single_replica(tmp_path)
        manager.metadata.create_topic("__consumer_offsets", 2, 1, assignments={0: [BROKER], 1: [BROKER]})
        writer = TxnMarkerWriter(manager)
        told = []
        writer.on_offsets_marker = lambda *args: told.append(args)
        answers = write_markers(writer, [marker(committed=True, partitions=[("__consumer_offsets", 1), TP])])
        assert answers == [{("__consumer_offsets", 1): ErrorCode.NONE, TP: ErrorCode.NONE}]
        assert told == [(1, PID, True, 0)]

    def test_a_failing_group_coordinator_is_an_unknown_server_error(self, tmp_path):
        manager = single_replica(tmp_path)
        manager.metadata.create_topic("__consumer_offsets", 1, 1, assignments={0: [BROKER]})
        writer = TxnMarkerWriter(manager)

        def broken(*_):
            raise RuntimeError("boom")

        writer.on_offsets_marker = broken
        answers = write_markers(writer, [marker(partitions=[("__consumer_offsets", 0)])])
        assert answers == [{("__consumer_offsets", 0): ErrorCode.UNKNOWN_SERVER_ERROR}]

    def test_markers_wait_for_the_in_sync_replicas(self, tmp_path):
        manager = replica_manager(tmp_path)  # a follower in the ISR that does not fetch
        answers = []

        async def main():
            async with anyio.create_task_group() as tasks:
                async def write():
                    answers.extend(await TxnMarkerWriter(manager).write_txn_markers([marker()]))
                tasks.start_soon(write)
                await let_waiters_run()
                assert answers == [] and manager.partitions[TP].log_end_offset == 1
                manager.timer.advance(30_000)  # request.timeout.ms
        anyio.run(main)
        assert answers == [{TP: ErrorCode.REQUEST_TIMED_OUT}]


def test_a_read_committed_fetch_waits_for_the_marker(tmp_path):
    manager = single_replica(tmp_path)
    produce(manager, {TP: txn_batch()}, FakeVerifier())
    answers = {}

    async def main():
        async with anyio.create_task_group() as tasks:
            async def fetch():
                answers.update(await manager.fetch_records(
                    [(TP, PartitionFetchRequest(fetch_offset=0, max_bytes=1 << 20))], replica_id=-1,
                    max_wait_ms=500, min_bytes=1, max_bytes=1 << 20, isolation_level=1))
            tasks.start_soon(fetch)
            await let_waiters_run()
            assert answers == {}  # the transaction's records are above the last stable offset
            await TxnMarkerWriter(manager).write_txn_markers([marker(committed=True)])
            await let_waiters_run()
            assert TP in answers
            tasks.cancel_scope.cancel()
    anyio.run(main)
    result = answers[TP]
    assert (result.high_watermark, result.last_stable_offset, result.aborted_transactions) == (3, 3, [])
    assert result.records_size > 0


def test_read_uncommitted_reads_up_to_the_high_watermark(tmp_path):
    manager = single_replica(tmp_path)
    produce(manager, {TP: txn_batch()}, FakeVerifier())

    async def fetch(isolation):
        return await manager.fetch_records([(TP, PartitionFetchRequest(fetch_offset=0, max_bytes=1 << 20))],
                                           replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                                           isolation_level=isolation)
    uncommitted = anyio.run(fetch, 0)[TP]
    committed = anyio.run(fetch, 1)[TP]
    assert (uncommitted.records_size > 0, uncommitted.aborted_transactions) == (True, None)
    assert (committed.records_size, committed.aborted_transactions, committed.last_stable_offset) == (0, [], 0)
