"""SSL listeners with real clients: librdkafka (confluent-kafka, kcat), kafka-python, aiokafka and
Java kafka-clients 3.9.1 produce and consume over TLS, with and without client certificates;
the principal is the certificate's DN after `ssl.principal.mapping.rules` (seen in the broker's
DEBUG line for each TLS connection); a client that does not trust the broker's CA, or has no
certificate where one is required, does not get in, and the broker keeps serving the others.

One broker with three listeners: PLAINTEXT, SSL (`ssl.client.auth=requested`) and MTLS, an SSL
listener whose `listener.name.mtls.ssl.*` overrides require a client certificate and map
`CN=<name>,OU=eng,...` to `<name>` in lower case.
"""
from __future__ import annotations

import asyncio
import subprocess

import pytest

from compat import java
from pykbroker.testkit.process import BrokerProcess

from .certs import Pki
from .tls_support import DEBUG_COMMAND, listener_ports, principals, ssl_overrides, wait_for_log

MAPPING = "RULE:^CN=(.*?),OU=eng(,.*)?$/$1/L,DEFAULT"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.broker = pki.issue("broker", "CN=broker,OU=test,O=pykbroker")
    pki.alice = pki.issue("alice", "CN=Alice,OU=eng,O=example", hosts=())
    pki.bob = pki.issue("bob", "CN=bob,OU=ops,O=example", hosts=())
    return pki


@pytest.fixture(scope="module")
def broker(pki, tmp_path_factory):
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
        "group.initial.rebalance.delay.ms": "0",
        "connections.max.idle.ms": "3000",  # bounds a TLS handshake that never ends
        **ssl_overrides(pki, pki.broker, "requested"),
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.principal.mapping.rules": MAPPING,
    }
    with BrokerProcess(tmp_path_factory.mktemp("tls-broker"), overrides, command=DEBUG_COMMAND) as running:
        running.ports = listener_ports(running)
        yield running


def address(broker, listener: str) -> str:
    return f"127.0.0.1:{broker.ports[listener]}"


def kafka_python_roundtrip(broker, listener: str, topic: str, **ssl) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer

    options = dict(bootstrap_servers=address(broker, listener), security_protocol="SSL", **ssl)
    producer = KafkaProducer(**options)
    for i in range(3):
        producer.send(topic, f"v{i}".encode()).get(15)
    producer.close()
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=8000,
                             group_id=f"{topic}-g", **options)
    values = [message.value for message in consumer]
    consumer.close()
    return values


def test_kafka_python_with_a_client_certificate_is_the_certificates_dn(broker, pki):
    before = len(principals(broker, "SSL"))
    values = kafka_python_roundtrip(broker, "SSL", "tls-kafka-python", ssl_cafile=str(pki.ca_pem),
                                    ssl_certfile=str(pki.alice.cert_pem), ssl_keyfile=str(pki.alice.key_pem))
    assert values == [b"v0", b"v1", b"v2"]
    seen = principals(broker, "SSL")[before:]
    assert seen and set(seen) == {"User:CN=Alice,OU=eng,O=example"}


def test_kafka_python_on_the_mtls_listener_gets_the_mapped_name(broker, pki):
    before = len(principals(broker, "MTLS"))
    values = kafka_python_roundtrip(broker, "MTLS", "tls-mapped", ssl_cafile=str(pki.ca_pem),
                                    ssl_certfile=str(pki.alice.cert_pem), ssl_keyfile=str(pki.alice.key_pem))
    assert values == [b"v0", b"v1", b"v2"]
    assert set(principals(broker, "MTLS")[before:]) == {"User:alice"}
    # bob's OU is not eng: DEFAULT, the whole DN
    before = len(principals(broker, "MTLS"))
    kafka_python_roundtrip(broker, "MTLS", "tls-mapped-bob", ssl_cafile=str(pki.ca_pem),
                           ssl_certfile=str(pki.bob.cert_pem), ssl_keyfile=str(pki.bob.key_pem))
    assert set(principals(broker, "MTLS")[before:]) == {"User:CN=bob,OU=ops,O=example"}


def test_confluent_kafka_without_a_certificate_is_anonymous(broker, pki):
    from confluent_kafka import Consumer, Producer

    before = len(principals(broker, "SSL"))
    config = {"bootstrap.servers": address(broker, "SSL"), "security.protocol": "SSL",
              "ssl.ca.location": str(pki.ca_pem)}
    producer = Producer(config)
    for i in range(3):
        producer.produce("tls-librdkafka", f"v{i}".encode())
    assert producer.flush(15) == 0
    consumer = Consumer({**config, "group.id": "tls-librdkafka-g", "auto.offset.reset": "earliest"})
    consumer.subscribe(["tls-librdkafka"])
    values = []
    for _ in range(60):
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
        if len(values) == 3:
            break
    consumer.close()
    assert values == [b"v0", b"v1", b"v2"]
    assert set(principals(broker, "SSL")[before:]) == {"User:ANONYMOUS"}


def read_values(consumer, count: int, *, batch: int, wait_s: float, attempts: int) -> list[bytes]:
    """The values a confluent-kafka consumer reads, until it has `count` or `attempts` polls of
    up to `batch` records, `wait_s` each, have passed."""
    read: list[bytes] = []
    for _ in range(attempts):
        read += [m.value() for m in consumer.consume(batch, wait_s) if m.error() is None]
        if len(read) >= count:
            break
    return read


def test_many_clients_at_once_each_read_back_exactly_what_they_wrote(broker, pki):
    """Eight producers and consumers over TLS at the same time, with records from a few bytes to
    past a TLS record's 16 KiB: the connections' reads and writes interleave on the broker's
    loop, and each client reads back exactly its own records, in order."""
    from concurrent.futures import ThreadPoolExecutor

    from confluent_kafka import Consumer, Producer, TopicPartition

    config = {"bootstrap.servers": address(broker, "SSL"), "security.protocol": "SSL",
              "ssl.ca.location": str(pki.ca_pem)}

    def roundtrip(client: int) -> bool:
        topic = f"tls-many-{client}"
        values = [bytes([client]) * (1 + (i * 7919) % 40_000) + b"%d" % i for i in range(300)]
        producer = Producer({**config, "linger.ms": 2})
        for value in values:
            producer.produce(topic, value, partition=0)
            producer.poll(0)
        assert producer.flush(30) == 0
        consumer = Consumer({**config, "group.id": f"{topic}-g", "max.partition.fetch.bytes": 65536})
        consumer.assign([TopicPartition(topic, 0, 0)])
        read = read_values(consumer, len(values), batch=100, wait_s=0.25, attempts=240)
        consumer.close()
        return read == values

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(roundtrip, range(8))) == [True] * 8


def test_a_request_of_several_mib_arrives_whole(broker, pki):
    """A produce request past 2 MiB (the size up to which a frame gets its whole buffer at once,
    beyond which it grows as its TLS records are decrypted) is stored byte for byte."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    config = {"bootstrap.servers": address(broker, "SSL"), "security.protocol": "SSL",
              "ssl.ca.location": str(pki.ca_pem)}
    topic = "tls-large-request"
    admin = AdminClient(config)
    admin.create_topics([NewTopic(topic, 1, config={"max.message.bytes": str(8 << 20)})])[topic].result(30)
    values = [bytes([i]) * (3 << 20) + bytes(range(256)) * 7 for i in range(1, 3)]
    producer = Producer({**config, "message.max.bytes": 8 << 20, "linger.ms": 50})
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(30) == 0
    consumer = Consumer({**config, "group.id": f"{topic}-g", "fetch.max.bytes": 16 << 20,
                         "max.partition.fetch.bytes": 8 << 20, "receive.message.max.bytes": 20 << 20})
    consumer.assign([TopicPartition(topic, 0, 0)])
    read = read_values(consumer, len(values), batch=10, wait_s=0.5, attempts=60)
    consumer.close()
    assert read == values


def test_confluent_kafka_with_a_certificate_on_the_mtls_listener(broker, pki):
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": address(broker, "MTLS"), "security.protocol": "SSL",
                         "ssl.ca.location": str(pki.ca_pem), "ssl.certificate.location": str(pki.alice.cert_pem),
                         "ssl.key.location": str(pki.alice.key_pem)})
    producer.produce("tls-librdkafka-mtls", b"x")
    assert producer.flush(15) == 0


def test_aiokafka(broker, pki):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.helpers import create_ssl_context

    async def roundtrip():
        context = create_ssl_context(cafile=str(pki.ca_pem), certfile=str(pki.alice.cert_pem),
                                     keyfile=str(pki.alice.key_pem))
        options = dict(bootstrap_servers=address(broker, "MTLS"), security_protocol="SSL", ssl_context=context)
        producer = AIOKafkaProducer(**options)
        await producer.start()
        try:
            for i in range(3):
                await producer.send_and_wait("tls-aiokafka", f"v{i}".encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer("tls-aiokafka", group_id="tls-aiokafka-g", auto_offset_reset="earliest",
                                    **options)
        await consumer.start()
        try:
            values = []
            while len(values) < 3:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 20)
                values += [m.value for messages in batch.values() for m in messages]
            return values
        finally:
            await consumer.stop()

    assert asyncio.run(roundtrip()) == [b"v0", b"v1", b"v2"]


def test_kcat(broker, pki):
    tls = ["-X", "security.protocol=ssl", "-X", f"ssl.ca.location={pki.ca_pem}",
           "-X", f"ssl.certificate.location={pki.alice.cert_pem}", "-X", f"ssl.key.location={pki.alice.key_pem}"]
    base = ["kcat", "-b", address(broker, "MTLS"), *tls, "-t", "tls-kcat"]
    produced = subprocess.run([*base, "-P"], input="one\ntwo\nthree\n", text=True, capture_output=True, timeout=60)
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run([*base, "-C", "-o", "beginning", "-e", "-q"], text=True, capture_output=True,
                              timeout=60)
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.split() == ["one", "two", "three"]


@pytest.mark.parametrize("listener, with_certificate", [("SSL", False), ("MTLS", True)])
def test_java_kafka_clients(broker, pki, tmp_path, listener, with_certificate):
    classes = java.compile_sources([java_source()], tmp_path / "classes")
    properties = ["security.protocol=SSL", "ssl.truststore.type=PEM", f"ssl.truststore.location={pki.ca_pem}"]
    if with_certificate:
        store = tmp_path / "alice-store.pem"
        store.write_bytes(pki.alice.chain_pem.read_bytes() + pki.alice.key_pem.read_bytes())
        properties += ["ssl.keystore.type=PEM", f"ssl.keystore.location={store}"]
    (tmp_path / "client.properties").write_text("\n".join(properties) + "\n")
    before = len(principals(broker, listener))
    topic = f"tls-java-{listener.lower()}"
    result = java.run_main(classes, "TlsClient", address(broker, listener), topic, str(tmp_path / "client.properties"))
    assert result.returncode == 0 and "PASS tls" in result.stdout, result.stdout + result.stderr[-3000:]
    expected = "User:alice" if with_certificate else "User:ANONYMOUS"
    assert set(principals(broker, listener)[before:]) == {expected}


def java_source():
    from pathlib import Path

    return Path(__file__).resolve().parents[1] / "java" / "TlsClient.java"


# -- who does not get in --------------------------------------------------------------------------


def test_a_client_that_does_not_trust_the_brokers_ca_fails_and_others_go_on(broker, pki, tmp_path):
    from confluent_kafka.admin import AdminClient

    other = Pki(tmp_path / "other-ca", "CN=other-ca")
    admin = AdminClient({"bootstrap.servers": address(broker, "SSL"), "security.protocol": "SSL",
                         "ssl.ca.location": str(other.ca_pem)})
    with pytest.raises(Exception):
        admin.list_topics(timeout=3)
    wait_for_log(broker, "Failed authentication with 127.0.0.1 on listener SSL")
    assert kafka_python_roundtrip(broker, "SSL", "tls-after-wrong-ca", ssl_cafile=str(pki.ca_pem))


def test_no_certificate_on_a_required_listener_closes_the_connection(broker, pki):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": address(broker, "MTLS"), "security.protocol": "SSL",
                         "ssl.ca.location": str(pki.ca_pem)})
    with pytest.raises(Exception):
        admin.list_topics(timeout=3)
    line = wait_for_log(broker, "on listener MTLS (SSL handshake failed")
    assert "CERTIFICATE" in line.upper()
