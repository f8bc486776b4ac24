"""SASL_PLAINTEXT with real clients: librdkafka (confluent-kafka, kcat), kafka-python and aiokafka
produce and consume in a group with PLAIN (users from the listener's JAAS config) and
SCRAM-SHA-256/512 (users created through AlterUserScramCredentials by confluent-kafka's
AdminClient, over the SASL listener itself as an authenticated PLAIN admin); a wrong password or
an unknown user fails the authentication in every client, and the broker keeps serving."""
from __future__ import annotations

import asyncio
import subprocess
import uuid

import pytest

from .sasl_support import confluent_conf, create_scram_user, kafka_python_conf, sasl_broker

USERS = {
    "PLAIN": ("alice", "alice-secret"),
    "SCRAM-SHA-256": ("scram256", "scram256-secret"),
    "SCRAM-SHA-512": ("scram512", "scram512-secret"),
}
MECHANISMS = list(USERS)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with sasl_broker(tmp_path_factory.mktemp("sasl-clients")) as running:
        admin = confluent_conf(running.sasl_bootstrap, "PLAIN", "admin", "admin-secret")
        admin.pop("bootstrap.servers")
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            user, password = USERS[mechanism]
            create_scram_user(running.sasl_bootstrap, user, password, mechanism, iterations=8192, **admin)
        yield running


def fresh(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_produces_and_consumes_in_a_group(broker, mechanism):
    from confluent_kafka import Consumer, Producer

    user, password = USERS[mechanism]
    conf = confluent_conf(broker.sasl_bootstrap, mechanism, user, password)
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


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_produces_and_consumes_in_a_group(broker, mechanism):
    from kafka import KafkaConsumer, KafkaProducer

    user, password = USERS[mechanism]
    conf = kafka_python_conf(broker.sasl_bootstrap, mechanism, user, password)
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


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_aiokafka_produces_and_consumes_in_a_group(broker, mechanism):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    user, password = USERS[mechanism]
    conf = {"bootstrap_servers": broker.sasl_bootstrap, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password}
    topic = fresh("aiokafka")

    async def scenario():
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


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kcat_produces_and_consumes(broker, mechanism):
    user, password = USERS[mechanism]
    topic = fresh("kcat")
    security = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", f"sasl.mechanism={mechanism}",
                "-X", f"sasl.username={user}", "-X", f"sasl.password={password}"]
    subprocess.run(["kcat", "-b", broker.sasl_bootstrap, *security, "-P", "-t", topic],
                   input="one\ntwo\nthree\n", text=True, check=True, timeout=60)
    result = subprocess.run(["kcat", "-b", broker.sasl_bootstrap, *security, "-C", "-t", topic,
                             "-o", "beginning", "-c", "3", "-e"],
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["one", "two", "three"], result.stderr


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
        KafkaProducer(**conf, max_block_ms=5000)

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
