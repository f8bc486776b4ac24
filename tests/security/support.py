"""An in-process broker for the authorization wire tests, whose connections log in for real:
a PLAINTEXT listener (`User:ANONYMOUS`) and a SASL_PLAINTEXT one where the users of `USERS`
authenticate with PLAIN, so that a request runs as `User:<name>` as in production.

    with PrincipalBroker(tmp_path, {"super.users": "User:admin"}) as broker:
        admin = WireAs(broker, "admin")        # logged in as User:admin (SaslHandshake, SaslAuthenticate)
        anonymous = WireAs(broker)             # on the PLAINTEXT listener
"""
from __future__ import annotations

import threading
from pathlib import Path

import anyio

from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient

from .sasl_support import jaas_plain

AUTHORIZER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}
USERS = {user: f"{user}-secret" for user in ("admin", "alice", "bob", "carol", "dave", "erin")}


class PrincipalBroker:
    """A broker on free loopback ports in a thread of this process: PLAINTEXT and SASL_PLAINTEXT
    (PLAIN, the users of `USERS`)."""

    def __init__(self, directory: Path, overrides: dict[str, str] | None = None) -> None:
        settings = {
            "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas_plain(USERS),
            "log.dirs": str(Path(directory) / "kafka-logs"),
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "group.initial.rebalance.delay.ms": "0",
            **(overrides or {}),
        }
        self.broker = Broker(BrokerConfig(settings))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def bootstrap_of(self, listener: str) -> str:
        [port] = [bound.port for bound in self.broker.listeners if bound.name == listener]
        return f"127.0.0.1:{port}"

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_of("PLAINTEXT")

    def start(self) -> PrincipalBroker:
        self.broker.open()
        started = threading.Event()

        async def main() -> None:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._run_broker)
                while not self.broker.started:
                    await anyio.sleep(0.01)
                started.set()
                await anyio.to_thread.run_sync(self._stop.wait)
                self.broker.shutdown()

        def run() -> None:
            try:
                anyio.run(main)
            except BaseException as exc:  # noqa: BLE001 - reported by start()/stop()
                self._failure = exc
                started.set()

        self._thread = threading.Thread(target=run, name="principal-broker", daemon=True)
        self._thread.start()
        started.wait(30)
        if self._failure is not None:
            raise self._failure
        return self

    async def _run_broker(self) -> None:
        await self.broker.run(handle_signals=False)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def __enter__(self) -> PrincipalBroker:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class WireAs(WireClient):
    """A raw wire client logged in as `User:<user>` with SASL PLAIN (SaslHandshake v1,
    SaslAuthenticate v2) on a PrincipalBroker's SASL listener; without a user, on its PLAINTEXT
    listener as `User:ANONYMOUS`."""

    def __init__(self, broker: PrincipalBroker, user: str | None = None, timeout: float = 10.0) -> None:
        super().__init__(broker.bootstrap_of("SASL_PLAINTEXT" if user else "PLAINTEXT"), timeout)
        if user:
            log_in_plain(self, user, USERS[user])


def log_in_plain(client: WireClient, user: str, password: str) -> None:
    """SASL PLAIN on a raw connection: SaslHandshake v1, then SaslAuthenticate v2."""
    handshake = client.request(ApiKey.SASL_HANDSHAKE, 1, request_of(ApiKey.SASL_HANDSHAKE, mechanism="PLAIN"))
    assert handshake.error_code == 0, handshake
    token = f"\0{user}\0{password}".encode()
    answer = client.request(ApiKey.SASL_AUTHENTICATE, 2, request_of(ApiKey.SASL_AUTHENTICATE, auth_bytes=token))
    assert answer.error_code == 0, answer


def request_of(api_key: int, **fields):
    return messages.request(api_key).cls(**fields)
