"""Groups an older pykbroker left in another partition of `__consumer_offsets`, moved to the
partition Kafka's rule gives them (`../placement.py`).

Older versions placed a group id with a negative hash code in another partition than Kafka does.
A partition P loaded here may therefore hold groups that now live in a partition Q:

- While P loads, such groups answer COORDINATOR_LOAD_IN_PROGRESS as P's own do
  (`GroupMetadataManager.is_group_loading`), so that none is served before its state is found.
- Once P is loaded and Q is loaded here too (at once, or when Q's load finishes), each such group
  is moved: its record (unless Q holds the group already) and its committed offsets (those Q has
  none of) enter the cache and are written into Q; once Q has them, tombstones remove them from
  P, so the move happens once. A failed write leaves P as it was; the next load moves them again.
- Where another broker leads Q, the groups stay in P (a WARN says so) until a broker that
  loaded P also leads Q.
- Transactional offsets still pending in P (a transaction open across the upgrade) are not moved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ...protocol.errors import ErrorCode
from ..placement import is_legacy_placed
from ..runtime import LoopRuntime
from .formats import GroupRecord, OffsetAndMetadata, group_key, group_value, offset_key, offset_value
from .group import GroupMetadata
from .log_io import OffsetsLog, Records
from .manager import GroupMetadataManager
from .offset_cache import StoredOffset, TopicPartition
from .replay import ReplayedPartition, build_group

log = logging.getLogger(__name__)

UNKNOWN_BATCH_OFFSET = -1  # moved offsets lose to any commit written later


@dataclass(frozen=True)
class LegacyGroup:
    """A group's committed state as found in the partition an older pykbroker placed it in."""

    group_id: str
    source: int
    record: GroupRecord | None
    offsets: dict[TopicPartition, OffsetAndMetadata]


class GroupRelocation:
    def __init__(
        self,
        groups: GroupMetadataManager,
        offsets_log: OffsetsLog,
        runtime: LoopRuntime,
        on_group_loaded: Callable[[GroupMetadata], None],
    ) -> None:
        self.groups = groups
        self.offsets_log = offsets_log
        self.runtime = runtime
        self._on_group_loaded = on_group_loaded
        self._waiting: dict[int, list[LegacyGroup]] = {}  # by the partition they move to

    def is_legacy_placed(self, group_id: str, partition: int) -> bool:
        return is_legacy_placed(group_id, partition, self.groups.partition_count)

    def found(self, partition: int, replayed: ReplayedPartition) -> None:
        """Move (now, or once their partition is loaded) the groups of `partition`, just
        loaded, that an older pykbroker placed there; then the groups waiting for `partition`."""
        for group_id in replayed.group_ids():
            if not self.is_legacy_placed(group_id, partition):
                continue
            offsets = {tp: stored.entry for tp, stored in replayed.offsets_of(group_id).items()}
            record = replayed.groups.get(group_id)
            if record is None and not offsets:
                continue  # only pending transactional offsets: not moved
            legacy = LegacyGroup(group_id, partition, record, offsets)
            target = self.groups.partition_for(group_id)
            if target in self.groups.owned_partitions:
                self._move(legacy, target)
                continue
            if target not in self.groups.served_partitions():
                log.warning(
                    "Group %s in __consumer_offsets-%d, where an older pykbroker placed it, belongs to "
                    "__consumer_offsets-%d, which another broker leads: it stays until a broker leads both",
                    group_id,
                    partition,
                    target,
                )
            self._waiting.setdefault(target, []).append(legacy)
        self.on_partition_loaded(partition)

    def on_partition_loaded(self, partition: int) -> None:
        """Move the groups waiting for `partition`, now loaded, whose source is still loaded."""
        waiting = self._waiting.pop(partition, [])
        owned = self.groups.owned_partitions
        for legacy in waiting:
            if legacy.source in owned:
                self._move(legacy, partition)

    def on_partition_unloaded(self, partition: int) -> None:
        """Forget the groups found in `partition`: its next load finds them again."""
        for target in list(self._waiting):
            kept = [g for g in self._waiting[target] if g.source != partition]
            if kept:
                self._waiting[target] = kept
            else:
                del self._waiting[target]

    def _move(self, legacy: LegacyGroup, target: int) -> None:
        group_id = legacy.group_id
        existing = self.groups.get_group(group_id)
        offsets = {
            tp: entry
            for tp, entry in legacy.offsets.items()
            if existing is None or (existing.offsets.get(tp) is None and not existing.offsets.is_pending(tp))
        }
        records: Records = [
            (offset_key(group_id, topic, index), offset_value(entry)) for (topic, index), entry in offsets.items()
        ]
        record = legacy.record if existing is None else None
        if record is not None:
            records.insert(0, (group_key(group_id), group_value(record)))
        self._load_into_cache(group_id, existing, record, offsets)
        log.info(
            "Moving group %s from __consumer_offsets-%d, where an older pykbroker placed it, to "
            "__consumer_offsets-%d (%d records)",
            group_id,
            legacy.source,
            target,
            len(records),
        )
        tombstones = _tombstones(legacy)

        def written(error: ErrorCode, _offset: int) -> None:
            if error != ErrorCode.NONE:
                log.warning("Moving group %s to __consumer_offsets-%d failed: %s", group_id, target, error.name)
                return
            self.offsets_log.append(legacy.source, tombstones, None, acks=self.groups.config.commit_required_acks)

        if records:
            self.offsets_log.append(target, records, written, acks=self.groups.config.commit_required_acks)
        else:
            written(ErrorCode.NONE, UNKNOWN_BATCH_OFFSET)

    def _load_into_cache(
        self,
        group_id: str,
        existing: GroupMetadata | None,
        record: GroupRecord | None,
        offsets: dict[TopicPartition, OffsetAndMetadata],
    ) -> None:
        stored = {tp: StoredOffset(entry, UNKNOWN_BATCH_OFFSET) for tp, entry in offsets.items()}
        if existing is not None:
            for tp, entry in stored.items():
                existing.offsets.load(tp, entry)
            return
        group = build_group(group_id, record, stored, self.runtime.now_ms)
        if self.groups.add_group(group) is group:
            self._on_group_loaded(group)


def _tombstones(legacy: LegacyGroup) -> Records:
    """Tombstones for the group's state in its old partition."""
    records: Records = [(offset_key(legacy.group_id, topic, index), None) for topic, index in legacy.offsets]
    if legacy.record is not None:
        records.insert(0, (group_key(legacy.group_id), None))
    return records
