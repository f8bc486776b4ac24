"""TxnOffsetCommit on the wire, in every version, against a broker running in this process: the
offsets stay pending (OffsetFetch v7+ with require_stable answers UNSTABLE_OFFSET_COMMIT) until the
transaction's marker completes them, which the test does by calling the group coordinator's
`complete_transaction` on the broker's event loop, as the marker writer does."""
import time

import anyio.from_thread

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.wire import WireClient

from .test_fsync_off_the_loop import open_broker_with_topic, serve_while

FindCoordinator = messages.request(ApiKey.FIND_COORDINATOR).cls
TxnOffsetCommit = messages.request(ApiKey.TXN_OFFSET_COMMIT).cls
OffsetFetch = messages.request(ApiKey.OFFSET_FETCH).cls
TOPIC = "orders"
PID, EPOCH = 7000, 0
# The producer has no transaction at the transaction coordinator here: the offsets partition's
# verification (KIP-890) is off, so the commits are written as they come.
SETTINGS = {"offsets.topic.num.partitions": "3", "offsets.topic.replication.factor": "1",
            "transaction.partition.verification.enable": "false"}


def txn_offset_commit(version: int, group: str, offsets: dict, *, producer_id: int = PID, member_id: str = "",
                      generation_id: int = -1) -> TxnOffsetCommit:
    topics: dict = {}
    for (topic, index), offset in offsets.items():
        topics.setdefault(topic, []).append(TxnOffsetCommit.TxnOffsetCommitRequestPartition(
            partition_index=index, committed_offset=offset, committed_leader_epoch=-1, committed_metadata="m"))
    return TxnOffsetCommit(
        transactional_id="txn", group_id=group, producer_id=producer_id, producer_epoch=EPOCH,
        generation_id=generation_id, member_id=member_id, group_instance_id=None,
        topics=[TxnOffsetCommit.TxnOffsetCommitRequestTopic(name=name, partitions=partitions)
                for name, partitions in topics.items()])


def committed(client: WireClient, group: str, *, require_stable: bool) -> dict:
    """OffsetFetch v7 of orders-0: (offset, error)."""
    answer = client.request(ApiKey.OFFSET_FETCH, 7, OffsetFetch(
        group_id=group, require_stable=require_stable,
        topics=[OffsetFetch.OffsetFetchRequestTopic(name=TOPIC, partition_indexes=[0])]))
    assert answer.error_code == ErrorCode.NONE
    [partition] = answer.topics[0].partitions
    return partition.committed_offset, partition.error_code


def errors_of(answer) -> dict:
    return {(t.name, p.partition_index): p.error_code for t in answer.topics for p in t.partitions}


def wait_for_the_coordinator(client: WireClient, group: str) -> None:
    client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(key=group, key_type=0))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = client.request(ApiKey.OFFSET_FETCH, 7, OffsetFetch(group_id=group, require_stable=False, topics=None))
        if answer.error_code == ErrorCode.NONE:
            return
        time.sleep(0.05)
    raise AssertionError("the group coordinator never loaded")


def test_transactional_offsets_are_visible_only_once_their_transaction_commits(tmp_path):
    broker, bootstrap = open_broker_with_topic(tmp_path, TOPIC, **SETTINGS)
    seen = {}

    def complete(group: str, committed_: bool) -> None:
        coordinator = broker.group_coordinator
        anyio.from_thread.run_sync(coordinator.complete_transaction, coordinator.partition_for(group), PID,
                                   committed_, 1_000_000)

    def script():
        with WireClient(bootstrap, timeout=30) as client:
            for version in range(0, 5):
                group = f"txn-group-v{version}"
                wait_for_the_coordinator(client, group)
                answer = client.request(ApiKey.TXN_OFFSET_COMMIT, version, txn_offset_commit(
                    version, group, {(TOPIC, 0): 42, (TOPIC, 9): 1, ("no-such-topic", 0): 1}))
                seen[version, "commit"] = errors_of(answer)
                seen[version, "pending"] = (committed(client, group, require_stable=True),
                                            committed(client, group, require_stable=False))
                complete(group, True)
                seen[version, "committed"] = committed(client, group, require_stable=True)
                client.request(ApiKey.TXN_OFFSET_COMMIT, version, txn_offset_commit(version, group, {(TOPIC, 0): 99}))
                complete(group, False)
                seen[version, "aborted"] = committed(client, group, require_stable=True)

    serve_while(broker, script)
    for version in range(0, 5):
        assert seen[version, "commit"] == {(TOPIC, 0): ErrorCode.NONE,
                                           (TOPIC, 9): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                           ("no-such-topic", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        assert seen[version, "pending"] == ((-1, ErrorCode.UNSTABLE_OFFSET_COMMIT), (-1, ErrorCode.NONE))
        assert seen[version, "committed"] == (42, ErrorCode.NONE)
        assert seen[version, "aborted"] == (42, ErrorCode.NONE)


def test_from_v3_only_the_members_of_the_current_generation_commit(tmp_path):
    broker, bootstrap = open_broker_with_topic(tmp_path, TOPIC, **SETTINGS)
    seen = {}

    def script():
        with WireClient(bootstrap, timeout=30) as client:
            wait_for_the_coordinator(client, "g")
            for version in (3, 4):
                answer = client.request(ApiKey.TXN_OFFSET_COMMIT, version, txn_offset_commit(
                    version, "g", {(TOPIC, 0): 1}, member_id="stranger", generation_id=1))
                seen[version] = errors_of(answer)
            answer = client.request(ApiKey.TXN_OFFSET_COMMIT, 2, txn_offset_commit(2, "", {(TOPIC, 0): 1}))
            seen["empty group id"] = errors_of(answer)

    serve_while(broker, script)
    assert seen[3] == seen[4] == {(TOPIC, 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert seen["empty group id"] == {(TOPIC, 0): ErrorCode.INVALID_GROUP_ID}
