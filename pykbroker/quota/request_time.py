"""How long a request kept the broker busy: Kafka's request thread time, on an event loop.

Kafka's request quota (`request_percentage`) measures the time a request handler thread spent on
a request. Here a request runs as a coroutine on the broker's one event loop, between waits; the
time it spends running is the sum of its steps. `timed` drives a handler's coroutine step by step
and adds each step's duration to a `RequestClock`, so that time spent waiting (for the disk, for
replication, in purgatory) is not counted, as Kafka does not count a request's time in purgatory.

Which responses clients throttle themselves (KIP-219): `client_throttles(api_key, version)`, from
each API's first version whose client honours `throttle_time_ms` (Kafka's
`AbstractResponse.shouldClientThrottle`); older versions get their response delayed instead.
"""

from __future__ import annotations

import time
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

_Result = TypeVar("_Result")

# API key -> the first version whose clients throttle themselves (Kafka's shouldClientThrottle)
FIRST_CLIENT_THROTTLED_VERSION = {
    0: 6,  # Produce
    1: 8,  # Fetch
    2: 3,  # ListOffsets
    3: 6,  # Metadata
    8: 4,  # OffsetCommit
    9: 4,  # OffsetFetch
    10: 2,  # FindCoordinator
    11: 3,  # JoinGroup
    12: 2,  # Heartbeat
    13: 2,  # LeaveGroup
    14: 2,  # SyncGroup
    15: 2,  # DescribeGroups
    16: 2,  # ListGroups
    18: 2,  # ApiVersions
    19: 3,  # CreateTopics
    20: 2,  # DeleteTopics
    21: 1,  # DeleteRecords
    22: 1,  # InitProducerId
    24: 1,  # AddPartitionsToTxn
    25: 1,  # AddOffsetsToTxn
    26: 1,  # EndTxn
    28: 1,  # TxnOffsetCommit
    29: 1,  # DescribeAcls
    30: 1,  # CreateAcls
    31: 1,  # DeleteAcls
    32: 2,  # DescribeConfigs
    33: 1,  # AlterConfigs
    34: 1,  # AlterReplicaLogDirs
    35: 1,  # DescribeLogDirs
    37: 1,  # CreatePartitions
    38: 1,  # CreateDelegationToken
    39: 1,  # RenewDelegationToken
    40: 1,  # ExpireDelegationToken
    41: 1,  # DescribeDelegationToken
    42: 1,  # DeleteGroups
    43: 0,  # ElectLeaders
    44: 0,  # IncrementalAlterConfigs
    45: 0,  # AlterPartitionReassignments
    46: 0,  # ListPartitionReassignments
    47: 0,  # OffsetDelete
    50: 0,  # DescribeUserScramCredentials
    51: 0,  # AlterUserScramCredentials
    64: 0,  # UnregisterBroker
    75: 0,  # DescribeTopicPartitions
}


def client_throttles(api_key: int, version: int) -> bool:
    """Whether a client of this response version throttles itself when told to (KIP-219)."""
    first = FIRST_CLIENT_THROTTLED_VERSION.get(api_key)
    return first is not None and version >= first


class RequestClock:
    """The running time of one request so far, in nanoseconds."""

    __slots__ = ("ns",)

    def __init__(self) -> None:
        self.ns = 0

    def percentage(self) -> float:
        """The time as Kafka's request quota records it: a percentage of one second."""
        return self.ns * 100.0 / 1e9


@types.coroutine
def _steps(coro: Coroutine[Any, Any, _Result], clock: RequestClock) -> Generator[Any, Any, _Result]:
    to_send: Any = None
    to_throw: BaseException | None = None
    while True:
        started = time.perf_counter_ns()
        try:
            if to_throw is not None:
                awaited = coro.throw(to_throw)
            else:
                awaited = coro.send(to_send)
        except StopIteration as done:
            clock.ns += time.perf_counter_ns() - started
            return done.value
        except BaseException:
            clock.ns += time.perf_counter_ns() - started
            raise
        clock.ns += time.perf_counter_ns() - started
        to_send, to_throw = None, None
        try:
            to_send = yield awaited
        except BaseException as exc:  # a cancellation, or whatever the loop throws in
            to_throw = exc


async def timed(coro: Coroutine[Any, Any, _Result], clock: RequestClock) -> _Result:
    """Await `coro`, adding the time each of its steps runs to `clock`."""
    return await _steps(coro, clock)
