"""The controller's rules for choosing a partition's leader and ISR (no ZooKeeper needed)."""
from pykbroker.cluster.controller import election
from pykbroker.cluster.zk_data import LeaderAndIsr
from pykbroker.protocol.errors import ErrorCode

REPLICAS = [1, 2, 3]
LIVE = {1: 10, 2: 11, 3: 12}  # broker id -> registration epoch (all registered before zxid 100)


def state(leader, isr, epoch=5, mzxid=100):
    return LeaderAndIsr(leader, epoch, list(isr), controller_epoch=1, zk_version=3, mzxid=mzxid)


def without(live, *ids):
    return {b: e for b, e in live.items() if b not in ids}


class TestNewPartitions:
    def test_the_first_live_replica_leads_and_every_live_replica_is_in_sync(self):
        assert election.reconcile(REPLICAS, None, LIVE) == (1, [1, 2, 3])

    def test_dead_replicas_are_skipped(self):
        assert election.reconcile(REPLICAS, None, without(LIVE, 1)) == (2, [2, 3])

    def test_without_live_replicas_nothing_is_written(self):
        assert election.reconcile(REPLICAS, None, {}) is None


class TestLeaderFailure:
    def test_a_live_leader_keeps_its_place(self):
        assert election.reconcile(REPLICAS, state(1, [1, 2, 3]), LIVE) is None

    def test_a_dead_follower_leaves_the_isr(self):
        assert election.reconcile(REPLICAS, state(1, [1, 2, 3]), without(LIVE, 3)) == (1, [1, 2])

    def test_a_dead_leader_is_replaced_by_the_first_live_isr_member_in_assignment_order(self):
        assert election.reconcile(REPLICAS, state(1, [3, 1, 2]), without(LIVE, 1)) == (2, [3, 2])

    def test_replicas_outside_the_isr_are_not_elected(self):
        assert election.reconcile(REPLICAS, state(1, [1, 3]), without(LIVE, 1)) == (3, [3])

    def test_a_leader_registered_again_since_its_election_is_replaced(self):
        restarted = {**LIVE, 1: 150}
        assert election.reconcile(REPLICAS, state(1, [1, 2, 3]), restarted) == (2, [2, 3])

    def test_a_restarted_leader_that_is_the_only_isr_member_leads_again(self):
        restarted = {**LIVE, 1: 150}
        assert election.reconcile(REPLICAS, state(1, [1]), restarted) == (1, [1])

    def test_brokers_that_restarted_leave_the_isr(self):
        assert election.reconcile(REPLICAS, state(1, [1, 2, 3]), LIVE, gone={3}) == (1, [1, 2])

    def test_brokers_shutting_down_are_not_elected(self):
        decision = election.reconcile(REPLICAS, state(1, [1, 2, 3]), without(LIVE, 1),
                                      shutting_down={2})
        assert decision == (3, [3])


class TestNoInSyncReplicaAlive:
    def test_the_partition_goes_offline_keeping_the_last_isr_member(self):
        decision = election.reconcile(REPLICAS, state(1, [1]), without(LIVE, 1))
        assert decision == (-1, [1])

    def test_an_offline_partition_stays_as_it_is(self):
        assert election.reconcile(REPLICAS, state(-1, [1], epoch=6), without(LIVE, 1)) is None

    def test_it_comes_back_when_its_last_isr_member_returns(self):
        assert election.reconcile(REPLICAS, state(-1, [1], epoch=6), LIVE) == (1, [1])

    def test_unclean_election_takes_the_first_live_replica(self):
        decision = election.reconcile(REPLICAS, state(1, [1]), without(LIVE, 1), unclean=True)
        assert decision == (2, [2])


class TestControlledShutdown:
    def test_leadership_moves_to_another_isr_member(self):
        decision = election.controlled_shutdown(REPLICAS, state(1, [1, 2, 3]), 1, LIVE, {1})
        assert decision == (2, [2, 3])

    def test_a_follower_leaves_the_isr(self):
        decision = election.controlled_shutdown(REPLICAS, state(1, [1, 2, 3]), 3, LIVE, {3})
        assert decision == (1, [1, 2])

    def test_with_no_other_isr_member_the_leader_stays(self):
        assert election.controlled_shutdown(REPLICAS, state(1, [1]), 1, LIVE, {1}) is None

    def test_single_replica_partitions_are_left_alone(self):
        assert election.controlled_shutdown([1], state(1, [1]), 1, LIVE, {1}) is None

    def test_a_live_replica_outside_the_isr_may_still_take_over(self):
        assert election.successor_possible(REPLICAS, 1, LIVE, {1})

    def test_no_successor_when_every_other_replica_is_gone(self):
        assert not election.successor_possible(REPLICAS, 1, without(LIVE, 2, 3), {1})

    def test_no_successor_when_every_other_replica_is_shutting_down_too(self):
        assert not election.successor_possible(REPLICAS, 1, LIVE, {1, 2, 3})


class TestElectLeaders:
    def test_preferred_election_makes_the_first_replica_lead(self):
        code, decision = election.preferred(REPLICAS, state(2, [1, 2, 3]), LIVE, set())
        assert (code, decision) == (ErrorCode.NONE, (1, [1, 2, 3]))

    def test_preferred_election_is_not_needed_when_the_first_replica_leads(self):
        code, _ = election.preferred(REPLICAS, state(1, [1, 2, 3]), LIVE, set())
        assert code == ErrorCode.ELECTION_NOT_NEEDED

    def test_preferred_leader_outside_the_isr_is_not_available(self):
        code, _ = election.preferred(REPLICAS, state(2, [2, 3]), LIVE, set())
        assert code == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE

    def test_unclean_election_is_not_needed_with_a_live_leader(self):
        code, _ = election.unclean(REPLICAS, state(1, [1, 2]), LIVE, set())
        assert code == ErrorCode.ELECTION_NOT_NEEDED

    def test_unclean_election_elects_a_replica_outside_the_isr(self):
        code, decision = election.unclean(REPLICAS, state(-1, [1]), without(LIVE, 1), set())
        assert (code, decision) == (ErrorCode.NONE, (2, [2]))

    def test_unclean_election_without_live_replicas(self):
        code, _ = election.unclean(REPLICAS, state(-1, [1]), {}, set())
        assert code == ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
