"""The controller of a single broker with the embedded store: it is always the controller, and
every partition has one replica, so leadership never needs to move.

Offers the same requests as the cluster controller (`controller/controller.py`) for the
ControlledShutdown, ElectLeaders and partition reassignment handlers; moving a partition's
leadership needs a cluster. A reassignment here can only be to the one broker's own replica: it
completes at once (nothing moves); any other target is refused with Kafka's errors, and no
reassignment is ever ongoing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.topic_partition import TopicPartition
from ..protocol.errors import ErrorCode
from .store import MetadataStore

if TYPE_CHECKING:  # the controller's rules load with the first ElectLeaders or reassignment
    from .controller.reassignment import ReassignmentError, ReplicaAssignment


class LocalController:
    def __init__(self, store: MetadataStore, broker_id: int) -> None:
        self.store = store
        self.broker_id = broker_id
        self.active = True

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, list[TopicPartition]]:
        if broker_id != self.broker_id:
            return ErrorCode.BROKER_NOT_AVAILABLE, []
        return ErrorCode.NONE, []  # single-replica partitions are never listed

    async def elect_leaders(
        self, election_type: int, partitions: list[TopicPartition] | None
    ) -> dict[TopicPartition, tuple[ErrorCode, str | None]]:
        from .controller.election import PREFERRED

        topics = self.store.topics()
        if partitions is None:
            partitions = [(name, p) for name, info in sorted(topics.items()) for p in sorted(info.partitions)]
        results: dict[TopicPartition, tuple[ErrorCode, str | None]] = {}
        for name, p in partitions:
            info = topics.get(name)
            state = info.partitions.get(p) if info is not None else None
            if state is None:
                results[(name, p)] = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
            elif election_type == PREFERRED and state.leader != state.replicas[0]:
                results[(name, p)] = (ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, None)
            else:
                results[(name, p)] = (ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
        return results

    async def move_leadership(self, topic: str, partition: int, broker_id: int) -> tuple[ErrorCode, str | None]:
        return ErrorCode.INVALID_REQUEST, (
            "Moving a partition's leadership needs a cluster (zookeeper.connect): on a single broker "
            "every partition has one replica, which leads it"
        )

    async def alter_partition_reassignments(
        self, reassignments: dict[TopicPartition, list[int] | None]
    ) -> ErrorCode | dict[TopicPartition, ReassignmentError]:
        return {tp: self._reassign(tp, target) for tp, target in reassignments.items()}

    def _reassign(self, tp: TopicPartition, target: list[int] | None) -> ReassignmentError:
        from .controller.reassignment import ReplicaAssignment, invalid_target

        if target is None:
            return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS.message
        info = self.store.topic(tp[0])
        state = info.partitions.get(tp[1]) if info is not None else None
        current = ReplicaAssignment(list(state.replicas) if state is not None else [])
        error = invalid_target(current, target, [self.broker_id])
        if error is not None:
            return error
        if state is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."
        return ErrorCode.NONE, None  # the target is this broker's own replica: nothing to move

    async def list_partition_reassignments(
        self, partitions: list[TopicPartition] | None
    ) -> ErrorCode | dict[TopicPartition, ReplicaAssignment]:
        return {}
