"""A group coordinator on a fake clock and an in-memory `__consumer_offsets`, and a few helpers
that speak to it the way the request handlers do, for tests of the state machine."""
from __future__ import annotations

from collections import defaultdict

from pykbroker.coordinator.group import GroupConfig, GroupCoordinator, JoinRequest, OffsetConfig
from pykbroker.coordinator.group.formats import OffsetAndMetadata
from pykbroker.common.time import FAKE_EPOCH_MS, FakeClock
from pykbroker.common.timer import MockTimer
from pykbroker.coordinator.runtime import LoopRuntime
from pykbroker.coordinator.partition_io import LoadedRecord
from pykbroker.records.control import encode_control_key, encode_end_txn_marker_value
from pykbroker.protocol import messages
from pykbroker.protocol.errors import ErrorCode

T0 = FAKE_EPOCH_MS
SESSION_MS = 10_000
REBALANCE_MS = 30_000
INITIAL_DELAY_MS = 3_000
# members arriving during the initial delay start it again once: a group formed by members
# joining together is answered after two delays
GROUP_FORMED_MS = 2 * INITIAL_DELAY_MS


class FakeRuntime(LoopRuntime):
    """The coordinator's runtime on a `MockTimer`: time moves only when a test calls `advance`,
    which runs every timer that falls due on the way, in order."""

    def __init__(self, now_ms: int = T0) -> None:
        super().__init__(MockTimer(FakeClock(now_ms)))

    @property
    def now(self) -> int:
        return self.timer.clock.now

    def advance(self, ms: int) -> None:
        self.timer.advance(ms)

    def spawn(self, function, *args) -> None:
        raise AssertionError("the fakes never need background tasks")


class MemoryOffsetsLog:
    """`__consumer_offsets` partitions as lists of records: (batch base offset, key, value), or
    `LoadedRecord`s for transactional batches and markers. Appends succeed at once, unless
    `fail_with` is set or `hold` keeps their callbacks until `release()`."""

    def __init__(self) -> None:
        self.records: dict[int, list] = defaultdict(list)
        self.fail_with: ErrorCode | None = None
        self.hold = False
        self._held: list = []

    def append(self, partition: int, records, callback, *, acks: int, producer=None) -> None:
        if self.fail_with is not None:
            if callback is not None:
                callback(self.fail_with, -1)
            return
        stored = self.records[partition]
        base = len(stored)
        if producer is None:
            stored += [(base, key, value) for key, value in records]
        else:
            stored += [LoadedRecord(base, key, value, producer.producer_id, producer.producer_epoch, True)
                       for key, value in records]
        if callback is None:
            return
        if self.hold:
            self._held.append(lambda: callback(ErrorCode.NONE, base))
        else:
            callback(ErrorCode.NONE, base)

    def release(self) -> None:
        held, self._held = self._held, []
        for answer in held:
            answer()

    def is_leader(self, partition: int) -> bool:
        return True

    def append_marker(self, partition: int, producer_id: int, committed: bool, epoch: int = 0) -> int:
        """Write a COMMIT or ABORT control record, as WriteTxnMarkers does; its offset."""
        stored = self.records[partition]
        offset = len(stored)
        stored.append(LoadedRecord(offset, encode_control_key(1 if committed else 0),
                                   encode_end_txn_marker_value(0), producer_id, epoch, True, True))
        return offset

    def load(self, partition: int, callback) -> None:
        callback([LoadedRecord(*entry) for entry in self.records[partition]])


def coordinator(log: MemoryOffsetsLog | None = None, runtime: FakeRuntime | None = None, *,
                partitions: int = 1, max_size: int = 2**31 - 1,
                initial_delay_ms: int = INITIAL_DELAY_MS,
                retention_ms: int = 7 * 24 * 3600 * 1000,
                retention_check_interval_ms: int = 600_000) -> GroupCoordinator:
    """A started coordinator leading every partition of a `partitions`-partition topic."""
    runtime = runtime or FakeRuntime()
    log = log if log is not None else MemoryOffsetsLog()
    offset_config = OffsetConfig(retention_ms=retention_ms,
                                 retention_check_interval_ms=retention_check_interval_ms)
    group_config = GroupConfig(min_session_timeout_ms=1000, max_session_timeout_ms=60_000,
                               max_size=max_size, initial_rebalance_delay_ms=initial_delay_ms)
    result = GroupCoordinator(0, group_config, offset_config, log, runtime, lambda: partitions)
    result.startup()
    for partition in range(partitions):
        result.on_election(partition)
    return result


# -- speaking to it ---------------------------------------------------------------------------

def subscription(*topics: str, version: int = 0) -> bytes:
    """A consumer's JoinGroup metadata: a ConsumerProtocolSubscription of `topics`."""
    message = messages.by_name("ConsumerProtocolSubscription")
    body = message.cls(topics=list(topics), user_data=None, owned_partitions=[])
    return version.to_bytes(2, "big") + message.encode_bytes(body, version=version)


SUB = subscription("orders")
RANGE = (("range", SUB),)


def join(c: GroupCoordinator, group: str = "g", member_id: str = "", *,
         instance_id: str | None = None, protocols=RANGE,
         protocol_type: str = "consumer", session_ms: int = SESSION_MS,
         rebalance_ms: int = REBALANCE_MS, require_known_member_id: bool = True,
         skip_assignment: bool = False, client_id: str = "client") -> list:
    """Send a JoinGroup; the returned list receives the answer when there is one."""
    answers: list = []
    c.handle_join_group(JoinRequest(
        group_id=group, member_id=member_id, group_instance_id=instance_id,
        client_id=client_id, client_host="/127.0.0.1", rebalance_timeout_ms=rebalance_ms,
        session_timeout_ms=session_ms, protocol_type=protocol_type, protocols=list(protocols),
        require_known_member_id=require_known_member_id and instance_id is None,
        supports_skipping_assignment=skip_assignment), answers.append)
    return answers


def new_member_id(c: GroupCoordinator, group: str = "g", **options) -> str:
    """A member id obtained through MEMBER_ID_REQUIRED (JoinGroup v4+)."""
    [answer] = join(c, group, **options)
    assert answer.error == ErrorCode.MEMBER_ID_REQUIRED
    return answer.member_id


def sync(c: GroupCoordinator, member_id: str, generation: int, group: str = "g",
         assignments: dict | None = None, instance_id: str | None = None,
         protocol_type: str | None = None, protocol_name: str | None = None) -> list:
    answers: list = []
    c.handle_sync_group(group, generation, member_id, protocol_type, protocol_name, instance_id,
                        assignments or {}, answers.append)
    return answers


def heartbeat(c: GroupCoordinator, member_id: str, generation: int, group: str = "g",
              instance_id: str | None = None) -> ErrorCode:
    return c.handle_heartbeat(group, member_id, instance_id, generation)


def commit(c: GroupCoordinator, offsets: dict, group: str = "g", member_id: str = "",
           generation: int = -1, instance_id: str | None = None, metadata: str = "",
           now: int | None = None, expire_timestamp: int | None = None) -> dict:
    answers: list = []
    now = c.runtime.now_ms() if now is None else now
    c.handle_commit_offsets(group, member_id, instance_id, generation, {
        tp: OffsetAndMetadata(offset, -1, metadata, now, expire_timestamp)
        for tp, offset in offsets.items()}, answers.append)
    [answer] = answers
    return answer


def fetch(c: GroupCoordinator, group: str = "g", partitions=None) -> dict:
    error, fetched = c.handle_fetch_offsets(group, partitions)
    assert error == ErrorCode.NONE, error
    return {tp: f.offset for tp, f in fetched.items()}


def stable_group(c: GroupCoordinator, count: int, group: str = "g", **options) -> list[str]:
    """`count` members joined and synced (the first is the leader); their member ids."""
    members = [new_member_id(c, group, **options) for _ in range(count)]
    answers = [join(c, group, m, **options) for m in members]
    c.runtime.advance(GROUP_FORMED_MS)
    assert all(a and a[0].error == ErrorCode.NONE for a in answers), answers
    generation = answers[0][0].generation_id
    leader = answers[0][0].leader_id
    syncs = [sync(c, m, generation, group,
                  {x: x.encode() for x in members} if m == leader else None) for m in members]
    assert all(s and s[0].error == ErrorCode.NONE for s in syncs), syncs
    return members
