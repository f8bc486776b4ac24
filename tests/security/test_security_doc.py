"""docs/security.md's setup "from nothing to a SASL_SSL broker", run as written, block by block, in
an empty directory: the openssl commands, the broker's properties file (started on a free port
instead of 9093), users, topic and ACLs with confluent-kafka's AdminClient, then each client
(kcat, confluent-kafka, Java kafka-clients with the properties block, kafka-python, aiokafka).
Spark's block is left out here (a Spark JVM takes long to start); its options are those of
test_spark_kafka.py's SASL_SSL test. Then what the text says of bob and of a wrong password."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from compat import java
from pykbroker.testkit.process import BrokerProcess

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
TLS_CLIENT = Path(__file__).resolve().parents[1] / "java" / "TlsClient.java"
DOC_ADDRESS = "127.0.0.1:9093"
TIMEOUT_EXCEPTION = "org.apache.kafka.common.errors.TimeoutException"


def section_blocks() -> list[tuple[str, str]]:
    text = DOC.read_text()
    section = text[text.index("## From nothing to a SASL_SSL broker"):text.index("\n## TLS\n")]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.S)


BLOCKS = section_blocks()


def run(directory: Path, command: list[str], text: str | None = None) -> str:
    result = subprocess.run(command, cwd=directory, input=text, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{command[:2]}\n{text}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Steps 1 and 2: the PKI and the broker, from the doc's blocks; the client blocks with the
    broker's address."""
    directory = tmp_path_factory.mktemp("doc-setup")
    (_, pki), (_, broker) = BLOCKS[:2]
    run(directory, ["bash", "-e"], pki)
    assert broker.rstrip().endswith("pykbroker secure.properties")
    run(directory, ["bash", "-e"], broker.rstrip().removesuffix("pykbroker secure.properties"))
    command = [sys.executable, "-m", "pykbroker", "secure.properties"]
    with BrokerProcess(directory, {"listeners": "SASL_SSL://127.0.0.1:0"}, command=command) as running:
        address = running.bootstrap
        clients = [(kind, text.replace(DOC_ADDRESS, address)) for kind, text in BLOCKS[2:]]
        yield directory, address, clients


def blocks_of(setup, kind: str, marker: str) -> str:
    _, _, clients = setup
    [block] = [text for k, text in clients if k == kind and marker in text]
    return block


@pytest.fixture(scope="module")
def admin_done(setup):
    """Step 3: users, the topic and the ACLs."""
    directory, _, _ = setup
    run(directory, [sys.executable, "-"], blocks_of(setup, "python", "alter_user_scram_credentials"))
    return setup


@pytest.mark.parametrize("kind, marker, expected", [
    ("sh", "kcat", "hello from kcat"),
    ("python", "from confluent_kafka import Consumer", "b'hello from"),
    ("python", "from kafka import", "b'hello from kafka-python'"),
    ("python", "from aiokafka import", "b'hello from aiokafka'"),
], ids=["kcat", "confluent-kafka", "kafka-python", "aiokafka"])
def test_a_client_block_produces_and_consumes_as_alice(admin_done, kind, marker, expected):
    directory, _, _ = admin_done
    command = ["bash", "-e"] if kind == "sh" else [sys.executable, "-"]
    assert expected in run(directory, command, blocks_of(admin_done, kind, marker))


def test_the_java_properties_block_produces_and_consumes_as_alice(admin_done, tmp_path):
    directory, address, _ = admin_done
    (directory / "alice.properties").write_text(blocks_of(admin_done, "properties", "sasl.jaas.config"))
    classes = java.compile_sources([TLS_CLIENT], tmp_path / "classes")
    result = java.run_main(classes, "TlsClient", address, "orders", "alice.properties", cwd=directory)
    assert result.returncode == 0 and "PASS tls" in result.stdout, result.stdout + result.stderr[-3000:]


def test_bob_and_a_wrong_password_fail_as_the_doc_says(admin_done):
    from confluent_kafka import Consumer, KafkaError, Producer

    directory, address, _ = admin_done
    base = {"bootstrap.servers": address, "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(directory / "pki" / "ca.pem"), "sasl.mechanism": "SCRAM-SHA-512"}
    bob = {**base, "sasl.username": "bob", "sasl.password": "bob-secret"}
    outcome = []
    producer = Producer({**bob, "message.timeout.ms": 8000})
    producer.produce("orders", b"x", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(15)
    assert outcome[0] is not None and outcome[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    consumer = Consumer({**bob, "group.id": "bobs-group", "auto.offset.reset": "earliest"})
    consumer.subscribe(["orders"])
    error = None
    for _ in range(40):
        message = consumer.poll(0.5)
        if message is not None and message.error():
            error = message.error()
            break
    consumer.close()
    assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    errors = []
    producer = Producer({**base, "sasl.username": "alice", "sasl.password": "wrong", "error_cb": errors.append})
    for _ in range(40):
        producer.poll(0.2)
        if errors:
            break
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION


def test_bob_reads_a_partition_with_the_console_consumer_as_the_doc_says(admin_done):
    """bob may use no group: `--partition` without `--group` prints partition 0's records, the
    timeout's line and the count, exit status 0."""
    directory, _, _ = admin_done
    block = blocks_of(admin_done, "sh", "bob.properties")
    block = block.replace("pykbroker console-consumer", f"{sys.executable} -m pykbroker console-consumer")
    result = subprocess.run(["bash", "-e"], cwd=directory, input=block, capture_output=True, text=True, timeout=120)
    records = len(result.stdout.splitlines())
    timeout = "ERROR Error processing message, terminating consumer process:  " + TIMEOUT_EXCEPTION
    assert (result.returncode, result.stderr) == (0, f"{timeout}\nProcessed a total of {records} messages\n")
