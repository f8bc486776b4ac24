"""Incremental fetch sessions (KIP-227): which partitions a Fetch request reads and answers.

This module owns the fetch session cache and the per-request *fetch context*. It does no I/O and
reads no logs: the Fetch handler asks it which partitions to read, reads them, and hands the
results back so that the context can choose the partitions that go into the response and the
session id that the response carries. Partitions are asked for and answered in the fetch
vocabulary of `fetch_types.py` (`PartitionFetchRequest`, `PartitionFetchResult`), which the
replica manager's reads share.

A Fetch request (v7+) names a session with `session_id` and `session_epoch`:

| session_id | session_epoch | meaning | context |
|---|---|---|---|
| 0 | -1 (FINAL) | no session | `SessionlessFetchContext` |
| 0 | 0 (INITIAL) | full fetch, create a session | `FullFetchContext` |
| N | 0 | close session N, full fetch, create a new one | `FullFetchContext` |
| N | -1 | close session N, full fetch, no new one | `SessionlessFetchContext` |
| N | the session's epoch | incremental fetch on session N | `IncrementalFetchContext` |
| N | any other epoch | error | `SessionErrorContext` (INVALID_FETCH_SESSION_EPOCH) |
| unknown N | > 0 | error | `SessionErrorContext` (FETCH_SESSION_ID_NOT_FOUND) |

Requests below v7 have no session fields and are always sessionless. A session created by a
request of v13+ identifies topics by id, one created below v13 by name; using a session across
that boundary is FETCH_SESSION_TOPIC_ID_ERROR.

An incremental request carries only the partitions that were added or whose fetch parameters
changed, plus the partitions to forget; the session remembers the rest. Its response leaves out
every partition with nothing new for the fetcher (see `CachedPartition.must_respond`), and a
partition that returned records moves to the end of the session's order so that the partitions
after it are read first next time and are not starved by the response size limit.

Keys. A topic-partition is a `TopicIdPartition(topic_id, topic, partition)`. Below v13 the id is
`ZERO_UUID` and partitions are told apart by name; from v13 on they are told apart by id, and the
name is `None` while the id is unknown to the broker (`TopicIdPartition.identity`). The cache
puts the handler's keys in that form (`TopicIdPartition.as_requested`) and hands them back in
it; results may be keyed either way. Partitions of unknown topic ids are not read: they are
answered with UNKNOWN_TOPIC_ID, and a session keeps them until their topic id becomes known.

Usage by a Fetch handler (one event loop thread; no locks):

    cache = FetchSessionCache(max_slots=config["max.incremental.fetch.session.cache.slots"])
    context = cache.new_context(version=v, session_id=req.session_id,
                                session_epoch=req.session_epoch, fetch_data=fetch_data,
                                forgotten=forgotten, is_follower=req.replica_id >= 0,
                                now_ms=now_ms, topic_names=names_by_topic_id)
    results = {key: read(key, params) for key, params in context.partitions_to_read()}
    response = context.build_response(results, now_ms=now_ms)
    # response.error_code, response.session_id, response.partitions (ordered (key, result))
"""

from __future__ import annotations

import random
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import NamedTuple, Protocol

from ..common.purgatory import DelayedOperationPurgatory
from ..common.uuids import ZERO_UUID
from ..protocol.errors import ErrorCode
from .fetch_types import EpochEndOffset, PartitionFetchRequest, PartitionFetchResult  # noqa: F401

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_INT32 = 2**31 - 1

FIRST_VERSION_WITH_SESSIONS = 7
FIRST_VERSION_WITH_TOPIC_IDS = 13

DEFAULT_MAX_SLOTS = 1000  # max.incremental.fetch.session.cache.slots
DEFAULT_EVICTION_MS = 120_000  # how long a session must be unused (or have existed) to be evictable
DEFAULT_SHARDS = 8  # the cache is split into shards, each with its own slots and id range


def session_wait_key(session_id: int) -> tuple[str, int]:
    """The purgatory key a fetch waiting on session `session_id` watches."""
    return ("fetch session", session_id)


def next_epoch(epoch: int) -> int:
    """The session epoch that follows `epoch`: FINAL stays FINAL, and the maximum wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    if epoch == MAX_INT32:
        return 1
    return epoch + 1


def is_full_fetch(session_epoch: int) -> bool:
    """A request with epoch INITIAL or FINAL lists all its partitions (and ends any session)."""
    return session_epoch in (INITIAL_EPOCH, FINAL_EPOCH)


class PartitionChanges(Protocol):
    """What the session cache follows: the replica manager's partition changes and its fetch purgatory."""

    fetch_purgatory: DelayedOperationPurgatory

    def add_partition_change_listener(self, listener: Callable[[tuple[str, int]], None]) -> None: ...


class TopicIdPartition(NamedTuple):
    """A topic-partition as a Fetch request names it.

    `topic_id` is `ZERO_UUID` for requests below v13; `topic` is `None` for a v13+ topic id the
    broker does not know.
    """

    topic_id: uuid.UUID
    topic: str | None
    partition: int

    @property
    def identity(self) -> Hashable:
        """What tells two keys apart: the topic id when there is one, else the topic name."""
        if self.topic_id != ZERO_UUID:
            return (self.topic_id, self.partition)
        return (self.topic, self.partition)

    @property
    def topic_partition(self) -> tuple[str, int]:
        """(topic name, partition) of a resolved key: the handler reads only those."""
        if self.topic is None:
            raise ValueError(f"topic id {self.topic_id} of partition {self.partition} is not resolved to a name")
        return (self.topic, self.partition)

    @property
    def is_resolved(self) -> bool:
        """Whether the topic name is known (always, below v13)."""
        return self.topic is not None

    def as_requested(self, version: int, topic_names: Mapping[uuid.UUID, str]) -> TopicIdPartition:
        """This key as a request of `version` names it: by name below v13 (whatever id it
        carries), by id from v13 on, with the name filled in from `topic_names` if missing."""
        if version < FIRST_VERSION_WITH_TOPIC_IDS:
            return self if self.topic_id == ZERO_UUID else self._replace(topic_id=ZERO_UUID)
        if self.topic is not None or self.topic_id == ZERO_UUID:
            return self
        return self._replace(topic=topic_names.get(self.topic_id))


class FetchResponsePlan(NamedTuple):
    """The top level of the Fetch response and the partitions it lists, in order."""

    error_code: int
    session_id: int
    partitions: list[tuple[TopicIdPartition, PartitionFetchResult]]


FetchData = Mapping[TopicIdPartition, PartitionFetchRequest]
Results = Mapping[TopicIdPartition, PartitionFetchResult]


class CachedPartition:
    """A session's memory of one partition: the fetcher's last request parameters and what the
    last response told the fetcher (high watermark and log start offset)."""

    __slots__ = (
        "topic_id",
        "topic",
        "partition",
        "fetch_offset",
        "fetcher_log_start_offset",
        "max_bytes",
        "current_leader_epoch",
        "last_fetched_epoch",
        "high_watermark",
        "local_log_start_offset",
        "position",
    )

    def __init__(
        self,
        key: TopicIdPartition,
        request: PartitionFetchRequest,
        high_watermark: int = -1,
        local_log_start_offset: int = -1,
    ) -> None:
        self.topic_id = key.topic_id
        self.topic = key.topic
        self.partition = key.partition
        self.update_request(request)
        self.high_watermark = high_watermark
        self.local_log_start_offset = local_log_start_offset
        self.position = 0  # its place in the session's order (FetchSession numbers them)

    @property
    def key(self) -> TopicIdPartition:
        return TopicIdPartition(self.topic_id, self.topic, self.partition)

    @property
    def request(self) -> PartitionFetchRequest:
        return PartitionFetchRequest(
            self.fetch_offset,
            self.fetcher_log_start_offset,
            self.max_bytes,
            self.current_leader_epoch,
            self.last_fetched_epoch,
        )

    def update_request(self, request: PartitionFetchRequest) -> None:
        self.fetch_offset = request.fetch_offset
        self.fetcher_log_start_offset = request.log_start_offset
        self.max_bytes = request.max_bytes
        self.current_leader_epoch = request.current_leader_epoch
        self.last_fetched_epoch = request.last_fetched_epoch

    def resolve_topic_name(self, topic_names: Mapping[uuid.UUID, str]) -> None:
        if self.topic is None:
            self.topic = topic_names.get(self.topic_id)

    def must_respond(self, result: PartitionFetchResult, *, remember: bool) -> bool:
        """Whether an incremental response must list this partition with `result`.

        It must when there are records, a preferred read replica, a diverging epoch or an
        error, or when the high watermark or log start offset differs from what the fetcher was
        last told. With `remember`, the new values become what the fetcher was told; after an
        error the remembered high watermark is -1 so the partition is sent again once the error
        clears. (A change of the last stable offset alone does not make a partition listed.)
        """
        must = result.has_records
        if self.high_watermark != result.high_watermark:
            must = True
            if remember:
                self.high_watermark = result.high_watermark
        if self.local_log_start_offset != result.log_start_offset:
            must = True
            if remember:
                self.local_log_start_offset = result.log_start_offset
        if result.has_preferred_read_replica:
            must = True
        if result.error_code != ErrorCode.NONE:
            must = True
            if remember:
                self.high_watermark = -1
        if result.has_diverging_epoch:
            must = True
        return must


class FetchSession:
    """One incremental fetch session: its partitions in iteration order, and its epoch.

    An incremental fetch reads only the session's *stale* partitions: those the request added or
    changed, those the broker reported changed since (`mark_changed`: records appended, high
    watermark or log start offset moved, leadership changed), those the last response listed or
    left readable data in (a response size limit), and those whose topic id is not known yet.
    The others cannot have news for the fetcher, so a fetch costs in proportion to what changed,
    not to the session's size.
    """

    def __init__(
        self,
        session_id: int,
        *,
        privileged: bool,
        uses_topic_ids: bool,
        partitions: dict[Hashable, CachedPartition],
        now_ms: int,
    ) -> None:
        self.id = session_id
        self.privileged = privileged  # created by a follower
        self.uses_topic_ids = uses_topic_ids
        self.partitions = partitions  # identity -> CachedPartition, in iteration order
        self._next_position = 0
        for cached in partitions.values():
            self._place_last(cached)
        self.stale: set[Hashable] = set()  # identities to read at the next fetch
        self.unresolved: set[Hashable] = {i for i, c in partitions.items() if c.topic is None}
        self.creation_ms = now_ms
        self.last_used_ms = now_ms
        self.epoch = next_epoch(INITIAL_EPOCH)
        # Snapshots taken when the cache last touched the session; eviction ranks by these.
        self.cached_size = -1
        self.evictable_by_all = False
        self.evictable_by_privileged = False

    @property
    def size(self) -> int:
        return len(self.partitions)

    def keys(self) -> list[TopicIdPartition]:
        return [cached.key for cached in self.partitions.values()]

    def eviction_rank(self) -> tuple[bool, int, int]:
        """Lower ranks are evicted first: consumer sessions, then smaller ones, then lower ids."""
        return (self.privileged, self.cached_size, self.id)

    def update(
        self, fetch_data: FetchData, forgotten: Iterable[TopicIdPartition]
    ) -> tuple[list[CachedPartition], list[CachedPartition]]:
        """Add new partitions at the end, refresh the parameters of known ones, drop forgotten;
        the partitions added and those dropped. What the request named is read."""
        added, dropped = [], []
        for key, request in fetch_data.items():
            cached = self.partitions.get(key.identity)
            if cached is None:
                cached = self.partitions[key.identity] = CachedPartition(key, request)
                self._place_last(cached)
                added.append(cached)
                if cached.topic is None:
                    self.unresolved.add(key.identity)
            else:
                cached.update_request(request)
            self.stale.add(key.identity)
        for key in forgotten:
            cached = self.partitions.pop(key.identity, None)
            self.stale.discard(key.identity)
            self.unresolved.discard(key.identity)
            if cached is not None:
                dropped.append(cached)
        return added, dropped

    def resolve_topic_names(self, topic_names: Mapping[uuid.UUID, str]) -> list[CachedPartition]:
        """Name the partitions whose topic id became known; those it named (now stale)."""
        resolved = []
        for identity in list(self.unresolved):
            cached = self.partitions[identity]
            cached.resolve_topic_name(topic_names)
            if cached.topic is not None:
                self.unresolved.discard(identity)
                self.stale.add(identity)
                resolved.append(cached)
        return resolved

    def mark_changed(self, identity: Hashable) -> None:
        if identity in self.partitions:
            self.stale.add(identity)

    def take_stale(self) -> list[Hashable]:
        """The stale partitions in session order, which are then no longer stale."""
        taken = sorted(self.stale, key=lambda identity: self.partitions[identity].position)
        self.stale = set()
        return taken

    def move_to_end(self, identity: Hashable) -> None:
        cached = self.partitions[identity] = self.partitions.pop(identity)
        self._place_last(cached)

    def _place_last(self, cached: CachedPartition) -> None:
        self._next_position += 1
        cached.position = self._next_position

    def __repr__(self) -> str:
        return (
            f"FetchSession(id={self.id}, privileged={self.privileged}, size={self.size}, "
            f"uses_topic_ids={self.uses_topic_ids}, epoch={self.epoch})"
        )


class FetchContext(ABC):
    """What one Fetch request reads and how its response is built."""

    @abstractmethod
    def partitions(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        """Every partition of this fetch in order, including unknown topic ids (topic None)."""

    def partitions_to_read(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        """The partitions the handler reads: those whose topic name is known, in order."""
        return [(key, request) for key, request in self.partitions() if key.is_resolved]

    def session_partitions(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        """Every partition the fetch stands for, read or not, with the fetcher's last request
        for it (whose fetch offset is, for a follower, its log end offset): an incremental fetch
        reads only its stale partitions but speaks for its whole session, as Kafka's leader
        takes each of them into account."""
        return self.partitions_to_read()

    @abstractmethod
    def preview_response(self, results: Results) -> FetchResponsePlan:
        """The response `build_response` would give now, changing nothing (for quota sizing)."""

    @abstractmethod
    def build_response(self, results: Results, *, now_ms: int) -> FetchResponsePlan:
        """The response: top-level error, session id and the partitions to list, in order.

        `results` maps partitions to what reading them produced, in the order the response
        should list them: the partitions read, in `partitions_to_read()` order, then the ones
        the handler answered with an error without reading. Every partition of the fetch whose
        topic id is unknown and which `results` leaves out is answered with UNKNOWN_TOPIC_ID
        after them. Results for partitions outside this fetch are ignored.
        """

    def throttled_response(self) -> FetchResponsePlan:
        """The response when the fetch is throttled: no partitions, and nothing changes."""
        return FetchResponsePlan(ErrorCode.NONE, INVALID_SESSION_ID, [])

    @property
    def session_to_wait_on(self) -> int | None:
        """The id of the incremental session whose other partitions a waiting fetch watches."""
        return None

    def changed_meanwhile(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        """Partitions to read too after a wait (incremental sessions: those that changed)."""
        return []

    def peek_changed_meanwhile(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        return []

    def read_again(self, keys: Iterable[TopicIdPartition]) -> None:
        """Read these partitions at the session's next fetch even if nothing changes (a fetch
        that held them back, such as a paused partition); nothing to do without a session."""


class SessionErrorContext(FetchContext):
    """The session named by the request cannot be used: answer with a top-level error only."""

    def __init__(self, error_code: ErrorCode) -> None:
        self.error_code = error_code

    def partitions(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        return []

    def preview_response(self, results: Results) -> FetchResponsePlan:
        return FetchResponsePlan(self.error_code, INVALID_SESSION_ID, [])

    def build_response(self, results: Results, *, now_ms: int) -> FetchResponsePlan:
        return self.preview_response(results)


class _RequestedPartitions(FetchContext, ABC):
    """A context that answers exactly the partitions its request lists."""

    def __init__(self, fetch_data: dict[TopicIdPartition, PartitionFetchRequest]) -> None:
        self.fetch_data = fetch_data
        self._keys_by_identity = {key.identity: key for key in fetch_data}

    def partitions(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        return list(self.fetch_data.items())

    def preview_response(self, results: Results) -> FetchResponsePlan:
        return FetchResponsePlan(ErrorCode.NONE, INVALID_SESSION_ID, self._all_listed(results))

    def _all_listed(self, results: Results) -> list[tuple[TopicIdPartition, PartitionFetchResult]]:
        return _with_unknown_topic_ids(results, self._keys_by_identity)


class SessionlessFetchContext(_RequestedPartitions):
    """A full fetch without a session: list every partition, remember nothing."""

    def build_response(self, results: Results, *, now_ms: int) -> FetchResponsePlan:
        return self.preview_response(results)


class FullFetchContext(_RequestedPartitions):
    """A full fetch that asks for a new session: list every partition and, if the cache has (or
    can make) room, remember them in a new session whose id the response carries."""

    def __init__(
        self,
        cache: FetchSessionCache,
        fetch_data: dict[TopicIdPartition, PartitionFetchRequest],
        *,
        uses_topic_ids: bool,
        is_follower: bool,
    ) -> None:
        super().__init__(fetch_data)
        self._cache = cache
        self._uses_topic_ids = uses_topic_ids
        self._is_follower = is_follower

    def build_response(self, results: Results, *, now_ms: int) -> FetchResponsePlan:
        listed = self._all_listed(results)
        session_id = self._cache.maybe_create_session(
            now_ms=now_ms,
            privileged=self._is_follower,
            size=len(listed),
            uses_topic_ids=self._uses_topic_ids,
            create_partitions=lambda: self._session_partitions(listed),
        )
        return FetchResponsePlan(ErrorCode.NONE, session_id, listed)

    def _session_partitions(
        self, listed: list[tuple[TopicIdPartition, PartitionFetchResult]]
    ) -> dict[Hashable, CachedPartition]:
        return {
            key.identity: CachedPartition(key, self.fetch_data[key], result.high_watermark, result.log_start_offset)
            for key, result in listed
        }


class IncrementalFetchContext(FetchContext):
    """A fetch on an existing session: read its stale partitions, list only what changed."""

    def __init__(self, session: FetchSession, request_epoch: int) -> None:
        self.session = session
        self._request_epoch = request_epoch
        self._read = session.take_stale()

    def partitions(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        """The stale partitions, then those of topic ids not known yet (answered, not read)."""
        cached = self.session.partitions
        unresolved = [i for i in self.session.unresolved if i not in self._read]
        return [(cached[i].key, cached[i].request) for i in [*self._read, *unresolved] if i in cached]

    def session_partitions(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        return [(cached.key, cached.request) for cached in self.session.partitions.values() if cached.topic is not None]

    @property
    def session_to_wait_on(self) -> int | None:
        return self.session.id

    def changed_meanwhile(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        """Partitions of the session that changed since this fetch read its stale ones (while it
        waited for data): they are read by this fetch too, and are no longer stale."""
        taken = [i for i in self.session.take_stale() if i not in self._read and i in self.session.partitions]
        self._read.extend(taken)
        cached = self.session.partitions
        return [(cached[i].key, cached[i].request) for i in taken if cached[i].topic is not None]

    def peek_changed_meanwhile(self) -> list[tuple[TopicIdPartition, PartitionFetchRequest]]:
        """What `changed_meanwhile` would give, changing nothing."""
        cached = self.session.partitions
        return [
            (cached[i].key, cached[i].request)
            for i in self.session.stale
            if i not in self._read and i in cached and cached[i].topic is not None
        ]

    def read_again(self, keys: Iterable[TopicIdPartition]) -> None:
        for key in keys:
            self.session.mark_changed(key.identity)

    def preview_response(self, results: Results) -> FetchResponsePlan:
        return self._respond(results, remember=False)

    def build_response(self, results: Results, *, now_ms: int) -> FetchResponsePlan:
        return self._respond(results, remember=True)

    def throttled_response(self) -> FetchResponsePlan:
        self.session.stale.update(self._read)  # nothing was answered: read them next time
        if self._session_moved_on():
            return FetchResponsePlan(ErrorCode.INVALID_FETCH_SESSION_EPOCH, self.session.id, [])
        return FetchResponsePlan(ErrorCode.NONE, self.session.id, [])

    def _session_moved_on(self) -> bool:
        """Whether another request used the session since this one (e.g. a duplicate)."""
        return self.session.epoch != next_epoch(self._request_epoch)

    def _respond(self, results: Results, *, remember: bool) -> FetchResponsePlan:
        if self._session_moved_on():
            return FetchResponsePlan(ErrorCode.INVALID_FETCH_SESSION_EPOCH, self.session.id, [])
        keys_by_identity = {key.identity: key for key, _ in self.partitions()}
        listed = []
        for key, result in _with_unknown_topic_ids(results, keys_by_identity):
            if self._must_list(key, result, remember=remember):
                listed.append((key, result))
            elif remember and result.more_to_read:
                self.session.mark_changed(key.identity)  # left out by the size limit: read again
        return FetchResponsePlan(ErrorCode.NONE, self.session.id, listed)

    def _must_list(self, key: TopicIdPartition, result: PartitionFetchResult, *, remember: bool) -> bool:
        cached = self.session.partitions.get(key.identity)
        if cached is None or not cached.must_respond(result, remember=remember):
            return False
        if remember:
            self.session.mark_changed(key.identity)  # what was news is read again next time
            if result.has_records:
                self.session.move_to_end(key.identity)
        return True


def _with_unknown_topic_ids(
    results: Results, keys_by_identity: Mapping[Hashable, TopicIdPartition]
) -> list[tuple[TopicIdPartition, PartitionFetchResult]]:
    """`results` for the partitions of the fetch, keyed as the fetch names them, followed by an
    UNKNOWN_TOPIC_ID answer for each unresolved partition `results` leaves out."""
    listed = {}
    for key, result in results.items():
        own_key = keys_by_identity.get(key.identity)
        if own_key is not None:
            listed[key.identity] = (own_key, result)
    for identity, key in keys_by_identity.items():
        if not key.is_resolved and identity not in listed:
            listed[identity] = (key, PartitionFetchResult.for_error(ErrorCode.UNKNOWN_TOPIC_ID))
    return list(listed.values())


class _CacheShard:
    """A share of the cache's slots with its own range of session ids; eviction stays within
    a shard."""

    def __init__(
        self,
        max_entries: int,
        eviction_ms: int,
        id_range: range,
        rng: random.Random,
        index: _PartitionIndex,
    ) -> None:
        self.index = index
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.id_range = id_range
        self._rng = rng
        self.sessions: dict[int, FetchSession] = {}
        self.evictions = 0

    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.index.remove(session, session.partitions.values())
        return session

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Mark the session used now and re-rank it for eviction.

        A session becomes evictable by anyone once it has existed longer than `eviction_ms`;
        before that only a follower's new session may evict it, and only if it is a consumer's.
        """
        session.last_used_ms = now_ms
        session.cached_size = session.size
        old_enough = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_all = old_enough
        session.evictable_by_privileged = old_enough or not session.privileged

    def maybe_create_session(
        self,
        *,
        now_ms: int,
        privileged: bool,
        size: int,
        uses_topic_ids: bool,
        create_partitions: Callable[[], dict[Hashable, CachedPartition]],
    ) -> int:
        """Create a session if there is a free slot or one can be freed; its id, else 0."""
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, size, now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(
            self._new_session_id(),
            privileged=privileged,
            uses_topic_ids=uses_topic_ids,
            partitions=create_partitions(),
            now_ms=now_ms,
        )
        self.sessions[session.id] = session
        self.index.add(session, session.partitions.values())
        self.touch(session, now_ms)
        return session.id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Free a slot for a new session of `size` partitions, if Kafka's rules allow.

        The least recently used session goes if it has been unused for longer than
        `eviction_ms`. Otherwise the lowest ranked evictable session goes if it ranks below the
        new one (`FetchSession.eviction_rank`, the new one with id 0): a follower's new session
        may evict any consumer session, and a new session may evict an old-enough session of its
        own kind with fewer partitions than it has.
        """
        if not self.sessions:
            return False
        least_recent = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - least_recent.last_used_ms > self.eviction_ms:
            return self._evict(least_recent)
        candidates = [
            s for s in self.sessions.values() if (s.evictable_by_privileged if privileged else s.evictable_by_all)
        ]
        if not candidates:
            return False
        weakest = min(candidates, key=FetchSession.eviction_rank)
        if (privileged, size, 0) < weakest.eviction_rank():
            return False
        return self._evict(weakest)

    def _evict(self, session: FetchSession) -> bool:
        self.remove(session.id)
        self.evictions += 1
        return True

    def _new_session_id(self) -> int:
        while True:
            session_id = self._rng.randrange(self.id_range.start, self.id_range.stop)
            if session_id != INVALID_SESSION_ID and session_id not in self.sessions:
                return session_id


class FetchSessionCache:
    """The broker's fetch sessions, split into shards as Kafka splits them.

    `max_slots` (max.incremental.fetch.session.cache.slots) is divided evenly among `shards`
    shards; each shard owns a range of session ids, and new sessions go to the shards in turn.
    """

    def __init__(
        self,
        max_slots: int = DEFAULT_MAX_SLOTS,
        eviction_ms: int = DEFAULT_EVICTION_MS,
        *,
        shards: int = DEFAULT_SHARDS,
        rng: random.Random | None = None,
    ) -> None:
        rng = rng or random.Random()
        self._id_range_size = MAX_INT32 // shards
        self._index = _PartitionIndex()
        self._shards = [
            _CacheShard(max_slots // shards, eviction_ms, self._shard_ids(n), rng, self._index) for n in range(shards)
        ]
        # told the id of each session a `partition_changed` made stale (the broker wakes a fetch
        # of that session waiting for data)
        self.on_session_changed: Callable[[int], None] | None = None
        self._next_shard = 0

    def _shard_ids(self, n: int) -> range:
        return range(max(1, n * self._id_range_size), (n + 1) * self._id_range_size)

    # --- inspection (metrics, tests) ---

    @property
    def session_count(self) -> int:
        """NumIncrementalFetchSessions."""
        return sum(len(shard.sessions) for shard in self._shards)

    @property
    def partition_count(self) -> int:
        """NumIncrementalFetchPartitionsCached: partitions of all sessions as last touched."""
        return sum(s.cached_size for shard in self._shards for s in shard.sessions.values())

    @property
    def evictions(self) -> int:
        """How many sessions were evicted to make room (IncrementalFetchSessionEvictionsPerSec)."""
        return sum(shard.evictions for shard in self._shards)

    def get(self, session_id: int) -> FetchSession | None:
        shard = self._shard_of(session_id)
        return shard.get(session_id) if shard else None

    # --- what changed ---

    def follow(self, replica_manager: PartitionChanges) -> None:
        """Hear of the replica manager's partition changes, and wake its fetches waiting on a
        session whose partitions changed."""
        replica_manager.add_partition_change_listener(self.partition_changed)

        def wake_waiting_fetches(session_id: int) -> None:
            replica_manager.fetch_purgatory.check_and_complete(session_wait_key(session_id))

        self.on_session_changed = wake_waiting_fetches

    def partition_changed(self, topic_partition: tuple[str, int]) -> None:
        """The partition (topic name, index) changed in a way a fetcher may need to hear of:
        records appended, high watermark or log start offset moved, leadership changed, deleted.
        The sessions holding it read it at their next fetch; the others never look at it."""
        for session, identity in self._index.sessions_of(topic_partition):
            session.mark_changed(identity)
            if self.on_session_changed is not None:
                self.on_session_changed(session.id)

    # --- request handling ---

    def new_context(
        self,
        *,
        version: int,
        session_id: int,
        session_epoch: int,
        fetch_data: FetchData,
        forgotten: Iterable[TopicIdPartition] = (),
        is_follower: bool,
        now_ms: int,
        topic_names: Mapping[uuid.UUID, str] | None = None,
    ) -> FetchContext:
        """The context for one Fetch request.

        `fetch_data` holds the request's partitions in request order (a partition listed twice
        keeps its first position and last parameters); `forgotten` its forgotten_topics_data.
        Below v13 keys name topics (a topic id they carry is dropped); from v13 on they carry the
        request's topic ids, and `topic_names` (the broker's topic id to name map) fills in their
        names; a name that stays unknown means UNKNOWN_TOPIC_ID. The contexts hand out these
        keys.
        `is_follower` is true for fetches from a replica (replica_id >= 0); their sessions are
        privileged in eviction.
        """
        topic_names = topic_names or {}
        uses_topic_ids = version >= FIRST_VERSION_WITH_TOPIC_IDS
        fetch_data = _as_requested(fetch_data, version, topic_names)
        forgotten = [key.as_requested(version, topic_names) for key in forgotten]
        if version < FIRST_VERSION_WITH_SESSIONS:
            return SessionlessFetchContext(fetch_data)
        if is_full_fetch(session_epoch):
            return self._full_context(session_id, session_epoch, fetch_data, uses_topic_ids, is_follower)
        return self._incremental_context(
            session_id, session_epoch, fetch_data, forgotten, uses_topic_ids, now_ms, topic_names
        )

    def _full_context(
        self,
        session_id: int,
        session_epoch: int,
        fetch_data: dict[TopicIdPartition, PartitionFetchRequest],
        uses_topic_ids: bool,
        is_follower: bool,
    ) -> FetchContext:
        if session_id != INVALID_SESSION_ID:
            self._remove(session_id)  # a full fetch ends the session it names
        if session_epoch == FINAL_EPOCH:
            return SessionlessFetchContext(fetch_data)
        return FullFetchContext(self, fetch_data, uses_topic_ids=uses_topic_ids, is_follower=is_follower)

    def _incremental_context(
        self,
        session_id: int,
        session_epoch: int,
        fetch_data: dict[TopicIdPartition, PartitionFetchRequest],
        forgotten: Iterable[TopicIdPartition],
        uses_topic_ids: bool,
        now_ms: int,
        topic_names: Mapping[uuid.UUID, str],
    ) -> FetchContext:
        session = self.get(session_id)
        if session is None:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != session_epoch:
            return SessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        added, dropped = session.update(fetch_data, forgotten)
        self._index.remove(session, dropped)
        self._index.add(session, added)
        if not session.partitions:
            self._remove(session_id)  # nothing left to fetch: the session ends
            return SessionlessFetchContext(fetch_data)
        self._index.add(session, session.resolve_topic_names(topic_names))
        shard = self._shard_of(session_id)
        if shard is None:  # cannot happen: the session was just found in its shard
            raise RuntimeError(f"fetch session {session_id} has no cache shard")
        shard.touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return IncrementalFetchContext(session, session_epoch)

    def maybe_create_session(
        self,
        *,
        now_ms: int,
        privileged: bool,
        size: int,
        uses_topic_ids: bool,
        create_partitions: Callable[[], dict[Hashable, CachedPartition]],
    ) -> int:
        """Create a session in the next shard in turn; its id, or 0 when there is no room."""
        shard = self._shards[self._next_shard]
        self._next_shard = (self._next_shard + 1) % len(self._shards)
        return shard.maybe_create_session(
            now_ms=now_ms,
            privileged=privileged,
            size=size,
            uses_topic_ids=uses_topic_ids,
            create_partitions=create_partitions,
        )

    def _remove(self, session_id: int) -> FetchSession | None:
        shard = self._shard_of(session_id)
        return shard.remove(session_id) if shard else None

    def _shard_of(self, session_id: int) -> _CacheShard | None:
        if session_id <= 0:
            return None
        index = session_id // self._id_range_size
        return self._shards[index] if index < len(self._shards) else None


class _PartitionIndex:
    """Which sessions hold each partition (by topic name and index), so that a change reaches
    the sessions holding the partition without a look at the others."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, int], dict[FetchSession, Hashable]] = {}

    def add(self, session: FetchSession, partitions: Iterable[CachedPartition]) -> None:
        for cached in partitions:
            if cached.topic is not None:
                identity = cached.key.identity
                self._sessions.setdefault((cached.topic, cached.partition), {})[session] = identity

    def remove(self, session: FetchSession, partitions: Iterable[CachedPartition]) -> None:
        for cached in partitions:
            if cached.topic is None:
                continue
            holders = self._sessions.get((cached.topic, cached.partition))
            if holders is not None:
                holders.pop(session, None)
                if not holders:
                    del self._sessions[(cached.topic, cached.partition)]

    def sessions_of(self, topic_partition: tuple[str, int]) -> list[tuple[FetchSession, Hashable]]:
        return list(self._sessions.get(topic_partition, {}).items())


def _as_requested(
    fetch_data: FetchData, version: int, topic_names: Mapping[uuid.UUID, str]
) -> dict[TopicIdPartition, PartitionFetchRequest]:
    """`fetch_data` keyed as the request version names partitions, one entry per partition."""
    keys: dict[Hashable, TopicIdPartition] = {}
    requests: dict[Hashable, PartitionFetchRequest] = {}
    for key in fetch_data:
        own_key = key.as_requested(version, topic_names)
        keys.setdefault(own_key.identity, own_key)
        requests[own_key.identity] = fetch_data[key]
    return {key: requests[identity] for identity, key in keys.items()}
