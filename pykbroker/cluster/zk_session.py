"""The broker's ZooKeeper session, under `KafkaZkClient` (`zk_client`): connecting (creating the
chroot), the connection's state, and what happens when the session is lost or replaced.

    session = ZkSession("127.0.0.1:2181/kafka", session_timeout_ms=18000)
    session.start()                                   # blocks until connected, or raises

When the session expires, ZooKeeper deletes the broker's ephemeral znodes; kazoo connects again
with a new session, and `on_new_session` callbacks run (on a helper thread) so that their owners
register again.

While ZooKeeper cannot be reached, kazoo tries again and again and logs every try; its logger
lets about one line a second through (`KazooLogFilter`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from ..common.time import SYSTEM_CLOCK, Clock

log = logging.getLogger(__name__)

KAZOO_LOGGER = "kazoo.client"


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
            logger=kazoo_logger(),
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

    def started_client(self) -> KazooClient:
        """The kazoo client, for `KafkaZkClient`; only once `start()` made it."""
        if self.client is None:
            raise RuntimeError("the ZooKeeper session is not started")
        return self.client


class KazooLogFilter(logging.Filter):
    """kazoo's own lines, as few as say what happens: errors always; its "Connecting to ..." before
    every try never (the session says when it is connected); any other line at most once per
    `interval_ms`, so that an unreachable ZooKeeper is reported about once a second, not at every
    try of every address."""

    def __init__(self, interval_ms: float = 1000, clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__()
        self.interval_ms = interval_ms
        self.clock = clock
        self._last_ms: float | None = None
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        if str(record.msg).startswith("Connecting to"):
            return False
        now = self.clock.monotonic_ms()
        with self._lock:
            if self._last_ms is not None and now - self._last_ms < self.interval_ms:
                return False
            self._last_ms = now
            return True


def kazoo_logger() -> logging.Logger:
    """kazoo's logger (the one its connection loop writes to), filtered once per process."""
    logger = logging.getLogger(KAZOO_LOGGER)
    if not any(isinstance(f, KazooLogFilter) for f in logger.filters):
        logger.addFilter(KazooLogFilter())
    return logger


def split_chroot(connect: str) -> tuple[str, str]:
    """("h1:2181,h2:2181", "/kafka") from "h1:2181,h2:2181/kafka"; chroot "" when absent."""
    slash = connect.find("/")
    if slash < 0:
        return connect, ""
    chroot = connect[slash:].rstrip("/")
    return connect[:slash], chroot
