"""The broker's ZooKeeper session: connecting (creating the chroot), Kafka's persistent paths, the
cluster id, and the broker's ephemeral registration.

    session = ZkSession("127.0.0.1:2181/kafka", session_timeout_ms=18000)
    session.start()                                   # blocks until connected, or raises
    cluster_id = session.get_or_create_cluster_id(proposed)
    epoch = session.register_broker(registration)     # the registration znode's creation zxid

A registration left by this broker's previous process (killed before its session ended) is
waited for: it disappears when ZooKeeper expires that session. The broker epoch is the
registration's creation zxid, as in Kafka: it grows with every (re-)registration.

When the session expires, ZooKeeper deletes the registration; kazoo connects again with a new
session, and `on_new_session` callbacks run (on a helper thread) so that the owner registers
the broker again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import NodeExistsError, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from ..common.time import SYSTEM_CLOCK
from . import zk_data
from .zk_data import BrokerRegistration

log = logging.getLogger(__name__)


class ZooKeeperUnavailableError(RuntimeError):
    """ZooKeeper could not be reached within `zookeeper.connection.timeout.ms`."""


class ZkSession:
    def __init__(self, connect: str, *, session_timeout_ms: int, connection_timeout_ms: int | None = None) -> None:
        self.connect = connect
        self.session_timeout_ms = session_timeout_ms
        self.connection_timeout_ms = connection_timeout_ms or session_timeout_ms
        self.client: KazooClient | None = None
        self._lost = False
        self._closing = False
        self._new_session_callbacks: list[Callable[[], None]] = []
        self._lost_callbacks: list[Callable[[], None]] = []

    @property
    def connected(self) -> bool:
        return self.client is not None and self.client.connected

    @property
    def request_timeout_s(self) -> float:
        """How long a caller waits for one ZooKeeper answer before giving up."""
        return max(self.session_timeout_ms, self.connection_timeout_ms) / 1000

    # -- connecting --------------------------------------------------------------------
    def start(self) -> None:
        hosts, chroot = split_chroot(self.connect)
        if chroot:
            self._create_chroot(hosts, chroot)
        self.client = self._new_client(self.connect)
        self.client.add_listener(self._on_state)
        self._start_client(self.client)
        log.info("Connected to ZooKeeper at %s (session 0x%x)", self.connect, self.client.client_id[0])

    def _new_client(self, hosts: str) -> KazooClient:
        return KazooClient(
            hosts=hosts,
            timeout=self.session_timeout_ms / 1000,
            connection_retry=KazooRetry(max_tries=-1, max_delay=1.0),
            command_retry=KazooRetry(max_tries=3, max_delay=1.0),
        )

    def _start_client(self, client: KazooClient) -> None:
        try:
            client.start(timeout=self.connection_timeout_ms / 1000)
        except KazooTimeoutError:
            client.close()
            raise ZooKeeperUnavailableError(
                f"Timed out waiting for connection to ZooKeeper at {self.connect} ({self.connection_timeout_ms} ms)"
            ) from None

    def _create_chroot(self, hosts: str, chroot: str) -> None:
        client = self._new_client(hosts)
        self._start_client(client)
        try:
            client.ensure_path(chroot)
        finally:
            client.stop()
            client.close()

    def stop(self) -> None:
        """Close the session: ZooKeeper deletes this broker's ephemeral znodes at once."""
        self._closing = True
        if self.client is not None:
            try:
                self.client.stop()
                self.client.close()
            except Exception:  # already closed or never connected
                log.debug("Closing the ZooKeeper client failed", exc_info=True)

    # -- session events ----------------------------------------------------------------
    def on_new_session(self, callback: Callable[[], None]) -> None:
        """`callback()` runs on a helper thread each time a new session replaces a lost one."""
        self._new_session_callbacks.append(callback)

    def on_session_lost(self, callback: Callable[[], None]) -> None:
        """`callback()` runs on a helper thread when the session expires."""
        self._lost_callbacks.append(callback)

    def _on_state(self, state: str) -> None:
        # Called on kazoo's connection thread: never block here.
        if self._closing:
            return
        if state == KazooState.LOST:
            log.warning("ZooKeeper session expired")
            self._lost = True
            self._spawn(self._lost_callbacks)
        elif state == KazooState.SUSPENDED:
            log.warning("Disconnected from ZooKeeper; reconnecting")
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            log.info("Connected to ZooKeeper with a new session")
            self._spawn(self._new_session_callbacks)

    @staticmethod
    def _spawn(callbacks: list[Callable[[], None]]) -> None:
        def run() -> None:
            for callback in callbacks:
                try:
                    callback()
                except Exception:
                    log.exception("ZooKeeper session callback failed")

        threading.Thread(target=run, name="zk-session-event", daemon=True).start()

    # -- Kafka's znodes ----------------------------------------------------------------
    def _started_client(self) -> KazooClient:
        """The client; the znode methods below are only called once `start()` made it."""
        if self.client is None:
            raise RuntimeError("the ZooKeeper session is not started")
        return self.client

    def ensure_persistent_paths(self) -> None:
        client = self._started_client()
        for path in zk_data.PERSISTENT_PATHS:
            client.ensure_path(path)

    def get_or_create_cluster_id(self, proposed: str) -> str:
        client = self._started_client()
        try:
            data, _ = client.get(zk_data.CLUSTER_ID)
            return zk_data.decode_cluster_id(data)
        except NoNodeError:
            pass
        try:
            client.create(zk_data.CLUSTER_ID, zk_data.encode_cluster_id(proposed), makepath=True)
            return proposed
        except NodeExistsError:  # another broker was quicker
            data, _ = client.get(zk_data.CLUSTER_ID)
            return zk_data.decode_cluster_id(data)

    def register_broker(self, registration: BrokerRegistration) -> int:
        """Create `/brokers/ids/<id>`; returns the broker epoch (its creation zxid).

        A registration still owned by an older session of this broker id is waited for, up to
        twice the session timeout; another live broker with the same id is an error.
        """
        client = self._started_client()
        path = zk_data.broker_path(registration.broker_id)
        data = zk_data.encode_broker(registration)
        deadline_ms = SYSTEM_CLOCK.monotonic_ms() + 2 * self.session_timeout_ms + 5000
        while True:
            try:
                _, stat = client.create(path, data, ephemeral=True, makepath=True, include_data=True)
                log.info(
                    "Registered broker %d at path %s with addresses: %s (broker epoch %d)",
                    registration.broker_id,
                    path,
                    ",".join(e.connection_string for e in registration.endpoints),
                    stat.czxid,
                )
                return stat.czxid
            except NodeExistsError:
                stat = client.exists(path)
                if stat is not None and stat.ephemeralOwner == client.client_id[0]:
                    return stat.czxid
            remaining_ms = deadline_ms - SYSTEM_CLOCK.monotonic_ms()
            if remaining_ms < 0:
                raise RuntimeError(
                    f"Broker id {registration.broker_id} is registered by another live session in ZooKeeper"
                )
            log.info("Waiting for the previous registration of broker %d to expire", registration.broker_id)
            gone = threading.Event()
            if client.exists(path, watch=lambda _event, gone=gone: gone.set()) is None:
                continue
            gone.wait(min(1.0, max(0.0, remaining_ms / 1000)))


def split_chroot(connect: str) -> tuple[str, str]:
    """("h1:2181,h2:2181", "/kafka") from "h1:2181,h2:2181/kafka"; chroot "" when absent."""
    slash = connect.find("/")
    if slash < 0:
        return connect, ""
    chroot = connect[slash:].rstrip("/")
    return connect[:slash], chroot
