"""The replica manager counts the ISR changes it commits as leader (Kafka's IsrShrinksPerSec and
IsrExpandsPerSec), once each, when the store accepts them."""

from .helpers import BROKER, FOLLOWER, TP, replica_manager


def test_a_committed_shrink_then_expand_count_once_each(tmp_path):
    manager = replica_manager(tmp_path)
    partition = manager.partitions[TP]
    lag_ms = 10_000
    manager.shrink_isrs(manager.clock.now_ms() + 3 * lag_ms, lag_ms)
    assert partition.isr == [BROKER]
    assert (manager.isr_shrinks, manager.isr_expands) == (1, 0)
    partition.update_follower_fetch_state(FOLLOWER, partition.log_end_offset, manager.clock.now_ms())
    assert partition.isr == [BROKER, FOLLOWER]
    assert (manager.isr_shrinks, manager.isr_expands) == (1, 1)


def test_a_refused_proposal_is_not_counted(tmp_path):
    manager = replica_manager(tmp_path)
    partition = manager.partitions[TP]
    partition.partition_epoch += 1  # stale against the store: the store refuses the proposal
    manager.shrink_isrs(manager.clock.now_ms() + 30_000, 10_000)
    assert partition.isr == [BROKER, FOLLOWER]
    assert (manager.isr_shrinks, manager.isr_expands) == (0, 0)
