"""Injected faults on a consumer's Fetch, applied where the Fetch handler reads partitions.

A Fetch names its partitions through its fetch session (an incremental fetch lists only what
changed; the session holds the rest), which only the handler resolves; so a fetch that faults may
hit is given services (`services_under_faults`) whose `replica_manager` applies them to the
partitions the handler reads, after it has authorized them:

* a partition given an error is answered with it without being read, and the fetch does not wait
  (Kafka answers an error at once);
* a paused partition reports its offsets as they are, without records, as when nothing new
  arrived: the fetch waits as long as it would with nothing to read, and its session reads the
  partition again at its next fetch, so that what is held back arrives once the pause ends.

Followers' fetches (replica id >= 0) are read as usual: they keep replicating.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import anyio

from ...replication.fetch_types import PartitionFetchRequest, PartitionFetchResult, SessionWait
from .rules import PartitionFault

if TYPE_CHECKING:
    from ...handlers.support.services import BrokerServices, ReplicaService
    from ...replication.fetch_session import FetchContext, FetchSessionCache
    from ...replication.replica_selector import ClientMetadata

TopicPartition = tuple[str, int]
Requested = list[tuple[TopicPartition, PartitionFetchRequest]]
Results = dict[TopicPartition, PartitionFetchResult]
PartitionFaultOf = Callable[[str, int], "PartitionFault | None"]
ALL_BYTES = 0x7FFFFFFF


def services_under_faults(services: BrokerServices, partition_fault: PartitionFaultOf) -> BrokerServices:
    """`services` for one Fetch that `partition_fault` may hit: its reads apply the faults."""
    sessions = _SessionsSeen(services.fetch_sessions)
    replicas = _FaultedReplicas(services.replica_manager, sessions, partition_fault)
    return replace(
        services,
        replica_manager=cast("ReplicaService", replicas),
        fetch_sessions=cast("FetchSessionCache", sessions),
    )


class _SessionsSeen:
    """The broker's fetch session cache, remembering the fetch contexts it makes for the request."""

    def __init__(self, cache: FetchSessionCache) -> None:
        self._cache = cache
        self.contexts: list[FetchContext] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def new_context(self, *args: Any, **kwargs: Any) -> FetchContext:
        context = self._cache.new_context(*args, **kwargs)
        self.contexts.append(context)
        return context

    def read_again(self, partitions: set[TopicPartition]) -> None:
        """Have the request's sessions read these partitions at their next fetch."""
        for context in self.contexts:
            context.read_again([key for key, _ in context.partitions_to_read() if key.topic_partition in partitions])


class _FaultedReplicas:
    """The replica manager as one consumer's Fetch under injected faults sees it."""

    def __init__(self, replicas: ReplicaService, sessions: _SessionsSeen, partition_fault: PartitionFaultOf) -> None:
        self._replicas = replicas
        self._sessions = sessions
        self._partition_fault = partition_fault

    def __getattr__(self, name: str) -> Any:
        return getattr(self._replicas, name)

    async def fetch_records(
        self,
        requested: Requested,
        *,
        replica_id: int,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        isolation_level: int = 0,
        session_wait: SessionWait | None = None,
        client_metadata: ClientMetadata | None = None,
    ) -> Results:
        if replica_id >= 0:  # a follower's fetch
            return await self._replicas.fetch_records(
                requested,
                replica_id=replica_id,
                max_wait_ms=max_wait_ms,
                min_bytes=min_bytes,
                max_bytes=max_bytes,
                isolation_level=isolation_level,
                session_wait=session_wait,
                client_metadata=client_metadata,
            )
        to_read, paused, failed = self._split(requested)
        results = await self._replicas.fetch_records(
            to_read,
            replica_id=replica_id,
            max_wait_ms=0 if failed else max_wait_ms,  # an error is answered at once, as Kafka does
            min_bytes=min_bytes,
            max_bytes=max_bytes,
            isolation_level=isolation_level,
            session_wait=session_wait,
            client_metadata=client_metadata,
        )
        if not paused:
            return {**results, **failed}
        self._sessions.read_again({tp for tp, _ in paused})  # what arrives meanwhile is read once resumed
        held_back = await self._offsets_only(paused, isolation_level)
        if not results and not failed and min_bytes > 0:
            await anyio.sleep(max_wait_ms / 1000)  # nothing arrives: the long poll runs out
        return {**results, **held_back, **failed}

    def _split(self, requested: Requested) -> tuple[Requested, Requested, Results]:
        """(partitions to read, partitions paused, {partition: result} of those given an error)."""
        read: Requested = []
        paused: Requested = []
        failed: Results = {}
        for tp, request in requested:
            fault = self._partition_fault(*tp)
            if fault is None:
                read.append((tp, request))
            elif fault.error is not None:
                failed[tp] = PartitionFetchResult.for_error(fault.error)
            else:
                paused.append((tp, request))
        return read, paused, failed

    async def _offsets_only(self, paused: Requested, isolation_level: int) -> Results:
        """Paused partitions' offsets as they are, without their records (nothing new to read)."""
        read = await self._replicas.fetch_records(
            paused, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=ALL_BYTES, isolation_level=isolation_level
        )
        return {tp: replace(read[tp], records=b"", records_size=0, aborted_transactions=None) for tp, _ in paused}
