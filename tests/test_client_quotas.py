"""Client quotas are set, described and enforced as on Kafka 3.9.0.

Each behaviour is asserted on pykbroker and on Kafka 3.9.0 (`../shared/realkafka`), the same
test against both: quotas set through AlterClientQuotas and Kafka's own `kafka-configs` tool, and
enforced (a producer held to `producer_byte_rate`, a consumer to `consumer_byte_rate`, a busy
client to `request_percentage`, topic creation to `controller_mutation_rate`). Rates are asserted
in generous bands over a measured interval, never as durations: a quota of 1 MB/s must keep a
client below 2 MB/s once its first burst is spent (quota windows allow about ten seconds' worth at
once), where unthrottled it goes far faster.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from compat.realkafka import REALKAFKA, KafkaBroker, unavailable
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.quota.client_quotas import ClientQuotaManager, throttle_time_ms
from pykbroker.quota.sensor import QuotaViolation, WindowConfig
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.wire import WireClient
from tests.ci import skip_or_fail_in_ci

MB = 1024 * 1024
PAYLOAD = b"q" * 10_000
AlterQuotas = messages.request(ApiKey.ALTER_CLIENT_QUOTAS).cls
DescribeQuotas = messages.request(ApiKey.DESCRIBE_CLIENT_QUOTAS).cls
Metadata = messages.request(ApiKey.METADATA).cls
CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls
CONFIG_COMMAND = "kafka.admin.ConfigCommand"
QUIET_LOG4J = "log4j.rootLogger=ERROR, stderr\nlog4j.appender.stderr=org.apache.log4j.ConsoleAppender\n" \
    "log4j.appender.stderr.Target=System.err\nlog4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"


@pytest.fixture(scope="module")
def pykbroker_broker():
    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture(scope="module")
def kafka_broker(tmp_path_factory):
    reason = unavailable()
    if reason:
        skip_or_fail_in_ci(reason)
    with KafkaBroker(tmp_path_factory.mktemp("realkafka")) as kafka:
        yield kafka


@pytest.fixture(params=["pykbroker", "kafka"])
def bootstrap(request):
    broker = request.getfixturevalue("pykbroker_broker" if request.param == "pykbroker" else "kafka_broker")
    return broker.bootstrap


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def alter_quota(bootstrap: str, entity: dict, key: str, value: float | None) -> None:
    """One quota set (or removed, with None) through AlterClientQuotas."""
    entry = AlterQuotas.EntryData(
        entity=[AlterQuotas.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
        ops=[AlterQuotas.OpData(key=key, value=value or 0.0, remove=value is None)],
    )
    with WireClient(bootstrap) as client:
        response = client.request(ApiKey.ALTER_CLIENT_QUOTAS, 1, AlterQuotas(entries=[entry], validate_only=False))
    assert [e.error_code for e in response.entries] == [0], response


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)


# -- the measurements ---------------------------------------------------------------------------


def test_a_rate_is_measured_over_at_least_all_but_one_window_and_throttled_by_kafkas_formula():
    manager = ClientQuotaManager("Produce", WindowConfig(samples=11, window_ms=1000))
    manager.update_quota(None, "app", 1000.0)  # 1000 bytes/s for client id "app"
    assert manager.record_and_get_throttle_time_ms("", "app", 10_000, at_ms=0) == 0  # 10000 B / 10 s: at the quota
    # 15000 B over the 10 s counted: 1500 B/s, half again the quota, so half the window again
    assert manager.record_and_get_throttle_time_ms("", "app", 5_000, at_ms=0) == 5_000
    assert manager.max_value_in_quota_window("", "app") == 10_000
    assert manager.record_and_get_throttle_time_ms("", "other", 10**9, at_ms=0) == 0  # no quota of its own
    assert throttle_time_ms(QuotaViolation(value=1500.0, bound=1000.0, window_ms=10_000)) == 5_000


def test_a_user_quota_is_shared_by_the_users_client_ids_and_the_most_specific_quota_wins():
    manager = ClientQuotaManager("Fetch", WindowConfig())
    manager.update_quota("alice", None, 100.0)
    manager.update_quota("<default>", None, 5.0)
    manager.update_quota(None, "app", 7.0)
    assert manager.sensor("alice", "app") is manager.sensor("alice", "cli")
    assert manager.sensor("alice", "app").bound == 100.0
    assert manager.sensor("bob", "app").bound == 5.0  # the default user comes before the client id
    manager.update_quota("alice", "app", 1.0)
    assert manager.sensor("alice", "app").bound == 1.0
    assert manager.sensor("alice", "cli").bound == 100.0


# -- the APIs ----------------------------------------------------------------------------------


def describe(bootstrap: str, components: list[tuple[str, int, str | None]], strict: bool = False):
    request = DescribeQuotas(
        components=[DescribeQuotas.ComponentData(entity_type=t, match_type=m, match=n) for t, m, n in components],
        strict=strict,
    )
    with WireClient(bootstrap) as client:
        return client.request(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, request)


def described(response) -> set:
    """(entity, values) of each entry; an entity's types in Kafka's order (user first)."""
    return {
        (
            tuple((e.entity_type, e.entity_name) for e in entry.entity),
            tuple(sorted((v.key, v.value) for v in entry.values)),
        )
        for entry in response.entries or []
    }


def test_quotas_are_described_by_the_filters_kafka_knows(bootstrap):
    user, client = unique("u"), unique("c")
    alter_quota(bootstrap, {"user": user}, "producer_byte_rate", 1000)
    alter_quota(bootstrap, {"user": user, "client-id": client}, "consumer_byte_rate", 2000)
    alter_quota(bootstrap, {"client-id": client}, "request_percentage", 12.5)
    exact_user = described(describe(bootstrap, [("user", 0, user)], strict=True))
    assert exact_user == {((("user", user),), (("producer_byte_rate", 1000.0),))}
    both = described(describe(bootstrap, [("user", 0, user), ("client-id", 0, client)]))
    assert both == {((("user", user), ("client-id", client)), (("consumer_byte_rate", 2000.0),))}
    loose = described(describe(bootstrap, [("client-id", 0, client)]))
    assert loose == {
        ((("client-id", client),), (("request_percentage", 12.5),)),
        ((("user", user), ("client-id", client)), (("consumer_byte_rate", 2000.0),)),
    }
    alter_quota(bootstrap, {"user": user}, "producer_byte_rate", None)
    assert described(describe(bootstrap, [("user", 0, user)], strict=True)) == set()


def test_ip_quotas_are_kept_apart_from_user_and_client_quotas(bootstrap):
    ip = f"127.0.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    alter_quota(bootstrap, {"ip": ip}, "connection_creation_rate", 10)
    alter_quota(bootstrap, {"ip": None}, "connection_creation_rate", 100)
    assert described(describe(bootstrap, [("ip", 0, ip)])) == {((("ip", ip),), (("connection_creation_rate", 10.0),))}
    assert ((("ip", None),), (("connection_creation_rate", 100.0),)) in described(describe(bootstrap, [("ip", 1, None)]))
    assert not any(entity[0][0] == "ip" for entity, _ in described(describe(bootstrap, [("user", 2, None)])))
    response = describe(bootstrap, [("ip", 2, None), ("user", 2, None)])
    assert (response.error_code, response.entries) == (ErrorCode.INVALID_REQUEST, None)


@pytest.mark.parametrize(
    "components, error, message",
    [
        (
            [("user", 2, None), ("user", 1, None)],
            ErrorCode.INVALID_REQUEST,
            "Duplicate user filter component entity type",
        ),
        ([("", 2, None)], ErrorCode.INVALID_REQUEST, "Unexpected empty filter component entity type"),
        ([("group", 2, None)], ErrorCode.UNSUPPORTED_VERSION, "Custom entity type 'group' not supported"),
    ],
)
def test_a_bad_filter_is_refused_as_kafka_refuses_it(bootstrap, components, error, message):
    response = describe(bootstrap, components)
    assert (response.error_code, response.error_message, response.entries) == (error, message, None)


def test_bad_alterations_fail_alone_with_kafkas_errors(bootstrap):
    def entry(entity, key, value):
        return AlterQuotas.EntryData(
            entity=[AlterQuotas.EntityData(entity_type=t, entity_name=n) for t, n in entity],
            ops=[AlterQuotas.OpData(key=key, value=value, remove=False)],
        )

    good = unique("good")
    request = AlterQuotas(
        entries=[
            entry([("user", good)], "producer_byte_rate", 5000.0),
            entry([("user", "x")], "producer_byte_rate", 1.5),
            entry([("client-id", "x")], "no_such_quota", 1.0),
            entry([("user", "")], "producer_byte_rate", 1.0),
            entry([("ip", "127.0.0.1"), ("user", "x")], "connection_creation_rate", 1.0),
            entry([], "producer_byte_rate", 1.0),
        ],
        validate_only=False,
    )
    with WireClient(bootstrap) as client:
        response = client.request(ApiKey.ALTER_CLIENT_QUOTAS, 1, request)
    results = sorted((e.error_code, e.error_message) for e in response.entries)
    assert results == sorted(
        [
            (0, None),
            (ErrorCode.INVALID_REQUEST, "Configuration producer_byte_rate must be a LONG value"),
            (ErrorCode.INVALID_REQUEST, "Invalid configuration key no_such_quota"),
            (ErrorCode.INVALID_REQUEST, "Empty user not supported"),
            (
                ErrorCode.INVALID_REQUEST,
                "Invalid quota entity combination, IP entity should not be used with user/client ID entity.",
            ),
            (ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity"),
        ]
    )
    assert described(describe(bootstrap, [("user", 0, good)], strict=True)) == {
        ((("user", good),), (("producer_byte_rate", 5000.0),))
    }


# -- Kafka's own tool ---------------------------------------------------------------------------


def kafka_configs(bootstraps: list[str], log4j: Path, *args: str) -> list[str]:
    """Kafka's ConfigCommand against each broker, run side by side: exit status and stdout of each."""
    runs = [
        subprocess.Popen(
            ["java", "-cp", f"{REALKAFKA / 'libs'}/*", f"-Dlog4j.configuration=file:{log4j}", CONFIG_COMMAND,
             "--bootstrap-server", bootstrap, *args],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        for bootstrap in bootstraps
    ]
    return [f"exit {run.wait(timeout=120)}\n{run.communicate()[0]}" for run in runs]


def test_kafka_configs_sets_and_describes_quotas_and_scram_users_as_on_kafka(
    pykbroker_broker, kafka_broker, tmp_path
):
    log4j = tmp_path / "log4j.properties"
    log4j.write_text(QUIET_LOG4J)
    steps = [
        ("--alter", "--entity-type", "users", "--entity-name", "tool-user", "--add-config",
         "producer_byte_rate=1048576,request_percentage=200,SCRAM-SHA-256=[iterations=8192,password=tool-secret]"),
        ("--alter", "--entity-type", "users", "--entity-name", "tool-user", "--entity-type", "clients",
         "--entity-default", "--add-config", "consumer_byte_rate=4096"),
        ("--describe", "--entity-type", "users", "--entity-name", "tool-user"),
    ]  # fmt: skip
    for step in steps:
        ours, theirs = kafka_configs([pykbroker_broker.bootstrap, kafka_broker.bootstrap], log4j, *step)
        assert ours == theirs, f"kafka-configs {' '.join(step)}"


# -- enforcement -------------------------------------------------------------------------------


class ThrottleSeen:
    def __init__(self) -> None:
        self.max_ms = 0

    def __call__(self, event) -> None:
        self.max_ms = max(self.max_ms, int(event.throttle_time * 1000))


def test_a_producer_is_held_to_its_byte_rate_until_the_quota_is_removed(bootstrap):
    client_id, topic = unique("producer"), unique("quoted")
    create_topic(bootstrap, topic)
    producer_is_held_then_lifted(bootstrap, {"client-id": client_id}, {"bootstrap.servers": bootstrap,
                                                                       "client.id": client_id}, topic)


def test_a_sasl_users_producer_is_held_to_the_users_byte_rate_until_the_quota_is_removed(tmp_path):
    """The quota is the user's (its principal after SASL), whatever client id the producer has."""
    from tests.security.sasl_support import confluent_conf, sasl_broker

    with sasl_broker(tmp_path) as broker:
        plain = f"127.0.0.1:{broker.ports['PLAINTEXT']}"
        topic = unique("users-quota")
        create_topic(plain, topic)
        alice = confluent_conf(f"127.0.0.1:{broker.ports['SASL_PLAINTEXT']}", "PLAIN", "alice", "alice-secret")
        producer_is_held_then_lifted(plain, {"user": "alice"}, {**alice, "client.id": unique("any")}, topic)


def producer_is_held_then_lifted(alter_bootstrap: str, entity: dict, settings: dict, topic: str) -> None:
    """A producer with `settings` is throttled (throttle_time_ms > 0) and held below 2 MB/s by a
    1 MB/s producer_byte_rate on `entity`; once the quota is removed it goes far faster."""
    alter_quota(alter_bootstrap, entity, "producer_byte_rate", MB)
    throttled = ThrottleSeen()
    acked: list[tuple[float, int]] = []
    producer = Producer({
        **settings, "acks": 1, "linger.ms": 5, "queue.buffering.max.kbytes": 2048, "throttle_cb": throttled,
    })  # fmt: skip

    def delivered(err, msg) -> None:
        if err is None:
            acked.append((time.monotonic(), len(msg.value())))

    def produce_for(seconds: float, until=lambda: False) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            try:
                producer.produce(topic, PAYLOAD, callback=delivered)
            except BufferError:
                producer.poll(0.05)
            producer.poll(0)

    def rate_since(start: float) -> float:
        return sum(size for at, size in acked if at >= start) / (time.monotonic() - start)

    produce_for(60, until=lambda: throttled.max_ms > 0)  # the first burst, until the broker throttles
    assert throttled.max_ms > 0, "no throttle_time_ms was ever reported"
    measured_from = time.monotonic()
    produce_for(5)
    assert rate_since(measured_from) < 2 * MB

    alter_quota(alter_bootstrap, entity, "producer_byte_rate", None)
    deadline = time.monotonic() + 60
    while True:  # once the last throttle has passed, the producer goes far faster than its quota was
        window = time.monotonic()
        produce_for(1)
        if rate_since(window) > 4 * MB:
            break
        assert time.monotonic() < deadline, "the producer stayed throttled after the quota was removed"
    producer.flush(30)


def test_a_consumer_is_held_to_its_byte_rate(bootstrap):
    client_id, topic = unique("consumer"), unique("fetched")
    create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "queue.buffering.max.kbytes": 65536})
    for _ in range(2500):  # 25 MB: more than the first burst and the measured interval take
        while True:
            try:
                producer.produce(topic, PAYLOAD)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0
    alter_quota(bootstrap, {"client-id": client_id}, "consumer_byte_rate", MB)
    throttled = ThrottleSeen()
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "client.id": client_id, "group.id": unique("g"),
        "auto.offset.reset": "earliest", "enable.auto.commit": False, "throttle_cb": throttled,
    })  # fmt: skip
    consumer.subscribe([topic])
    try:
        deadline = time.monotonic() + 60
        while throttled.max_ms == 0:
            consumer.poll(0.2)
            assert time.monotonic() < deadline, "no throttle_time_ms was ever reported"
        measured_from, consumed = time.monotonic(), 0
        while time.monotonic() - measured_from < 5:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                consumed += len(message.value())
        assert consumed / (time.monotonic() - measured_from) < 2 * MB
    finally:
        consumer.close()


@pytest.mark.parametrize("entity_of", [
    lambda client_id: {"client-id": client_id},
    # the connection's principal (ANONYMOUS on a PLAINTEXT listener) with the client id
    lambda client_id: {"user": "ANONYMOUS", "client-id": client_id},
], ids=["client", "user-and-client"])  # fmt: skip
def test_a_busy_client_is_throttled_by_its_request_percentage_for_at_most_one_window(bootstrap, entity_of):
    client_id = unique("busy")
    alter_quota(bootstrap, entity_of(client_id), "request_percentage", 0.01)
    throttles = []
    deadline = time.monotonic() + 60
    with WireClient(bootstrap, client_id=client_id) as client:
        while not throttles:
            response = client.request(ApiKey.METADATA, 9, Metadata(topics=None, allow_auto_topic_creation=False))
            if response.throttle_time_ms > 0:
                throttles.append(response.throttle_time_ms)
            assert time.monotonic() < deadline, "the request quota never throttled"
    assert 0 < throttles[0] <= 1000  # capped at quota.window.size.seconds


def test_topic_creation_is_refused_once_the_mutation_rate_is_spent(bootstrap):
    client_id = unique("mutator")
    alter_quota(bootstrap, {"client-id": client_id}, "controller_mutation_rate", 1)

    def create(name: str, partitions: int, version: int):
        topic = CreateTopics.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)
        with WireClient(bootstrap, client_id=client_id) as client:
            response = client.request(ApiKey.CREATE_TOPICS, version, CreateTopics(topics=[topic], timeout_ms=30000))
        return response.throttle_time_ms, response.topics[0].error_code

    # The quota reaches the broker's quota manager asynchronously (Kafka's through ZooKeeper's
    # config change notification); until it does, every creation is allowed.
    deadline = time.monotonic() + 30
    while True:
        burst = create(unique("burst"), 20, 7)  # the bucket holds 11 tokens: 20 partitions overdraw it
        assert burst[1] == ErrorCode.NONE
        refused = create(unique("refused"), 1, 7)
        if refused[1] != ErrorCode.NONE:
            break
        assert time.monotonic() < deadline, "the mutation quota was never in force"
    assert refused[1] == ErrorCode.THROTTLING_QUOTA_EXCEEDED and refused[0] > 0
    permissive = create(unique("older"), 1, 5)  # before v6 the topic is created, the client throttled
    assert permissive[1] == ErrorCode.NONE and permissive[0] > 0


def test_quota_sensors_show_in_the_metrics_under_the_exporters_names(pykbroker_broker):
    client_id, topic = unique("metered"), unique("metered")
    create_topic(pykbroker_broker.bootstrap, topic)
    alter_quota(pykbroker_broker.bootstrap, {"client-id": client_id}, "producer_byte_rate", MB)
    producer = Producer({"bootstrap.servers": pykbroker_broker.bootstrap, "client.id": client_id})
    producer.produce(topic, PAYLOAD)
    assert producer.flush(30) == 0
    text = pykbroker_broker.call_async(pykbroker_broker.broker.render_metrics)
    rate = [line for line in text.splitlines() if line.startswith("kafka_server_quota_byte_rate{")]
    assert any(f'resource="Produce",clientId="{client_id}"' in line for line in rate), rate
    assert "# TYPE kafka_server_quota_throttle_time gauge" in text
