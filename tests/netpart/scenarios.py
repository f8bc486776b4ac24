"""The network-partition scenarios, each run the same way on either system's `NamespacedCluster`:
a fresh topic whose two partitions are led by the broker the scenario hits, an idempotent
producer, a transactional producer and a read_committed consumer group recording a `History`,
then cut -> hold -> heal, a wait until the cluster healed by itself (every broker registered,
every ISR full, every workload getting through again), and the check of the history against the
final read.

    run_scenario(cluster, SCENARIOS["leader_cut_from_followers"])

Roles are chosen from the cluster as it is when the scenario starts (leadership moves from one
scenario to the next): the `controller`, and a `victim` (the controller itself, or a broker that
is not the controller) that leads the scenario's topic, its two `followers` being the others.

A hold lasts a few seconds beyond the timeout the scenario is about, so that it has fired before
the heal: the replica lag time (3 s, `LAG_HOLD_S`) when followers drop out of the ISR, the
ZooKeeper session timeout (6 s, `SESSION_HOLD_S`) when a broker's session must expire.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from confluent_kafka.admin import AdminClient, NewTopic

from tests.history import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    ConsumerGroupWorkload,
    FinalLog,
    History,
    IdempotentProducerWorkload,
    TransactionalProducerWorkload,
    Workload,
    check,
    final_read,
    running,
    wait_for_progress,
)

from .cluster import BROKER_IDS, REPLICA_LAG_MS, SESSION_TIMEOUT_MS, NamespacedCluster
from .network import CLIENT

MARGIN_S = 2.5
LAG_HOLD_S = REPLICA_LAG_MS / 1000 + MARGIN_S
SESSION_HOLD_S = SESSION_TIMEOUT_MS / 1000 + MARGIN_S
FLAPS = 6
FLAP_PERIOD_S = 1.0
# the clients' own timeouts, short as the brokers' (Kafka's group.min.session.timeout.ms is 6 s)
CONSUMER_CONFIG = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
HEAL_TIMEOUT_S = 90.0
EXPECT_TIMEOUT_S = 30.0
PARTITIONS = 2


@dataclass(frozen=True)
class Roles:
    controller: int
    victim: int
    followers: tuple[int, int]

    def describe(self) -> str:
        return f"controller {self.controller}, victim {self.victim}, followers {self.followers}"


Expectation = Callable[[NamespacedCluster, Roles, str], bool]


@dataclass(frozen=True)
class Scenario:
    """`fault` applies the partition and holds it; `expected` (`expectation` says what) is what
    ZooKeeper must show before the heal on either system, which proves the fault bit (waited for,
    beyond the hold, on a slow machine); `victim_is_controller` picks the victim."""

    name: str
    what: str
    fault: Callable[[NamespacedCluster, Roles, History], None]
    expectation: str = ""
    expected: Expectation | None = None
    victim_is_controller: bool = False


def still_leading(cluster: NamespacedCluster, roles: Roles, topic: str) -> bool:
    return roles.victim in cluster.registered() and leaders(cluster, topic) == {roles.victim}


def replaced(cluster: NamespacedCluster, roles: Roles, topic: str) -> bool:
    """The victim's session expired and its partitions have other leaders."""
    found = leaders(cluster, topic)
    return roles.victim not in cluster.registered() and roles.victim not in found and -1 not in found


def controller_replaced(cluster: NamespacedCluster, roles: Roles, topic: str) -> bool:
    return replaced(cluster, roles, topic) and cluster.controller() not in (-1, roles.victim)


def follower_dropped(cluster: NamespacedCluster, roles: Roles, topic: str) -> bool:
    """The follower's session expired and it left every ISR of the topic; the leader stayed."""
    follower = isolated_follower(roles)
    states = [cluster.partition_state(topic, p) or {} for p in range(PARTITIONS)]
    return (follower not in cluster.registered() and leaders(cluster, topic) == {roles.victim}
            and all(follower not in state.get("isr", [follower]) for state in states))


def leaders(cluster: NamespacedCluster, topic: str) -> set[int]:
    return {cluster.leader(topic, partition) for partition in range(PARTITIONS)}


def isolated_follower(roles: Roles) -> int:
    """The follower cut off: the one that is not the controller."""
    return next(f for f in roles.followers if f != roles.controller)


def node(broker_id: int) -> str:
    return NamespacedCluster.node(broker_id)


def cut_leader_from_followers(cluster: NamespacedCluster, roles: Roles, history: History) -> None:
    for follower in roles.followers:
        cluster.network.cut(node(roles.victim), node(follower))
    time.sleep(LAG_HOLD_S)


def cut_leader_from_zookeeper(cluster: NamespacedCluster, roles: Roles, history: History) -> None:
    cluster.network.cut(node(roles.victim), "zk")
    time.sleep(SESSION_HOLD_S)


def isolate_follower(cluster: NamespacedCluster, roles: Roles, history: History) -> None:
    """The victim leads the topic; the follower cut off is the one that is not the controller."""
    follower = isolated_follower(roles)
    history.note(f"isolating follower {follower}")
    cluster.network.isolate(node(follower))
    time.sleep(SESSION_HOLD_S)


def isolate_controller(cluster: NamespacedCluster, roles: Roles, history: History) -> None:
    cluster.network.isolate(node(roles.victim))
    time.sleep(SESSION_HOLD_S)


def flap_leader(cluster: NamespacedCluster, roles: Roles, history: History) -> None:
    """The leader's links to ZooKeeper and its followers go down and up every `FLAP_PERIOD_S`
    (`FLAPS` times), while a fifth of the packets between it and the clients are lost."""
    victim = node(roles.victim)
    down = False
    for _ in range(FLAPS):
        down = not down
        if down:
            cluster.network.isolate(victim, keep=(CLIENT,))
            cluster.network.lose(victim, CLIENT, 20)
        else:
            cluster.network.heal()
        history.note(f"flap: broker {roles.victim} {'cut' if down else 'joined'}")
        time.sleep(FLAP_PERIOD_S)


SCENARIOS = {
    scenario.name: scenario
    for scenario in [
        Scenario("leader_cut_from_followers",
                 "the leader cut from both followers, still reaching ZooKeeper and the clients",
                 cut_leader_from_followers, "the victim still registered and leading", still_leading),
        Scenario("leader_cut_from_zookeeper",
                 "the leader cut from ZooKeeper, still reaching the other brokers and the clients",
                 cut_leader_from_zookeeper, "the victim unregistered, other leaders elected", replaced),
        Scenario("follower_isolated", "one follower cut from everything", isolate_follower,
                 "the follower unregistered and out of the ISRs", follower_dropped),
        Scenario("controller_isolated", "the controller (also the topic's leader) cut from everything",
                 isolate_controller, "another controller, other leaders", controller_replaced,
                 victim_is_controller=True),
        Scenario("flapping_leader", "the leader's links to ZooKeeper and the followers flapping, "
                 "20 % loss to the clients", flap_leader),
    ]
}


def choose_roles(cluster: NamespacedCluster, victim_is_controller: bool) -> Roles:
    controller = cluster.controller()
    victim = controller if victim_is_controller else min(b for b in BROKER_IDS if b != controller)
    others = [b for b in BROKER_IDS if b != victim]
    return Roles(controller, victim, (others[0], others[1]))


def create_led_topic(cluster: NamespacedCluster, topic: str, roles: Roles) -> None:
    """`PARTITIONS` partitions with three replicas, the victim first (their preferred leader)."""
    first, second = roles.followers
    assignment = [[roles.victim, first, second], [roles.victim, second, first]][:PARTITIONS]
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    new_topic = NewTopic(topic, num_partitions=len(assignment), replica_assignment=assignment)
    futures = admin.create_topics([new_topic], request_timeout=30)
    futures[topic].result(60)
    wait_until(lambda: all(cluster.leader(topic, p) == roles.victim for p in range(PARTITIONS)),
               f"broker {roles.victim} leading {topic}", 60)


def observe(cluster: NamespacedCluster, topic: str) -> str:
    """The controller and the topic's leaders and ISRs as ZooKeeper has them now."""
    states = [cluster.partition_state(topic, partition) or {} for partition in range(PARTITIONS)]
    partitions = "; ".join(f"[{p}] leader {state.get('leader')} isr {state.get('isr')}"
                           for p, state in enumerate(states))
    return f"controller {cluster.controller()}, brokers {cluster.registered()}, {topic} {partitions}"


def expect(cluster: NamespacedCluster, scenario: Scenario, roles: Roles, topic: str) -> None:
    """Wait for what the scenario expects ZooKeeper to show before the heal."""
    expected = scenario.expected
    if expected is None:
        return
    try:
        wait_until(lambda: expected(cluster, roles, topic), scenario.expectation, EXPECT_TIMEOUT_S)
    except AssertionError as failure:
        raise AssertionError(f"{cluster.system}, {scenario.what}: {failure} "
                             f"({roles.describe()}; {observe(cluster, topic)})") from None


def wait_until(condition: Callable[[], object], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout:g} s")
        time.sleep(0.2)


def wait_until_healed(cluster: NamespacedCluster, topic: str) -> None:
    deadline = time.monotonic() + HEAL_TIMEOUT_S
    while problems := cluster.unhealed([topic]):
        if time.monotonic() > deadline:
            raise AssertionError(f"{cluster.system} did not heal within {HEAL_TIMEOUT_S:g} s: {problems}")
        time.sleep(0.2)


def scenario_workloads(history: History, bootstrap: str, topic: str) -> list[Workload]:
    """An idempotent producer, a transactional producer (a transactional.id of its own) and a
    read_committed group of two consumers, on `topic`."""
    return [
        IdempotentProducerWorkload(history, bootstrap, topic),
        TransactionalProducerWorkload(history, bootstrap, topic, transactional_id=f"{topic}-txn"),
        ConsumerGroupWorkload(history, bootstrap, topic, group=f"{topic}-group", members=2, churn_every=None,
                              config=CONSUMER_CONFIG),
    ]


def run_scenario(cluster: NamespacedCluster, scenario: Scenario) -> None:
    """Workloads through cut -> hold -> heal; AssertionError when the cluster does not heal or
    the history shows an anomaly."""
    phases = Phases()
    cluster.network.heal()
    wait_until_healed(cluster, "")
    roles = choose_roles(cluster, scenario.victim_is_controller)
    topic = f"netpart-{scenario.name}"
    create_led_topic(cluster, topic, roles)
    phases.done("topic")
    history = History()
    workloads = scenario_workloads(history, cluster.bootstrap, topic)
    with running(*workloads):
        wait_for_progress(workloads)
        phases.done("first progress")
        history.note(f"fault: {scenario.what} ({roles.describe()})")
        try:
            scenario.fault(cluster, roles, history)
            history.note(f"end of hold: {observe(cluster, topic)}")
            expect(cluster, scenario, roles, topic)
        finally:
            cluster.network.heal()
            history.note("healed: every link whole")
            phases.done("fault")
        wait_until_healed(cluster, topic)
        history.note("cluster healed: every ISR full")
        phases.done("ISRs full")
        wait_for_progress(workloads, timeout=HEAL_TIMEOUT_S)
        history.note("every workload getting through again")
        phases.done("workloads through")
    phases.done("workloads stopped")
    committed, uncommitted = final_reads(cluster.bootstrap, topic)
    phases.done("final read")
    verdict = check(history, committed, uncommitted)
    print(f"{cluster.system} {scenario.name}: {verdict.summary()}\n  phases (s): {phases}")
    print(history.dump(history.notes()))
    assert verdict.ok, f"{cluster.system}, {scenario.what}:\n{verdict.summary()}"


def final_reads(bootstrap: str, topic: str) -> tuple[FinalLog, FinalLog]:
    """The read_committed and read_uncommitted final reads, side by side."""
    with ThreadPoolExecutor(2) as pool:
        committed = pool.submit(final_read, bootstrap, topic, READ_COMMITTED)
        uncommitted = pool.submit(final_read, bootstrap, topic, READ_UNCOMMITTED)
        return committed.result(), uncommitted.result()


class Phases:
    """How long each phase of a scenario took, for the printed summary."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.took: list[str] = []

    def done(self, phase: str) -> None:
        now = time.monotonic()
        self.took.append(f"{phase} {now - self.last:.1f}")
        self.last = now

    def __str__(self) -> str:
        return ", ".join(self.took)
