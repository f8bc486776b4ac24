"""Connection limits are enforced as Kafka 3.9.0's ConnectionQuotas enforces them.

Each case runs against pykbroker and against Kafka 3.9.0 (`../shared/realkafka`), both with two
listeners (PLAINTEXT, the inter-broker one, and EXTERNAL), limits set at run time through
IncrementalAlterConfigs (confluent-kafka's AdminClient) or AlterClientQuotas, and real sockets
asking ApiVersions to see what became of each connection: answered, closed, or held waiting
(accepted by the kernel, not taken in by the broker). Connections of a per-address case come from
their own loopback address (127.0.0.x), so that the brokers' own connections (Kafka's controller
talks to itself) do not count. Only a creation rate is timed, in a generous band.
"""

from __future__ import annotations

import socket
import struct
import time

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource

from compat.realkafka import KafkaBroker, unavailable
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.wire import WireClient
from tests.ci import skip_or_fail_in_ci

AlterQuotas = messages.request(ApiKey.ALTER_CLIENT_QUOTAS).cls
TWO_LISTENERS = {
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT",
    "inter.broker.listener.name": "PLAINTEXT",
}
SERVED, CLOSED, WAITING = "served", "closed", "waiting"


class TwoListenerKafka(KafkaBroker):
    ports_needed = 3

    def extra_settings(self, port: int) -> dict[str, str]:
        listeners = f"PLAINTEXT://127.0.0.1:{port},EXTERNAL://127.0.0.1:{port + 2}"
        return {"listeners": listeners, "advertised.listeners": listeners, **TWO_LISTENERS}


class Target:
    """One broker under test: its bootstrap (PLAINTEXT) and EXTERNAL addresses."""

    def __init__(self, bootstrap: str, external: tuple[str, int], embedded: EmbeddedBroker | None = None) -> None:
        self.embedded = embedded  # pykbroker's, for its metrics
        self.bootstrap = bootstrap
        host, port = bootstrap.rsplit(":", 1)
        self.plaintext = (host, int(port))
        self.external = external


@pytest.fixture(scope="module")
def pykbroker_target():
    settings = {"listeners": "PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0", **TWO_LISTENERS}
    with EmbeddedBroker(settings) as broker:
        external = next(listener for listener in broker.broker.listeners if listener.name == "EXTERNAL")
        yield Target(broker.bootstrap, (external.host, external.port), broker)


@pytest.fixture(scope="module")
def kafka_target(tmp_path_factory):
    reason = unavailable()
    if reason:
        skip_or_fail_in_ci(reason)
    with TwoListenerKafka(tmp_path_factory.mktemp("realkafka")) as kafka:
        yield Target(kafka.bootstrap, ("127.0.0.1", kafka.port + 2))


@pytest.fixture(params=["pykbroker", "kafka"])
def target(request) -> Target:
    return request.getfixturevalue(f"{request.param}_target")


# -- talking to the brokers ----------------------------------------------------------------
def alter_broker_configs(target: Target, configs: dict[str, str | None], broker: str = "0") -> None:
    """IncrementalAlterConfigs on broker `broker`: set, or delete None; then wait until the
    broker reports them in force (a dynamic config reaches Kafka's broker through ZooKeeper)."""
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    entries = [
        ConfigEntry(key, value or "", incremental_operation=AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET)
        for key, value in configs.items()
    ]
    resource = ConfigResource(ConfigResource.Type.BROKER, broker, incremental_configs=entries)
    next(iter(admin.incremental_alter_configs([resource]).values())).result(timeout=30)

    def in_force() -> bool:
        described = admin.describe_configs([ConfigResource(ConfigResource.Type.BROKER, broker)])
        current = next(iter(described.values())).result(timeout=30)
        dynamic = {
            name: entry.value for name, entry in current.items()
            if getattr(entry.source, "value", entry.source) == ConfigSource.DYNAMIC_BROKER_CONFIG.value
        }
        return all(dynamic.get(key) == value for key, value in configs.items())

    assert until(in_force, 30.0), configs
    del admin  # its connections close: they must not count in what follows
    time.sleep(0.5)


def alter_ip_quota(target: Target, ip: str | None, rate: float | None) -> None:
    """AlterClientQuotas: `connection_creation_rate` of an IP (None: the default IP), or removed."""
    entry = AlterQuotas.EntryData(
        entity=[AlterQuotas.EntityData(entity_type="ip", entity_name=ip)],
        ops=[AlterQuotas.OpData(key="connection_creation_rate", value=rate or 0.0, remove=rate is None)],
    )
    with WireClient(target.bootstrap) as client:
        response = client.request(ApiKey.ALTER_CLIENT_QUOTAS, 1, AlterQuotas(entries=[entry], validate_only=False))
    assert [e.error_code for e in response.entries] == [0], response
    time.sleep(1.5)  # through ZooKeeper, on Kafka


def connect(address: tuple[str, int], source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(address)
    return sock


def ask(sock: socket.socket) -> None:
    """Send ApiVersions v0 (the answer is read by `outcome`)."""
    body = struct.pack(">hhih", ApiKey.API_VERSIONS, 0, 7, 4) + b"test"
    try:
        sock.sendall(struct.pack(">i", len(body)) + body)
    except OSError:
        pass  # closed already: `outcome` says so


def outcome(sock: socket.socket, timeout: float) -> str:
    """What became of the request `ask` sent: answered, the connection closed, or still waiting."""
    sock.settimeout(timeout)
    try:
        size = sock.recv(4)
        if len(size) < 4:
            return CLOSED
        remaining = struct.unpack(">i", size)[0]
        while remaining:
            chunk = sock.recv(remaining)
            if not chunk:
                return CLOSED
            remaining -= len(chunk)
        return SERVED
    except TimeoutError:
        return WAITING
    except OSError:
        return CLOSED


def open_and_ask(address: tuple[str, int], source: str = "127.0.0.1", timeout: float = 10.0) -> tuple[socket.socket, str]:
    sock = connect(address, source)
    ask(sock)
    return sock, outcome(sock, timeout)


def closed_by_broker(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def until(condition, deadline_s: float = 15.0) -> bool:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


# -- the cases -----------------------------------------------------------------------------
def test_a_connection_over_the_per_ip_maximum_is_closed_at_once(target):
    alter_broker_configs(target, {"max.connections.per.ip.overrides": "127.0.0.2:2"})
    socks: list[socket.socket] = []
    try:
        results = []
        for _ in range(3):
            sock, result = open_and_ask(target.plaintext, "127.0.0.2")
            socks.append(sock)
            results.append(result)
        assert results == [SERVED, SERVED, CLOSED]
        socks[0].close()
        time.sleep(0.5)  # the broker sees the close
        sock, result = open_and_ask(target.external, "127.0.0.2")  # the limit is per address, any listener
        socks.append(sock)
        assert result == SERVED
        _, other_address = open_and_ask(target.plaintext, "127.0.0.5")
        assert other_address == SERVED
    finally:
        close_all(socks)
        alter_broker_configs(target, {"max.connections.per.ip.overrides": None})


def test_a_listener_at_its_maximum_takes_no_connection_until_one_closes(target):
    alter_broker_configs(target, {"listener.name.external.max.connections": "2"})
    socks: list[socket.socket] = []
    try:
        for _ in range(2):
            sock, result = open_and_ask(target.external)
            socks.append(sock)
            assert result == SERVED
        waiting = connect(target.external)  # the kernel accepts it, the broker does not take it in
        socks.append(waiting)
        ask(waiting)
        assert outcome(waiting, 2.0) == WAITING
        _, other_listener = open_and_ask(target.plaintext)
        assert other_listener == SERVED
        socks[0].close()
        assert outcome(waiting, 15.0) == SERVED
    finally:
        close_all(socks)
        alter_broker_configs(target, {"listener.name.external.max.connections": None})


def test_the_inter_broker_listener_may_exceed_max_connections_and_another_listener_makes_room(target):
    alter_broker_configs(target, {"max.connections": "4"})
    external: list[socket.socket] = []
    try:
        for _ in range(6):  # fill the broker (Kafka's controller holds one connection of its own)
            sock = connect(target.external)
            external.append(sock)
            ask(sock)
            result = outcome(sock, 5.0)
            if result == WAITING:
                break
            assert result == SERVED
        waiting = external.pop()
        assert outcome(waiting, 3.0) == WAITING and external  # not merely slow: the broker is full
        inter_broker, result = open_and_ask(target.plaintext)
        assert result == SERVED  # beyond max.connections
        assert until(lambda: sum(closed_by_broker(s) for s in external) >= 1, deadline_s=45.0)
        time.sleep(1.0)
        # Each of Kafka's network threads (num.network.threads, 3) closes its least recently used
        # connection while the broker is over its maximum, so up to three may close at once.
        closed = sum(closed_by_broker(s) for s in external)
        assert 1 <= closed <= 3
        if closed == 1:
            assert outcome(waiting, 0.1) == WAITING  # the room made is the inter-broker connection's
        inter_broker.close()
        assert outcome(waiting, 15.0) == SERVED
        external.append(waiting)
    finally:
        close_all(external)
        alter_broker_configs(target, {"max.connections": None})


def test_connections_over_the_creation_rate_are_accepted_late(target):
    """max.connection.creation.rate=2 over 11 windows of 1 s: about twenty connections at once,
    then each waits up to a window (the throttle time's cap) before the acceptor takes it in."""
    alter_broker_configs(target, {"max.connection.creation.rate": "2"})
    socks: list[socket.socket] = []
    try:
        for _ in range(24):
            sock, result = open_and_ask(target.external, timeout=15.0)
            socks.append(sock)
            assert result == SERVED
        late = connect(target.external)
        socks.append(late)
        ask(late)
        assert outcome(late, 0.2) == WAITING  # over the rate: not taken in at once
        assert outcome(late, 15.0) == SERVED  # but taken in within the throttle time
    finally:
        close_all(socks)
        alter_broker_configs(target, {"max.connection.creation.rate": None})


@pytest.mark.parametrize("entity, source", [("127.0.0.3", "127.0.0.3"), (None, "127.0.0.4")])
def test_a_connection_over_its_ips_creation_rate_is_closed_unserved(target, entity, source):
    """connection_creation_rate=1 over 11 windows of 1 s: ten connections, then the next ones
    are throttled and closed; removing the quota lifts it at once."""
    alter_ip_quota(target, entity, 1.0)
    socks: list[socket.socket] = []
    try:
        results = []
        for _ in range(12):
            sock, result = open_and_ask(target.plaintext, source, timeout=10.0)
            socks.append(sock)
            results.append(result)
        assert results == [SERVED] * 10 + [CLOSED] * 2
    finally:
        alter_ip_quota(target, entity, None)
    try:
        sock, result = open_and_ask(target.plaintext, source)
        socks.append(sock)
        assert result == SERVED
    finally:
        close_all(socks)



def test_the_connection_sensors_are_in_the_metrics_under_kafkas_names(pykbroker_target):
    alter_ip_quota(pykbroker_target, "127.0.0.6", 100.0)
    try:
        sock, result = open_and_ask(pykbroker_target.external, "127.0.0.6")
        sock.close()
        assert result == SERVED
        broker = pykbroker_target.embedded
        text = broker.call_async(broker.broker.render_metrics)
    finally:
        alter_ip_quota(pykbroker_target, "127.0.0.6", None)
    lines = text.splitlines()
    prefix = "kafka_server_socket_server_metrics_"
    for metric in ("connection_accept_rate", "connection_accept_throttle_time", "ip_connection_accept_throttle_time",
                   "connection_count", "connection_creation_rate"):
        assert any(line.startswith(f'{prefix}{metric}{{listener="EXTERNAL"}}') for line in lines), metric
    assert any(line.startswith(f'{prefix}connection_accept_rate{{ip="127.0.0.6"}}') for line in lines)
    assert any(line.startswith(f"{prefix}broker_connection_accept_rate ") for line in lines)


def test_no_connection_per_address_is_refused_at_start_unless_overrides_allow_some():
    """Kafka's KafkaConfig rule: max.connections.per.ip=0 needs max.connections.per.ip.overrides."""
    from pykbroker.config.broker import BrokerConfig, ConfigError

    with pytest.raises(ConfigError, match="can be set to zero only if max.connections.per.ip.overrides"):
        BrokerConfig({"max.connections.per.ip": "0"})
    allowed = BrokerConfig({"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "127.0.0.1:5"})
    assert allowed["max.connections.per.ip"] == 0
