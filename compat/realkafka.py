"""Apache Kafka 3.9.0 itself, from `<repo>/../shared/realkafka` (or the directory `REALKAFKA_ROOT`
names, as for the scripts themselves and `bench/scale_brokers.py`), for the compatibility suite:
one broker (`kafka.sh`, which takes Kafka's jars from `$KAFKA_HOME/libs` when `KAFKA_HOME` is
set) or three (`cluster.sh`), on free loopback ports, with their run directories under a
directory of the caller's, always discarded when the block ends (`discard`: the brokers killed
rather than shut down in a controlled way, which takes seconds; the data is removed either way).

    with KafkaBroker(tmp_dir) as kafka:           # ZooKeeper and broker 0
        run_suite(kafka.bootstrap)
    with KafkaCluster(tmp_dir) as cluster:        # ZooKeeper and brokers 1, 2, 3
        cluster.kill(2); cluster.restart(2)

The settings each set-up gives its brokers are `SINGLE_BROKER_SETTINGS` and `CLUSTER_SETTINGS`
(what the scripts write), so that a pykbroker can be given the same ones.
"""
from __future__ import annotations

import os
import random
import socket
import subprocess
from pathlib import Path

BESIDE_THE_CHECKOUT = Path(__file__).resolve().parents[1].parent / "shared" / "realkafka"
REALKAFKA = Path(os.environ.get("REALKAFKA_ROOT") or BESIDE_THE_CHECKOUT)
KAFKA_VERSION = "3.9.0"
LABEL = f"Kafka {KAFKA_VERSION}"

# What kafka.sh writes into server.properties besides ports and paths (Kafka's own example
# config/server.properties for one node).
SINGLE_BROKER_SETTINGS = {
    "num.network.threads": "3",
    "num.io.threads": "8",
    "socket.send.buffer.bytes": "102400",
    "socket.receive.buffer.bytes": "102400",
    "socket.request.max.bytes": "104857600",
    "num.partitions": "1",
    "num.recovery.threads.per.data.dir": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "log.retention.hours": "168",
    "log.retention.check.interval.ms": "300000",
    "zookeeper.connection.timeout.ms": "18000",
    "group.initial.rebalance.delay.ms": "0",
}
# What cluster.sh writes for each of its brokers besides ids, ports and paths.
CLUSTER_SETTINGS = {
    "zookeeper.connection.timeout.ms": "30000",
    "zookeeper.session.timeout.ms": "6000",
    "num.partitions": "1",
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "12",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "replica.lag.time.max.ms": "10000",
    "unclean.leader.election.enable": "false",
    "group.initial.rebalance.delay.ms": "0",
}
CLUSTER_IDS = (1, 2, 3)
# Heaps small enough for a 2-core test machine that also runs pykbroker and the clients.
HEAPS = {"KAFKA_HEAP_OPTS": "-Xmx512M -Xms256M", "ZK_HEAP_OPTS": "-Xmx128M",
         "KAFKA_HEAP": "-Xmx384m -Xms128m"}


def unavailable() -> str | None:
    """Why Kafka cannot run here, or None."""
    if not (REALKAFKA / "kafka.sh").exists():
        return f"no Apache Kafka beside the checkout ({REALKAFKA} is missing; REALKAFKA_ROOT names another)"
    if not Path("/usr/share/java/zookeeper.jar").exists():
        return "Debian's zookeeper package is not installed (make system-deps)"
    try:
        subprocess.run(["java", "-version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "`java` (17) is not on PATH"
    return None


def free_port_block(count: int) -> int:
    """The first of `count` consecutive free loopback ports, below Linux's ephemeral range
    (32768 and up) so that no client socket takes one of them meanwhile."""
    for _ in range(200):
        base = random.randrange(20000, 32000 - count)
        if all(_bindable(base + i) for i in range(count)):
            return base
    raise RuntimeError(f"no {count} consecutive free ports found")


def on_free_ports(count: int, start, attempts: int = 3) -> None:
    """Calls start(first port) on `count` free consecutive ports; on failure (a port taken
    meanwhile) again on others, up to `attempts` times."""
    for attempt in range(attempts):
        try:
            return start(free_port_block(count))
        except RuntimeError:
            if attempt == attempts - 1:
                raise


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class _Script:
    """A realkafka script run with the environment of one set-up; output kept in a log."""

    def __init__(self, name: str, runs: Path, env: dict[str, str]) -> None:
        self.path = REALKAFKA / name
        self.runs = runs
        self.log_path = runs / f"{name}.log"
        self.env = {**os.environ, **HEAPS, **env}

    def __call__(self, *args: str, timeout: float = 240) -> None:
        with open(self.log_path, "a") as log:
            result = subprocess.run(["bash", str(self.path), *args], env=self.env, timeout=timeout,
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise RuntimeError(f"{self.path.name} {' '.join(args)} failed "
                               f"(exit {result.returncode}):\n{self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class KafkaBroker:
    """One Kafka broker (id 0) and its ZooKeeper, started by kafka.sh."""

    label = LABEL
    ports_needed = 2  # the broker's (its first listener), then ZooKeeper's

    def __init__(self, directory: str | os.PathLike) -> None:
        self.runs = Path(directory)
        self.runs.mkdir(parents=True, exist_ok=True)
        self.port = 0
        self.script = _Script("kafka.sh", self.runs, {"REALKAFKA_RUNS": str(self.runs)})

    def extra_settings(self, port: int) -> dict[str, str]:
        """Settings appended to what kafka.sh writes (later keys win), for a broker on `port`
        and the ports after ZooKeeper's (port + 2 ... port + ports_needed - 1)."""
        return {}

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def server_properties(self) -> Path:
        return self.runs / str(self.port) / "server.properties"

    def start(self) -> "KafkaBroker":
        def start_on(port: int) -> None:
            self.port = port
            extra = [f"{key}={value}" for key, value in self.extra_settings(port).items()]
            self.script("start", str(port), str(port + 1), *extra)  # kafka.sh cleans up a failed start

        on_free_ports(self.ports_needed, start_on)
        return self

    def stop(self) -> None:
        if self.port:
            self.script("stop", str(self.port))

    def discard(self) -> None:
        """Stops it at once, for a run whose data nobody reads afterwards: kill -9 the broker
        (no controlled shutdown), then stop ZooKeeper and remove the data."""
        if self.port:
            self.script("kill", str(self.port))
        self.stop()

    def __enter__(self) -> "KafkaBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.discard()


class KafkaCluster:
    """ZooKeeper and Kafka brokers 1, 2, 3, started by cluster.sh."""

    label = LABEL
    ids = CLUSTER_IDS

    def __init__(self, directory: str | os.PathLike) -> None:
        self.runs = Path(directory)
        self.runs.mkdir(parents=True, exist_ok=True)
        self.base = 0
        self.script: _Script | None = None

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.base + i}" for i in self.ids)

    def start(self) -> "KafkaCluster":
        def start_on(base: int) -> None:
            self.base = base
            self.script = _Script("cluster.sh", self.runs, {"CLUSTER_RUNS": str(self.runs),
                                                            "CLUSTER_BASE_PORT": str(base)})
            try:
                self.script("start")
            except BaseException:
                self.stop()
                raise

        on_free_ports(len(self.ids) + 1, start_on)
        return self

    def server_properties(self, broker_id: int) -> Path:
        state = (self.runs / f"cluster-{self.base}.state").read_text()  # DATA=<run dir>
        run_dir = Path(state.strip().removeprefix("DATA="))
        return run_dir / f"broker-{broker_id}" / "server.properties"

    def kill(self, broker_id: int) -> None:
        """kill -9 the broker."""
        self.script("kill", str(broker_id))

    def restart(self, broker_id: int) -> None:
        """Start a killed broker again on its data; returns when it is up."""
        self.script("start-broker", str(broker_id))

    def stop(self) -> None:
        if self.script is not None:
            self.script("stop")

    def discard(self) -> None:
        """Stops it at once, for a run whose data nobody reads afterwards: kill -9 every broker
        (no controlled shutdowns), then stop ZooKeeper and remove the data."""
        if self.script is not None:
            for broker_id in self.ids:
                self.script("kill", str(broker_id))
        self.stop()

    def __enter__(self) -> "KafkaCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.discard()
