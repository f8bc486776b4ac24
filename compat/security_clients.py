"""The clients of the security scenarios, each behind the same three steps, so that a scenario
(`compat/security_scenarios.py`) is written once and run with every client:

    client.produce(access, topic, values)        -> None, or the error that stopped it
    client.consume(access, topic, group, count)  -> the values read in the group (committed), or the error
    client.topics(access)                        -> the topic names Metadata lists, or the error

`access` (compat/security_setup.Access) says how to connect. An error is named as Kafka names it
(`TOPIC_AUTHORIZATION_FAILED`, `GROUP_AUTHORIZATION_FAILED`, `SASL_AUTHENTICATION_FAILED`), or
`NO_CONNECTION` when the client got no usable connection at all (a TLS handshake the broker
refused); whatever else went wrong is reported as the client reported it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from .drivers.with_aiokafka import AioKafkaDriver
from .drivers.with_confluent import ConfluentDriver
from .drivers.with_java import JavaDriver
from .drivers.with_kafka_python import KafkaPythonDriver
from .drivers.with_kcat import KcatDriver
from .java import end_serving_process
from .security_setup import Access

TOPIC_AUTHORIZATION_FAILED = "TOPIC_AUTHORIZATION_FAILED"
GROUP_AUTHORIZATION_FAILED = "GROUP_AUTHORIZATION_FAILED"
SASL_AUTHENTICATION_FAILED = "SASL_AUTHENTICATION_FAILED"
NO_CONNECTION = "NO_CONNECTION"
KNOWN_ERRORS = (TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, SASL_AUTHENTICATION_FAILED)
STEP_SECONDS = 20  # the longest one step waits: for records, for an error


class ClientError(Exception):
    """What stopped a step, by the name of the error (one of KNOWN_ERRORS, NO_CONNECTION or the
    client's own words)."""


# -- librdkafka: confluent-kafka and kcat ------------------------------------------------------

LIBRDKAFKA_ERRORS = {
    "TOPIC_AUTHORIZATION_FAILED": TOPIC_AUTHORIZATION_FAILED,
    "GROUP_AUTHORIZATION_FAILED": GROUP_AUTHORIZATION_FAILED,
    "_AUTHENTICATION": SASL_AUTHENTICATION_FAILED,
    "_SSL": NO_CONNECTION,
    "_ALL_BROKERS_DOWN": NO_CONNECTION,
    "_TRANSPORT": NO_CONNECTION,
}
# what kcat prints of librdkafka's errors, searched in this order
LIBRDKAFKA_TEXTS = (
    (re.compile(r"Topic authorization failed"), TOPIC_AUTHORIZATION_FAILED),
    (re.compile(r"Group authorization failed"), GROUP_AUTHORIZATION_FAILED),
    (re.compile(r"SASL authentication error|Local: Authentication failure"), SASL_AUTHENTICATION_FAILED),
    (re.compile(r"SSL handshake failed|SSL routines|Local: SSL error"), NO_CONNECTION),
)


def librdkafka_settings(access: Access) -> dict[str, str]:
    settings = {"bootstrap.servers": access.bootstrap, "security.protocol": access.protocol}
    if access.mechanism:
        settings.update(
            {"sasl.mechanism": access.mechanism, "sasl.username": access.user, "sasl.password": access.password}
        )
    if access.ca:
        settings["ssl.ca.location"] = str(access.ca)
    if access.cert:
        settings.update({"ssl.certificate.location": str(access.cert), "ssl.key.location": str(access.key)})
    return settings


def librdkafka_error(error) -> ClientError:
    """A KafkaError as a ClientError; SASL's failures only on SASL listeners (a refused TLS
    handshake is NO_CONNECTION)."""
    name = LIBRDKAFKA_ERRORS.get(error.name(), f"{error.name()}: {error.str()}")
    return ClientError(name)


class ConfluentClient:
    driver = ConfluentDriver

    def __init__(self) -> None:
        self.errors: list = []

    def _settings(self, access: Access, errors: list, **extra) -> dict:
        # connection-level errors (authentication, TLS) reach error_cb; only those stop a step
        def on_error(error):
            if error.name() in ("_AUTHENTICATION", "_SSL", "_ALL_BROKERS_DOWN"):
                errors.append(error)

        return {**librdkafka_settings(access), "error_cb": on_error, "log_level": 0, **extra}

    def produce(self, access: Access, topic: str, values: list[bytes]) -> None:
        from confluent_kafka import Producer

        errors: list = []
        producer = Producer(self._settings(access, errors, acks="all", **{"message.timeout.ms": STEP_SECONDS * 1000}))
        reports: list = []
        for value in values:
            producer.produce(topic, value=value, on_delivery=lambda error, _: reports.append(error))
        deadline = time.monotonic() + STEP_SECONDS
        while len(reports) < len(values) and not errors and time.monotonic() < deadline:
            producer.flush(0.2)
        failed = errors + [error for error in reports if error is not None]
        if failed:
            raise librdkafka_error(failed[0])
        if len(reports) < len(values):
            raise ClientError("records left undelivered")

    def consume(self, access: Access, topic: str, group: str, count: int) -> list[bytes]:
        from confluent_kafka import Consumer

        errors: list = []
        consumer = Consumer(
            self._settings(
                access, errors, **{"group.id": group, "enable.auto.commit": False, "auto.offset.reset": "earliest"}
            )
        )
        try:
            consumer.subscribe([topic])
            got: list[bytes] = []
            deadline = time.monotonic() + STEP_SECONDS
            while len(got) < count and not errors and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is None:
                    continue
                if message.error():
                    raise librdkafka_error(message.error())
                got.append(message.value())
            if errors:
                raise librdkafka_error(errors[0])
            consumer.commit(asynchronous=False)
            return got
        finally:
            consumer.close()

    def topics(self, access: Access) -> set[str]:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        errors: list = []
        admin = AdminClient(self._settings(access, errors))
        deadline = time.monotonic() + STEP_SECONDS
        while not errors and time.monotonic() < deadline:
            try:
                return set(admin.list_topics(timeout=1).topics)
            except KafkaException:
                admin.poll(0)  # serves error_cb
        raise librdkafka_error(errors[0]) if errors else ClientError("no metadata")


class KcatClient:
    driver = KcatDriver

    @staticmethod
    def kcat(access: Access, *args: str, stdin: bytes | None = None) -> str:
        settings = [
            a
            for key, value in librdkafka_settings(access).items()
            if key != "bootstrap.servers"
            for a in ("-X", f"{key}={value}")
        ]
        try:
            result = subprocess.run(
                ["kcat", "-b", access.bootstrap, *settings, *args],
                input=stdin,
                capture_output=True,
                timeout=STEP_SECONDS,
            )
        except subprocess.TimeoutExpired as stopped:
            result = subprocess.CompletedProcess(stopped.cmd, -1, stopped.output or b"", stopped.stderr or b"")
        errors = result.stderr.decode(errors="replace")
        for pattern, name in LIBRDKAFKA_TEXTS:
            if pattern.search(errors):
                raise ClientError(name)
        if result.returncode != 0:
            raise ClientError(f"kcat exited {result.returncode}: {errors.strip()[-300:]}")
        return result.stdout.decode()

    def produce(self, access: Access, topic: str, values: list[bytes]) -> None:
        self.kcat(
            access,
            "-P",
            "-t",
            topic,
            "-X",
            "acks=all",
            "-X",
            f"message.timeout.ms={STEP_SECONDS * 800}",
            stdin=b"".join(value + b"\n" for value in values),
        )

    def consume(self, access: Access, topic: str, group: str, count: int) -> list[bytes]:
        """A group member (-G) that reads to the end of the partitions and commits as it leaves."""
        output = self.kcat(access, "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-J", "-q", topic)
        return [json.loads(line)["payload"].encode() for line in output.splitlines() if line.strip()]

    def topics(self, access: Access) -> set[str]:
        return {topic["topic"] for topic in json.loads(self.kcat(access, "-L", "-J"))["topics"]}


# -- kafka-python and aiokafka -----------------------------------------------------------------


def python_error(failure: Exception, logged: list[str]) -> ClientError:
    """kafka-python's and aiokafka's errors: a broker error by its Kafka name; a bootstrap that
    failed as SASL_AUTHENTICATION_FAILED when the broker refused the login (which these clients
    report in their log only: `logged`, the lines about this broker), else as NO_CONNECTION."""
    name = getattr(failure, "message", None)
    if isinstance(name, str) and name in KNOWN_ERRORS:
        return ClientError(name)
    text = f"{type(failure).__name__}: {failure}"
    if type(failure).__name__ in ("NoBrokersAvailable", "KafkaConnectionError", "KafkaTimeoutError"):
        refused_login = any("SaslAuthenticationFailed" in line for line in logged)
        return ClientError(SASL_AUTHENTICATION_FAILED if refused_login else NO_CONNECTION)
    return ClientError(text)


@contextlib.contextmanager
def named_errors(logger: str, thread_name: str):
    """Runs a step of a Python client whose log is `logger`, its failure named by python_error
    from what the client's thread `thread_name` logged meanwhile (other instances of the client
    may log meanwhile, in other threads, about other brokers)."""
    logged: list[str] = []

    def keep(record: logging.LogRecord) -> None:
        if record.threadName == thread_name:
            logged.append(record.getMessage())

    handler = logging.Handler(logging.WARNING)
    handler.emit = keep  # type: ignore[method-assign]
    logging.getLogger(logger).addHandler(handler)
    try:
        yield logged
    except ClientError:
        raise
    except Exception as failure:  # noqa: BLE001 - named for the scenario
        raise python_error(failure, logged) from failure
    finally:
        logging.getLogger(logger).removeHandler(handler)


def kafka_python_settings(access: Access, client_id: str) -> dict:
    from kafka import KafkaConsumer

    settings = {"bootstrap_servers": access.bootstrap, "security_protocol": access.protocol, "client_id": client_id}
    if "bootstrap_timeout_ms" in KafkaConsumer.DEFAULT_CONFIG:  # kafka-python 3: a failed login fails sooner
        settings["bootstrap_timeout_ms"] = STEP_SECONDS * 500
    if access.mechanism:
        settings.update(
            {
                "sasl_mechanism": access.mechanism,
                "sasl_plain_username": access.user,
                "sasl_plain_password": access.password,
            }
        )
    if access.ca:
        settings["ssl_cafile"] = str(access.ca)
    if access.cert:
        settings.update({"ssl_certfile": str(access.cert), "ssl_keyfile": str(access.key)})
    return settings


def kafka_python_poll_ms(deadline: float) -> int:
    """How long one poll() of kafka-python may wait: all the time left. kafka-python 3.0 drops the
    assignment of a rebalance that completes after poll() has returned (the member then holds no
    partitions until the next rebalance), so a poll must outlast the rebalances a subscription
    starts; it returns as soon as records arrive."""
    return max(1, int((deadline - time.monotonic()) * 1000))


class KafkaPythonClient:
    """Each step with a client id of its own, which names the client's I/O thread (and so its
    log lines). A refused login surfaces only when kafka-python's I/O loop reads the broker's
    SaslAuthenticate answer before it notices the close that follows it at once; a busy loop
    notices the close first ("socket disconnected", against Kafka and pykbroker alike), and the
    bootstrap ends as NO_CONNECTION."""

    driver = KafkaPythonDriver
    refused_login_errors = (SASL_AUTHENTICATION_FAILED, NO_CONNECTION)

    @staticmethod
    def step_id() -> str:
        return f"compat-security-{uuid.uuid4().hex[:8]}"

    def produce(self, access: Access, topic: str, values: list[bytes]) -> None:
        from kafka import KafkaProducer

        client_id = self.step_id()
        with named_errors("kafka", f"kafka-io-{client_id}"):
            producer = KafkaProducer(
                acks="all", max_block_ms=STEP_SECONDS * 1000, **kafka_python_settings(access, client_id)
            )
            try:
                for future in [producer.send(topic, value) for value in values]:
                    future.get(timeout=STEP_SECONDS)
            finally:
                producer.close(timeout=5)

    def consume(self, access: Access, topic: str, group: str, count: int) -> list[bytes]:
        from kafka import KafkaConsumer

        client_id = self.step_id()
        with named_errors("kafka", f"kafka-io-{client_id}") as logged:
            consumer = KafkaConsumer(
                topic,
                group_id=group,
                auto_offset_reset="earliest",
                enable_auto_commit=False,
                **kafka_python_settings(access, client_id),
            )
            try:
                got: list[bytes] = []
                deadline = time.monotonic() + STEP_SECONDS
                while len(got) < count and time.monotonic() < deadline:
                    for records in consumer.poll(timeout_ms=kafka_python_poll_ms(deadline)).values():
                        got += [record.value for record in records]
                if len(got) < count:  # what the client said meanwhile tells why
                    raise ClientError(f"read {len(got)} of {count} records; the client logged: {logged[-3:]}")
                consumer.commit()
                return got
            finally:
                consumer.close()

    def topics(self, access: Access) -> set[str]:
        from kafka import KafkaConsumer

        client_id = self.step_id()
        with named_errors("kafka", f"kafka-io-{client_id}"):
            consumer = KafkaConsumer(**kafka_python_settings(access, client_id))
            try:
                return set(consumer.topics())
            finally:
                consumer.close()


def aiokafka_settings(access: Access) -> dict:
    settings = {
        "bootstrap_servers": access.bootstrap,
        "security_protocol": access.protocol,
        "request_timeout_ms": STEP_SECONDS * 1000,
    }
    if access.mechanism:
        settings.update(
            {
                "sasl_mechanism": access.mechanism,
                "sasl_plain_username": access.user,
                "sasl_plain_password": access.password,
            }
        )
    if access.ca:
        from aiokafka.helpers import create_ssl_context

        settings["ssl_context"] = create_ssl_context(
            cafile=str(access.ca), certfile=access.cert and str(access.cert), keyfile=access.key and str(access.key)
        )
    return settings


class AioKafkaClient:
    driver = AioKafkaDriver

    @staticmethod
    def run(coroutine):
        """Runs a step in this thread (whose log lines are the step's)."""
        with named_errors("aiokafka", threading.current_thread().name):
            return asyncio.run(asyncio.wait_for(coroutine, STEP_SECONDS * 2))

    def produce(self, access: Access, topic: str, values: list[bytes]) -> None:
        from aiokafka import AIOKafkaProducer

        async def produce():
            producer = AIOKafkaProducer(acks="all", **aiokafka_settings(access))
            await producer.start()
            try:
                for value in values:
                    await producer.send_and_wait(topic, value)
            finally:
                await producer.stop()

        self.run(produce())

    def consume(self, access: Access, topic: str, group: str, count: int) -> list[bytes]:
        from aiokafka import AIOKafkaConsumer

        async def consume():
            consumer = AIOKafkaConsumer(
                topic,
                group_id=group,
                auto_offset_reset="earliest",
                enable_auto_commit=False,
                **aiokafka_settings(access),
            )
            await consumer.start()
            try:
                got: list[bytes] = []
                deadline = time.monotonic() + STEP_SECONDS
                while len(got) < count and time.monotonic() < deadline:
                    for records in (await consumer.getmany(timeout_ms=200)).values():
                        got += [record.value for record in records]
                await consumer.commit()
                return got
            finally:
                await consumer.stop()

        return self.run(consume())

    def topics(self, access: Access) -> set[str]:
        from aiokafka import AIOKafkaConsumer

        async def topics():
            consumer = AIOKafkaConsumer(**aiokafka_settings(access))
            await consumer.start()
            try:
                return set(await consumer.topics())
            finally:
                await consumer.stop()

        return self.run(topics())


# -- Java kafka-clients ------------------------------------------------------------------------

JAVA_ERRORS = {
    "TopicAuthorizationException": TOPIC_AUTHORIZATION_FAILED,
    "GroupAuthorizationException": GROUP_AUTHORIZATION_FAILED,
    "SaslAuthenticationException": SASL_AUTHENTICATION_FAILED,
    "SslAuthenticationException": NO_CONNECTION,
}


def java_properties(access: Access) -> list[str]:
    lines = [f"bootstrap.servers={access.bootstrap}", f"security.protocol={access.protocol}"]
    if access.mechanism:
        module = "plain.PlainLoginModule" if access.mechanism == "PLAIN" else "scram.ScramLoginModule"
        lines += [
            f"sasl.mechanism={access.mechanism}",
            f"sasl.jaas.config=org.apache.kafka.common.security.{module} required "
            f'username="{access.user}" password="{access.password}";',
        ]
    if access.ca:
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={access.ca}"]
    if access.keystore:
        lines += ["ssl.keystore.type=PEM", f"ssl.keystore.location={access.keystore}"]
    return lines


class JavaClient:
    """`compat/java/SecurityActions.java` in one JVM per client object: it reads one step a line
    on stdin and answers one line (`OK [values]` or `ERROR <exception class> <message>`)."""

    driver = JavaDriver
    _SOURCE = Path(__file__).resolve().parent / "java" / "SecurityActions.java"

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()
        self.counter = 0
        self.directory: Path | None = None

    def _start(self) -> subprocess.Popen:
        from . import java

        self.directory = Path(tempfile.mkdtemp(prefix="compat-java-security-"))
        classes = java.compile_sources([self._SOURCE], self.directory / "classes")
        cp = ":".join(map(str, [classes, *java.class_path()]))
        return subprocess.Popen(
            [java.tool("java"), *java.JVM_OPTIONS, "-cp", cp, "SecurityActions"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def step(self, access: Access, *args: str) -> str:
        with self.lock:
            if self.process is None:
                self.process = self._start()
            assert self.directory is not None and self.process.stdin and self.process.stdout
            self.counter += 1
            properties = self.directory / f"client-{self.counter}.properties"
            properties.write_text("\n".join(java_properties(access)) + "\n")
            self.process.stdin.write(" ".join([str(properties), *args]) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline().strip()
        if answer.startswith("OK"):
            return answer[3:]
        match = re.match(r"ERROR (\S+) ?(.*)", answer)
        if not match:
            raise ClientError(f"the Java client answered {answer!r}")
        simple = match[1].rsplit(".", 1)[-1]
        raise ClientError(JAVA_ERRORS.get(simple, f"{simple}: {match[2]}"))

    def produce(self, access: Access, topic: str, values: list[bytes]) -> None:
        self.step(access, "produce", topic, *(v.decode() for v in values))

    def consume(self, access: Access, topic: str, group: str, count: int) -> list[bytes]:
        answer = self.step(access, "consume", topic, group, str(count))
        return [value.encode() for value in answer.split()]

    def topics(self, access: Access) -> set[str]:
        return set(self.step(access, "topics").split())

    def close(self) -> None:
        if self.process is not None:
            end_serving_process(self.process)
            self.process = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


SECURITY_CLIENTS = {
    "kafka-python": KafkaPythonClient,
    "confluent-kafka": ConfluentClient,
    "aiokafka": AioKafkaClient,
    "kcat": KcatClient,
    "java": JavaClient,
}
