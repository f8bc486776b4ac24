"""A partition's leader and followers: high watermark over the ISR, ISR changes, divergence."""
import pytest

from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.replication.fetcher import truncation_offset
from pykbroker.replication.partition import Partition
from tests.log.helpers import kv_batch, open_log

LEADER, F2, F3 = 1, 2, 3


@pytest.fixture
def leader(tmp_path):
    partition = Partition("t", 0, None, open_log(tmp_path), LEADER)
    partition.make_leader(1, [1, 2, 3], [1, 2, 3], partition_epoch=0, now_ms=0)
    return partition


def append(partition, count=1):
    return partition.append_as_leader(kv_batch(count), required_acks=-1, min_insync_replicas=1,
                                      now_ms=0)


class TestHighWatermark:
    def test_waits_for_every_isr_member(self, leader):
        append(leader, 5)
        leader.update_follower_fetch_state(F2, 5, now_ms=1)
        assert leader.high_watermark == 0
        leader.update_follower_fetch_state(F3, 3, now_ms=1)
        assert leader.high_watermark == 3

    def test_acks_all_is_satisfied_once_the_isr_has_the_records(self, leader):
        append(leader, 2)
        assert leader.acks_satisfied(2, min_insync_replicas=2) is None
        leader.update_follower_fetch_state(F2, 2, now_ms=1)
        leader.update_follower_fetch_state(F3, 2, now_ms=1)
        assert leader.acks_satisfied(2, min_insync_replicas=2) == ErrorCode.NONE

    def test_too_small_an_isr_refuses_acks_all_before_appending(self, leader):
        leader.isr = [LEADER]
        with pytest.raises(KafkaError) as raised:
            leader.append_as_leader(kv_batch(1), required_acks=-1, min_insync_replicas=2,
                                    now_ms=0)
        assert raised.value.code == ErrorCode.NOT_ENOUGH_REPLICAS
        assert leader.log_end_offset == 0


class TestIsrChanges:
    def test_a_follower_behind_for_longer_than_the_lag_time_is_proposed_out(self, leader):
        proposals = []
        leader.isr_listener = lambda partition, isr: proposals.append(isr)
        append(leader, 3)
        leader.update_follower_fetch_state(F2, 3, now_ms=100)
        leader.update_follower_fetch_state(F3, 1, now_ms=100)
        leader.update_follower_fetch_state(F2, 3, now_ms=19_000)
        leader.update_follower_fetch_state(F3, 1, now_ms=19_000)
        assert leader.maybe_shrink_isr(now_ms=20_000, replica_lag_time_max_ms=10_000)
        assert proposals == [[1, 2]]

    def test_a_follower_that_keeps_up_with_a_steady_stream_stays_in_sync(self, leader):
        leader.isr_listener = lambda partition, isr: pytest.fail("no ISR change expected")
        for second in range(1, 30):
            append(leader, 1)  # a new record between any two fetches
            leader.update_follower_fetch_state(F2, leader.log_end_offset - 1, now_ms=second * 1000)
            leader.update_follower_fetch_state(F3, leader.log_end_offset - 1, now_ms=second * 1000)
        assert not leader.maybe_shrink_isr(now_ms=30_000, replica_lag_time_max_ms=10_000)

    def test_one_proposal_at_a_time_and_it_counts_once_committed(self, leader):
        proposals = []
        leader.isr_listener = lambda partition, isr: proposals.append(isr)
        leader.isr = [LEADER]
        append(leader, 2)
        leader.update_follower_fetch_state(F2, 2, now_ms=1)
        leader.update_follower_fetch_state(F3, 2, now_ms=1)
        assert proposals == [[1, 2]] and leader.isr == [1]
        leader.isr_proposal_done([1, 2], partition_epoch=1)
        assert leader.isr == [1, 2] and leader.partition_epoch == 1

    def test_a_refused_proposal_leaves_the_isr_alone(self, leader):
        leader.isr_listener = lambda partition, isr: None
        leader.isr = [LEADER]
        append(leader, 1)
        leader.update_follower_fetch_state(F2, 1, now_ms=1)
        leader.isr_proposal_done([1, 2], partition_epoch=None)
        assert leader.isr == [1] and leader.pending_isr is None

    def test_the_high_watermark_counts_a_replica_being_added(self, leader):
        leader.isr_listener = lambda partition, isr: None
        leader.isr = [LEADER]
        append(leader, 4)
        leader.update_follower_fetch_state(F2, 4, now_ms=1)  # caught up: proposed into the ISR
        append(leader, 2)
        assert leader.pending_isr == [1, 2]
        assert leader.high_watermark == 4  # not 6: F2 may be in the ISR that elects a leader


class TestDivergence:
    def test_a_follower_whose_last_epoch_ends_earlier_here_diverges(self, tmp_path):
        partition = Partition("t", 0, None, open_log(tmp_path), LEADER)
        partition.make_leader(1, [1, 2], [1, 2], 0, now_ms=0)
        append(partition, 3)                        # epoch 1: offsets 0-2
        partition.make_leader(3, [1, 2], [1, 2], 1, now_ms=0)
        append(partition, 2)                        # epoch 3: offsets 3-4
        assert partition.diverging_epoch(fetch_offset=5, last_fetched_epoch=2) == (1, 3)
        assert partition.diverging_epoch(fetch_offset=3, last_fetched_epoch=1) is None
        assert partition.diverging_epoch(fetch_offset=5, last_fetched_epoch=3) is None

    def test_the_follower_truncates_to_the_smaller_end_of_the_common_epoch(self, tmp_path):
        follower_log = open_log(tmp_path)
        follower_log.append_as_leader(kv_batch(3), leader_epoch=1)   # epoch 1: 0-2
        follower_log.append_as_leader(kv_batch(4), leader_epoch=2)   # epoch 2: 3-6
        assert truncation_offset(follower_log, 1, 5) == 3   # ours ends at 3
        assert truncation_offset(follower_log, 1, 2) == 2   # the leader's ends at 2

    def test_an_epoch_the_follower_never_saw_sends_it_further_back(self, tmp_path):
        follower_log = open_log(tmp_path)
        follower_log.append_as_leader(kv_batch(3), leader_epoch=1)
        follower_log.append_as_leader(kv_batch(3), leader_epoch=4)
        assert truncation_offset(follower_log, 3, 5) == 3  # epoch 1 ends at 3 here
