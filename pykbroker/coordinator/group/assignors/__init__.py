"""Server-side partition assignors of Kafka 4's group coordinator, as pure functions.

    spec.py                   MemberSubscription, TopicDescription, PartitionAssignor, the
                              orderings the assignors share (Kafka's Uuid order, Java HashSet order)
    uniform.py                UniformAssignor ("uniform", the consumer groups' default)
    uniform_homogeneous.py    its builder when every member subscribes to the same topics
    uniform_heterogeneous.py  its builder otherwise
    range.py                  RangeAssignor ("range")
    simple.py                 SimpleAssignor ("simple", share groups)

`ASSIGNORS` maps each name to an instance; `CONSUMER_GROUP_ASSIGNORS` lists those a consumer group
may use (`group.consumer.assignors`, the first being the default) and `SHARE_GROUP_ASSIGNOR` is the
share groups' one.
"""

from __future__ import annotations

from .range import RangeAssignor
from .simple import SimpleAssignor
from .spec import (
    GroupAssignment,
    MemberSubscription,
    PartitionAssignor,
    PartitionAssignorError,
    TopicDescription,
    is_homogeneous,
)
from .uniform import UniformAssignor

ASSIGNORS: dict[str, PartitionAssignor] = {
    "uniform": UniformAssignor(),
    "range": RangeAssignor(),
    "simple": SimpleAssignor(),
}
CONSUMER_GROUP_ASSIGNORS: tuple[str, ...] = ("uniform", "range")
SHARE_GROUP_ASSIGNOR = "simple"

__all__ = [
    "ASSIGNORS",
    "CONSUMER_GROUP_ASSIGNORS",
    "SHARE_GROUP_ASSIGNOR",
    "GroupAssignment",
    "MemberSubscription",
    "PartitionAssignor",
    "PartitionAssignorError",
    "RangeAssignor",
    "SimpleAssignor",
    "TopicDescription",
    "UniformAssignor",
    "is_homogeneous",
]
