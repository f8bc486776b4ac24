"""What pykbroker answers differently from Kafka 3.9.0 on the wire, and which differences are
accepted, each with its reason (docs/compatibility.md carries the same reasons).

    found = differences(wire_probes.answers(pyk), wire_probes.answers(kafka))
    unaccepted = [d for d in found if accepted_reason(d) is None]

A difference is one leaf of the two normalised answers: its path (`probe / request / field /
...`), the value pykbroker gave and the value Kafka gave (`MISSING` when one side has no such
field, key or entry). An accepted difference is matched by a path pattern (fnmatch: `*`
matches anything, `/` included).
"""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

MISSING = "<missing>"


@dataclass(frozen=True)
class Difference:
    path: str
    pykbroker: object
    kafka: object

    def __str__(self) -> str:
        return f"{self.path}: pykbroker {shown(self.pykbroker)}, Kafka {shown(self.kafka)}"


def shown(value, width: int = 70) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


@dataclass(frozen=True)
class Accepted:
    pattern: str  # fnmatch pattern of the differences' paths
    reason: str


API = "api-versions / *"
BROKER_CONFIG = "describe-configs / broker / results / 0 / configs / "
KAFKA4_CONSUMER_GROUPS = ("Kafka 4's KIP-848 consumer groups, which Kafka 3.9 in ZooKeeper mode "
                          "does not serve")

ACCEPTED: list[Accepted] = [
    *(Accepted(f"{API} / api_keys / {api}", "not served: Kafka's "
               "inter-broker requests (pykbroker's brokers learn leadership from ZooKeeper "
               "watches)") for api in (
        "LEADER_AND_ISR", "STOP_REPLICA", "UPDATE_METADATA",
        "ALTER_PARTITION", "ENVELOPE", "ALLOCATE_PRODUCER_IDS")),
    *(Accepted(f"{API} / api_keys / {api}", KAFKA4_CONSUMER_GROUPS) for api in (
        "CONSUMER_GROUP_HEARTBEAT", "CONSUMER_GROUP_DESCRIBE")),
    Accepted("config-resource-types / * type 32", KAFKA4_CONSUMER_GROUPS + ": with them on (Kafka 4's "
             "default) group configs, the GROUP config resource, are served as in Kafka 4"),
    Accepted(f"{API} / finalized_features", KAFKA4_CONSUMER_GROUPS + ": group.version 1 is "
             "finalized, as in Kafka 4; Kafka 3.9 in ZooKeeper mode has no finalized features"),
    *(Accepted(f"{API} / api_keys / {api}", "Kafka 4.1's share groups (KIP-932): Kafka 3.9.0 serves "
               "only their early-access v0, and only with unstable API versions enabled") for api in (
        "SHARE_GROUP_HEARTBEAT", "SHARE_GROUP_DESCRIBE", "SHARE_FETCH", "SHARE_ACKNOWLEDGE",
        "DESCRIBE_SHARE_GROUP_OFFSETS", "ALTER_SHARE_GROUP_OFFSETS", "DELETE_SHARE_GROUP_OFFSETS")),
    *(Accepted(f"{API} / api_keys / {api}", "KIP-932's share-group state RPCs between brokers, "
               "served as Kafka 4 serves them (Kafka 3.9 has them only as unstable versions, "
               "not advertised)") for api in (
        "INITIALIZE_SHARE_GROUP_STATE", "READ_SHARE_GROUP_STATE", "WRITE_SHARE_GROUP_STATE",
        "DELETE_SHARE_GROUP_STATE", "READ_SHARE_GROUP_STATE_SUMMARY")),
    Accepted("describe-configs / topic-v0 / * / is_default", "Kafka 3.9 never sets "
             "DescribeConfigs v0's IsDefault (false for every entry); pykbroker says whether the "
             "value is the default, as v1+ clients read from config_source"),
    Accepted(f"{BROKER_CONFIG}advertised.listeners / config_source", "the set-up: kafka.sh sets "
             "advertised.listeners; pykbroker listens on a free port (port 0) and advertises it"),
    Accepted(f"{BROKER_CONFIG}zookeeper.connect / config_source", "the set-up: the single "
             "pykbroker runs with its embedded metadata, Kafka with a ZooKeeper"),
    Accepted(f"{BROKER_CONFIG}group.share.*", "KIP-932's share groups as Kafka 4.1 serves them, with its "
             "settings and defaults (Kafka 3.9 has only their early-access settings)"),
    Accepted(f"{BROKER_CONFIG}share.coordinator.*", "KIP-932's share coordinator with Kafka 4's "
             "settings (Kafka 3.9 lists none)"),
    Accepted(f"{BROKER_CONFIG}group.co*", KAFKA4_CONSUMER_GROUPS + ": its settings with Kafka 4's "
             "defaults (group.coordinator.rebalance.protocols classic,consumer; pykbroker adds share)"),
]


def differences(pykbroker, kafka, path: str = "") -> list[Difference]:
    """Every leaf where the two answers differ; a key only one side has is one difference
    (its whole value on that side)."""
    if isinstance(pykbroker, dict) and isinstance(kafka, dict):
        found = []
        for key in [*pykbroker, *(k for k in kafka if k not in pykbroker)]:
            found += differences(pykbroker.get(key, MISSING), kafka.get(key, MISSING),
                                 f"{path} / {key}" if path else str(key))
        return found
    return [] if pykbroker == kafka else [Difference(path, pykbroker, kafka)]


def accepted_reason(difference: Difference, accepted: list[Accepted] = ACCEPTED) -> str | None:
    for entry in accepted:
        if fnmatchcase(difference.path, entry.pattern):
            return entry.reason
    return None


def accepted_markdown(accepted: list[Accepted] = ACCEPTED) -> str:
    """The accepted differences as a Markdown table: one row per reason, with its patterns."""
    patterns: dict[str, list[str]] = {}
    for entry in accepted:
        patterns.setdefault(entry.reason, []).append(f"`{entry.pattern}`")
    lines = ["| reason | differences |", "|---|---|"]
    lines += [f"| {reason} | {', '.join(found)} |" for reason, found in patterns.items()]
    return "\n".join(lines)


def report(found: list[Difference], accepted: list[Accepted] = ACCEPTED) -> str:
    """Every difference, one a line, the unaccepted ones first and marked."""
    lines = [f"NOT ACCEPTED  {d}" for d in found if accepted_reason(d, accepted) is None]
    lines += [f"accepted      {d}" for d in found if accepted_reason(d, accepted) is not None]
    return "\n".join(lines)


# -- the authorization matrix (compat/authorization_matrix.py) ---------------------------------

KAFKA_REQUEST_DUMP = ("Kafka's message for a refused ACL request quotes its own request object "
                      "(`Request Request(processor=1, connectionId=..., session=..., buffer=null) is not "
                      "authorized.`); pykbroker gives the error's default message (DescribeAcls, "
                      "DeleteAcls, the partition reassignment APIs) or none (CreateAcls): the same error "
                      "code, nothing revealed")
AUTO_CREATED_AT_ONCE = ("pykbroker creates an auto-created topic before it answers the Metadata request "
                        "that created it; Kafka answers LEADER_NOT_AVAILABLE until its metadata cache "
                        "learns the topic (clients retry either way)")

KAFKA_4_SHARE_APIS = ("Kafka 3.9.0 serves no ShareFetch or ShareAcknowledge v1 (KIP-932 share groups are Kafka "
                      "4.1's) and closes the connection; pykbroker authorizes them as Kafka 4.1 does: READ on "
                      "the group for the request, READ on each topic for its partitions")
SHARE_COORDINATOR = ("KIP-932's share coordinator, which brokers call with ClusterAction as Kafka 4's do "
                     "(FindCoordinator key type SHARE, the share-group state APIs); Kafka 3.9 has none")

MATRIX_ACCEPTED: list[Accepted] = [
    *(Accepted(f"{request} / {caller} / {field}", KAFKA_REQUEST_DUMP)
      for request, field in (("create acls", "results"), ("describe acls", "error_message"),
                             ("delete acls", "filter_results"), ("list partition reassignments", "error_message"),
                             ("cancel partition reassignments", "error_message"),
                             ("cancel partition reassignments", "responses / * / partitions / * / error_message"))
      for caller in ("none", "deny")),
    Accepted("metadata auto-creation* / exact / topics / *", AUTO_CREATED_AT_ONCE),
    Accepted("consumer group * / *", "Kafka's KIP-848 consumer groups: Kafka 3.9 in ZooKeeper mode "
             "does not serve them (it closes the connection)"),
    Accepted("* group configs / *", KAFKA4_CONSUMER_GROUPS + ": with them on (Kafka 4's default) group "
             "configs are served, authorized as Kafka 4 does"),
    Accepted("share fetch / *", KAFKA_4_SHARE_APIS),
    Accepted("share acknowledge / *", KAFKA_4_SHARE_APIS),
    *(Accepted(f"{request} / *", SHARE_COORDINATOR) for request in (
        "initialize share group state", "read share group state", "write share group state",
        "delete share group state", "read share group state summary", "find share coordinator")),
]
