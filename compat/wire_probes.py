"""The wire comparison's requests: the same raw Kafka requests sent to a broker, and its answers
made comparable.

`answers(bootstrap)` prepares the same topics on the broker, sends every probe's requests and
returns {probe: {request: normalised answer}}. A normalised answer is the response as plain
dicts and lists, less what legitimately varies between two brokers (node ids become "broker",
producer ids "id", replica lists their length; hosts, ports, cluster and topic ids, throttle
times and error messages are dropped; broker config values naming the set-up's ports, paths and
ZooKeeper become "<set-up>"). Record timestamps are the probes' own, so they are compared.
`compat/differences.py` diffs two brokers' answers.
"""
from __future__ import annotations

import struct
import uuid

from pykbroker.protocol import headers, messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.schema import snake_case
from pykbroker.records.records import build_batch

from .scenarios import T0, WAIT_SECONDS, create_topic, wait_until

THREE, EMPTY, TIMED, CONFIGURED = "probe-three", "probe-empty", "probe-timed", "probe-configs"
MISSING = "probe-missing"
COORDINATOR_NOT_READY = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
TIMESTAMPS = (T0, T0 + 1000, T0 + 2000)  # of the three records in TIMED
TOPIC_CONFIGS = {"retention.ms": "86400000", "cleanup.policy": "compact"}

DROPPED = {"throttle_time_ms", "error_message", "host", "port", "cluster_id", "topic_id",
           "client_software_name", "client_software_version", "member_id", "session_id"}
NODE_IDS = {"node_id", "leader_id", "controller_id", "broker_id", "coordinator_node_id"}
ASSIGNED_IDS = {"producer_id"}  # handed out in order: how many before depends on the run
NODE_LISTS = {"replica_nodes", "isr_nodes", "offline_replicas", "replicas", "isr"}
KEY_FIELDS = ("name", "partition_index", "resource_name", "topic_name", "group_id", "topic",
              "index", "partition", "key")
# broker config values that name this set-up's ports, paths and ZooKeeper
SETUP_CONFIGS = {"listeners", "advertised.listeners", "log.dirs", "log.dir", "zookeeper.connect"}


# -- requests from plain data -----------------------------------------------------------------

def build(message_type, data: dict, struct=None):
    """The request object of `message_type` holding `data` (snake_case keys; nested dicts and
    lists of dicts for structs)."""
    struct = struct or message_type.spec.root
    specs = {snake_case(f.name): f for f in struct.fields}
    fields = {}
    for name, value in data.items():
        nested = specs[name].struct
        if nested is not None and isinstance(value, list):
            value = [build(message_type, item, nested) for item in value]
        elif nested is not None and value is not None:
            value = build(message_type, value, nested)
        fields[name] = value
    return message_type.classes[struct.name](**fields)


def ask(client, api_key: int, version: int, **data):
    """Sends one request and returns its normalised answer."""
    request = build(messages.request(api_key), data)
    return normalise(client.request(api_key, version, request))


# -- answers made comparable -------------------------------------------------------------------

def normalise(value, field: str = "", dropped: frozenset[str] | set[str] = DROPPED):
    """`value` as plain data, less the fields in `dropped` (what varies between two brokers)."""
    if field == "api_keys":
        return {api_name(v.api_key): f"{v.min_version}-{v.max_version}" for v in value}
    if field in NODE_IDS:
        return "broker" if isinstance(value, int) and value >= 0 else value
    if field in ASSIGNED_IDS:
        return "id" if isinstance(value, int) and value >= 0 else value
    if field in NODE_LISTS and isinstance(value, list):
        return len(value)
    if hasattr(type(value), "FIELDS"):
        return {name: normalise(getattr(value, name), name, dropped) for name in type(value).FIELDS
                if name not in dropped}
    if isinstance(value, list):
        items = [normalise(item, "", dropped) for item in value]
        return keyed(items) if items and all(isinstance(i, dict) for i in items) else items
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, uuid.UUID):
        return "<uuid>"
    return value


def api_name(api_key: int) -> str:
    try:
        return ApiKey(api_key).name
    except ValueError:
        return f"api key {api_key}"


def keyed(items: list[dict]):
    """A list of structs as a dict by their identifying field, when they have one."""
    for key in KEY_FIELDS:
        if all(key in item for item in items):
            return {str(item[key]): item for item in items}
    return items


# -- the probes ---------------------------------------------------------------------------------

def api_versions(client):
    return {"v3": ask(client, ApiKey.API_VERSIONS, 3, client_software_name="wire-probe",
                      client_software_version="1.0"),
            "v3-no-software-name": ask(client, ApiKey.API_VERSIONS, 3),
            "v0": ask(client, ApiKey.API_VERSIONS, 0),
            "unsupported-version": unsupported_api_versions(client)}


def unsupported_api_versions(client):
    """ApiVersions in a version no broker knows (a v3 body announced as v127): answered in v0
    with UNSUPPORTED_VERSION and the supported ranges."""
    client.correlation_id += 1
    header = bytearray(headers.encode_request_header(ApiKey.API_VERSIONS, 3, client.correlation_id,
                                                     "wire-probe"))
    header[2:4] = struct.pack(">h", 127)
    payload = bytes(header) + messages.request(ApiKey.API_VERSIONS).encode_bytes(
        messages.request(ApiKey.API_VERSIONS).cls(), version=3)
    client.send_raw(struct.pack(">i", len(payload)) + payload)
    return normalise(client.receive(ApiKey.API_VERSIONS, 0)[1])


def metadata(client):
    topics = [{"name": THREE}, {"name": MISSING}]
    return {
        "v12": ask(client, ApiKey.METADATA, 12, topics=topics, allow_auto_topic_creation=False),
        "v12-authorized-operations": ask(
            client, ApiKey.METADATA, 12, topics=[{"name": THREE}], allow_auto_topic_creation=False,
            include_cluster_authorized_operations=True, include_topic_authorized_operations=True),
        "v0": ask(client, ApiKey.METADATA, 0, topics=[{"name": THREE}]),
        "v12-invalid-name": ask(client, ApiKey.METADATA, 12, topics=[{"name": "bad/name"}]),
        "v12-internal": ask(client, ApiKey.METADATA, 12, topics=[{"name": "__consumer_offsets"}],
                            allow_auto_topic_creation=False),
        "v12-internal-missing": ask(client, ApiKey.METADATA, 12, allow_auto_topic_creation=False,
                                    topics=[{"name": "__transaction_state"}]),
    }


def describe_configs(client):
    def describe(resource_type: int, name: str, version: int = 4):
        answer = ask(client, ApiKey.DESCRIBE_CONFIGS, version, resources=[
            {"resource_type": resource_type, "resource_name": name, "configuration_keys": None}],
            include_synonyms=False)
        for result in answer["results"].values():
            for config in setup_configs(result["configs"]):
                config["value"] = "<set-up>"
        return answer

    return {"topic": describe(2, CONFIGURED), "broker": describe(4, "0"),
            "topic-v0": describe(2, CONFIGURED, 0),
            "missing-topic": describe(2, MISSING), "other-broker": describe(4, "7"),
            "bad-broker-name": describe(4, "zero")}


def setup_configs(configs) -> list[dict]:
    return [c for c in (configs.values() if isinstance(configs, dict) else configs)
            if c["name"] in SETUP_CONFIGS]


def list_offsets(client):
    def offsets(topic: str, timestamp: int, version: int = 9, partition: int = 0, **extra):
        return ask(client, ApiKey.LIST_OFFSETS, version, replica_id=-1, isolation_level=0,
                   topics=[{"name": topic, "partitions": [
                       {"partition_index": partition, "timestamp": timestamp, **extra}]}])

    answers = {}
    for topic in (TIMED, EMPTY):
        for name, timestamp in (("latest", -1), ("earliest", -2), ("max-timestamp", -3),
                                ("before-first", T0 - 1), ("between", T0 + 500),
                                ("exact", T0 + 1000), ("after-last", T0 + 5000)):
            answers[f"{topic} {name}"] = offsets(topic, timestamp)
    answers["v0 latest"] = offsets(TIMED, -1, 0, max_num_offsets=10)
    answers["v0 earliest"] = offsets(TIMED, -2, 0, max_num_offsets=10)
    answers["v1 between"] = offsets(TIMED, T0 + 500, 1)
    answers["unknown partition"] = offsets(TIMED, -1, partition=7)
    answers["unknown topic"] = offsets(MISSING, -1)
    answers["timestamp -3 v6"] = offsets(TIMED, -3, 6)
    for timestamp in (-4, -5, -6, -7):
        answers[f"timestamp {timestamp}"] = offsets(TIMED, timestamp)
        answers[f"timestamp {timestamp} v7"] = offsets(TIMED, timestamp, 7)
    answers["v0 latest empty"] = offsets(EMPTY, -1, 0, max_num_offsets=10)
    answers["v0 latest one"] = offsets(TIMED, -1, 0, max_num_offsets=1)
    return answers


def config_resource_types(client):
    """AlterConfigs and IncrementalAlterConfigs of the resource types neither alters (broker
    loggers through AlterConfigs, client metrics, groups, an unknown type), validate only; the
    messages are compared too."""
    def alter(kind: int):
        return client.request(ApiKey.ALTER_CONFIGS, 2, build(messages.request(ApiKey.ALTER_CONFIGS), {
            "resources": [{"resource_type": kind, "resource_name": "0", "configs": [
                {"name": "some.config", "value": "1"}]}], "validate_only": True})).responses[0]

    def incremental(kind: int):
        return client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, build(
            messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS), {
                "resources": [{"resource_type": kind, "resource_name": "0", "configs": [
                    {"name": "some.config", "config_operation": 0, "value": "1"}]}],
                "validate_only": True})).responses[0]

    answers = {}
    for kind in (8, 16, 32, 99):
        answers[f"alter type {kind}"] = _code_and_message(alter(kind))
        if kind != 8:  # broker loggers are altered incrementally
            answers[f"incremental type {kind}"] = _code_and_message(incremental(kind))
    return answers


def _code_and_message(result) -> list:
    return [result.error_code, result.error_message]


def topic_errors(client):
    def create(name: str, partitions: int = 1, replication: int = 1, configs=(), **extra):
        return ask(client, ApiKey.CREATE_TOPICS, 7, timeout_ms=10000, validate_only=True,
                   topics=[{"name": name, "num_partitions": partitions,
                            "replication_factor": replication, "assignments": [],
                            "configs": [{"name": k, "value": v} for k, v in configs]}], **extra)

    return {
        "create invalid name": create("bad/name"),
        "create too long name": create("x" * 250),
        "create existing": create(THREE),
        "create zero partitions": create("probe-new", partitions=0),
        "create replication 3 on one broker": create("probe-new", replication=3),
        "create unknown config": create("probe-new", configs=[("no.such.config", "1")]),
        "create bad config value": create("probe-new", configs=[("retention.ms", "soon")]),
        "create validate only": create("probe-new"),
        "delete missing": ask(client, ApiKey.DELETE_TOPICS, 6, timeout_ms=10000,
                              topics=[{"name": MISSING}]),
        "partitions fewer": ask(client, ApiKey.CREATE_PARTITIONS, 3, timeout_ms=10000,
                                validate_only=True, topics=[
                                    {"name": THREE, "count": 2, "assignments": None}]),
        "partitions missing": ask(client, ApiKey.CREATE_PARTITIONS, 3, timeout_ms=10000,
                                  validate_only=True, topics=[
                                      {"name": MISSING, "count": 2, "assignments": None}]),
        "delete records beyond end": ask(client, ApiKey.DELETE_RECORDS, 2, timeout_ms=10000,
                                         topics=[{"name": TIMED, "partitions": [
                                             {"partition_index": 0, "offset": 99}]}]),
        "leader epoch unknown partition": ask(
            client, ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, replica_id=-1, topics=[
                {"topic": THREE, "partitions": [
                    {"partition": 9, "current_leader_epoch": -1, "leader_epoch": 0}]}]),
        "elect preferred leaders": ask(client, ApiKey.ELECT_LEADERS, 2, election_type=0,
                                       timeout_ms=10000, topic_partitions=[
                                           {"topic": THREE, "partitions": [0]}]),
    }


def record_errors(client):
    batch = build_batch([(b"k", b"v")], base_timestamp=T0)

    def produce(topic: str, partition: int, records=batch, acks: int = 1):
        return ask(client, ApiKey.PRODUCE, 9, transactional_id=None, acks=acks, timeout_ms=10000,
                   topic_data=[{"name": topic, "partition_data": [
                       {"index": partition, "records": records}]}])

    def fetch(topic: str, offset: int, partition: int = 0):
        return ask(client, ApiKey.FETCH, 11, replica_id=-1, max_wait_ms=0, min_bytes=1,
                   max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
                   topics=[{"topic": topic, "partitions": [
                       {"partition": partition, "fetch_offset": offset, "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20, "current_leader_epoch": -1}]}],
                   forgotten_topics_data=[], rack_id="")

    return {
        "produce unknown partition": produce(THREE, 9),
        "produce unknown topic": produce(MISSING + "-produced", 0),
        "produce internal topic": produce("__consumer_offsets", 0),
        "produce bad acks": produce(THREE, 0, acks=2),
        "fetch beyond end": fetch(TIMED, 99),
        "fetch unknown partition": fetch(TIMED, 0, 9),
        "fetch unknown topic": fetch(MISSING, 0),
    }


def group_errors(client):
    group = "probe-group"

    def offset_commit(generation: int, member: str):
        return ask(client, ApiKey.OFFSET_COMMIT, 8, group_id=group, generation_id_or_member_epoch=
                   generation, member_id=member, group_instance_id=None, topics=[
                       {"name": THREE, "partitions": [
                           {"partition_index": 0, "committed_offset": 1,
                            "committed_leader_epoch": -1, "committed_metadata": ""}]}])

    return {
        # asked until the transaction coordinator is ready, as clients do: a new cluster
        # creates `__transaction_state` on the first request (Kafka in the background)
        "find transaction coordinator": retried(lambda: ask(
            client, ApiKey.FIND_COORDINATOR, 4, key_type=1, coordinator_keys=["probe-txn"]),
            error_of=lambda answer: answer["coordinators"]["probe-txn"]["error_code"]),
        "init producer id transactional": retried(lambda: ask(
            client, ApiKey.INIT_PRODUCER_ID, 4, transactional_id="probe-txn",
            transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)),
        "init producer id idempotent": retried(lambda: ask(
            client, ApiKey.INIT_PRODUCER_ID, 4, transactional_id=None,
            transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)),
        "join empty group id": ask(client, ApiKey.JOIN_GROUP, 9, group_id="",
                                   session_timeout_ms=10000, rebalance_timeout_ms=10000,
                                   member_id="", group_instance_id=None, protocol_type="consumer",
                                   protocols=[{"name": "range", "metadata": b""}], reason=None),
        "heartbeat unknown member": ask(client, ApiKey.HEARTBEAT, 4, group_id=group,
                                        generation_id=1, member_id="nobody",
                                        group_instance_id=None),
        "sync unknown member": ask(client, ApiKey.SYNC_GROUP, 5, group_id=group, generation_id=1,
                                   member_id="nobody", group_instance_id=None,
                                   protocol_type="consumer", protocol_name="range",
                                   assignments=[]),
        "leave unknown member": ask(client, ApiKey.LEAVE_GROUP, 5, group_id=group, members=[
            {"member_id": "nobody", "group_instance_id": None, "reason": None}]),
        "commit simple consumer": offset_commit(-1, ""),
        "commit unknown generation": offset_commit(5, "nobody"),
        "fetch offsets": ask(client, ApiKey.OFFSET_FETCH, 8, groups=[
            {"group_id": group, "member_id": None, "member_epoch": -1, "topics": [
                {"name": THREE, "partition_indexes": [0, 1]}]}], require_stable=False),
        "describe missing group": ask(client, ApiKey.DESCRIBE_GROUPS, 5,
                                      groups=["probe-no-group"],
                                      include_authorized_operations=False),
        "delete missing group": ask(client, ApiKey.DELETE_GROUPS, 2,
                                    groups_names=["probe-no-group"]),
    }


def retried(request, error_of=lambda answer: answer["error_code"]):
    """The answer to `request()`, asked again while its error is one clients retry on while a
    coordinator gets ready (COORDINATOR_LOAD_IN_PROGRESS: Kafka's first InitProducerId waits for
    a block of ids from its controller; COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: a new
    internal topic), as clients do."""
    return wait_until(lambda: (lambda answer: error_of(answer) not in COORDINATOR_NOT_READY and answer)(
        request()), "an answer once the coordinator is ready", timeout=WAIT_SECONDS)


PROBES = {"api-versions": api_versions, "metadata": metadata,
          "describe-configs": describe_configs, "list-offsets": list_offsets,
          "config-resource-types": config_resource_types,
          "topic-errors": topic_errors, "record-errors": record_errors,
          "group-errors": group_errors}


def prepare(bootstrap: str) -> None:
    """The topics the probes ask about, made through librdkafka as a client would."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    create_topic(bootstrap, THREE, 3)
    create_topic(bootstrap, EMPTY, 1)
    create_topic(bootstrap, TIMED, 1)
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})
    admin.create_topics([NewTopic(CONFIGURED, 1, 1, config=TOPIC_CONFIGS)])[
        CONFIGURED].result(WAIT_SECONDS)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, timestamp in enumerate(TIMESTAMPS):
        producer.produce(TIMED, value=b"record-%d" % i, partition=0, timestamp=timestamp)
    assert producer.flush(WAIT_SECONDS) == 0, "probe records left undelivered"
    wait_for_group_coordinator(bootstrap)


def wait_for_group_coordinator(bootstrap: str) -> None:
    """Until a group coordinator answers, which creates __consumer_offsets."""
    from pykbroker.testkit.wire import WireClient

    def found():
        with WireClient(bootstrap) as client:
            answer = ask(client, ApiKey.FIND_COORDINATOR, 4, key_type=0,
                         coordinator_keys=["probe-group"])
        return answer["coordinators"]["probe-group"]["error_code"] == 0

    wait_until(found, "a group coordinator", timeout=WAIT_SECONDS)


def answers(bootstrap: str) -> dict:
    """{probe: {request: normalised answer}} from the broker at `bootstrap` (one broker)."""
    from pykbroker.testkit.wire import WireClient

    prepare(bootstrap)
    with WireClient(bootstrap) as client:
        return {name: probe(client) for name, probe in PROBES.items()}
