"""The transactions with offsets pending in this coordinator's groups, and their end (Kafka's
openGroupsForProducer and handleTxnCompletion).

    open_transactions.complete_transaction(offsets_partition, producer_id, committed, marker_offset)

A transactional offset commit (TxnOffsetCommit, `offsets.py`) stays pending in its group
(`offset_cache.py`) until its transaction's marker reaches the group's partition of
`__consumer_offsets`. The groups with offsets pending are kept per producer id, so that a COMMIT or
ABORT marker written to a partition completes the pending offsets of that producer in the groups
of that partition only: on COMMIT they become the group's committed offsets, on ABORT they are
dropped. A marker that arrives while its partition loads waits for the load (`loader.py`), and is
applied then unless the load read it already.

The checks and the write of a TxnOffsetCommit itself are `OffsetMetadataManager`'s (`offsets.py`).
"""

from __future__ import annotations

import logging

from .manager import GroupMetadataManager
from .offsets_topic import OFFSETS_TOPIC
from .state import DEAD

log = logging.getLogger(__name__)


class OpenTransactions:
    def __init__(self, groups: GroupMetadataManager) -> None:
        self.groups = groups
        self.open_groups_for_producer: dict[int, set[str]] = {}
        # markers of loading partitions: (producer id, committed, marker offset), by partition
        self._completions_while_loading: dict[int, list[tuple[int, bool, int]]] = {}

    # -- which groups a producer has offsets pending in ------------------------------------
    def add_producer_group(self, producer_id: int, group_id: str) -> None:
        self.open_groups_for_producer.setdefault(producer_id, set()).add(group_id)

    def remove_producer_group(self, producer_id: int, group_id: str) -> None:
        groups = self.open_groups_for_producer.get(producer_id)
        if groups is not None:
            groups.discard(group_id)
            if not groups:
                del self.open_groups_for_producer[producer_id]

    def remove_group_from_all_producers(self, group_id: str) -> None:
        for groups in self.open_groups_for_producer.values():
            groups.discard(group_id)

    # -- ending transactions ---------------------------------------------------------------
    def complete_transaction(
        self, offsets_partition: int, producer_id: int, committed: bool, marker_offset: int
    ) -> None:
        """The COMMIT (`committed`) or ABORT marker of `producer_id` was written at
        `marker_offset` of `__consumer_offsets` partition `offsets_partition`."""
        log.debug(
            "Transaction of producer %d %s in %s-%d at offset %d",
            producer_id,
            "committed" if committed else "aborted",
            OFFSETS_TOPIC,
            offsets_partition,
            marker_offset,
        )
        if offsets_partition in self.groups.loading_partitions:
            entry = (producer_id, committed, marker_offset)
            self._completions_while_loading.setdefault(offsets_partition, []).append(entry)
            return
        self.handle_txn_completion(producer_id, {offsets_partition}, committed)

    def handle_txn_completion(self, producer_id: int, partitions: set[int], committed: bool) -> None:
        """A COMMIT or ABORT marker of `producer_id` was written to these partitions of
        `__consumer_offsets`: complete the producer's pending offsets in their groups."""
        open_groups = self.open_groups_for_producer.get(producer_id, set())
        for group_id in [g for g in open_groups if self.groups.partition_for(g) in partitions]:
            group = self.groups.get_group(group_id)
            if group is None:
                log.info(
                    "Group %s has moved away after the transaction marker was written but before the cache was "
                    "updated. The cache on the new group owner will be updated instead.",
                    group_id,
                )
                continue
            if not group.is_(DEAD):
                group.offsets.complete_txn(producer_id, committed)
                self.remove_producer_group(producer_id, group_id)

    # -- partitions loading and unloading --------------------------------------------------
    def on_partition_loaded(self, partition: int, last_loaded_offset: int) -> None:
        """Apply the markers that arrived while the partition loaded and that the load did not read."""
        for producer_id, committed, marker_offset in self._completions_while_loading.pop(partition, []):
            if marker_offset > last_loaded_offset:  # written after what the load read
                self.handle_txn_completion(producer_id, {partition}, committed)

    def on_partition_unloaded(self, partition: int) -> None:
        self._completions_while_loading.pop(partition, None)
