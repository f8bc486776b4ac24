"""A local cluster: a ZooKeeper and N brokers (ids 1..N), each a process on 127.0.0.1, started
and stopped together. Tests, the pytest plugin's `kafka_cluster` and `pykbroker cluster` run it.

    with BrokerCluster(tmp_path, size=3) as cluster:
        cluster.create_topic("orders", partitions=3, replication_factor=3)
        cluster.kill(2); cluster.restart(2)

Everything lives under one directory (a temporary one, removed at the end, unless named; a named
one is kept, so that the next start finds the same cluster):

    DIR/zookeeper/     zoo.cfg, data/, zookeeper.log
    DIR/broker-N/      kafka-logs/, broker.log (the broker's output)

Every broker gets `cluster_settings(N)` (`settings.py`: the development profile with the
replication of a cluster; with `replication_settings=False` only the single-broker profile every
`BrokerProcess` starts from), then the caller's overrides, then what the cluster sets for each
broker (`PER_BROKER_KEYS`), then the broker's own `broker_overrides`. The brokers start
together, or with `one_at_a_time` in id order, each once the one before listens (broker 1 is
then the first controller). Broker N listens on `base_port + N - 1`, or with `base_port` 0 on a
free port (or on the caller's `listeners`, when given), which it keeps when it is started again
(as a real broker restarts on its port).

With `zookeeper_connect` (a connect string, a chroot included) the brokers use a ZooKeeper that
is already running (one for many clusters, each under its own chroot); the cluster then neither
starts nor stops one, and `zookeeper` is None.

`start()` returns once every broker is ready (`all_ready()`: it answers Metadata listing all N);
`kill`, `shut_down` and `restart` act on one broker, which keeps its port and data;
`ensure_all_running()` starts again whatever was stopped and waits as `start()` does. `stop()`
stops the brokers in parallel with SIGTERM, each a controlled shutdown, the controller after the
others so that their requests find it, then ZooKeeper (its own only).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from .process import BrokerProcess, directory_or_temporary
from .settings import FREE_PORT_LISTENER, cluster_settings
from .zookeeper import ZooKeeperProcess

PER_BROKER_KEYS = ("broker.id", "listeners", "advertised.listeners", "log.dirs", "zookeeper.connect")
BROKER_STOP_TIMEOUT_S = 60.0
POLL_INTERVAL_S = 0.2


class ClusterStartError(RuntimeError):
    """The cluster did not start: one line saying which process and where its log is."""


class BrokerCluster:
    """A ZooKeeper and `size` brokers under `directory`; `bootstrap` lists the running brokers."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        size: int = 3,
        overrides: Mapping[str, object] | None = None,
        broker_overrides: Mapping[int, Mapping[str, object]] | None = None,
        replication_settings: bool = True,
        one_at_a_time: bool = False,
        base_port: int = 0,
        zookeeper_connect: str | None = None,
        zookeeper_port: int = 0,
        zookeeper_classpath: str | None = None,
        start_timeout: float = 60.0,
        popen_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.directory, self._temporary = directory_or_temporary(directory, "pykbroker-cluster-")
        self.directory = self.directory.resolve()
        self.size = size
        profile = cluster_settings(size) if replication_settings else {}
        self.overrides = {**profile, **as_settings(overrides)}
        self.broker_overrides = {broker_id: as_settings(own) for broker_id, own in (broker_overrides or {}).items()}
        self.one_at_a_time = one_at_a_time
        self.base_port = base_port
        self.start_timeout = start_timeout
        self.popen_options = dict(popen_options or {})
        self._external_zookeeper = zookeeper_connect
        self.zookeeper: ZooKeeperProcess | None = None
        if zookeeper_connect is None:
            self.zookeeper = ZooKeeperProcess(
                self.directory / "zookeeper",
                classpath=zookeeper_classpath,
                port=zookeeper_port,
                popen_options=self.popen_options,
            )
        self.brokers: dict[int, BrokerProcess] = {}
        self.last_seen_controller_id = -1

    @property
    def zookeeper_connect(self) -> str:
        """The brokers' `zookeeper.connect`: the external one, else the cluster's own ZooKeeper's."""
        if self.zookeeper is None:
            return self._external_zookeeper or ""
        return self.zookeeper.connect

    @property
    def bootstrap(self) -> str:
        return ",".join(broker.bootstrap for broker in self.brokers.values() if broker.is_running())

    def running(self) -> list[int]:
        """The ids of the brokers whose process runs."""
        return [broker_id for broker_id, broker in self.brokers.items() if broker.is_running()]

    # -- start ------------------------------------------------------------------------------
    def start(self) -> BrokerCluster:
        """ZooKeeper, then every broker; returns once all are ready (`all_ready`).
        ClusterStartError (after stopping what started) when something does not start."""
        try:
            self._start_zookeeper()
            for broker_id in range(1, self.size + 1):
                self.brokers[broker_id] = self._broker(broker_id)
                self._spawn(broker_id)
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_zookeeper(self) -> None:
        if self.zookeeper is None:
            return
        try:
            self.zookeeper.start()
        except (RuntimeError, TimeoutError) as error:
            raise ClusterStartError(f"ZooKeeper did not start; see {self.zookeeper.log_path}") from error

    def _broker(self, broker_id: int) -> BrokerProcess:
        directory = self.directory / f"broker-{broker_id}"
        settings = {
            **self.overrides,
            "broker.id": str(broker_id),
            "listeners": self._listeners(broker_id),
            "log.dirs": str(directory / "kafka-logs"),
            "zookeeper.connect": self.zookeeper_connect,
            **self.broker_overrides.get(broker_id, {}),
        }
        return BrokerProcess(
            directory,
            settings,
            broker_id=broker_id,
            start_timeout=self.start_timeout,
            keep_port_on_restart=True,
            popen_options=self.popen_options,
        )

    def _listeners(self, broker_id: int) -> str:
        """`base_port + id - 1`; with `base_port` 0 the caller's listeners, else a free port."""
        if self.base_port:
            return f"PLAINTEXT://127.0.0.1:{self.base_port + broker_id - 1}"
        return self.overrides.get("listeners", FREE_PORT_LISTENER)

    def _spawn(self, broker_id: int) -> None:
        """Start the broker; with `one_at_a_time`, return once it listens."""
        broker = self.brokers[broker_id]
        broker.spawn()
        if not self.one_at_a_time:
            return
        try:
            broker.wait_until_listening()
        except (RuntimeError, TimeoutError) as error:
            raise ClusterStartError(
                f"broker {broker_id} did not start: {broker.last_log_line()} (see {broker.log_path})"
            ) from error

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while not self._all_listening() or not self.all_ready():
            for broker_id, broker in self.brokers.items():
                if not broker.is_running():
                    raise ClusterStartError(
                        f"broker {broker_id} exited: {broker.last_log_line()} (see {broker.log_path})"
                    )
            if time.monotonic() > deadline:
                raise ClusterStartError(f"the brokers did not start within {self.start_timeout:g} s (see their logs)")
            time.sleep(POLL_INTERVAL_S)

    def _all_listening(self) -> bool:
        return all(broker.announced_address() is not None for broker in self.brokers.values())

    def all_ready(self) -> bool:
        """Whether the cluster is whole: every broker answers Metadata listing all of them."""
        from .wire import metadata

        for broker in self.brokers.values():
            try:
                response = metadata(broker.bootstrap, timeout=2.0)
            except (OSError, EOFError):
                return False
            if len(response.brokers) < self.size:
                return False
            self.last_seen_controller_id = response.controller_id
        return True

    # -- one broker -------------------------------------------------------------------------
    def kill(self, broker_id: int) -> None:
        """kill -9 the broker."""
        self.brokers[broker_id].kill()

    def shut_down(self, broker_id: int) -> int | None:
        """SIGTERM: a controlled shutdown, then the process ends. Its exit code."""
        return self.brokers[broker_id].stop()

    def restart(self, broker_id: int) -> None:
        """Stop the broker if it runs, start it again on its port and data; returns when it listens."""
        broker = self.brokers[broker_id]
        if broker.is_running():
            broker.stop()
        broker.start()

    def ensure_all_running(self) -> None:
        """Start again every broker that is not running; returns once all are ready, as `start()`."""
        for broker_id, broker in self.brokers.items():
            if not broker.is_running():
                self._spawn(broker_id)
        self._wait_until_ready()

    # -- stop -------------------------------------------------------------------------------
    def stop(self, timeout: float = BROKER_STOP_TIMEOUT_S) -> None:
        """The brokers (the controller last), then the cluster's own ZooKeeper; SIGKILL for what
        does not stop within `timeout` seconds."""
        running = [broker for broker in self.brokers.values() if broker.is_running()]
        if running:
            controller_id = self.current_controller(running)
            others = [broker for broker in running if broker.broker_id != controller_id]
            controller = [broker for broker in running if broker.broker_id == controller_id]
            deadline = time.monotonic() + timeout
            for group in (others, controller):
                for broker in group:
                    broker.terminate()
                for broker in group:
                    broker.wait_for_exit(deadline - time.monotonic())
        if self.zookeeper is not None:
            self.zookeeper.stop()

    def current_controller(self, running: list[BrokerProcess]) -> int:
        """The controller as a running broker sees it now (it moves when brokers stop), else as
        last seen."""
        from .wire import metadata

        for broker in running:
            if broker.port:
                try:
                    controller_id: int = metadata(broker.bootstrap, timeout=2.0).controller_id
                    return controller_id
                except (OSError, EOFError):
                    continue
        return self.last_seen_controller_id

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: dict[str, str] | None = None
    ) -> str:
        """Create a topic (CreateTopics, as a client would) and wait for its leaders."""
        from .wire import create_topic

        return create_topic(self.bootstrap, name, partitions, replication_factor, configs)

    def __enter__(self) -> BrokerCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        if self._temporary is not None:
            self._temporary.cleanup()


def as_settings(settings: Mapping[str, object] | None) -> dict[str, str]:
    """Settings as the command line passes them: every value a string."""
    return {key: str(value) for key, value in (settings or {}).items()}
