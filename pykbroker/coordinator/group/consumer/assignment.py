"""What consumer groups take from the server-side assignors (`coordinator/group/assignors/`) and
the topic regular expressions (`coordinator/group/topic_regex.py`), and the names
`group.consumer.assignors` may give an assignor: Kafka's class names or the short names.
"""

from __future__ import annotations

from ..assignors import ASSIGNORS, MemberSubscription, PartitionAssignorError, TopicDescription
from ..topic_regex import InvalidTopicRegex, compile_topic_regex

__all__ = [
    "ASSIGNORS",
    "InvalidTopicRegex",
    "MemberSubscription",
    "PartitionAssignorError",
    "TopicDescription",
    "assignor_names",
    "compile_topic_regex",
]

# Kafka's class names of its assignors, as `group.consumer.assignors` may list them
ASSIGNOR_CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
    "org.apache.kafka.coordinator.group.api.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.api.assignor.RangeAssignor": "range",
}


def assignor_names(configured: list[str]) -> list[str]:
    """The assignor names of `group.consumer.assignors` (Kafka's class names or short names)."""
    return [ASSIGNOR_CLASS_NAMES.get(name, name) for name in configured]
