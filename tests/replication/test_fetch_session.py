"""Incremental fetch sessions (KIP-227): contexts, incremental responses, cache eviction."""
import random
import uuid

import pytest

from pykbroker.protocol.errors import ErrorCode
from pykbroker.replication.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    MAX_INT32,
    ZERO_UUID,
    EpochEndOffset,
    FetchSessionCache,
    FullFetchContext,
    IncrementalFetchContext,
    PartitionFetchRequest,
    PartitionFetchResult,
    SessionErrorContext,
    SessionlessFetchContext,
    TopicIdPartition,
    next_epoch,
)

EVICTION_MS = 120_000
ORDERS_ID = uuid.UUID("11111111-1111-1111-1111-111111111111")
PAYMENTS_ID = uuid.UUID("22222222-2222-2222-2222-222222222222")
TOPIC_NAMES = {ORDERS_ID: "orders", PAYMENTS_ID: "payments"}


def named(topic, partition):
    """A key as requests below v13 name partitions."""
    return TopicIdPartition(ZERO_UUID, topic, partition)


def by_id(topic_id, partition):
    """A key as v13+ requests name partitions (the cache fills in the name)."""
    return TopicIdPartition(topic_id, None, partition)


A0, A1, B0 = named("a", 0), named("a", 1), named("b", 0)


def fetch(offset, max_bytes=1000):
    return PartitionFetchRequest(fetch_offset=offset, max_bytes=max_bytes)


def read(hw=100, log_start=0, records=0, lso=None, error=ErrorCode.NONE, **more):
    return PartitionFetchResult(error_code=error, high_watermark=hw, log_start_offset=log_start,
                                last_stable_offset=hw if lso is None else lso, records_size=records,
                                **more)


def new_cache(max_slots=10, **kwargs):
    return FetchSessionCache(max_slots, EVICTION_MS, shards=1, rng=random.Random(7), **kwargs)


def context(cache, session_id=0, epoch=INITIAL_EPOCH, fetch_data=None, forgotten=(), version=12,
            is_follower=False, now_ms=0):
    return cache.new_context(version=version, session_id=session_id, session_epoch=epoch,
                             fetch_data=fetch_data or {}, forgotten=list(forgotten),
                             is_follower=is_follower, now_ms=now_ms, topic_names=TOPIC_NAMES)


def answer(ctx, results, now_ms=0):
    return ctx.build_response(results, now_ms=now_ms)


def listed(response):
    return [key for key, _ in response.partitions]


def open_session(cache, fetch_data, results=None, version=12, is_follower=False, now_ms=0):
    """A full fetch creating a session; the session's id."""
    ctx = context(cache, fetch_data=fetch_data, version=version, is_follower=is_follower, now_ms=now_ms)
    results = results or {key: read() for key, _ in ctx.partitions_to_read()}
    response = answer(ctx, results, now_ms)
    assert response.session_id != 0
    return response.session_id


def incremental(cache, session_id, fetch_data=None, forgotten=(), version=12, now_ms=0, everything_changed=True):
    """An incremental fetch on the session; by default after the broker told the cache that
    every partition of the session changed (so that it reads them all)."""
    session = cache.get(session_id)
    if everything_changed:
        for cached in list(session.partitions.values()):
            if cached.topic is not None:
                cache.partition_changed((cached.topic, cached.partition))
    return context(cache, session_id, session.epoch, fetch_data, forgotten, version, now_ms=now_ms)


class TestEpochs:
    def test_epochs_count_up_from_one_and_wrap_to_one(self):
        assert next_epoch(INITIAL_EPOCH) == 1
        assert next_epoch(41) == 42
        assert next_epoch(MAX_INT32) == 1

    def test_final_epoch_stays_final(self):
        assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH


class TestSessionlessFetch:
    def test_session_id_0_and_final_epoch_fetch_without_creating_a_session(self):
        cache = new_cache()
        ctx = context(cache, 0, FINAL_EPOCH, {A0: fetch(5), A1: fetch(7)})
        assert isinstance(ctx, SessionlessFetchContext)
        assert ctx.partitions_to_read() == [(A0, fetch(5)), (A1, fetch(7))]
        response = answer(ctx, {A0: read(), A1: read()})
        assert (response.error_code, response.session_id) == (ErrorCode.NONE, 0)
        assert listed(response) == [A0, A1]
        assert cache.session_count == 0

    @pytest.mark.parametrize("version", [0, 4, 6])
    def test_requests_before_v7_never_use_sessions(self, version):
        cache = new_cache()
        ctx = context(cache, 0, INITIAL_EPOCH, {A0: fetch(0)}, version=version)
        assert isinstance(ctx, SessionlessFetchContext)
        assert answer(ctx, {A0: read()}).session_id == 0
        assert cache.session_count == 0

    def test_response_lists_results_in_the_order_given_and_skips_strangers(self):
        ctx = context(new_cache(), 0, FINAL_EPOCH, {A0: fetch(0), A1: fetch(0)})
        response = answer(ctx, {A1: read(error=ErrorCode.TOPIC_AUTHORIZATION_FAILED), B0: read(), A0: read()})
        assert listed(response) == [A1, A0]


class TestFullFetchCreatingASession:
    def test_initial_epoch_creates_a_session_whose_id_the_response_carries(self):
        cache = new_cache()
        ctx = context(cache, 0, INITIAL_EPOCH, {A0: fetch(0), A1: fetch(0)})
        assert isinstance(ctx, FullFetchContext)
        response = answer(ctx, {A0: read(), A1: read()})
        assert response.error_code == ErrorCode.NONE and response.session_id > 0
        session = cache.get(response.session_id)
        assert session.epoch == 1 and session.keys() == [A0, A1]
        assert cache.session_count == 1 and cache.partition_count == 2

    def test_full_response_lists_every_partition_even_without_news(self):
        cache = new_cache()
        response = answer(context(cache, fetch_data={A0: fetch(0), A1: fetch(0)}), {A0: read(), A1: read()})
        assert listed(response) == [A0, A1]

    def test_session_is_created_when_the_response_is_built(self):
        cache = new_cache()
        ctx = context(cache, fetch_data={A0: fetch(0)})
        assert cache.session_count == 0
        answer(ctx, {A0: read()}, now_ms=500)
        assert cache.session_count == 1

    def test_a_full_fetch_naming_a_session_replaces_it(self):
        cache = new_cache()
        old = open_session(cache, {A0: fetch(0)})
        new = answer(context(cache, old, INITIAL_EPOCH, {B0: fetch(0)}), {B0: read()}).session_id
        assert cache.get(old) is None
        assert cache.get(new).keys() == [B0]

    def test_session_ids_are_positive_and_distinct(self):
        cache = new_cache(max_slots=50)
        ids = {open_session(cache, {A0: fetch(0)}) for _ in range(50)}
        assert len(ids) == 50 and all(0 < i < MAX_INT32 for i in ids)


class TestIncrementalFetch:
    def test_reads_every_session_partition_with_the_remembered_parameters(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(10, 500), A1: fetch(20, 600)})
        ctx = incremental(cache, session_id)
        assert isinstance(ctx, IncrementalFetchContext)
        assert ctx.partitions_to_read() == [(A0, fetch(10, 500)), (A1, fetch(20, 600))]

    def test_epoch_advances_with_each_incremental_fetch(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)})
        for expected_epoch in (1, 2, 3):
            assert cache.get(session_id).epoch == expected_epoch
            ctx = context(cache, session_id, expected_epoch)
            assert answer(ctx, {A0: read()}).error_code == ErrorCode.NONE
        assert cache.get(session_id).epoch == 4

    def test_unchanged_partitions_are_left_out(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0), A1: fetch(0)}, {A0: read(hw=5), A1: read(hw=5)})
        response = answer(incremental(cache, session_id), {A0: read(hw=5), A1: read(hw=6)})
        assert (response.error_code, response.session_id) == (ErrorCode.NONE, session_id)
        assert listed(response) == [A1]

    @pytest.mark.parametrize("news", [
        {"records": 300},
        {"hw": 6},
        {"log_start": 2},
        {"error": ErrorCode.NOT_LEADER_OR_FOLLOWER},
        {"preferred_read_replica": 2},
        {"diverging_epoch": EpochEndOffset(epoch=3, end_offset=4)},
    ], ids=lambda news: next(iter(news)))
    def test_a_partition_with_news_is_listed(self, news):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)}, {A0: read(hw=5)})
        unchanged = {"hw": 5, "log_start": 0}
        response = answer(incremental(cache, session_id), {A0: read(**{**unchanged, **news})})
        assert listed(response) == [A0]

    def test_a_new_last_stable_offset_alone_is_not_news(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)}, {A0: read(hw=5, lso=3)})
        assert listed(answer(incremental(cache, session_id), {A0: read(hw=5, lso=5)})) == []

    def test_no_diverging_epoch_is_not_news(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)}, {A0: read(hw=5)})
        result = read(hw=5, diverging_epoch=EpochEndOffset(epoch=-1, end_offset=-1))
        assert listed(answer(incremental(cache, session_id), {A0: result})) == []

    def test_what_was_sent_is_remembered(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)}, {A0: read(hw=5)})
        assert listed(answer(incremental(cache, session_id), {A0: read(hw=6)})) == [A0]
        assert listed(answer(incremental(cache, session_id), {A0: read(hw=6)})) == []

    def test_a_partition_is_sent_again_once_its_error_clears(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)}, {A0: read(hw=5)})
        failing = read(hw=5, error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
        assert listed(answer(incremental(cache, session_id), {A0: failing})) == [A0]
        assert listed(answer(incremental(cache, session_id), {A0: read(hw=5)})) == [A0]
        assert listed(answer(incremental(cache, session_id), {A0: read(hw=5)})) == []

    def test_added_partitions_join_the_session_and_are_listed(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)}, {A0: read(hw=5)})
        ctx = incremental(cache, session_id, {B0: fetch(3)})
        assert ctx.partitions_to_read() == [(A0, fetch(0)), (B0, fetch(3))]
        assert listed(answer(ctx, {A0: read(hw=5), B0: read(hw=5)})) == [B0]
        assert cache.get(session_id).keys() == [A0, B0]

    def test_forgotten_partitions_leave_the_session(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0), A1: fetch(0), B0: fetch(0)})
        ctx = incremental(cache, session_id, forgotten=[A1])
        assert [key for key, _ in ctx.partitions_to_read()] == [A0, B0]
        assert listed(answer(ctx, {A0: read(hw=9), B0: read(hw=9)})) == [A0, B0]
        assert cache.partition_count == 2

    def test_forgetting_every_partition_ends_the_session(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)})
        ctx = incremental(cache, session_id, forgotten=[A0])
        assert isinstance(ctx, SessionlessFetchContext)
        assert answer(ctx, {}).session_id == 0
        assert cache.get(session_id) is None

    def test_fetch_offsets_sent_are_used_by_later_reads(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0), A1: fetch(0)})
        answer(incremental(cache, session_id, {A1: fetch(40, 2000)}), {A0: read(), A1: read()})
        assert incremental(cache, session_id).partitions_to_read() == [(A0, fetch(0)), (A1, fetch(40, 2000))]

    def test_partitions_that_returned_records_move_to_the_back_of_the_line(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0), A1: fetch(0), B0: fetch(0)})
        response = answer(incremental(cache, session_id),
                          {A0: read(records=10), A1: read(), B0: read(records=10)})
        assert listed(response) == [A0, B0]
        assert [key for key, _ in incremental(cache, session_id).partitions_to_read()] == [A1, A0, B0]

    def test_partitions_listed_for_other_news_keep_their_place(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0), A1: fetch(0)})
        answer(incremental(cache, session_id), {A0: read(hw=500), A1: read()})
        assert cache.get(session_id).keys() == [A0, A1]

    def test_closing_with_the_final_epoch_removes_the_session_and_fetches_sessionless(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)})
        ctx = context(cache, session_id, FINAL_EPOCH, {B0: fetch(0)})
        assert isinstance(ctx, SessionlessFetchContext)
        response = answer(ctx, {B0: read()})
        assert (response.session_id, listed(response)) == (0, [B0])
        assert cache.session_count == 0


class TestSessionErrors:
    def test_wrong_epoch_is_invalid_fetch_session_epoch(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)})
        ctx = context(cache, session_id, 5, {B0: fetch(0)})
        assert isinstance(ctx, SessionErrorContext)
        response = answer(ctx, {A0: read()})
        assert response == (ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, [])
        session = cache.get(session_id)
        assert session.epoch == 1 and session.keys() == [A0]

    @pytest.mark.parametrize("session_id", [12345, 0, -3, MAX_INT32])
    def test_unknown_session_is_fetch_session_id_not_found(self, session_id):
        ctx = context(new_cache(), session_id, 1, {A0: fetch(0)})
        assert ctx.partitions_to_read() == []
        assert answer(ctx, {}) == (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, [])

    def test_a_duplicate_request_that_raced_ahead_makes_the_slower_one_invalid(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)})
        slow = context(cache, session_id, 1)
        fast = context(cache, session_id, 2)
        assert answer(fast, {A0: read(hw=7)}).error_code == ErrorCode.NONE
        assert answer(slow, {A0: read(hw=8)}) == (ErrorCode.INVALID_FETCH_SESSION_EPOCH, session_id, [])

    def test_throttled_responses_list_nothing_and_change_nothing(self):
        cache = new_cache()
        assert context(cache, fetch_data={A0: fetch(0)}).throttled_response() == (ErrorCode.NONE, 0, [])
        assert cache.session_count == 0
        session_id = open_session(cache, {A0: fetch(0)}, {A0: read(hw=5)})
        ctx = incremental(cache, session_id)
        assert ctx.throttled_response() == (ErrorCode.NONE, session_id, [])
        assert listed(answer(ctx, {A0: read(hw=6)})) == [A0]

    def test_previewing_a_response_changes_nothing(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0), A1: fetch(0)}, {A0: read(hw=5), A1: read(hw=5)})
        ctx = incremental(cache, session_id)
        results = {A0: read(hw=5, records=10), A1: read(hw=6)}
        assert listed(ctx.preview_response(results)) == [A0, A1]
        assert cache.get(session_id).keys() == [A0, A1]
        assert listed(answer(ctx, results)) == [A0, A1]


class TestTopicIds:
    ORDERS_0 = by_id(ORDERS_ID, 0)
    UNKNOWN_ID = uuid.UUID("99999999-9999-9999-9999-999999999999")

    def test_v13_keys_get_their_topic_names(self):
        ctx = context(new_cache(), 0, FINAL_EPOCH, {self.ORDERS_0: fetch(0)}, version=13)
        assert ctx.partitions_to_read() == [(TopicIdPartition(ORDERS_ID, "orders", 0), fetch(0))]

    def test_unknown_topic_ids_are_answered_with_unknown_topic_id_without_being_read(self):
        unknown = by_id(self.UNKNOWN_ID, 0)
        ctx = context(new_cache(), 0, FINAL_EPOCH, {unknown: fetch(0), self.ORDERS_0: fetch(0)}, version=13)
        assert [key.topic for key, _ in ctx.partitions_to_read()] == ["orders"]
        assert [key.topic for key, _ in ctx.partitions()] == [None, "orders"]
        response = answer(ctx, {self.ORDERS_0: read()})
        assert listed(response) == [TopicIdPartition(ORDERS_ID, "orders", 0), unknown]
        assert response.partitions[1][1] == PartitionFetchResult.for_error(ErrorCode.UNKNOWN_TOPIC_ID)

    def test_a_session_keeps_an_unknown_topic_id_until_it_becomes_known(self):
        cache = new_cache()
        later_id = uuid.UUID("33333333-3333-3333-3333-333333333333")
        session_id = open_session(cache, {self.ORDERS_0: fetch(0), by_id(later_id, 0): fetch(0)}, version=13)
        ctx = incremental(cache, session_id, version=13)
        assert [key.topic for key, _ in ctx.partitions_to_read()] == ["orders"]
        unknown = answer(ctx, {self.ORDERS_0: read()})
        assert [r.error_code for _, r in unknown.partitions] == [ErrorCode.UNKNOWN_TOPIC_ID]

        ctx = cache.new_context(version=13, session_id=session_id, session_epoch=cache.get(session_id).epoch,
                                fetch_data={}, is_follower=False, now_ms=0,
                                topic_names={**TOPIC_NAMES, later_id: "later"})
        # orders-0 did not change and was not listed last time: only the newly known one is read
        assert [key.topic for key, _ in ctx.partitions_to_read()] == ["later"]

    def test_partitions_are_forgotten_by_topic_id(self):
        cache = new_cache()
        payments_0 = by_id(PAYMENTS_ID, 0)
        session_id = open_session(cache, {self.ORDERS_0: fetch(0), payments_0: fetch(0)}, version=13)
        ctx = incremental(cache, session_id, forgotten=[payments_0], version=13)
        assert [key.topic for key, _ in ctx.partitions_to_read()] == ["orders"]

    def test_before_v13_partitions_are_told_apart_by_name_even_when_keys_carry_ids(self):
        cache = new_cache()
        with_id = TopicIdPartition(ORDERS_ID, "orders", 0)
        session_id = open_session(cache, {with_id: fetch(0), A0: fetch(0)}, version=12)
        ctx = incremental(cache, session_id, {named("orders", 0): fetch(9)}, forgotten=[A0])
        assert ctx.partitions_to_read() == [(named("orders", 0), fetch(9))]

    def test_results_keyed_without_names_still_match(self):
        cache = new_cache()
        session_id = open_session(cache, {self.ORDERS_0: fetch(0)}, {self.ORDERS_0: read(hw=1)}, version=13)
        response = answer(incremental(cache, session_id, version=13), {self.ORDERS_0: read(hw=2)})
        assert listed(response) == [TopicIdPartition(ORDERS_ID, "orders", 0)]

    @pytest.mark.parametrize("created_with,used_with", [(12, 13), (13, 12)])
    def test_crossing_the_topic_id_boundary_is_fetch_session_topic_id_error(self, created_with, used_with):
        cache = new_cache()
        key = self.ORDERS_0 if created_with >= 13 else named("orders", 0)
        session_id = open_session(cache, {key: fetch(0)}, version=created_with)
        ctx = incremental(cache, session_id, version=used_with)
        assert answer(ctx, {}) == (ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR, 0, [])

    def test_the_epoch_is_checked_before_topic_id_usage(self):
        cache = new_cache()
        session_id = open_session(cache, {A0: fetch(0)}, version=12)
        ctx = context(cache, session_id, 7, version=13)
        assert answer(ctx, {}).error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH


class TestCacheRoomAndEviction:
    def fill(self, cache, count, size=1, is_follower=False, now_ms=0):
        fetch_data = {named("t", p): fetch(0) for p in range(size)}
        return [open_session(cache, fetch_data, is_follower=is_follower, now_ms=now_ms) for _ in range(count)]

    def try_open(self, cache, size=1, is_follower=False, now_ms=0):
        fetch_data = {named("new", p): fetch(0) for p in range(size)}
        ctx = context(cache, fetch_data=fetch_data, is_follower=is_follower, now_ms=now_ms)
        return answer(ctx, {key: read() for key in fetch_data}, now_ms).session_id

    def test_a_full_cache_of_young_sessions_answers_session_id_0(self):
        cache = new_cache(max_slots=2)
        self.fill(cache, 2)
        assert self.try_open(cache, size=5, now_ms=1000) == 0
        assert cache.session_count == 2 and cache.evictions == 0

    def test_a_session_unused_for_longer_than_the_eviction_time_makes_room(self):
        cache = new_cache(max_slots=2)
        stale, fresh = self.fill(cache, 2)
        answer(incremental(cache, fresh, now_ms=EVICTION_MS), {})
        assert self.try_open(cache, now_ms=EVICTION_MS + 1) != 0
        assert cache.get(stale) is None and cache.get(fresh) is not None
        assert cache.evictions == 1

    def test_a_follower_evicts_the_smallest_consumer_session(self):
        cache = new_cache(max_slots=2)
        big = open_session(cache, {named("t", p): fetch(0) for p in range(3)})
        small = open_session(cache, {A0: fetch(0)})
        assert self.try_open(cache, is_follower=True, now_ms=10) != 0
        assert cache.get(small) is None and cache.get(big) is not None

    def test_a_young_follower_session_is_safe_from_everyone(self):
        cache = new_cache(max_slots=1)
        self.fill(cache, 1, is_follower=True)
        assert self.try_open(cache, size=100, is_follower=True, now_ms=10) == 0
        assert self.try_open(cache, size=100, now_ms=10) == 0

    def test_a_consumer_evicts_an_old_enough_session_smaller_than_its_own(self):
        cache = new_cache(max_slots=1)
        (old,) = self.fill(cache, 1, size=2)
        answer(incremental(cache, old, now_ms=EVICTION_MS + 1), {})  # used recently, created long ago
        now = EVICTION_MS + 2
        assert self.try_open(cache, size=2, now_ms=now) == 0
        assert self.try_open(cache, size=3, now_ms=now) != 0
        assert cache.get(old) is None

    def test_a_consumer_never_evicts_a_young_consumer_session(self):
        cache = new_cache(max_slots=1)
        self.fill(cache, 1, size=1)
        assert self.try_open(cache, size=50, now_ms=10) == 0

    def test_an_old_follower_session_yields_only_to_a_bigger_follower_session(self):
        cache = new_cache(max_slots=1)
        (old,) = self.fill(cache, 1, size=3, is_follower=True)
        answer(incremental(cache, old, now_ms=EVICTION_MS + 1), {})
        now = EVICTION_MS + 2
        assert self.try_open(cache, size=50, now_ms=now) == 0
        assert self.try_open(cache, size=3, is_follower=True, now_ms=now) == 0
        assert self.try_open(cache, size=4, is_follower=True, now_ms=now) != 0

    def test_zero_slots_means_no_sessions(self):
        assert self.try_open(new_cache(max_slots=0)) == 0

    def test_slots_and_session_ids_are_split_among_shards_taken_in_turn(self):
        cache = FetchSessionCache(16, EVICTION_MS, shards=8, rng=random.Random(3))
        ids = self.fill(cache, 16)
        shard_of = [session_id // (MAX_INT32 // 8) for session_id in ids]
        assert shard_of == list(range(8)) * 2
        assert self.try_open(cache, now_ms=10) == 0  # the next shard in turn is full
        assert all(cache.get(session_id) is not None for session_id in ids)


class TestReadingWhatChanged:
    """An incremental fetch reads the partitions that may have news, not the whole session."""

    PARTITIONS = 200

    def open_wide_session(self, cache):
        return open_session(cache, {named("wide", p): fetch(0) for p in range(self.PARTITIONS)})

    def test_an_incremental_fetch_with_nothing_changed_reads_nothing(self):
        cache = new_cache()
        session_id = self.open_wide_session(cache)
        ctx = incremental(cache, session_id, everything_changed=False)
        assert ctx.partitions_to_read() == []
        assert listed(answer(ctx, {})) == []

    def test_only_the_partitions_the_broker_reported_changed_are_read(self):
        cache = new_cache()
        session_id = self.open_wide_session(cache)
        cache.partition_changed(("wide", 7))
        cache.partition_changed(("wide", 3))
        cache.partition_changed(("other", 3))  # in no session
        ctx = incremental(cache, session_id, everything_changed=False)
        assert [key.partition for key, _ in ctx.partitions_to_read()] == [3, 7]  # in session order
        answer(ctx, {named("wide", 3): read(), named("wide", 7): read()})
        assert incremental(cache, session_id, everything_changed=False).partitions_to_read() == []

    def test_partitions_named_by_the_request_are_read(self):
        cache = new_cache()
        session_id = self.open_wide_session(cache)
        ctx = incremental(cache, session_id, {named("wide", 9): fetch(5)}, everything_changed=False)
        assert ctx.partitions_to_read() == [(named("wide", 9), fetch(5))]

    def test_a_listed_partition_is_read_again_and_one_left_out_by_the_size_limit_too(self):
        cache = new_cache()
        session_id = self.open_wide_session(cache)
        for p in (1, 2, 3):
            cache.partition_changed(("wide", p))
        ctx = incremental(cache, session_id, everything_changed=False)
        response = answer(ctx, {named("wide", 1): read(records=10), named("wide", 2): read(more_to_read=True),
                                named("wide", 3): read()})
        assert listed(response) == [named("wide", 1)]
        again = incremental(cache, session_id, everything_changed=False)
        assert sorted(key.partition for key, _ in again.partitions_to_read()) == [1, 2]

    def test_changes_while_a_fetch_waits_are_read_by_it(self):
        cache = new_cache()
        session_id = self.open_wide_session(cache)
        woken = []
        cache.on_session_changed = woken.append
        ctx = incremental(cache, session_id, everything_changed=False)
        assert ctx.peek_changed_meanwhile() == []
        cache.partition_changed(("wide", 42))
        assert woken == [session_id]
        assert ctx.peek_changed_meanwhile() == [(named("wide", 42), fetch(0))]
        assert ctx.changed_meanwhile() == [(named("wide", 42), fetch(0))]
        assert ctx.peek_changed_meanwhile() == []
        response = answer(ctx, {named("wide", 42): read(records=5)})
        assert listed(response) == [named("wide", 42)]

    def test_forgotten_and_removed_sessions_hear_of_no_more_changes(self):
        cache = new_cache()
        session_id = self.open_wide_session(cache)
        woken = []
        cache.on_session_changed = woken.append
        answer(incremental(cache, session_id, forgotten=[named("wide", 5)], everything_changed=False), {})
        cache.partition_changed(("wide", 5))
        assert woken == []
        context(cache, session_id, FINAL_EPOCH)  # closes the session
        cache.partition_changed(("wide", 6))
        assert woken == []
