"""Which partition of a coordinator's internal topic holds a key: a group id in
`__consumer_offsets`, a transactional id in `__transaction_state`, a share-group state key in
`__share_group_state`. The coordinator of the key is that partition's leader.

Kafka's rule for every coordinator: `Utils.abs(key.hashCode()) % partitions`, with Java's
`String.hashCode` (over UTF-16 code units) and Kafka's `Utils.abs`, which is `Math.abs` except
that Integer.MIN_VALUE (whose `Math.abs` stays negative) gives 0.

Older pykbroker versions placed keys by `(hashCode & 0x7fffffff) % partitions` instead: for a key
with a negative hash code (other than Integer.MIN_VALUE) that usually names another partition.
`legacy_partition` keeps that rule for one purpose only: finding, while a partition loads, the
state such a version wrote there (`is_legacy_placed`), so that the coordinators move it to where it
belongs (`group/relocation.py`, `transaction/relocation.py`).
"""

from __future__ import annotations

import functools

from ..common.java_order import signed_string_hash, string_hash

INT_MIN = -(1 << 31)


def java_abs(value: int) -> int:
    """Kafka's `Utils.abs` of a Java int: its absolute value, 0 for Integer.MIN_VALUE."""
    return 0 if value == INT_MIN else abs(value)


def coordinator_partition(key: str, partition_count: int) -> int:
    """The partition holding `key`: Kafka's `Utils.abs(key.hashCode()) % partitions`."""
    return java_abs(signed_string_hash(key)) % partition_count


def share_key_partition(key_prefix: str, partition: int, partition_count: int) -> int:
    """The partition holding the share coordinator key `key_prefix + str(partition)`
    (`groupId:topicId:` then the partition), as `coordinator_partition` places it; the prefix's
    hash code is computed once for all the partitions of a topic."""
    unsigned = string_hash(str(partition), _prefix_hash(key_prefix))
    signed = unsigned - (1 << 32) if unsigned & 0x80000000 else unsigned
    return java_abs(signed) % partition_count


@functools.lru_cache(maxsize=1024)
def _prefix_hash(prefix: str) -> int:
    return string_hash(prefix)


def legacy_partition(key: str, partition_count: int) -> int:
    """The partition older pykbroker versions placed `key` in: `(hashCode & 0x7fffffff) % partitions`."""
    return (signed_string_hash(key) & 0x7FFFFFFF) % partition_count


def is_legacy_placed(key: str, partition: int, partition_count: int) -> bool:
    """Whether state of `key` found in `partition` was put there by an older pykbroker's rule,
    though Kafka's rule places `key` elsewhere."""
    return (
        coordinator_partition(key, partition_count) != partition and legacy_partition(key, partition_count) == partition
    )
