"""A partition's name as every room spells it: (topic, partition index).

A plain tuple, so `("orders", 0)` is one and it hashes, sorts and prints as a tuple.
"""

from __future__ import annotations

TopicPartition = tuple[str, int]
