"""The controller: elected through ZooKeeper, it keeps every partition led by a live broker.

Every broker runs one `Controller`; the one that creates the ephemeral `/controller` znode (and
bumps `/controller_epoch` in the same ZooKeeper transaction) is active until its session ends.
The active controller:

- watches the live brokers: when a broker's registration goes away (its session ended) or is
  replaced (it restarted), the partitions it led get a new leader from their ISR, and its
  replicas leave the ISRs; when a broker comes back, offline partitions it can lead are elected;
- watches the topics: new topics and added partitions get their first leader and ISR (their
  state znodes); requests under `/admin/delete_topics` delete topics;
- consumes `/isr_change_notification` (leaders write the ISR themselves);
- consumes `/log_dir_event_notification`: a broker whose log dir failed lists its replicas on
  offline dirs in `/brokers/offline_replicas/<id>` (see `zk_data`), and the controller treats
  each as it treats a replica on a dead broker (Kafka's `replicasOnOfflineDirs`): its leadership
  moves to another in-sync replica, it leaves the ISR and it is not elected again, until its
  broker registers anew (a restart, or a new ZooKeeper session) without it. A new controller reads
  the list again, so a failover keeps them out;
- serves ControlledShutdown (moving leadership off a broker before it stops) and ElectLeaders
  (preferred or unclean elections), and moves a partition's leadership to a chosen in-sync
  replica on request (`move_leadership`, for client tests);
- when unclean leader election gets enabled (a topic's config, or the broker's dynamic
  default), elects leaders of the offline partitions it now allows;
- reassigns partitions (KIP-455, Kafka's `onPartitionReassignment`), asked through
  AlterPartitionReassignments or the older `/admin/reassign_partitions` znode: the topic znode
  gets RS = ORS + TRS with `adding_replicas`/`removing_replicas` and the leader epoch is bumped;
  the new replicas start fetching, and once every target replica is in the ISR (the leaders'
  ISR change notifications tell), the leader moves if it is not a target replica, the removed
  replicas leave the ISR and the assignment becomes TRS, in one ZooKeeper transaction (state
  first, so the new leader is known before the old replicas see themselves removed). A broker
  whose replica is no longer assigned stops it and deletes its log (Kafka's StopReplica with
  delete). A new controller resumes every reassignment it finds in the topic znodes.

Brokers learn leaders and ISRs by watching the state znodes (see `zk_watches`), so the
controller never sends LeaderAndIsr or UpdateMetadata requests: writing the state znode is
telling everyone. Every write is a compare-and-set on the state znode's version inside a
transaction that also checks `/controller_epoch`, so a controller that lost its role cannot
overwrite its successor's decisions.

All controller work runs on its event thread (`EventThread`), in order; watch callbacks only
enqueue. The request handlers await answers through the loop bridge.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...common.topic_partition import TopicPartition
from ...protocol.errors import ErrorCode
from .. import zk_data
from ..loop_bridge import LoopBridge
from ..model import new_topic_id
from ..zk_client import ControllerElection, ControllerMovedError, KafkaZkClient, WatchResult, ZooKeeperError
from ..zk_data import LeaderAndIsr, TopicAssignment
from . import election
from .event_thread import EventThread
from .reassignment import ReassignmentError, ReplicaAssignment, invalid_target

if TYPE_CHECKING:
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

MAX_WRITE_ATTEMPTS = 5
BATCH_SIZE = 200  # partition states per ZooKeeper transaction (well under its 1 MB request limit)
RESYNC_DELAY_S = 1.0


Decision = tuple[int, list[int]] | None  # the new (leader, isr), or None for no change
Decide = Callable[[LeaderAndIsr | None], Decision]
ElectionRule = Callable[[list[int], LeaderAndIsr | None, election.Live, Collection[int]], tuple[ErrorCode, Decision]]


class Controller:
    def __init__(self, zk_client: KafkaZkClient, broker_id: int, config: BrokerConfig, bridge: LoopBridge) -> None:
        self.zk_client = zk_client
        self.broker_id = broker_id
        self.config = config
        self.bridge = bridge
        self.events = EventThread("controller-event-thread")
        self.active = False
        self.epoch = zk_data.INITIAL_CONTROLLER_EPOCH
        self._epoch_zk_version = -1
        self._generation = 0  # bumped on every election won or lost: older watches stop
        self._live: dict[int, int] = {}
        self._offline: dict[int, frozenset[TopicPartition]] = {}  # replicas on offline log dirs, by broker
        self._shutting_down: set[int] = set()
        self._topics: dict[str, TopicAssignment] = {}
        self._elected: dict[str, list[str]] = {}  # partition states written, by topic, not yet logged
        self._reassigning: set[TopicPartition] = set()
        self._zk_reassignment_present = False  # /admin/reassign_partitions seen existing
        self._stopped = False

    # -- lifecycle (any thread) ---------------------------------------------------------
    def startup(self) -> None:
        self.events.start()
        self.zk_client.on_session_lost(lambda: self._submit(self._resign))
        self.zk_client.on_new_session(lambda: self._submit(self._elect))
        self.zk_client.watch_controller(self._on_controller_znode)

    def _submit(self, event: Callable[[], None]) -> None:
        """Queue `event` on the event thread (from any thread), not waiting for it."""
        self.events.submit(event)

    def shutdown(self) -> None:
        self._stopped = True
        self.events.submit(self._resign)
        self.events.stop()

    # -- config changes (event loop) ---------------------------------------------------
    def reconfigure(self, config: BrokerConfig) -> None:
        """The broker's dynamic configs changed. As Kafka's, enabling unclean leader election
        for the cluster makes the active controller elect leaders of offline partitions."""
        was_enabled = bool(self.config["unclean.leader.election.enable"])
        self.config = config
        if not was_enabled and bool(config["unclean.leader.election.enable"]):
            self.events.submit(self._on_unclean_leader_election_enabled, None)

    def topic_configs_changed(self, topic: str, configs: dict[str, str]) -> None:
        """A topic's configs changed (Kafka's TopicConfigHandler): with unclean leader election
        enabled, the active controller elects leaders of the topic's offline partitions."""
        value = configs.get("unclean.leader.election.enable")
        if value is not None and value.strip().lower() == "true":
            self.events.submit(self._on_unclean_leader_election_enabled, topic)

    def _on_unclean_leader_election_enabled(self, topic: str | None) -> None:
        if topic is None:
            log.info("Unclean leader election has been enabled by default")
            self._if_active(self._generation, self._reconcile_all)
        else:
            log.info("Unclean leader election has been enabled for topic %s", topic)
            self._if_active(self._generation, self._reconcile_topic, topic)

    def _on_controller_znode(self, controller_id: int | None) -> WatchResult:
        if self._stopped:
            return False
        if controller_id is None:
            self.events.submit(self._elect)
        elif controller_id != self.broker_id:
            self.events.submit(self._resign)
        return None

    # -- what request handlers ask (event loop) ----------------------------------------
    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, list[TopicPartition]]:
        future = self.events.submit(self._controlled_shutdown, broker_id, broker_epoch)
        return await self.bridge.wait(future)

    async def elect_leaders(
        self, election_type: int, partitions: list[TopicPartition] | None
    ) -> dict[TopicPartition, tuple[ErrorCode, str | None]]:
        future = self.events.submit(self._elect_leaders, election_type, partitions)
        return await self.bridge.wait(future)

    async def move_leadership(self, topic: str, partition: int, broker_id: int) -> tuple[ErrorCode, str | None]:
        future = self.events.submit(self._move_leadership, topic, partition, broker_id)
        return await self.bridge.wait(future)

    async def alter_partition_reassignments(
        self, reassignments: dict[TopicPartition, list[int] | None]
    ) -> ErrorCode | dict[TopicPartition, ReassignmentError]:
        """Start, replace (a target) or cancel (None) reassignments: each partition's error, or
        NOT_CONTROLLER for all."""
        future = self.events.submit(self._alter_reassignments, reassignments)
        return await self.bridge.wait(future)

    async def list_partition_reassignments(
        self, partitions: list[TopicPartition] | None
    ) -> ErrorCode | dict[TopicPartition, ReplicaAssignment]:
        """The ongoing reassignments (of `partitions`, or all), or NOT_CONTROLLER."""
        future = self.events.submit(self._list_reassignments, partitions)
        return await self.bridge.wait(future)

    # -- election (event thread) -------------------------------------------------------
    def _elect(self) -> None:
        """Become the controller if there is none (again later if ZooKeeper failed us)."""
        if self._stopped or self.active:
            return
        try:
            self._try_to_become_controller()
        except ZooKeeperError as exc:
            log.warning("Controller election failed (%s); trying again soon", exc)
            self._resign()
            timer = threading.Timer(RESYNC_DELAY_S, lambda: self.events.submit(self._elect))
            timer.daemon = True
            timer.start()

    def _try_to_become_controller(self) -> None:
        for _ in range(MAX_WRITE_ATTEMPTS):
            controller_id = self.zk_client.get_controller_id()
            if controller_id is not None:
                log.debug("Broker %d is the controller", controller_id)
                return
            epoch, version = self.zk_client.get_or_create_controller_epoch()
            outcome = self.zk_client.register_controller_and_increment_controller_epoch(
                self.broker_id, epoch + 1, version
            )
            if outcome == ControllerElection.EPOCH_CHANGED:
                continue  # try again
            if outcome != ControllerElection.ELECTED:
                return  # another broker won, or ZooKeeper failed the transaction
            self.epoch, self._epoch_zk_version = epoch + 1, version + 1
            self._on_failover()
            return

    def _on_failover(self) -> None:
        self.active = True
        self._generation += 1
        self._live, self._topics, self._shutting_down, self._offline = {}, {}, set(), {}
        self._reassigning, self._zk_reassignment_present = set(), False
        log.info("Broker %d is now the controller (epoch %d)", self.broker_id, self.epoch)
        self.zk_client.ensure_feature_znode()
        generation = self._generation
        self.zk_client.watch_broker_ids(self._watcher(self._on_brokers_changed, generation))
        self.zk_client.watch_topics(self._watcher(self._on_topics_changed, generation))
        self.zk_client.watch_topic_deletions(self._watcher(self._on_deletions_requested, generation))
        self.zk_client.watch_isr_change_notifications(self._watcher(self._on_isr_changes, generation))
        self.zk_client.watch_log_dir_event_notifications(self._watcher(self._on_log_dir_events, generation))
        self.zk_client.watch_reassign_partitions(functools.partial(self._on_reassign_partitions_znode, generation))

    def _resign(self) -> None:
        if self.active:
            log.info("Broker %d is no longer the controller", self.broker_id)
        self.active = False
        self._generation += 1

    def _watcher(self, handler: Callable[[], None], generation: int) -> Callable[[list[Any]], WatchResult]:
        """A children watch's callback that hands `handler` to the event thread while this
        controller's `generation` lasts."""

        def on_children(_children: list[Any]) -> WatchResult:
            if self._stopped or generation != self._generation:
                return False
            self.events.submit(self._if_active, generation, handler)
            return None

        return on_children

    def _if_active(self, generation: int, handler: Callable[..., None], *args: Any) -> None:
        if self.active and generation == self._generation:
            try:
                handler(*args)
            except ControllerMovedError:
                log.info("Another controller took over")
                self._resign()
            except ZooKeeperError as exc:
                log.warning("Controller work failed (%s); reading the cluster again soon", exc)
                self._resync_later(generation)

    def _resync_later(self, generation: int) -> None:
        timer = threading.Timer(RESYNC_DELAY_S, lambda: self.events.submit(self._if_active, generation, self._resync))
        timer.daemon = True
        timer.start()

    def _resync(self) -> None:
        """Read brokers and topics again and check every partition (after a failed step)."""
        self._on_brokers_changed()
        self._on_topics_changed()
        for name in sorted(self._topics):
            self._on_topic_assignment(name)

    # -- brokers coming and going ------------------------------------------------------
    def _on_brokers_changed(self) -> None:
        live = self._read_live_brokers()
        previous = self._live
        gone = {b for b in previous if b not in live}
        restarted = {b for b in previous if b in live and live[b] != previous[b]}
        started = {b for b in live if b not in previous}
        self._live = live
        self._offline = self._read_offline_replicas()
        self._shutting_down &= set(live) - restarted
        if gone or restarted:
            log.info("Brokers gone: %s, restarted: %s", sorted(gone), sorted(restarted))
            self._reconcile(self._partitions_on(gone | restarted), gone=restarted)
        if started:
            log.info("Brokers started: %s", sorted(started))
        self._reconcile_all()  # a broker that came back may lead offline partitions
        if started or restarted:
            self._check_reassignments()  # a target replica may be back

    def _read_live_brokers(self) -> dict[int, int]:
        return self.zk_client.get_all_broker_and_epochs()

    # -- log directories failing -------------------------------------------------------
    def _on_log_dir_events(self) -> None:
        """Kafka's processLogDirEventNotification: the brokers named have a failed log dir; their
        replicas on it go offline (leadership moves, they leave the ISRs)."""
        notifications = self.zk_client.get_all_log_dir_event_notifications()
        if not notifications:
            return
        try:
            broker_ids = self.zk_client.get_broker_ids_from_log_dir_events(notifications)
            log.info("Handling log directory failure for brokers %s", ",".join(map(str, sorted(broker_ids))))
            previous = self._offline
            self._offline = self._read_offline_replicas()
            newly = self._newly_offline(previous)
            if newly:
                self._reconcile(sorted(newly))
        finally:
            self.zk_client.delete_log_dir_event_notifications(notifications)

    def _read_offline_replicas(self) -> dict[int, frozenset[TopicPartition]]:
        """The replicas on offline log dirs of the live brokers (those of a broker that is gone
        went with it)."""
        return {
            broker_id: offline.partitions
            for broker_id, offline in self.zk_client.get_offline_replicas().items()
            if broker_id in self._live and offline.partitions
        }

    def _newly_offline(self, previous: Mapping[int, frozenset[TopicPartition]]) -> set[TopicPartition]:
        """The partitions with a replica offline now that was not before (logged as Kafka does)."""
        newly: set[TopicPartition] = set()
        for broker_id, partitions in sorted(self._offline.items()):
            added = partitions - previous.get(broker_id, frozenset())
            if added:
                replicas = ",".join(f"[{t},{p},{broker_id}]" for t, p in sorted(added))
                log.info("Mark replicas %s on broker %d as offline", replicas, broker_id)
                newly |= added
        return newly

    def _live_for(self, tp: TopicPartition, live: Mapping[int, int] | None = None) -> Mapping[int, int]:
        """The live brokers (`live`, else the controller's) whose replica of `tp` is online: a
        replica on an offline log dir counts as a dead broker's (Kafka's isReplicaOnline)."""
        brokers = self._live if live is None else live
        offline_here = {b for b, partitions in self._offline.items() if tp in partitions}
        if not offline_here:
            return brokers
        return {b: epoch for b, epoch in brokers.items() if b not in offline_here}

    # -- topics --------------------------------------------------------------------------
    def _on_topics_changed(self) -> None:
        names = self.zk_client.get_all_topics()
        for name in sorted(set(self._topics) - names):
            del self._topics[name]
        generation = self._generation
        for name in sorted(names - set(self._topics)):
            self._topics[name] = TopicAssignment(None, {})
            self.zk_client.watch_topic(name, functools.partial(self._on_topic_znode, name, generation))

    def _on_topic_znode(self, name: str, generation: int, assignment: TopicAssignment | None) -> WatchResult:
        if self._stopped or generation != self._generation:
            return False
        if assignment is None:
            return False
        self.events.submit(self._if_active, generation, self._on_topic_assignment, name)
        return None

    def _on_topic_assignment(self, name: str) -> None:
        found = self.zk_client.get_topic_assignment(name)
        if found is None:
            self._topics.pop(name, None)
            return
        assignment, version = found
        if assignment.topic_id is None:  # written by a tool that does not know topic ids
            assignment = self._assign_topic_id(name, assignment, version)
        self._topics[name] = assignment
        self._reconcile((name, p) for p in sorted(assignment.partitions))
        self._resume_reassignments(name, assignment)

    def _assign_topic_id(self, name: str, assignment: TopicAssignment, version: int) -> TopicAssignment:
        with_id = TopicAssignment(new_topic_id(), assignment.partitions, assignment.adding, assignment.removing)
        self.zk_client.set_topic_assignment(name, with_id, version)  # if changed meanwhile, the watch brings it
        return with_id

    def _partitions_on(self, brokers: set[int]) -> list[TopicPartition]:
        return [
            (name, p)
            for name, assignment in sorted(self._topics.items())
            for p, replicas in sorted(assignment.partitions.items())
            if brokers.intersection(replicas)
        ]

    def _reconcile_topic(self, name: str) -> None:
        assignment = self._topics.get(name)
        if assignment is not None:
            self._reconcile((name, p) for p in sorted(assignment.partitions))

    def _reconcile_all(self) -> None:
        self._reconcile(
            (name, p) for name, assignment in sorted(self._topics.items()) for p in sorted(assignment.partitions)
        )

    # -- deleting topics ---------------------------------------------------------------
    def _on_deletions_requested(self) -> None:
        enabled = bool(self.config["delete.topic.enable"])
        for name in self.zk_client.get_topic_deletions():
            if enabled:
                log.info("Deleting topic %s", name)
                self.zk_client.delete_topic_znode(name)
                self._topics.pop(name, None)
            self.zk_client.delete_topic_deletion(name)

    def _on_isr_changes(self) -> None:
        """Leaders already wrote the new ISRs, which every broker watches: consume them, and see
        whether a reassignment's target replicas are all in sync now."""
        self.zk_client.delete_isr_change_notifications()
        self._check_reassignments()

    # -- elections -----------------------------------------------------------------------
    def _reconcile(self, partitions: Iterable[TopicPartition], *, gone: Collection[int] = frozenset()) -> None:
        try:
            for name, p in partitions:
                replicas = self._replicas(name, p)
                if replicas is None:
                    continue
                self._update_state(name, p, functools.partial(self._reconcile_one, (name, p), replicas, gone=gone))
        finally:
            self._log_elections()

    def _log_elections(self) -> None:
        """One INFO line per topic for the partition states a batch of elections wrote (each
        as `partition:leader@leader_epoch[isr]`), instead of one per partition."""
        for name, states in sorted(self._elected.items()):
            log.info("Topic %s: new leader and ISR for %d partition(s): %s", name, len(states), " ".join(states))
        self._elected.clear()

    def _reconcile_one(
        self, tp: TopicPartition, replicas: list[int], state: LeaderAndIsr | None, *, gone: Collection[int]
    ) -> Decision:
        live = self._live_for(tp)
        decision = election.reconcile(replicas, state, live, shutting_down=self._shutting_down, gone=gone)
        # Left without a leader: going offline now, or offline already (nothing to change for
        # a clean election, but a replica outside the ISR may have come back since).
        leaderless = (
            decision[0] == zk_data.NO_LEADER
            if decision is not None
            else state is not None and state.leader == zk_data.NO_LEADER
        )
        if leaderless and self._unclean_enabled(tp[0]):
            unclean = election.reconcile(
                replicas, state, live, shutting_down=self._shutting_down, gone=gone, unclean=True
            )
            if unclean is not None:
                decision = unclean
        return decision

    def _unclean_enabled(self, topic: str) -> bool:
        configs = self.zk_client.get_entity_configs(zk_data.TOPIC_CONFIG_TYPE, topic)
        value = configs.get("unclean.leader.election.enable")
        if value is None:
            return bool(self.config["unclean.leader.election.enable"])
        return value.strip().lower() == "true"

    def _replicas(self, name: str, p: int) -> list[int] | None:
        assignment = self._topics.get(name)
        return None if assignment is None else assignment.partitions.get(p)

    def _update_state(self, name: str, p: int, decide: Decide) -> LeaderAndIsr | None:
        """Read the state, decide, write with compare-and-set; again if it changed meanwhile.
        Returns the state as written (or as it is, when nothing changed)."""
        for _ in range(MAX_WRITE_ATTEMPTS):
            state = self.zk_client.get_topic_partition_state(name, p)
            decision = decide(state)
            if decision is None:
                return state
            leader, isr = decision
            if state is None:
                new = LeaderAndIsr(leader, 0, isr, self.epoch)
            else:
                new = state.with_changes(leader=leader, isr=isr, bump_epoch=True, controller_epoch=self.epoch)
            if self._write_state(name, p, new, None if state is None else state.zk_version):
                self._log_state(name, p, new)
                return new
        log.warning("Partition %s-%d kept changing; leaving it for now", name, p)
        return None

    def _update_states(self, decisions: Mapping[TopicPartition, Decide]) -> dict[TopicPartition, LeaderAndIsr | None]:
        """`_update_state` for many partitions, batched as Kafka's controller batches: the states read in
        one pipelined round, the changes written in ZooKeeper transactions of `BATCH_SIZE` partitions
        (each checking the controller epoch). A batch that fails as a whole (a state changed meanwhile)
        is done again partition by partition; so are partitions without a state yet."""
        states = self.zk_client.get_topic_partition_states(list(decisions))
        result: dict[TopicPartition, LeaderAndIsr | None] = {}
        changes: dict[TopicPartition, tuple[LeaderAndIsr, LeaderAndIsr]] = {}
        for tp, decide in decisions.items():
            state = states[tp]
            if state is None:  # not created yet: the one-partition path creates it
                result[tp] = self._update_state(*tp, decide)
                continue
            decision = decide(state)
            if decision is None:
                result[tp] = state
            else:
                leader, isr = decision
                changes[tp] = (
                    state,
                    state.with_changes(leader=leader, isr=isr, bump_epoch=True, controller_epoch=self.epoch),
                )
        batch = list(changes)
        for start in range(0, len(batch), BATCH_SIZE):
            chunk = {tp: changes[tp] for tp in batch[start : start + BATCH_SIZE]}
            if self._write_states(chunk):
                for (name, p), (_, new) in chunk.items():
                    self._log_state(name, p, new)
                    result[(name, p)] = new
            else:
                for tp in chunk:
                    result[tp] = self._update_state(*tp, decisions[tp])
        return result

    def _write_states(self, changes: dict[TopicPartition, tuple[LeaderAndIsr, LeaderAndIsr]]) -> bool:
        """Every (old, new) state in one transaction with the controller epoch's check; False when it
        failed because a state changed meanwhile."""
        states = {tp: (new, old.zk_version) for tp, (old, new) in changes.items()}
        return self.zk_client.update_leader_and_isr(states, self._epoch_zk_version)

    def _log_state(self, name: str, p: int, new: LeaderAndIsr) -> None:
        """A written partition state: at DEBUG now, and in its topic's INFO line at the end of the
        batch (`_log_elections`)."""
        log.debug("Partition %s-%d: leader %d, leader epoch %d, isr %s", name, p, new.leader, new.leader_epoch, new.isr)
        self._elected.setdefault(name, []).append(f"{p}:{new.leader}@{new.leader_epoch}{new.isr}")

    def _write_state(self, name: str, p: int, state: LeaderAndIsr, version: int | None) -> bool:
        if version is None:
            return self.zk_client.create_topic_partition_state(name, p, state, self._epoch_zk_version)
        return self.zk_client.update_leader_and_isr({(name, p): (state, version)}, self._epoch_zk_version)

    # -- controlled shutdown -----------------------------------------------------------
    def _controlled_shutdown(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, list[TopicPartition]]:
        if not self.active:
            return ErrorCode.NOT_CONTROLLER, []
        if broker_id not in self._live:
            self._live = self._read_live_brokers()
        if broker_id not in self._live:
            return ErrorCode.BROKER_NOT_AVAILABLE, []
        if 0 <= broker_epoch < self._live[broker_id]:
            return ErrorCode.STALE_BROKER_EPOCH, []
        log.info("Broker %d is shutting down", broker_id)
        self._shutting_down.add(broker_id)
        assigned = {tp: self._replicas(*tp) or [] for tp in self._partitions_on({broker_id})}
        decisions = {
            tp: functools.partial(
                election.controlled_shutdown,
                replicas,
                broker_id=broker_id,
                live=self._live_for(tp),
                shutting_down=self._shutting_down,
            )
            for tp, replicas in assigned.items()
        }
        try:
            states = self._update_states(decisions)
            remaining = [
                tp
                for tp, state in states.items()
                if state is not None and state.leader == broker_id and len(assigned[tp]) > 1
            ]
        except ControllerMovedError:
            self._resign()
            return ErrorCode.NOT_CONTROLLER, []
        finally:
            self._log_elections()
        return ErrorCode.NONE, self._movable_later(broker_id, remaining)

    def _movable_later(self, broker_id: int, still_led: list[TopicPartition]) -> list[TopicPartition]:
        """The partitions still led by `broker_id` that another replica may take over if the broker asks
        again (Kafka answers with all it still leads). Those with no other live replica that is not
        shutting down are left out: they go offline when it stops, however long it waits (the last
        broker of a cluster, or brokers stopping together), so retrying would only delay its stop."""
        if not still_led:
            return []
        live = self._read_live_brokers()  # fresh: a broker that stopped a moment ago is gone already
        movable: list[TopicPartition] = []
        stuck: list[TopicPartition] = []
        for name, p in still_led:
            replicas = self._replicas(name, p) or []
            possible = election.successor_possible(
                replicas, broker_id, self._live_for((name, p), live), self._shutting_down
            )
            (movable if possible else stuck).append((name, p))
        if stuck:
            log.info(
                "No other live replica can lead %s; they go offline when broker %d stops",
                ", ".join(f"{name}-{p}" for name, p in stuck),
                broker_id,
            )
        return movable

    # -- ElectLeaders --------------------------------------------------------------------
    def _elect_leaders(
        self, election_type: int, partitions: list[TopicPartition] | None
    ) -> dict[TopicPartition, tuple[ErrorCode, str | None]]:
        if partitions is None:
            partitions = [(name, p) for name, a in sorted(self._topics.items()) for p in sorted(a.partitions)]
        if not self.active:
            return {tp: (ErrorCode.NOT_CONTROLLER, None) for tp in partitions}
        rule = election.preferred if election_type == election.PREFERRED else election.unclean
        results = {}
        try:
            for name, p in partitions:
                results[(name, p)] = self._elect_one(rule, name, p)
        except ControllerMovedError:
            self._resign()
            return {tp: (ErrorCode.NOT_CONTROLLER, None) for tp in partitions}
        finally:
            self._log_elections()
        return results

    def _move_leadership(self, name: str, p: int, broker_id: int) -> tuple[ErrorCode, str | None]:
        if not self.active:
            return ErrorCode.NOT_CONTROLLER, None
        log.info("Moving the leadership of %s-%d to broker %d on request", name, p, broker_id)
        try:
            code, message = self._elect_one(election.designated(broker_id), name, p)
        except ControllerMovedError:
            self._resign()
            return ErrorCode.NOT_CONTROLLER, None
        if code == ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE:
            message = f"Broker {broker_id} is not a live in-sync replica of {name}-{p}"
        elif code == ErrorCode.INVALID_REPLICA_ASSIGNMENT:
            message = f"Broker {broker_id} is not a replica of {name}-{p}"
        return code, message

    def _elect_one(self, rule: ElectionRule, name: str, p: int) -> tuple[ErrorCode, str | None]:
        replicas = self._replicas(name, p)
        if replicas is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        outcome: list[ErrorCode] = []

        def decide(state: LeaderAndIsr | None) -> Decision:
            code, decision = rule(replicas, state, self._live_for((name, p)), self._shutting_down)
            outcome[:] = [code]
            return decision

        written = self._update_state(name, p, decide)
        code = outcome[0] if outcome else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if code == ErrorCode.NONE and written is None:
            return ErrorCode.NOT_CONTROLLER, None
        message = _election_message(code, name, p)
        return code, message

    # -- partition reassignment (KIP-455) -------------------------------------------------
    def _alter_reassignments(
        self, asked: dict[TopicPartition, list[int] | None]
    ) -> ErrorCode | dict[TopicPartition, ReassignmentError]:
        """Kafka's processApiPartitionReassignment."""
        if not self.active:
            return ErrorCode.NOT_CONTROLLER
        results: dict[TopicPartition, ReassignmentError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        live = set(self._live) - self._shutting_down
        self._read_topics_not_seen_yet(asked)
        for tp, target in asked.items():
            error = None if target is None else invalid_target(self._full_assignment(tp), target, live)
            built = None if error is not None else self._build_reassignment(tp, target)
            if error is not None:
                results[tp] = error
            elif built is None:
                results[tp] = (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS.message)
            else:
                to_reassign[tp] = built
        try:
            self._remove_from_zk_reassignment(set(to_reassign))  # the latest request wins
            for tp, assignment in to_reassign.items():
                results[tp] = self._trigger_reassignment(tp, assignment)
        except ControllerMovedError:
            self._resign()
            return ErrorCode.NOT_CONTROLLER
        finally:
            self._log_elections()
        return results

    def _list_reassignments(
        self, partitions: list[TopicPartition] | None
    ) -> ErrorCode | dict[TopicPartition, ReplicaAssignment]:
        if not self.active:
            return ErrorCode.NOT_CONTROLLER
        asked = sorted(self._reassigning) if partitions is None else partitions
        found = {tp: self._full_assignment(tp) for tp in asked}
        return {tp: assignment for tp, assignment in found.items() if assignment.being_reassigned}

    def _read_topics_not_seen_yet(self, partitions: Iterable[TopicPartition]) -> None:
        """Read from ZooKeeper the topics of `partitions` that this controller does not know yet
        (created a moment ago: their watches have not fired yet)."""
        missing = {name for name, p in partitions if p not in self._full_topic(name).partitions}
        if not missing:
            return
        self._on_topics_changed()  # watches the new topics
        for name in sorted(missing & set(self._topics)):
            self._on_topic_assignment(name)

    def _full_topic(self, name: str) -> TopicAssignment:
        return self._topics.get(name) or TopicAssignment(None, {})

    def _full_assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        """The partition's replicas with those being added and removed (no replicas: unknown)."""
        topic = self._topics.get(tp[0])
        if topic is None:
            return ReplicaAssignment([])
        p = tp[1]
        return ReplicaAssignment(
            list(topic.partitions.get(p, [])), list(topic.adding.get(p, [])), list(topic.removing.get(p, []))
        )

    def _build_reassignment(self, tp: TopicPartition, target: list[int] | None) -> ReplicaAssignment | None:
        """The assignment a request asks for: a target replaces any running reassignment, None
        cancels one (back to the original replicas); None when there is nothing to cancel."""
        current = self._full_assignment(tp)
        if current.being_reassigned:
            return current.reassign_to(current.origin if target is None else target)
        return None if target is None else current.reassign_to(target)

    def _trigger_reassignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> ReassignmentError:
        if not self._full_assignment(tp).replicas:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."
        try:
            self._on_partition_reassignment(tp, assignment)
        except ControllerMovedError:
            log.info("Failed completing reassignment of partition %s-%d: the controller moved", *tp)
            raise
        except ZooKeeperError as exc:
            log.error("Error completing reassignment of partition %s-%d: %s", tp[0], tp[1], exc)
            return ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.UNKNOWN_SERVER_ERROR.message
        return ErrorCode.NONE, None

    def _on_partition_reassignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        """Kafka's onPartitionReassignment: phase A (RS = ORS + TRS, a new leader epoch) until every
        target replica is in the ISR, then phase B (complete). Phase A's assignment and new leader
        epoch are one ZooKeeper transaction (the state first), so a new replica starts following at
        the new epoch. Replicas a replaced reassignment was adding, no longer wanted, leave the
        ISR in the same step."""
        self._reassigning.add(tp)
        if self._reassignment_complete(tp, assignment):
            self._complete_reassignment(tp, assignment)
            return
        log.info(
            "Reassigning %s-%d: replicas %s, adding %s, removing %s",
            tp[0],
            tp[1],
            assignment.replicas,
            assignment.adding,
            assignment.removing,
        )
        unneeded = [r for r in self._full_assignment(tp).replicas if r not in assignment.replicas]
        if not self._write_assignment(tp, assignment, functools.partial(_without_replicas, unneeded)):
            raise ZooKeeperError(f"the assignment of {tp[0]}-{tp[1]} could not be written")

    def _reassignment_complete(self, tp: TopicPartition, assignment: ReplicaAssignment) -> bool:
        if not assignment.being_reassigned:
            return True
        state = self.zk_client.get_topic_partition_state(*tp)
        return state is not None and set(assignment.target) <= set(state.isr)

    def _complete_reassignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        """Phase B: the leader moves to a target replica if needed, the removed replicas leave the
        ISR, and the assignment becomes the target (RS = TRS, AR = RR = [])."""
        target = assignment.target
        completed = ReplicaAssignment(target)
        decide = functools.partial(self._reassigned_leader_and_isr, tp, target)
        if self._write_assignment(tp, completed, decide):
            self._reassigning.discard(tp)
            self._remove_from_zk_reassignment({tp})
            log.info("Reassignment of %s-%d completed: replicas %s", tp[0], tp[1], target)

    def _reassigned_leader_and_isr(self, tp: TopicPartition, target: list[int], state: LeaderAndIsr | None) -> Decision:
        """Kafka's moveReassignedPartitionLeaderIfRequired and the removed replicas going offline:
        the leader stays if it is a live target replica, else the first live target replica in
        the ISR leads (ReassignPartitionLeaderElectionStrategy); the ISR keeps the target replicas.
        The leader epoch is bumped either way."""
        if state is None:
            return None
        live = self._live_for(tp)
        isr = [r for r in state.isr if r in target]
        if state.leader in target and state.leader in live:
            return state.leader, isr
        candidates = [r for r in target if r in live and r in state.isr]
        if not candidates:
            raise _NoEligibleLeader()
        log.info(
            "Leader %d of %s-%d is not a live target replica %s: electing %d", state.leader, *tp, target, candidates[0]
        )
        return candidates[0], isr

    def _write_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment, decide: Decide) -> bool:
        """Write the partition's new assignment into its topic znode, with the partition state
        `decide` asks for (leader epoch bumped) in the same transaction, state first; again if the
        state changed meanwhile. False when it could not be done now (tried again later)."""
        name, p = tp
        for _ in range(MAX_WRITE_ATTEMPTS):
            topic = self._topics.get(name)
            if topic is None or p not in topic.partitions:
                return False
            updated = _with_partition(topic, p, assignment)
            state = self.zk_client.get_topic_partition_state(name, p)
            try:
                decision = decide(state)
            except _NoEligibleLeader:
                log.warning("No live target replica of %s-%d is in the ISR yet; completing later", name, p)
                return False
            new = None
            if state is not None and decision is not None:
                leader, isr = decision
                new = state.with_changes(leader=leader, isr=isr, bump_epoch=True, controller_epoch=self.epoch)
            states = {} if new is None or state is None else {tp: (new, state.zk_version)}
            if self.zk_client.update_assignment_and_states(name, updated, states, self._epoch_zk_version):
                self._topics[name] = updated
                if new is not None:
                    self._log_state(name, p, new)
                return True
        log.warning("Partition %s-%d kept changing; its reassignment goes on later", name, p)
        return False

    def _check_reassignments(self) -> None:
        """Complete every reassignment whose target replicas are all in the ISR now (their states
        read in one pipelined round)."""
        running = {tp: self._full_assignment(tp) for tp in sorted(self._reassigning)}
        for tp in [tp for tp, assignment in running.items() if not assignment.being_reassigned]:
            self._reassigning.discard(tp)
            del running[tp]
        if not running:
            return
        states = self.zk_client.get_topic_partition_states(list(running))
        try:
            for tp, assignment in running.items():
                state = states.get(tp)
                if state is not None and set(assignment.target) <= set(state.isr):
                    self._complete_reassignment(tp, assignment)
        finally:
            self._log_elections()

    def _resume_reassignments(self, name: str, assignment: TopicAssignment) -> None:
        """Reassignments found in a topic znode that this controller does not run yet (a new
        controller, Kafka's initializePartitionReassignments)."""
        for p in sorted(set(assignment.adding) | set(assignment.removing)):
            tp = (name, p)
            if tp not in self._reassigning:
                full = self._full_assignment(tp)
                if full.being_reassigned:
                    log.info("Resuming the reassignment of %s-%d", name, p)
                    self._on_partition_reassignment(tp, full)

    # -- reassignments asked through /admin/reassign_partitions ---------------------------
    def _on_reassign_partitions_znode(self, generation: int, data: bytes | None) -> WatchResult:
        if self._stopped or generation != self._generation:
            return False
        self.events.submit(self._if_active, generation, self._on_zk_reassignment, data is not None)
        return None

    def _on_zk_reassignment(self, present: bool) -> None:
        """Kafka's processZkPartitionReassignment, when the znode appears (or is found by a new
        controller); its own removals of completed partitions do not start anything again."""
        was_present, self._zk_reassignment_present = self._zk_reassignment_present, present
        if not present or was_present:
            return
        found = self.zk_client.get_reassign_partitions()
        if found is None:
            return
        try:
            asked = zk_data.decode_reassignments(found[0])
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("Ignoring %s, which is not a reassignment: %s", zk_data.REASSIGN_PARTITIONS, exc)
            self.zk_client.delete_reassign_partitions()
            return
        failed: set[TopicPartition] = set()
        self._read_topics_not_seen_yet(asked)
        try:
            for tp, target in sorted(asked.items()):
                built = self._build_reassignment(tp, target)
                error = (
                    ErrorCode.NO_REASSIGNMENT_IN_PROGRESS if built is None else self._trigger_reassignment(tp, built)[0]
                )
                if error != ErrorCode.NONE:
                    failed.add(tp)
        finally:
            self._log_elections()
        if failed:
            log.warning("Failed reassignment through zk of %s", sorted(failed))
            self._remove_from_zk_reassignment(failed)

    def _remove_from_zk_reassignment(self, partitions: set[TopicPartition]) -> None:
        """Take `partitions` out of `/admin/reassign_partitions`, deleting it once empty."""
        if not partitions:
            return
        for _ in range(MAX_WRITE_ATTEMPTS):
            found = self.zk_client.get_reassign_partitions()
            if found is None:
                return
            data, version = found
            try:
                asked = zk_data.decode_reassignments(data)
            except (ValueError, KeyError, TypeError):
                asked = {}
            remaining = {tp: r for tp, r in asked.items() if tp not in partitions}
            if remaining == asked:
                return
            if not remaining:
                if self.zk_client.delete_reassign_partitions(version):
                    self._zk_reassignment_present = False
                    return
            elif self.zk_client.set_reassign_partitions(zk_data.encode_reassignments(remaining), version):
                return


class _NoEligibleLeader(Exception):
    """No live target replica is in the ISR to lead a partition whose reassignment completes."""


def _without_replicas(removed: list[int], state: LeaderAndIsr | None) -> Decision:
    """The same leader and the ISR without `removed` (replicas no longer assigned), written
    with a new leader epoch."""
    if state is None:
        return None
    isr = [r for r in state.isr if r not in removed]
    leader = zk_data.NO_LEADER if state.leader in removed else state.leader
    return leader, isr or state.isr[:1]


def _with_partition(topic: TopicAssignment, p: int, assignment: ReplicaAssignment) -> TopicAssignment:
    """The topic's assignment with partition `p`'s replaced."""
    adding = {q: r for q, r in topic.adding.items() if q != p}
    removing = {q: r for q, r in topic.removing.items() if q != p}
    if assignment.adding:
        adding[p] = list(assignment.adding)
    if assignment.removing:
        removing[p] = list(assignment.removing)
    return TopicAssignment(topic.topic_id, {**topic.partitions, p: list(assignment.replicas)}, adding, removing)


def _election_message(code: ErrorCode, topic: str, partition: int) -> str | None:
    if code == ErrorCode.ELECTION_NOT_NEEDED:
        return "Leader election not needed for topic partition."
    if code == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE:
        return (
            f"Failed to elect leader for partition {topic}-{partition} under strategy "
            "PreferredReplicaPartitionLeaderElectionStrategy"
        )
    if code == ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE:
        return (
            f"Failed to elect leader for partition {topic}-{partition} under strategy "
            "OfflinePartitionLeaderElectionStrategy(true)"
        )
    return None
