"""The controller's rules for changing topics, shared by CreateTopics, CreatePartitions and
DeleteTopics (not a handler itself).

These requests are answered the way a Kafka 3.9 KRaft controller answers them: the same checks in
the same order, with the same error codes; the messages Kafka's tools print are those of Kafka
3.9.0 in ZooKeeper mode (its AdminZkClient and ZkAdminManager), the reference this project is
compared with. In particular:

* a request whose `timeout_ms` is not positive has already passed its deadline when the
  controller would start on it, so every topic in it fails with REQUEST_TIMED_OUT and nothing
  changes (see `deadline_passed`);
* replica assignments given by the client must name registered brokers, once each, and agree
  with the replication factor of the topic's other partitions;
* topic names that differ only in '.' versus '_' collide;
* at most `assignment.MAX_PARTITIONS_PLACED` partitions are placed at once (INVALID_PARTITIONS);
* placed replicas spread leaders round-robin over the registered brokers; when the brokers have
  racks (`broker.rack`), Kafka's rack-aware assignment puts each partition's replicas on as many
  racks as possible.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence, Set
from typing import TypeVar

from ...cluster import assignment
from ...cluster.model import MAX_TOPIC_NAME_LENGTH, validate_topic_name
from ...protocol.errors import ErrorCode, KafkaError
from .context import RequestContext

_Name = TypeVar("_Name", bound=Hashable)  # a topic name (None when not given) or a topic id

CLUSTER_METADATA_TOPIC = "__cluster_metadata"  # Kafka's own log; never a client's topic
TooManyPartitionsError = assignment.TooManyPartitionsError  # more than the placer takes at once


def deadline_passed(timeout_ms: int) -> bool:
    """True when a request's timeout leaves the controller no time at all."""
    return timeout_ms <= 0


def duplicated(names: Iterable[_Name]) -> set[_Name]:
    """The names that appear more than once."""
    return {name for name, count in Counter(names).items() if count > 1}


# --------------------------------------------------------------------------------------------
# Topic names


def check_new_topic_name(name: str, existing: Iterable[str]) -> None:
    """Kafka's checks of a new topic's name, in the words of Kafka 3.9's AdminZkClient: a legal
    name, then no collision on '.' versus '_' with existing topics."""
    problem = new_topic_name_problem(name)
    if problem is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {problem}")
    colliding = colliding_topics(name, existing)
    if colliding:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic '{name}' collides with existing topics: {', '.join(colliding)}"
        )


def new_topic_name_problem(name: str) -> str | None:
    """What is wrong with a topic name, as Kafka's Topic.validate says it; None when it is legal."""
    try:
        validate_topic_name(name)
    except KafkaError:
        pass
    else:
        return None
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
    return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"


def colliding_topics(name: str, existing: Iterable[str]) -> list[str]:
    """The existing topics whose names equal `name` once '.' and '_' are made the same."""
    if not has_collision_chars(name):
        return []
    unified = unify_collision_chars(name)
    return [other for other in existing if has_collision_chars(other) and unify_collision_chars(other) == unified]


def has_collision_chars(name: str) -> bool:
    return "." in name or "_" in name


def unify_collision_chars(name: str) -> str:
    return name.replace(".", "_")


# --------------------------------------------------------------------------------------------
# Replica assignments


def check_manual_assignment(replicas: list[int], registered: Set[int], replication_factor: int | None) -> None:
    """A client-chosen replica list: not empty, registered brokers only, each once, and as many
    replicas as the other partitions (when `replication_factor` is known)."""
    if not replicas:
        raise _bad_assignment("The manual partition assignment includes an empty replica list.")
    previous = None
    for broker_id in sorted(replicas):
        if broker_id not in registered:
            raise _bad_assignment(
                f"The manual partition assignment includes broker {broker_id}, but no such broker is registered."
            )
        if broker_id == previous:
            raise _bad_assignment(f"The manual partition assignment includes the broker {broker_id} more than once.")
        previous = broker_id
    if replication_factor is not None and len(replicas) != replication_factor:
        raise _bad_assignment(
            f"The manual partition assignment includes a partition with "
            f"{len(replicas)} replica(s), but this is not consistent with "
            f"previous partitions, which have {replication_factor} replica(s)."
        )


def _bad_assignment(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)


def place_replicas(
    brokers: Sequence[RegisteredBroker], num_partitions: int, replication_factor: int, first_partition: int = 0
) -> list[list[int]]:
    """Replica lists for new partitions (`cluster.assignment.place_replicas` over these brokers
    and their racks).

    KafkaError INVALID_REPLICATION_FACTOR, with the placer's message, when there are not enough
    brokers.
    """
    ids_and_racks = [(int(broker), broker.rack) for broker in brokers]
    return assignment.place_replicas(ids_and_racks, num_partitions, replication_factor, first_partition)


class RegisteredBroker(int):
    """A registered broker's id (it compares, hashes and sorts as the id) that also carries the
    broker's rack, so that `place_replicas` can place rack-aware."""

    rack: str | None

    def __new__(cls, broker_id: int, rack: str | None = None) -> RegisteredBroker:
        broker = super().__new__(cls, broker_id)
        broker.rack = rack
        return broker


def registered_brokers(ctx: RequestContext) -> set[RegisteredBroker]:
    return {RegisteredBroker(broker.broker_id, broker.rack) for broker in ctx.services.metadata.brokers()}
