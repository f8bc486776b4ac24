"""`__transaction_state` records byte for byte as Kafka 3.9 writes them (TransactionLogKey v0,
TransactionLogValue v0), built here by hand from Kafka's schema, and v1 (flexible) read too."""
from __future__ import annotations

import struct

from pykbroker.coordinator.transaction.formats import (
    TxnLogValue,
    UnknownKey,
    decode_key,
    decode_value,
    txn_key,
    txn_value,
)


def string(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def test_the_key_is_version_0_and_the_transactional_id():
    assert txn_key("tx-1") == b"\x00\x00" + string("tx-1")
    assert decode_key(txn_key("tx-1")) == "tx-1"


def test_keys_of_other_versions_are_unknown():
    assert decode_key(b"\x00\x01" + string("g")) == UnknownKey(1)


ONGOING = TxnLogValue(producer_id=7, producer_epoch=3, timeout_ms=60000, status=1,
                      partitions=frozenset({("b", 2), ("a", 1), ("a", 0)}),
                      last_update_timestamp=1700000000123, start_timestamp=1700000000000)


def test_a_value_is_version_0_with_its_partitions_grouped_by_topic():
    expected = (
        struct.pack(">hqhib", 0, 7, 3, 60000, 1)
        + struct.pack(">i", 2)
        + string("a") + struct.pack(">iii", 2, 0, 1)
        + string("b") + struct.pack(">ii", 1, 2)
        + struct.pack(">qq", 1700000000123, 1700000000000)
    )
    assert txn_value(ONGOING, empty=False) == expected
    assert decode_value(expected) == ONGOING


def test_an_empty_transaction_has_null_partitions():
    empty = TxnLogValue(7, 0, 60000, 0, frozenset(), 5, -1)
    expected = struct.pack(">hqhib", 0, 7, 0, 60000, 0) + struct.pack(">i", -1) + struct.pack(">qq", 5, -1)
    assert txn_value(empty, empty=True) == expected
    assert decode_value(expected) == empty


def test_version_1_is_flexible_and_its_tagged_fields_are_read_past():
    compact_partitions = (
        b"\x03" + b"\x02a" + b"\x03" + struct.pack(">ii", 0, 1) + b"\x00"
        + b"\x02b" + b"\x02" + struct.pack(">i", 2) + b"\x00"
    )
    tagged = b"\x02" + b"\x00\x08" + struct.pack(">q", 6) + b"\x02\x02" + struct.pack(">h", 2)
    data = (struct.pack(">hqhib", 1, 7, 3, 60000, 1) + compact_partitions
            + struct.pack(">qq", 1700000000123, 1700000000000) + tagged)
    assert decode_value(data) == ONGOING
    assert decode_value(txn_value(ONGOING, empty=False, version=1)) == ONGOING
