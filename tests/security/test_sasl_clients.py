"""SASL_PLAINTEXT and SASL_SSL with real clients: librdkafka (confluent-kafka, kcat), kafka-python,
aiokafka and Java kafka-clients 3.9.1 produce and consume in a group with PLAIN (users from the
listener's JAAS config) and SCRAM-SHA-256/512 (users created through AlterUserScramCredentials by
confluent-kafka's AdminClient, over the SASL listener itself as an authenticated PLAIN admin); a
Java client re-authenticates on its own (KIP-368) when the broker's sessions are short; a wrong
password or an unknown user fails the authentication in every client, and the broker keeps
serving.

One broker: PLAINTEXT, SASL_PLAINTEXT, SASL_SSL (a test CA's certificate) and REAUTH, a
SASL_PLAINTEXT listener with `connections.max.reauth.ms=3000`. SCRAM-SHA-512 over SASL_SSL is in
test_sasl_ssl_authorization.py (with ACLs).
"""
from __future__ import annotations

import asyncio
import subprocess
import uuid
from pathlib import Path

import pytest

from compat import java

from .certs import Pki
from .sasl_support import (
    aiokafka_conf,
    confluent_conf,
    create_scram_user,
    java_properties,
    kafka_python_conf,
    sasl_broker,
)
from .tls_support import DEBUG_COMMAND

USERS = {
    "PLAIN": ("alice", "alice-secret"),
    "SCRAM-SHA-256": ("scram256", "scram256-secret"),
    "SCRAM-SHA-512": ("scram512", "scram512-secret"),
}
MECHANISMS = list(USERS)
# every client over every (protocol, mechanism)
ROUTES = [pytest.param("SASL_PLAINTEXT", mechanism, id=f"SASL_PLAINTEXT-{mechanism}") for mechanism in MECHANISMS]
ROUTES += [pytest.param("SASL_SSL", mechanism, id=f"SASL_SSL-{mechanism}") for mechanism in ("PLAIN", "SCRAM-SHA-256")]
REAUTH_MS = 3000
TLS_CLIENT = Path(__file__).resolve().parents[1] / "java" / "TlsClient.java"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("sasl-pki"))
    with sasl_broker(tmp_path_factory.mktemp("sasl-clients"), pki=pki, reauth_ms=REAUTH_MS,
                     command=DEBUG_COMMAND) as running:
        admin = confluent_conf(running.sasl_bootstrap, "PLAIN", "admin", "admin-secret")
        admin.pop("bootstrap.servers")
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            user, password = USERS[mechanism]
            create_scram_user(running.sasl_bootstrap, user, password, mechanism, iterations=8192, **admin)
        yield running


def settings(make, broker, protocol: str, mechanism: str):
    """`make`'s client settings (confluent_conf, kafka_python_conf, ...) for the user of
    `mechanism` on the listener of `protocol`."""
    user, password = USERS[mechanism]
    return make(broker.bootstrap_of(protocol), mechanism, user, password, protocol,
                broker.ca if protocol == "SASL_SSL" else None)


def fresh(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("protocol, mechanism", ROUTES)
def test_confluent_kafka_produces_and_consumes_in_a_group(broker, protocol, mechanism):
    from confluent_kafka import Consumer, Producer

    conf = settings(confluent_conf, broker, protocol, mechanism)
    topic = fresh("confluent")
    producer = Producer(conf)
    for i in range(10):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer({**conf, "group.id": fresh("g"), "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values = []
    try:
        for _ in range(300):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
            if len(values) == 10:
                break
    finally:
        consumer.close()
    assert values == [f"v{i}".encode() for i in range(10)]


@pytest.mark.parametrize("protocol, mechanism", ROUTES)
def test_kafka_python_produces_and_consumes_in_a_group(broker, protocol, mechanism):
    from kafka import KafkaConsumer, KafkaProducer

    conf = settings(kafka_python_conf, broker, protocol, mechanism)
    topic = fresh("kafka-python")
    producer = KafkaProducer(**conf)
    for i in range(5):
        producer.send(topic, f"v{i}".encode()).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(topic, group_id=fresh("g"), auto_offset_reset="earliest",
                             consumer_timeout_ms=15000, **conf)
    values = []
    for message in consumer:
        values.append(message.value)
        if len(values) == 5:
            break
    consumer.close()
    assert values == [f"v{i}".encode() for i in range(5)]


@pytest.mark.parametrize("protocol, mechanism", ROUTES)
def test_aiokafka_produces_and_consumes_in_a_group(broker, protocol, mechanism):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic = fresh("aiokafka")

    async def scenario():
        conf = settings(aiokafka_conf, broker, protocol, mechanism)
        producer = AIOKafkaProducer(**conf)
        await producer.start()
        try:
            for i in range(5):
                await producer.send_and_wait(topic, f"v{i}".encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, group_id=fresh("g"), auto_offset_reset="earliest", **conf)
        await consumer.start()
        values = []
        try:
            async with asyncio.timeout(30):
                async for message in consumer:
                    values.append(message.value)
                    if len(values) == 5:
                        break
        finally:
            await consumer.stop()
        return values

    assert asyncio.run(scenario()) == [f"v{i}".encode() for i in range(5)]


@pytest.mark.parametrize("protocol, mechanism", ROUTES)
def test_kcat_produces_and_consumes(broker, protocol, mechanism):
    conf = settings(confluent_conf, broker, protocol, mechanism)
    bootstrap = conf.pop("bootstrap.servers")
    security = [option for key, value in conf.items() for option in ("-X", f"{key}={value}")]
    topic = fresh("kcat")
    subprocess.run(["kcat", "-b", bootstrap, *security, "-P", "-t", topic],
                   input="one\ntwo\nthree\n", text=True, check=True, timeout=60)
    result = subprocess.run(["kcat", "-b", bootstrap, *security, "-C", "-t", topic,
                             "-o", "beginning", "-c", "3", "-e"],
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["one", "two", "three"], result.stderr


# -- Java kafka-clients 3.9.1 -----------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_client(tmp_path_factory) -> Path:
    return java.compile_sources([TLS_CLIENT], tmp_path_factory.mktemp("java-classes"))


def run_tls_client(classes: Path, directory: Path, bootstrap: str, topic: str, properties: list[str],
                   *more: str) -> None:
    """TlsClient (produce, then consume in a group) with the properties' security settings."""
    (directory / "client.properties").write_text("\n".join(properties) + "\n")
    result = java.run_main(classes, "TlsClient", bootstrap, topic, str(directory / "client.properties"), *more)
    assert result.returncode == 0 and "PASS tls" in result.stdout, result.stdout + result.stderr[-3000:]


@pytest.mark.parametrize("protocol, mechanism", ROUTES)
def test_java_kafka_clients_produce_and_consume_in_a_group(broker, tls_client, tmp_path, protocol, mechanism):
    user, password = USERS[mechanism]
    properties = settings(java_properties, broker, protocol, mechanism)
    run_tls_client(tls_client, tmp_path, broker.bootstrap_of(protocol), fresh("java"), properties)
    assert f"authentication of User:{user} from" in broker.log_text()


def test_a_java_client_re_authenticates_on_its_own_when_its_sessions_expire(broker, tls_client, tmp_path):
    """REAUTH's sessions last 3 s: producing 8 records a second apart, then consuming them,
    spans several sessions; the client re-authenticates on its open connections (SaslHandshake
    and SaslAuthenticate again), and no connection is closed for an expired session."""
    user, password = USERS["SCRAM-SHA-256"]
    before = broker.log_text().count(f"re-authentication of User:{user} from")
    run_tls_client(tls_client, tmp_path, broker.bootstrap_of("REAUTH"), fresh("java-reauth"),
                   java_properties(broker.bootstrap_of("REAUTH"), "SCRAM-SHA-256", user, password), "8", "1000")
    log = broker.log_text()
    assert log.count(f"re-authentication of User:{user} from") - before >= 2
    assert f"the SASL session of User:{user} expired" not in log


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("who", ["wrong-password", "unknown-user"])
def test_a_wrong_password_or_unknown_user_fails_authentication_in_confluent_kafka(broker, mechanism, who):
    from confluent_kafka import KafkaError, Producer

    user, password = USERS[mechanism]
    if who == "wrong-password":
        password += "-wrong"
    else:
        user = "nobody"
    errors = []
    producer = Producer({**confluent_conf(broker.sasl_bootstrap, mechanism, user, password),
                         "error_cb": errors.append})
    for _ in range(50):
        producer.poll(0.2)
        if errors:
            break
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "Authentication failed" in errors[0].str()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_wrong_password_fails_authentication_in_kafka_python_and_aiokafka(broker, mechanism):
    from aiokafka import AIOKafkaProducer
    from kafka import KafkaProducer
    from kafka.errors import KafkaError as KafkaPythonError

    user, password = USERS[mechanism]
    conf = kafka_python_conf(broker.sasl_bootstrap, mechanism, user, password + "-wrong")
    with pytest.raises(KafkaPythonError):
        KafkaProducer(**conf, max_block_ms=5000, bootstrap_timeout_ms=2000)  # kafka-python 3: retries for 30 s

    async def aio():
        producer = AIOKafkaProducer(bootstrap_servers=broker.sasl_bootstrap, security_protocol="SASL_PLAINTEXT",
                                    sasl_mechanism=mechanism, sasl_plain_username=user,
                                    sasl_plain_password=password + "-wrong")
        try:
            await producer.start()
        finally:
            await producer.stop()

    before = broker.log_text().count("SASL authentication failed")
    with pytest.raises(Exception):  # aiokafka: "Unable to bootstrap", after the broker's refusal
        asyncio.run(aio())
    assert broker.log_text().count("SASL authentication failed") > before
