"""Histories of client operations and their checker, as Jepsen's Kafka "queue" workload: record
what real clients send, acknowledge, poll and commit while faults happen (`History`, the
workloads), read the log at the end (`final_read`) and check one against the other (`check`).

    from tests.history import (History, READ_COMMITTED, READ_UNCOMMITTED, check, final_read,
                               queue_workloads, running, wait_for_progress)
"""

from .checker import (
    ABORTED_READ,
    ACKED_BUT_TRUNCATED,
    ANOMALY_KINDS,
    COMMIT_BEYOND_END,
    DISAGREEING_OFFSETS,
    DUPLICATED,
    LOST,
    REORDERED,
    UNCOMMITTED_READ,
    WRITTEN_AFTER_FAILURE,
    Anomaly,
    Verdict,
    check,
)
from .events import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    Committed,
    Event,
    History,
    Note,
    Polled,
    SendAcknowledged,
    SendFailed,
    SendInvoked,
    TxnAborted,
    TxnBegun,
    TxnCommitted,
    TxnIndeterminate,
)
from .final import FinalLog, final_read
from .workloads import (
    ConsumerGroupWorkload,
    ConsumerMember,
    IdempotentProducerWorkload,
    TransactionalProducerWorkload,
    Workload,
    create_topic,
    queue_workloads,
    running,
    wait_for_progress,
)

__all__ = [
    "ABORTED_READ", "ACKED_BUT_TRUNCATED", "ANOMALY_KINDS", "COMMIT_BEYOND_END",
    "DISAGREEING_OFFSETS", "DUPLICATED", "LOST", "READ_COMMITTED", "READ_UNCOMMITTED",
    "REORDERED", "UNCOMMITTED_READ", "WRITTEN_AFTER_FAILURE",
    "Anomaly", "Committed", "ConsumerGroupWorkload", "ConsumerMember", "Event", "FinalLog",
    "History", "IdempotentProducerWorkload", "Note", "Polled", "SendAcknowledged", "SendFailed",
    "SendInvoked", "TransactionalProducerWorkload", "TxnAborted", "TxnBegun", "TxnCommitted",
    "TxnIndeterminate", "Verdict", "Workload", "check", "create_topic", "final_read",
    "queue_workloads", "running", "wait_for_progress",
]
