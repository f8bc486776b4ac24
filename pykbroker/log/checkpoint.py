"""Kafka's text checkpoint files: a version line, a count line, then one entry per line.

    0
    2
    orders 0 1500
    orders 1 1320

Offset checkpoints (`recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
`replication-offset-checkpoint`, `cleaner-offset-checkpoint`) hold `topic partition offset`
lines; a partition's `leader-epoch-checkpoint` holds `epoch start_offset` lines.
Files are replaced atomically (temporary file, fsync, rename).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..common.files import write_atomically
from ..common.topic_partition import TopicPartition

VERSION = 0

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"


class CorruptCheckpointError(ValueError):
    """A checkpoint file that does not follow the format."""


def encode_lines(entries: Iterable[Iterable[object]]) -> bytes:
    rows = [" ".join(str(field) for field in entry) for entry in entries]
    return "\n".join([str(VERSION), str(len(rows)), *rows, ""]).encode("utf-8")


def decode_lines(text: str, fields: int, path: str) -> list[list[str]]:
    lines = text.splitlines()
    if len(lines) < 2:
        raise CorruptCheckpointError(f"{path}: missing version or count line")
    if lines[0].strip() != str(VERSION):
        raise CorruptCheckpointError(f"{path}: unsupported version {lines[0]!r}")
    try:
        count = int(lines[1])
    except ValueError:
        raise CorruptCheckpointError(f"{path}: bad count line {lines[1]!r}") from None
    rows = [line.split() for line in lines[2:] if line.strip()]
    if len(rows) != count or any(len(row) != fields for row in rows):
        raise CorruptCheckpointError(f"{path}: expected {count} entries of {fields} fields")
    return rows


def read_entries(path: str, fields: int) -> list[list[str]]:
    """The entries of checkpoint `path`; [] when it does not exist."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        return []
    return decode_lines(text, fields, path)


def write_offsets(path: str, offsets: Mapping[TopicPartition, int], *, fsync: bool = True) -> None:
    entries = sorted((topic, partition, offset) for (topic, partition), offset in offsets.items())
    write_atomically(path, encode_lines(entries), fsync=fsync)


def read_offsets(path: str) -> dict[TopicPartition, int]:
    """{(topic, partition): offset} from an offset checkpoint file."""
    result = {}
    for topic, partition, offset in read_entries(path, 3):
        try:
            result[(topic, int(partition))] = int(offset)
        except ValueError:
            raise CorruptCheckpointError(f"{path}: bad entry {topic} {partition} {offset}") from None
    return result


def write_epochs(path: str, entries: Iterable[tuple[int, int]], *, fsync: bool = True) -> None:
    write_atomically(path, encode_lines(entries), fsync=fsync)


def read_epochs(path: str) -> list[tuple[int, int]]:
    """[(epoch, start_offset)] from a leader-epoch-checkpoint file."""
    result = []
    for epoch, offset in read_entries(path, 2):
        try:
            result.append((int(epoch), int(offset)))
        except ValueError:
            raise CorruptCheckpointError(f"{path}: bad entry {epoch} {offset}") from None
    return result
