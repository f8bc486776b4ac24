"""Kafka's `UniformAssignor` ("uniform", the consumer groups' default server-side assignor).

Guarantees: every partition of a subscribed topic goes to exactly one member subscribed to it;
members differ by at most one partition when they all subscribe to the same topics (and as close
to that as Kafka gets otherwise); members keep as much of their current assignment as balance
allows; with member and replica racks known, members are given partitions on their own rack where
the balance leaves a choice. Deterministic: the same members and topics give the same assignment.

The homogeneous case (all members subscribe to the same topics) and the heterogeneous one are
built by `uniform_homogeneous` and `uniform_heterogeneous`, as Kafka's two builders.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from .spec import GroupAssignment, MemberSubscription, TopicDescription, is_homogeneous
from .uniform_heterogeneous import assign_heterogeneous
from .uniform_homogeneous import assign_homogeneous


class UniformAssignor:
    name = "uniform"

    def assign(
        self,
        members: Mapping[str, MemberSubscription],
        topics: Mapping[uuid.UUID, TopicDescription],
    ) -> GroupAssignment:
        if not members:
            return {}
        if is_homogeneous(members):
            return assign_homogeneous(members, topics)
        return assign_heterogeneous(members, topics)
