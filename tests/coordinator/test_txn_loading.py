"""What a coordinator finds of transactional offset commits when it takes over a partition of
`__consumer_offsets` (a restart, or a new leader), as Kafka's loadGroupsAndOffsets replays them:
the offsets of committed transactions, none of aborted ones, and those of open transactions
still pending until their marker."""
import anyio

from pykbroker.coordinator.group.formats import OffsetAndMetadata, offset_key, offset_value
from pykbroker.coordinator.group.replay import replay
from pykbroker.coordinator.group.state import EMPTY
from pykbroker.coordinator.partition_io import LoadedRecord
from pykbroker.records.control import COMMIT, build_end_txn_marker, encode_control_key, encode_end_txn_marker_value
from pykbroker.records.records import build_batch
from pykbroker.replication.coordinator_partitions import CoordinatorLogLoader, CoordinatorPartitionWriter
from pykbroker.protocol.errors import ErrorCode

from .fakes import MemoryOffsetsLog, commit, coordinator
from .test_txn_offsets import EPOCH, PID, T0P0, T0P1, stable_fetch, txn_commit
from ..replication.helpers import BROKER, TP, replica_manager


def test_committed_transactional_offsets_come_back_after_a_restart():
    log = MemoryOffsetsLog()
    before = coordinator(log)
    txn_commit(before, {T0P0: 10})
    before.complete_transaction(0, PID, True, log.append_marker(0, PID, committed=True))
    assert stable_fetch(coordinator(log), [T0P0]) == {T0P0: 10}


def test_aborted_transactional_offsets_do_not_come_back():
    log = MemoryOffsetsLog()
    before = coordinator(log)
    commit(before, {T0P0: 3})
    txn_commit(before, {T0P0: 10, T0P1: 20})
    log.append_marker(0, PID, committed=False)
    after = coordinator(log)
    assert stable_fetch(after, [T0P0, T0P1]) == {T0P0: 3, T0P1: -1}


def test_offsets_of_an_open_transaction_come_back_pending_until_its_marker():
    log = MemoryOffsetsLog()
    txn_commit(coordinator(log), {T0P0: 10})
    after = coordinator(log)
    assert after.manager.get_group("g").state is EMPTY
    assert stable_fetch(after, [T0P0]) == {T0P0: ErrorCode.UNSTABLE_OFFSET_COMMIT}
    after.complete_transaction(0, PID, True, log.append_marker(0, PID, committed=True))
    assert stable_fetch(after, [T0P0]) == {T0P0: 10}


def test_a_marker_ends_only_its_own_producers_offsets():
    log = MemoryOffsetsLog()
    before = coordinator(log)
    txn_commit(before, {T0P0: 10})
    txn_commit(before, {T0P1: 20}, producer_id=PID + 1)
    log.append_marker(0, PID, committed=True)
    after = coordinator(log)
    assert stable_fetch(after, [T0P0, T0P1]) == {T0P0: 10, T0P1: ErrorCode.UNSTABLE_OFFSET_COMMIT}


def test_an_offset_written_after_a_transactional_one_wins_when_the_transaction_commits():
    key = offset_key("g", *T0P0)
    records = [LoadedRecord(0, key, offset_value(OffsetAndMetadata(10)), PID, EPOCH, True),
               LoadedRecord(1, key, offset_value(OffsetAndMetadata(7))),
               LoadedRecord(2, encode_control_key(COMMIT), encode_end_txn_marker_value(0), PID, EPOCH, True, True)]
    replayed = replay(records)
    assert replayed.offsets_of("g")[T0P0].entry.offset == 7
    assert replayed.pending == {}


def test_a_tombstone_in_a_transaction_removes_the_pending_offset():
    key = offset_key("g", *T0P0)
    records = [LoadedRecord(0, key, offset_value(OffsetAndMetadata(10)), PID, EPOCH, True),
               LoadedRecord(1, key, None, PID, EPOCH, True)]
    replayed = replay(records)
    assert replayed.pending_of("g") == {} and replayed.offsets_of("g") == {}


def test_a_marker_written_while_the_partition_loads_is_applied_once_the_load_ends():
    log = MemoryOffsetsLog()
    txn_commit(coordinator(log), {T0P0: 10})
    c = coordinator(log)
    c.on_resignation(0)
    loads = []
    log.load = lambda partition, callback: loads.append(callback)
    c.on_election(0)
    read = MemoryOffsetsLog.load.__get__(log)  # what the load read: the open transaction
    c.complete_transaction(0, PID, True, log.append_marker(0, PID, committed=True))
    read(0, lambda records: loads[0](records[:-1]))
    assert stable_fetch(c, [T0P0]) == {T0P0: 10}


def test_a_marker_the_load_read_already_is_not_applied_again():
    log = MemoryOffsetsLog()
    txn_commit(coordinator(log), {T0P0: 10})
    c = coordinator(log)
    c.on_resignation(0)
    loads = []
    log.load = lambda partition, callback: loads.append(callback)
    c.on_election(0)
    marker = log.append_marker(0, PID, committed=True)
    c.complete_transaction(0, PID, True, marker)
    # a later transaction of the same producer, read by the load (written by the next leader)
    log.records[0].append(LoadedRecord(marker + 1, offset_key("g", *T0P1),
                                       offset_value(OffsetAndMetadata(20)), PID, EPOCH, True))
    MemoryOffsetsLog.load(log, 0, loads[0])
    assert stable_fetch(c, [T0P0, T0P1]) == {T0P0: 10, T0P1: ErrorCode.UNSTABLE_OFFSET_COMMIT}


def test_batches_and_markers_on_a_real_log_load_with_their_producer_and_flags(tmp_path):
    manager = replica_manager(tmp_path, replicas=(BROKER,))
    # the batches are written as they lie in a log; the partition's verification is not the subject
    manager.config = manager.config.with_dynamic({"transaction.partition.verification.enable": "false"}, {})
    writer = CoordinatorPartitionWriter(manager)
    loader = CoordinatorLogLoader(manager, buffer_size=1 << 20)
    key = offset_key("g", *T0P0)
    committed = build_batch([(key, offset_value(OffsetAndMetadata(10)))], producer_id=PID,
                            producer_epoch=EPOCH, base_sequence=0, is_transactional=True)
    plain = build_batch([(offset_key("g", *T0P1), offset_value(OffsetAndMetadata(5)))])
    open_txn = build_batch([(key, offset_value(OffsetAndMetadata(11)))], producer_id=PID + 1,
                           producer_epoch=0, base_sequence=0, is_transactional=True)

    async def write_and_load():
        for batch in (committed, plain):
            error, _ = await writer.append(*TP, bytearray(batch), required_acks=1, timeout_ms=1000)
            assert error == ErrorCode.NONE
        manager.partitions[TP].log.append_as_leader(
            bytearray(build_end_txn_marker(PID, EPOCH, commit=True, coordinator_epoch=0)),
            leader_epoch=0, origin="coordinator")
        await writer.append(*TP, bytearray(open_txn), required_acks=1, timeout_ms=1000)
        return await loader.load_batches(*TP)

    records = anyio.run(write_and_load)
    assert [(r.batch_offset, r.producer_id, r.is_transactional, r.is_control) for r in records] == [
        (0, PID, True, False), (1, -1, False, False), (2, PID, True, True), (3, PID + 1, True, False)]
    replayed = replay(records)
    assert {tp: s.entry.offset for tp, s in replayed.offsets_of("g").items()} == {T0P0: 10, T0P1: 5}
    assert {pid: {tp: s.entry.offset for tp, s in offsets.items()}
            for pid, offsets in replayed.pending_of("g").items()} == {PID + 1: {T0P0: 11}}
