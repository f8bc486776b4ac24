"""Work proportional to what changed, not to the number of partitions: one INFO line per topic
change, ISR checks only where there are followers, topic ids looked up without a walk."""
from __future__ import annotations

import logging

from pykbroker.replication.role_changes import RoleChanges, partition_ranges

from .helpers import BROKER, FOLLOWER, replica_manager

PARTITIONS = 200


def info_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.INFO and r.name.startswith("pykbroker")]


def test_creating_a_topic_of_many_partitions_logs_one_info_line(tmp_path, caplog):
    manager = replica_manager(tmp_path)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="pykbroker"):
        manager.metadata.create_topic("wide", PARTITIONS, 1)
    assert info_lines(caplog) == [f"Topic wide: leading partitions 0-{PARTITIONS - 1} at leader epoch 0"]
    assert len([tp for tp in manager.partitions if tp[0] == "wide"]) == PARTITIONS


def test_role_changes_name_each_role_once_per_topic():
    changes = RoleChanges()
    for index in (0, 1, 2, 5):
        changes.lead("orders", index, 3)
    changes.follow("orders", 3, 2, 3)
    changes.follow("orders", 4, 2, 3)
    changes.lead("__consumer_offsets", 7, 0)
    assert changes.lines() == [
        (logging.DEBUG, "Topic __consumer_offsets: leading partitions 7 at leader epoch 0"),
        (
            logging.INFO,
            "Topic orders: leading partitions 0-2,5 at leader epoch 3; "
            "following partitions 3-4 from broker 2 at leader epoch 3",
        ),
    ]
    assert partition_ranges([9, 8, 7, 1]) == "1,7-9"


def test_the_summary_counts_partitions_whose_logs_still_load():
    changes = RoleChanges()
    changes.lead("orders", 0, 3)
    changes.follow("orders", 1, 2, 3)
    for index in (2, 3, 4):
        changes.still_loading("orders", index)
    changes.still_loading("audit", 0)
    assert changes.summary() == (
        "Leading 1 and following 1 partition(s) of 1 topic(s); 4 more partition(s) of 2 topic(s) still loading"
    )
    only_loading = RoleChanges()
    only_loading.still_loading("audit", 0)
    assert only_loading.summary() == (
        "Leading 0 and following 0 partition(s) of 0 topic(s); 1 more partition(s) of 1 topic(s) still loading"
    )


def test_a_restart_logs_one_summary_line_for_all_topics(tmp_path, caplog):
    manager = replica_manager(tmp_path)
    for n in range(5):
        manager.metadata.create_topic(f"t{n}", 40, 1)
    restarted = type(manager)(BROKER, manager.config, manager.log_manager, manager.metadata, timer=manager.timer)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="pykbroker"):
        restarted.startup()
    assert info_lines(caplog) == ["Leading 201 and following 0 partition(s) of 6 topic(s)"]


def test_isr_shrink_looks_only_at_partitions_led_with_followers(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path)  # orders-0 is led here with FOLLOWER in its ISR
    manager.metadata.create_topic("single", PARTITIONS, 1)
    checked = []
    partition_class = type(manager.partitions[("orders", 0)])
    real = partition_class.maybe_shrink_isr

    def counting(self, *args):
        checked.append(self.key)
        return real(self, *args)

    monkeypatch.setattr(partition_class, "maybe_shrink_isr", counting)
    manager.shrink_isrs(manager.clock.now_ms(), 30000)
    assert checked == [("orders", 0)]
    assert FOLLOWER in manager.partitions[("orders", 0)].replicas


def test_topic_ids_are_looked_up_through_an_index_that_follows_changes(tmp_path):
    manager = replica_manager(tmp_path)
    store = manager.metadata
    first = store.create_topic("again", 1, 1)
    names = store.topic_names_by_id()
    assert names.get(first.topic_id) == "again"
    store.delete_topic("again")
    assert names.get(first.topic_id) is None
    second = store.create_topic("again", 1, 1)
    assert names.get(second.topic_id) == "again" and names.get(first.topic_id) is None
    assert store.topic_by_id(second.topic_id) is second


# -- incremental fetch sessions over the replica manager --------------------------------------

def session_over(manager):
    """A fetch session cache following `manager`, and a consumer's session on the 200
    partitions of topic `wide` (created by a full fetch)."""
    import anyio

    from pykbroker.common.uuids import ZERO_UUID
    from pykbroker.replication.fetch_session import FetchSessionCache, TopicIdPartition
    from pykbroker.replication.fetch_types import PartitionFetchRequest

    manager.metadata.create_topic("wide", PARTITIONS, 1)
    cache = FetchSessionCache(10)
    cache.follow(manager)
    keys = {p: TopicIdPartition(ZERO_UUID, "wide", p) for p in range(PARTITIONS)}
    context = cache.new_context(version=12, session_id=0, session_epoch=0,
                                fetch_data={k: PartitionFetchRequest(0) for k in keys.values()},
                                is_follower=False, now_ms=0)
    read = anyio.run(lambda: fetch(manager, context, max_wait_ms=0))
    session_id = context.build_response(read, now_ms=0).session_id
    return cache, session_id, keys


async def fetch(manager, context, *, max_wait_ms):
    from pykbroker.replication.fetch_types import SessionWait
    from pykbroker.replication.fetch_session import session_wait_key

    to_read = list(context.partitions_to_read())
    wait = None
    if context.session_to_wait_on is not None:
        def take():
            extra = context.changed_meanwhile()
            to_read.extend(extra)
            return [(k.topic_partition, p) for k, p in extra]
        wait = SessionWait(session_wait_key(context.session_to_wait_on),
                           lambda: [(k.topic_partition, p) for k, p in context.peek_changed_meanwhile()], take)
    read = await manager.fetch_records([(k.topic_partition, p) for k, p in to_read], replica_id=-1,
                                       max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, session_wait=wait)
    return {k: read[k.topic_partition] for k, _ in to_read}


def incremental_context(cache, session_id):
    return cache.new_context(version=12, session_id=session_id, session_epoch=cache.get(session_id).epoch,
                             fetch_data={}, is_follower=False, now_ms=0)


def counting_reads(manager, monkeypatch) -> list:
    reads = []
    partition_class = type(next(iter(manager.partitions.values())))
    real = partition_class.read

    def read(self, *args, **kwargs):
        reads.append(self.key)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(partition_class, "read", read)
    return reads


def test_an_incremental_fetch_reads_only_the_partition_that_got_records(tmp_path, monkeypatch):
    import anyio

    from tests.log.helpers import kv_batch

    manager = replica_manager(tmp_path)
    cache, session_id, keys = session_over(manager)
    reads = counting_reads(manager, monkeypatch)

    context = incremental_context(cache, session_id)
    assert anyio.run(lambda: fetch(manager, context, max_wait_ms=0)) == {}
    assert reads == []

    anyio.run(lambda: manager.append_records({("wide", 17): kv_batch(3)}, required_acks=1, timeout_ms=1000))
    context = incremental_context(cache, session_id)
    results = anyio.run(lambda: fetch(manager, context, max_wait_ms=0))
    assert reads == [("wide", 17)]
    response = context.build_response(results, now_ms=0)
    assert [(key.partition, result.records_size > 0) for key, result in response.partitions] == [(17, True)]


def test_a_waiting_incremental_fetch_wakes_for_records_on_a_partition_it_did_not_read(tmp_path):
    import anyio

    from tests.log.helpers import kv_batch

    manager = replica_manager(tmp_path)
    cache, session_id, keys = session_over(manager)
    context = incremental_context(cache, session_id)
    answers = {}

    async def main():
        async with anyio.create_task_group() as tasks:
            async def consumer():
                answers.update(await fetch(manager, context, max_wait_ms=500))
            tasks.start_soon(consumer)
            for _ in range(10):
                await anyio.sleep(0)
            assert answers == {}  # waiting, nothing read
            await manager.append_records({("wide", 123): kv_batch(2)}, required_acks=1, timeout_ms=1000)
    anyio.run(main)
    assert [key.partition for key in answers] == [123] and answers[keys[123]].records_size > 0


def test_a_follower_still_fetching_stays_in_the_isr_of_partitions_its_fetches_leave_out(tmp_path):
    from pykbroker.replication.fetch_types import PartitionFetchRequest

    manager = replica_manager(tmp_path)  # orders-0 led here, FOLLOWER in the ISR and caught up
    partition = manager.partitions[("orders", 0)]
    manager._record_follower_fetches([(("orders", 0), PartitionFetchRequest(0))], FOLLOWER)
    manager.timer.advance(60_000)
    manager._record_follower_fetches([], FOLLOWER)  # an incremental fetch naming nothing here
    manager.shrink_isrs(manager.clock.now_ms(), 30_000)
    assert partition.pending_isr is None and FOLLOWER in partition.isr
    manager.timer.advance(60_000)  # the follower stopped fetching altogether
    manager.shrink_isrs(manager.clock.now_ms(), 30_000)
    assert partition.pending_isr == [BROKER] or partition.isr == [BROKER]


def follower_session_on_orders(manager):
    """A follower's fetch session on orders-0 (made by a full fetch at offset 0), and an
    incremental fetch on it that names nothing (nothing changed)."""
    from pykbroker.common.uuids import ZERO_UUID
    from pykbroker.replication.fetch_session import FetchSessionCache, TopicIdPartition
    from pykbroker.replication.fetch_types import PartitionFetchRequest, PartitionFetchResult

    cache = FetchSessionCache(10)
    cache.follow(manager)
    key = TopicIdPartition(ZERO_UUID, "orders", 0)
    full = cache.new_context(version=12, session_id=0, session_epoch=0,
                             fetch_data={key: PartitionFetchRequest(0)}, is_follower=True, now_ms=0)
    session_id = full.build_response({key: PartitionFetchResult(high_watermark=0)}, now_ms=0).session_id
    return cache.new_context(version=12, session_id=session_id, session_epoch=cache.get(session_id).epoch,
                             fetch_data={}, is_follower=True, now_ms=0)


def test_a_follower_that_caught_up_rejoins_the_isr_of_a_partition_its_fetches_leave_out(tmp_path):
    """A follower cut off for a while left the ISR; back, it has the whole (idle) log, so its
    incremental fetches never name the partition again. Its session speaks for it, as Kafka's
    leader reads every partition of a session: it is proposed back into the ISR."""
    manager = replica_manager(tmp_path)  # orders-0 led here on [BROKER, FOLLOWER]
    partition = manager.partitions[("orders", 0)]
    partition.isr = [BROKER]  # dropped while it could not fetch
    incremental = follower_session_on_orders(manager)
    assert incremental.partitions_to_read() == []  # nothing changed: nothing to read
    manager.record_follower_session(FOLLOWER, [(key.topic_partition, request)
                                               for key, request in incremental.session_partitions()])
    assert partition.pending_isr == [BROKER, FOLLOWER] or partition.isr == [BROKER, FOLLOWER]


def test_a_follower_session_costs_nothing_where_the_follower_is_in_sync(tmp_path):
    manager = replica_manager(tmp_path)  # FOLLOWER in the ISR of orders-0
    follower = manager.partitions[("orders", 0)].followers[FOLLOWER]
    before = follower.last_fetch_ms
    incremental = follower_session_on_orders(manager)
    manager.timer.advance(1000)
    manager.record_follower_session(FOLLOWER, [(key.topic_partition, request)
                                               for key, request in incremental.session_partitions()])
    assert follower.last_fetch_ms == before  # the partition's own fetches keep it in sync


# -- the follower's side of its fetch session ------------------------------------------------

def test_a_follower_session_lists_everything_once_then_only_what_changed():
    from pykbroker.replication.fetcher import FollowerSession

    followed = {("wide", p): f"followed-{p}" for p in range(PARTITIONS)}
    session = FollowerSession()
    session.changed = set(followed)
    listed, forgotten = session.next_request(followed)
    assert len(listed) == PARTITIONS and forgotten == [] and (session.session_id, session.epoch) == (0, 0)
    session.answered(4242)
    assert (session.session_id, session.epoch) == (4242, 1)

    assert session.next_request(followed) == ([], [])  # nothing changed: an empty incremental fetch
    session.answered(4242)
    assert session.epoch == 2

    session.changed.update({("wide", 3), ("wide", 9)})
    session.backing_off[("wide", 9)] = 1e18
    del followed[("wide", 5)]
    session.changed.add(("wide", 5))
    listed, forgotten = session.next_request(followed)
    assert listed == ["followed-3"] and sorted(forgotten) == [("wide", 5), ("wide", 9)]

    session.reset(followed)  # a session error: full fetch again, without the one backing off
    listed, _ = session.next_request(followed)
    assert len(listed) == PARTITIONS - 2 and session.session_id == 0


def test_values_derived_from_a_topic_are_kept_until_it_changes(tmp_path):
    """What Metadata builds per topic (its partitions as a response lists them) is computed
    again only for a topic that changed: created, grown, reconfigured, or an ISR change."""
    manager = replica_manager(tmp_path)
    store = manager.metadata
    store.create_topic("kept", 3, 1)
    store.create_topic("other", 3, 1)
    computed = []

    def describe(info):
        computed.append(info.name)
        return [(p.partition, list(p.isr), p.partition_epoch) for p in info.partitions.values()]

    def describe_all():
        return {name: store.derived(info, "test", describe) for name, info in store.topics().items()}

    describe_all()
    computed.clear()
    describe_all()
    assert computed == []
    store.propose_isr("kept", 1, 0, 0, [BROKER], lambda epoch: None)
    assert describe_all()["kept"][1] == (1, [BROKER], 1)
    store.add_partitions("other", 4)
    assert len(describe_all()["other"]) == 4
    assert sorted(computed) == ["kept", "other"]
