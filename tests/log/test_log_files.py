"""Small parts: checkpoint files, the leader epoch cache, configs, file names, snapshots."""
import pytest

from pykbroker.log import LogConfig
from pykbroker.log.checkpoint import (
    CorruptCheckpointError, read_epochs, read_offsets, write_epochs, write_offsets,
)
from pykbroker.log.epoch_cache import LeaderEpochCache
from pykbroker.log.files import delete_dir_name, file_name, is_delete_dir, parse_partition_dir
from pykbroker.log.producer_snapshot import CorruptSnapshotError, decode, encode
from pykbroker.log.producer_state import ProducerStateEntry


def test_offset_checkpoints_round_trip_in_kafkas_format(tmp_path):
    path = str(tmp_path / "recovery-point-offset-checkpoint")
    write_offsets(path, {("b-topic", 1): 20, ("a.topic", 0): 7})
    assert open(path).read() == "0\n2\na.topic 0 7\nb-topic 1 20\n"
    assert read_offsets(path) == {("a.topic", 0): 7, ("b-topic", 1): 20}
    assert read_offsets(str(tmp_path / "missing")) == {}


@pytest.mark.parametrize("text", ["1\n0\n", "0\n2\na 0 1\n", "0\n1\na 0\n", "0\nx\n", ""])
def test_malformed_checkpoints_are_refused(tmp_path, text):
    path = tmp_path / "checkpoint"
    path.write_text(text)
    with pytest.raises(CorruptCheckpointError):
        read_offsets(str(path))


def test_epoch_checkpoints_round_trip(tmp_path):
    path = str(tmp_path / "leader-epoch-checkpoint")
    write_epochs(path, [(0, 0), (3, 120)])
    assert read_epochs(path) == [(0, 0), (3, 120)]


def test_an_epoch_is_assigned_once_and_never_goes_backwards(tmp_path):
    cache = LeaderEpochCache(str(tmp_path / "leader-epoch-checkpoint"))
    assert cache.assign(1, 0)
    assert not cache.assign(1, 5)
    assert cache.assign(2, 10)
    assert cache.assign(2, 8)  # same epoch, lower offset: replaces
    assert cache.entries() == [(1, 0), (2, 8)]
    assert cache.assign(3, 5)  # conflicts with (2, 8): 2 goes
    assert cache.entries() == [(1, 0), (3, 5)]


def test_epoch_cache_truncation_from_both_ends(tmp_path):
    cache = LeaderEpochCache(str(tmp_path / "leader-epoch-checkpoint"), [(1, 0), (2, 10), (4, 20)])
    cache.truncate_from_start(15)
    assert cache.entries() == [(2, 15), (4, 20)]
    cache.truncate_from_end(20)
    assert cache.entries() == [(2, 15)]
    assert cache.epoch_for_offset(100) == 2 and cache.epoch_for_offset(3) is None


def test_the_epoch_cache_reloads_what_it_wrote(tmp_path):
    path = str(tmp_path / "leader-epoch-checkpoint")
    cache = LeaderEpochCache(path)
    cache.assign(5, 0)
    cache.assign(7, 40)
    cache.flush()
    assert LeaderEpochCache(path).entries() == [(5, 0), (7, 40)]


def test_configs_parse_kafka_names_and_string_values():
    config = LogConfig.from_dict({"segment.bytes": "1024", "cleanup.policy": "compact, delete",
                                  "min.cleanable.dirty.ratio": "0.1", "preallocate": "false",
                                  "unknown.key": "x"})
    assert config.segment_bytes == 1024 and config.compact and config.delete
    assert config.min_cleanable_dirty_ratio == 0.1
    assert config.extra == {"unknown.key": "x"}
    assert config.to_dict()["segment.bytes"] == "1024"
    assert LogConfig().retention_ms == 604800000 and LogConfig().max_message_bytes == 1048588
    with pytest.raises(ValueError):
        LogConfig.from_dict({"cleanup.policy": "shred"})


def test_file_and_directory_names():
    assert file_name(42, ".log") == "00000000000000000042.log"
    assert parse_partition_dir("my-topic-12") == ("my-topic", 12)
    assert parse_partition_dir("my-topic-12-future") is None
    doomed = delete_dir_name("my-topic", 12)
    assert is_delete_dir(doomed) and parse_partition_dir(doomed) is None


def test_producer_snapshots_round_trip_and_detect_damage():
    entry = ProducerStateEntry(9, 2, coordinator_epoch=4, last_timestamp=123, current_txn_first_offset=50)
    for i in range(7):
        entry.add_batch(2, i * 10 + 9, 100 + i * 10, 9, 1000 + i)
    data = encode([entry])
    restored = decode(data)[0]
    assert list(restored.batches) == list(entry.batches) and len(restored.batches) == 5
    assert (restored.producer_epoch, restored.coordinator_epoch, restored.current_txn_first_offset) == (2, 4, 50)
    with pytest.raises(CorruptSnapshotError):
        decode(data[:-3])
    damaged = bytearray(data)
    damaged[20] ^= 1
    with pytest.raises(CorruptSnapshotError):
        decode(bytes(damaged))
