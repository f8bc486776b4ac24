"""A local cluster: a ZooKeeper and N brokers (ids 1..N), each a process on 127.0.0.1, started
and stopped together. Tests, the pytest plugin's `kafka_cluster` and `pykbroker cluster` run it.

    with BrokerCluster(tmp_path, size=3) as cluster:
        cluster.create_topic("orders", partitions=3, replication_factor=3)
        cluster.brokers[2].stop()

Everything lives under one directory (a temporary one, removed at the end, unless named; a named
one is kept, so that the next start finds the same cluster):

    DIR/zookeeper/     zoo.cfg, data/, zookeeper.log
    DIR/broker-N/      kafka-logs/, broker.log (the broker's output)

Every broker gets `cluster_settings(N)` (`settings.py`: the development profile with the
replication of a cluster), then the caller's overrides, then what the cluster sets for each broker
(`PER_BROKER_KEYS`). Broker N listens on `base_port + N - 1`, or with `base_port` 0 on a free
port, which it keeps when it is started again (as a real broker restarts on its port).
`start()` returns once every broker answers Metadata listing all N; `stop()` stops the brokers in
parallel with SIGTERM, each a controlled shutdown, the controller after the others so that their
requests find it, then ZooKeeper.
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
        base_port: int = 0,
        zookeeper_port: int = 0,
        zookeeper_classpath: str | None = None,
        start_timeout: float = 60.0,
        popen_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.directory, self._temporary = directory_or_temporary(directory, "pykbroker-cluster-")
        self.directory = self.directory.resolve()
        self.size = size
        self.overrides = {**cluster_settings(size), **{key: str(value) for key, value in (overrides or {}).items()}}
        self.base_port = base_port
        self.start_timeout = start_timeout
        self.popen_options = dict(popen_options or {})
        self.zookeeper = ZooKeeperProcess(
            self.directory / "zookeeper",
            classpath=zookeeper_classpath,
            port=zookeeper_port,
            popen_options=self.popen_options,
        )
        self.brokers: dict[int, BrokerProcess] = {}
        self.controller_id = -1

    @property
    def bootstrap(self) -> str:
        return ",".join(broker.bootstrap for broker in self.brokers.values() if broker.is_running())

    # -- start ------------------------------------------------------------------------------
    def start(self) -> BrokerCluster:
        """ZooKeeper, then every broker; returns once each answers Metadata listing all of them.
        ClusterStartError (after stopping what started) when something does not start."""
        try:
            self._start_zookeeper()
            for broker_id in range(1, self.size + 1):
                self.brokers[broker_id] = self._broker(broker_id)
                self.brokers[broker_id].spawn()
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_zookeeper(self) -> None:
        try:
            self.zookeeper.start()
        except (RuntimeError, TimeoutError) as error:
            raise ClusterStartError(f"ZooKeeper did not start; see {self.zookeeper.log_path}") from error

    def _broker(self, broker_id: int) -> BrokerProcess:
        directory = self.directory / f"broker-{broker_id}"
        port = self.base_port + broker_id - 1 if self.base_port else 0
        settings = {
            **self.overrides,
            "broker.id": str(broker_id),
            "listeners": f"PLAINTEXT://127.0.0.1:{port}" if port else FREE_PORT_LISTENER,
            "log.dirs": str(directory / "kafka-logs"),
            "zookeeper.connect": self.zookeeper.connect,
        }
        return BrokerProcess(
            directory,
            settings,
            broker_id=broker_id,
            start_timeout=self.start_timeout,
            keep_port_on_restart=True,
            popen_options=self.popen_options,
        )

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while not self._all_answer_metadata():
            for broker_id, broker in self.brokers.items():
                if not broker.is_running():
                    raise ClusterStartError(
                        f"broker {broker_id} exited: {broker.last_log_line()} (see {broker.log_path})"
                    )
            if time.monotonic() > deadline:
                raise ClusterStartError(f"the brokers did not start within {self.start_timeout:g} s (see their logs)")
            time.sleep(POLL_INTERVAL_S)

    def _all_answer_metadata(self) -> bool:
        from .wire import metadata

        for broker in self.brokers.values():
            address = broker.announced_address()
            if address is None:
                return False
            try:
                response = metadata(address, timeout=2.0)
            except (OSError, EOFError):
                return False
            if len(response.brokers) < self.size:
                return False
            self.controller_id = response.controller_id
        return True

    # -- stop -------------------------------------------------------------------------------
    def stop(self, timeout: float = BROKER_STOP_TIMEOUT_S) -> None:
        """The brokers (the controller last), then ZooKeeper; SIGKILL for what does not stop
        within `timeout` seconds."""
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
        return self.controller_id

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
