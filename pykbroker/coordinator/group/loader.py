"""Loading and unloading the partitions of `__consumer_offsets` (Kafka's loadGroupsForPartition
and removeGroupsForPartition).

When this broker becomes leader of a partition it loads it: the records are read off the event
loop (`log_io.py`) and replayed (`replay.py`) into groups, committed offsets and transactional
offsets still pending; meanwhile the partition's groups answer COORDINATOR_LOAD_IN_PROGRESS. A
partition resigned while it loads is not served when its records arrive. When it stops leading a
partition, the partition's groups are unloaded. The rebalance hears of each group loaded and
unloaded through the callbacks the loader is given. Groups an older pykbroker placed in the
partition loaded are moved to their own partition (`relocation.py`).

Loads come in bursts (all partitions at start, many on a failover): one INFO line is written for
the burst, once the event loop is done with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..partition_io import LoadedRecord
from ..runtime import LoopRuntime
from .group import GroupMetadata
from .log_io import OffsetsLog
from .manager import GroupMetadataManager
from .relocation import GroupRelocation
from .replay import build_group, replay
from .txn_offsets import OpenTransactions

log = logging.getLogger(__name__)

GroupListener = Callable[[GroupMetadata], None]
PartitionLoaded = Callable[[int, list[LoadedRecord]], None]  # (partition, its records)


class GroupLoader:
    def __init__(
        self,
        groups: GroupMetadataManager,
        offsets_log: OffsetsLog,
        open_transactions: OpenTransactions,
        runtime: LoopRuntime,
        *,
        on_group_loaded: GroupListener,
        on_group_unloaded: GroupListener,
        on_partition_loaded: PartitionLoaded | None = None,
        on_partition_unloaded: Callable[[int], None] | None = None,
    ) -> None:
        self.groups = groups
        self.offsets_log = offsets_log
        self.open_transactions = open_transactions
        self.runtime = runtime
        self._on_group_loaded = on_group_loaded
        self._on_group_unloaded = on_group_unloaded
        self.relocation = GroupRelocation(groups, offsets_log, runtime, on_group_loaded)
        self._on_partition_loaded = on_partition_loaded  # the other group types replay the records too
        self._on_partition_unloaded = on_partition_unloaded
        self._load_tokens: dict[int, object] = {}
        self._loaded_partitions = self._loaded_records = 0  # since loading last went idle

    def schedule_load(self, partition: int) -> None:
        if partition in self.groups.served_partitions():
            return
        token = object()
        self._load_tokens[partition] = token
        self.groups.start_loading(partition)
        log.debug("Loading group metadata from __consumer_offsets-%d", partition)
        self.offsets_log.load(partition, lambda records: self._finish_load(partition, token, records))

    def _finish_load(self, partition: int, token: object, records: list[LoadedRecord]) -> None:
        if self._load_tokens.get(partition) is not token:
            return  # unloaded (resigned) while loading
        del self._load_tokens[partition]
        replayed = replay(records)
        self.groups.finish_loading(partition)
        for group_id in replayed.group_ids():
            if self.groups.partition_for(group_id) != partition:
                continue  # an older pykbroker's placement: moved below
            pending = replayed.pending_of(group_id)
            for producer_id in pending:
                self.open_transactions.add_producer_group(producer_id, group_id)
            group = build_group(
                group_id,
                replayed.groups.get(group_id),
                replayed.offsets_of(group_id),
                self.runtime.now_ms,
                pending,
                replayed.consumer_groups.get(group_id),
            )
            if self.groups.add_group(group) is group:
                self._on_group_loaded(group)
        self.open_transactions.on_partition_loaded(partition, replayed.last_offset)
        self.relocation.found(partition, replayed)
        if self._on_partition_loaded is not None:
            self._on_partition_loaded(partition, records)
        log.debug("Finished loading __consumer_offsets-%d: %d records", partition, len(records))
        self._count_load(len(records))

    def _count_load(self, records: int) -> None:
        if self._loaded_partitions == 0:
            self.runtime.call_later(0, self._report_loads)
        self._loaded_partitions += 1
        self._loaded_records += records

    def _report_loads(self) -> None:
        log.info(
            "Loaded the groups and offsets of %d __consumer_offsets partitions (%d records)",
            self._loaded_partitions,
            self._loaded_records,
        )
        self._loaded_partitions = self._loaded_records = 0

    def unload(self, partition: int) -> None:
        """Stop serving `partition` (loaded or loading): its groups are forgotten."""
        self._load_tokens.pop(partition, None)
        self.relocation.on_partition_unloaded(partition)
        self.open_transactions.on_partition_unloaded(partition)
        self.groups.stop_serving(partition)
        for group in self.groups.groups_of_partition(partition):
            self.groups.remove_group(group)
            self._on_group_unloaded(group)
            self.open_transactions.remove_group_from_all_producers(group.group_id)
        if self._on_partition_unloaded is not None:
            self._on_partition_unloaded(partition)
        log.debug("Unloaded the groups of __consumer_offsets-%d", partition)
