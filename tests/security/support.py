"""An in-process broker whose connections' principals the test names, until SASL sets them.

    with PrincipalBroker(tmp_path, {"super.users": "User:admin"}) as broker:
        admin = WireAs(broker.bootstrap, "admin")        # requests as User:admin
        Producer({"bootstrap.servers": broker.bootstrap, "client.id": client_id_of("alice")})

The test hook lives here only: the broker's handlers are wrapped so that a request whose client
id is `as-<name>` runs as `User:<name>` (ANONYMOUS otherwise). Nothing of it reaches the broker's
own code, so production behaviour is unchanged; once SASL lands, tests can log in instead.
"""
from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import anyio

from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig
from pykbroker.protocol import messages
from pykbroker.security.principal import ANONYMOUS, KafkaPrincipal
from tests.wire import WireClient

PREFIX = "as-"

AUTHORIZER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}


def client_id_of(user: str) -> str:
    return f"{PREFIX}{user}"


def principal_of(client_id: str | None) -> KafkaPrincipal:
    if client_id and client_id.startswith(PREFIX):
        return KafkaPrincipal("User", client_id[len(PREFIX):])
    return ANONYMOUS


def with_principals(broker: Broker) -> None:
    """Wrap every handler of `broker` so that the request's client id names its principal."""
    for key, entry in list(broker.registry.items()):
        original = entry.handle

        async def handle(request, ctx, original=original):
            ctx.principal = principal_of(ctx.client_id)
            return await original(request, ctx)

        broker.registry[key] = dataclasses.replace(entry, handle=handle)


class PrincipalBroker:
    """A broker on a free loopback port in a thread of this process, with the principal hook."""

    def __init__(self, directory: Path, overrides: dict[str, str] | None = None) -> None:
        settings = {
            "listeners": "PLAINTEXT://127.0.0.1:0",
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
        with_principals(self.broker)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    @property
    def bootstrap(self) -> str:
        listener = self.broker.listeners[0]
        return f"127.0.0.1:{listener.port}"

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
    """A raw wire client whose requests run as `User:<user>` on a PrincipalBroker."""

    def __init__(self, bootstrap: str, user: str | None = None, timeout: float = 10.0) -> None:
        super().__init__(bootstrap, timeout)
        self.client_id = client_id_of(user) if user else "anonymous"

    def send(self, api_key: int, version: int, body: object, client_id: str | None = None) -> int:
        return super().send(api_key, version, body, client_id or self.client_id)


def request_of(api_key: int, **fields):
    return messages.request(api_key).cls(**fields)
