"""The records of `__transaction_state`: Kafka's key and value formats, byte for byte.

Each key and value starts with an int16 version, then the fields of that version:

    TransactionLogKey   v0     transactionalId: string
    TransactionLogValue v0-v1  producerId: int64, producerEpoch: int16, transactionTimeoutMs:
                               int32, transactionStatus: int8, transactionPartitions:
                               [topic: string, partitionIds: [int32]] (null when Empty),
                               transactionLastUpdateTimestampMs: int64,
                               transactionStartTimestampMs: int64
                               (v1 is flexible: compact strings and arrays, tagged fields;
                               later Kafka versions tag previousProducerId (0), nextProducerId (1)
                               and clientTransactionVersion (2), read here and otherwise unused)

Kafka 3.9 writes key v0 and value v0 (v1 only once `transaction.version` 1 is enabled, which a
ZooKeeper-mode cluster never does); both versions are read. A null value is a tombstone: the
transactional id expired. Keys of other versions are reported as unknown and skipped, as Kafka
does. The status ids are TransactionState ids (`metadata.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...common.topic_partition import TopicPartition
from ..record_format import RecordFormat, record_version, schema_field

KEY_VERSION = 0
VALUE_VERSION = 0


TransactionLogKey = RecordFormat(
    {
        "type": "data",
        "name": "TransactionLogKey",
        "validVersions": "0",
        "flexibleVersions": "none",
        "fields": [schema_field("TransactionalId", "string")],
    }
)

TransactionLogValue = RecordFormat(
    {
        "type": "data",
        "name": "TransactionLogValue",
        "validVersions": "0-1",
        "flexibleVersions": "1+",
        "fields": [
            schema_field("ProducerId", "int64"),
            schema_field("PreviousProducerId", "int64", "1+", taggedVersions="1+", tag=0, default=-1),
            schema_field("NextProducerId", "int64", "1+", taggedVersions="1+", tag=1, default=-1),
            schema_field("ProducerEpoch", "int16"),
            schema_field("TransactionTimeoutMs", "int32"),
            schema_field("TransactionStatus", "int8"),
            schema_field(
                "TransactionPartitions",
                "[]PartitionsSchema",
                nullableVersions="0+",
                fields=[schema_field("Topic", "string"), schema_field("PartitionIds", "[]int32")],
            ),
            schema_field("TransactionLastUpdateTimestampMs", "int64"),
            schema_field("TransactionStartTimestampMs", "int64"),
            schema_field("ClientTransactionVersion", "int16", "1+", taggedVersions="1+", tag=2, default=0),
        ],
    }
)


@dataclass(frozen=True)
class TxnLogValue:
    """What a TransactionLogValue holds (`partitions` empty when the value has none)."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: frozenset[TopicPartition]
    last_update_timestamp: int
    start_timestamp: int


@dataclass(frozen=True)
class UnknownKey:
    version: int


# -- keys -------------------------------------------------------------------------------------


def txn_key(transactional_id: str) -> bytes:
    return TransactionLogKey.encode(TransactionLogKey.cls(transactional_id=transactional_id), KEY_VERSION)


def decode_key(data: bytes) -> str | UnknownKey:
    """The transactional id of a key, or UnknownKey for a key of another version."""
    version = record_version(data)
    if version != KEY_VERSION:
        return UnknownKey(version)
    return TransactionLogKey.decode(data, version).transactional_id


# -- values -----------------------------------------------------------------------------------


def txn_value(value: TxnLogValue, *, empty: bool, version: int = VALUE_VERSION) -> bytes:
    """A TransactionLogValue; `empty` (state Empty) writes null partitions, as Kafka does."""
    cls = TransactionLogValue.cls
    partitions = None
    if not empty:
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(value.partitions):
            by_topic.setdefault(topic, []).append(index)
        partitions = [cls.PartitionsSchema(topic=t, partition_ids=ids) for t, ids in by_topic.items()]
    return TransactionLogValue.encode(
        cls(
            producer_id=value.producer_id,
            previous_producer_id=-1,
            next_producer_id=-1,
            producer_epoch=value.producer_epoch,
            transaction_timeout_ms=value.timeout_ms,
            transaction_status=value.status,
            transaction_partitions=partitions,
            transaction_last_update_timestamp_ms=value.last_update_timestamp,
            transaction_start_timestamp_ms=value.start_timestamp,
            client_transaction_version=0,
        ),
        version,
    )


def decode_value(data: bytes) -> TxnLogValue:
    version = record_version(data)
    value = TransactionLogValue.decode(data, version)
    partitions = frozenset((p.topic, index) for p in (value.transaction_partitions or []) for index in p.partition_ids)
    return TxnLogValue(
        producer_id=value.producer_id,
        producer_epoch=value.producer_epoch,
        timeout_ms=value.transaction_timeout_ms,
        status=value.transaction_status,
        partitions=partitions,
        last_update_timestamp=value.transaction_last_update_timestamp_ms,
        start_timestamp=value.transaction_start_timestamp_ms,
    )
