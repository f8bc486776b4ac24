"""The security scenarios of the compatibility suite: SASL (SCRAM-SHA-512 over SASL_SSL, PLAIN over
SASL_PLAINTEXT), mutual TLS and the ACL authorizer, run with every client against one secured
broker (`compat/security_setup.py`): a pykbroker and a Kafka 3.9.0 with the same settings.

Each client runs each scenario on topics and groups of its own; the neutral set-up (topics, ACLs,
the records a reader needs) goes through confluent-kafka's admin API as the super user on the
PLAIN listener; the SCRAM users are created once per broker through AlterUserScramCredentials.

    rows = security_rows(pykbroker, kafka)     # both brokers at once, side by side
    results = run_security_suite(broker)       # {(client, scenario): Result}
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from .drivers import FAIL, SKIPPED, Result, outcome
from .scenarios import WAIT_SECONDS, expect, expect_equal, wait_until
from .security_clients import (
    GROUP_AUTHORIZATION_FAILED,
    NO_CONNECTION,
    SASL_AUTHENTICATION_FAILED,
    SECURITY_CLIENTS,
    TOPIC_AUTHORIZATION_FAILED,
    ClientError,
    librdkafka_settings,
)
from .security_setup import SCRAM_MECHANISM, SCRAM_USERS

VALUES = [b"value-%d" % i for i in range(5)]

SECURITY_SCENARIOS: dict[str, str] = {
    "scram-produce-consume": "alice (SCRAM-SHA-512 over SASL_SSL) with WRITE and READ on a topic and "
    "READ on a group produces 5 records and reads them back in the group",
    "scram-wrong-password": "alice logs in; with a wrong password she gets SASL_AUTHENTICATION_FAILED",
    "acl-no-write": "bob, who may read the topic but not write it (he may write another one), gets "
    "TOPIC_AUTHORIZATION_FAILED when he produces",
    "acl-no-group-read": "bob, who may read the topic but not the group, gets "
    "GROUP_AUTHORIZATION_FAILED when he consumes in the group",
    "acl-deny-wins": "carol, allowed WRITE on every topic with the topic's name as prefix and denied "
    "WRITE on the topic itself, gets TOPIC_AUTHORIZATION_FAILED there and writes "
    "to another topic with that prefix",
    "acl-metadata-hides": "alice lists the topics: she sees the topic she may describe, not the "
    "one beside it she may not (the super user sees both)",
    "plain-produce-consume": "dave (PLAIN over SASL_PLAINTEXT, a user of the JAAS config) with ACLs "
    "produces 5 records and reads them back in a group",
    "plain-wrong-password": "dave logs in; with a wrong password he gets SASL_AUTHENTICATION_FAILED",
    "mtls-no-certificate": "on the listener with ssl.client.auth=required, a client without a "
    "certificate gets no connection",
    "mtls-principal": "the certificate CN=Erin,OU=compat,O=example is User:erin after the mapping "
    "rules: with ACLs for User:erin it produces and reads back in a group; the "
    "certificate of frank, without ACLs, gets TOPIC_AUTHORIZATION_FAILED",
}


class Setup:
    """The super user's side of a scenario on one broker: topics, ACLs, records."""

    def __init__(self, broker) -> None:
        from confluent_kafka.admin import AdminClient

        self.broker = broker
        self.settings = {**librdkafka_settings(broker.admin_access()), "log_level": 0}
        self.admin = AdminClient(self.settings)

    def create_scram_users(self) -> None:
        from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

        mechanism = getattr(ScramMechanism, SCRAM_MECHANISM.replace("-", "_"))
        upsertions = [
            UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 4096), password.encode())
            for user, password in SCRAM_USERS.items()
        ]

        def created() -> bool:  # again on a slow answer (a loaded machine): the upsertion is idempotent
            try:
                for future in self.admin.alter_user_scram_credentials(upsertions).values():
                    future.result(WAIT_SECONDS / 3)
            except FutureTimeout:
                return False
            return True

        wait_until(created, "the SCRAM users", timeout=4 * WAIT_SECONDS)

    def start_group_coordinator(self) -> None:
        """Looks up a group's coordinator until there is one: the broker creates
        __consumer_offsets first, before the clients' groups need it."""
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        consumer = Consumer({**self.settings, "group.id": "compat-sec-warm-up"})

        def coordinator_found() -> bool:
            try:
                consumer.committed([TopicPartition("compat-sec-warm-up", 0)], timeout=5)
            except KafkaException:
                return False
            return True

        try:
            wait_until(coordinator_found, "a group coordinator", timeout=2 * WAIT_SECONDS)
        finally:
            consumer.close()

    def topic(self, name: str, records: list[bytes] = ()) -> str:
        """Creates the topic (one partition), waits for its leader and writes `records` to it."""
        from confluent_kafka import Producer
        from confluent_kafka.admin import NewTopic

        self.admin.create_topics([NewTopic(name, 1, 1)])[name].result(WAIT_SECONDS)

        def ready() -> bool:  # a leader in the metadata, before a client asks for it
            topic = self.admin.list_topics(name, timeout=WAIT_SECONDS).topics.get(name)
            return topic is not None and topic.error is None and all(p.leader >= 0 for p in topic.partitions.values())

        wait_until(ready, f"topic {name} to be ready")
        if records:
            producer = Producer({**self.settings, "acks": "all"})
            for value in records:
                producer.produce(name, value=value)
            expect_equal(0, producer.flush(WAIT_SECONDS), "the set-up's records left undelivered")
        return name

    def acl(
        self, user: str, resource: str, name: str, *operations: str, deny: bool = False, prefixed: bool = False
    ) -> None:
        """ALLOW (or DENY) `User:<user>` the operations (READ, WRITE, DESCRIBE) on the TOPIC or
        GROUP `name`, a literal name or a prefix."""
        from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

        bindings = [
            AclBinding(
                getattr(ResourceType, resource),
                name,
                ResourcePatternType.PREFIXED if prefixed else ResourcePatternType.LITERAL,
                f"User:{user}",
                "*",
                getattr(AclOperation, operation),
                AclPermissionType.DENY if deny else AclPermissionType.ALLOW,
            )
            for operation in operations
        ]
        for future in self.admin.create_acls(bindings).values():
            future.result(WAIT_SECONDS)


def expect_error(expected: str, step, *args) -> None:
    """The client step fails with the error `expected`."""
    try:
        step(*args)
    except ClientError as error:
        expect_equal(expected, str(error), "error")
    else:
        raise AssertionError(f"expected {expected}, but the step succeeded")


def round_trip(setup: Setup, client, access, topic: str, user: str) -> None:
    """`user` may write and read `topic` and read its group: five records there and back."""
    group = f"{topic}-group"
    setup.topic(topic)
    setup.acl(user, "TOPIC", topic, "WRITE", "READ")
    setup.acl(user, "GROUP", group, "READ")
    client.produce(access, topic, VALUES)
    expect_equal(VALUES, sorted(client.consume(access, topic, group, len(VALUES))), "records read in the group")


# -- the scenarios: (setup, client, topic) -----------------------------------------------------


def scram_produce_consume(setup, client, topic):
    round_trip(setup, client, setup.broker.access("SCRAM", "alice"), topic, "alice")


def expect_login_refused(client, listener_access, wrong_password_access) -> None:
    """The user logs in with the right password; with a wrong one the login is refused: the
    client reports SASL_AUTHENTICATION_FAILED (or, for a client that may miss the broker's answer
    before the connection closes, one of its `refused_login_errors`)."""
    client.topics(listener_access)
    try:
        client.topics(wrong_password_access)
    except ClientError as error:
        accepted = getattr(client, "refused_login_errors", (SASL_AUTHENTICATION_FAILED,))
        expect(str(error) in accepted, f"error: expected one of {accepted}, got {str(error)!r}")
    else:
        raise AssertionError("a wrong password logged in")


def scram_wrong_password(setup, client, topic):
    broker = setup.broker
    expect_login_refused(client, broker.access("SCRAM", "alice"), broker.access("SCRAM", "alice", "not-her-password"))


def acl_no_write(setup, client, topic):
    setup.topic(topic)
    setup.acl("bob", "TOPIC", topic, "READ", "DESCRIBE")
    setup.acl("bob", "TOPIC", f"{topic}-own", "WRITE")  # lets idempotent producers (Java's default) start
    expect_error(TOPIC_AUTHORIZATION_FAILED, client.produce, setup.broker.access("SCRAM", "bob"), topic, VALUES)


def acl_no_group_read(setup, client, topic):
    setup.topic(topic, VALUES)
    setup.acl("bob", "TOPIC", topic, "READ")
    expect_error(
        GROUP_AUTHORIZATION_FAILED,
        client.consume,
        setup.broker.access("SCRAM", "bob"),
        topic,
        f"{topic}-group",
        len(VALUES),
    )


def acl_deny_wins(setup, client, topic):
    other = setup.topic(f"{topic}-other")
    setup.topic(topic)
    setup.acl("carol", "TOPIC", topic, "WRITE", prefixed=True)
    setup.acl("carol", "TOPIC", topic, "WRITE", deny=True)
    carol = setup.broker.access("SCRAM", "carol")
    client.produce(carol, other, VALUES)
    expect_error(TOPIC_AUTHORIZATION_FAILED, client.produce, carol, topic, VALUES)


def acl_metadata_hides(setup, client, topic):
    hidden = setup.topic(f"{topic}-hidden")
    setup.topic(topic)
    setup.acl("alice", "TOPIC", topic, "DESCRIBE")
    listed = client.topics(setup.broker.access("SCRAM", "alice"))
    expect(topic in listed and hidden not in listed, f"alice sees {topic} and not {hidden}: {sorted(listed)}")
    every = client.topics(setup.broker.admin_access())
    expect({topic, hidden} <= every, f"the super user sees both: {sorted(every)}")


def plain_produce_consume(setup, client, topic):
    round_trip(setup, client, setup.broker.access("PLAIN", "dave"), topic, "dave")


def plain_wrong_password(setup, client, topic):
    broker = setup.broker
    expect_login_refused(client, broker.access("PLAIN", "dave"), broker.access("PLAIN", "dave", "not-his-password"))


def mtls_no_certificate(setup, client, topic):
    expect_error(NO_CONNECTION, client.topics, setup.broker.access("MTLS"))


def mtls_principal(setup, client, topic):
    round_trip(setup, client, setup.broker.access("MTLS", cert="erin"), topic, "erin")
    expect_error(TOPIC_AUTHORIZATION_FAILED, client.produce, setup.broker.access("MTLS", cert="frank"), topic, VALUES)


SCENARIO_RUNS = {name: globals()[name.replace("-", "_")] for name in SECURITY_SCENARIOS}


# -- running them ------------------------------------------------------------------------------


def prepare(broker) -> tuple[Setup, Result]:
    """The super user's set-up of a broker (SCRAM users, the group coordinator), and how it went."""
    setup = Setup(broker)
    return setup, outcome(lambda: (setup.create_scram_users(), setup.start_group_coordinator()))


def run_security_suite(
    broker,
    clients: list[str] | None = None,
    scenarios: list[str] | None = None,
    prepared: tuple[Setup, Result] | None = None,
) -> dict[tuple[str, str], Result]:
    """Every scenario with every client against the secured `broker` (`prepared` already, or
    now), the clients side by side (each scenario after the other)."""
    clients = list(SECURITY_CLIENTS) if clients is None else clients
    scenarios = list(SECURITY_SCENARIOS) if scenarios is None else scenarios
    run_id = uuid.uuid4().hex[:8]
    setup, ready = prepared or prepare(broker)
    if ready.status == FAIL:
        return {(client, s): Result(FAIL, f"set-up: {ready.detail}") for client in clients for s in scenarios}

    def run(name: str) -> dict[str, Result]:
        client = SECURITY_CLIENTS[name]()
        reason = client.driver().unavailable()
        if reason:
            return {s: Result(SKIPPED, reason) for s in scenarios}
        try:
            return {
                s: outcome(lambda s=s: SCENARIO_RUNS[s](setup, client, f"compat-sec-{name}-{s}-{run_id}"))
                for s in scenarios
            }
        finally:
            getattr(client, "close", lambda: None)()

    with ThreadPoolExecutor(max_workers=len(clients)) as pool:
        by_client = dict(zip(clients, pool.map(run, clients)))
    return {(client, s): by_client[client][s] for client in clients for s in scenarios}


def security_rows(pykbroker, kafka, clients=None, scenarios=None):
    """The security scenarios against both secured brokers at once (both set up before any
    client starts): side_by_side.Rows."""
    from .side_by_side import Rows

    with ThreadPoolExecutor(max_workers=2) as pool:
        prepared = list(pool.map(prepare, (pykbroker, kafka)))
        ours, theirs = pool.map(
            lambda broker, ready: run_security_suite(broker, clients, scenarios, ready), (pykbroker, kafka), prepared
        )
    theirs.update(_retried_on_kafka(kafka, theirs, prepared[1]))
    rows = Rows()
    rows.results = {row: (ours[row], theirs[row]) for row in ours}
    rows.versions = {name: SECURITY_CLIENTS[name].driver().version for name in clients or SECURITY_CLIENTS}
    return rows


def _retried_on_kafka(kafka, results: dict, prepared) -> dict:
    """Kafka 3.9.0's failed cells run once more: on a loaded machine the real broker has slow
    moments too (a SCRAM login or a new topic's leader late), and the table compares behaviour,
    not Kafka's timing. pykbroker's cells are never retried."""
    again = {}
    for client, scenario in [row for row, result in results.items() if result.status == FAIL]:
        again.update(run_security_suite(kafka, [client], [scenario], prepared))
    return again

