"""The brokers of the scale benchmark: pykbroker and Apache Kafka 3.9.0, alone or three in a cluster.

    broker = make_single("kafka", workdir, nofile=20_000)
    broker.start()                   # fresh data; returns once it listens
    broker.kill(); broker.await_restartable(); broker.launch()   # kill -9, then the same data again
    broker.shut_down(); broker.launch()                          # clean stop, then again
    broker.close()                   # everything stopped, data deleted

    cluster = make_cluster("pykbroker", workdir, nofile=20_000).start()
    ... cluster.bootstrap, cluster.pids, cluster.log_paths ...
    cluster.close()

Every broker process runs under the same RLIMIT_NOFILE (soft and hard), set for the child
processes only. pykbroker runs this checkout's code (pykbroker.testkit.process.BrokerProcess, standalone
or with a ZooKeeper of pykbroker.testkit.zookeeper); Kafka runs from ../shared/realkafka with its scripts
(kafka.sh for one broker, cluster.sh for three), which signal only the processes they started.
Kafka gets the heap of its own start script (1 GiB) in both setups.
"""
from __future__ import annotations

import os
import random
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from compat import realkafka

REPO = Path(__file__).resolve().parent.parent
REALKAFKA = Path(os.environ.get("REALKAFKA_ROOT", REPO.parent / "shared" / "realkafka"))
KAFKA_HEAP = "-Xmx1G -Xms1G"
START_LIMIT = 900.0   # seconds: a broker loading 10,000 partitions after kill -9 may be slow
SCRIPT_LIMIT = 960.0

# The settings of ../shared/realkafka/cluster.sh (compat's table), given to pykbroker's cluster as well.
CLUSTER_SETTINGS = realkafka.CLUSTER_SETTINGS


def limit_descriptors(nofile: int):
    """A preexec_fn: RLIMIT_NOFILE soft and hard = `nofile` in the child (and its children)."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    return apply


def pykbroker_command(nofile: int) -> list[str]:
    return ["prlimit", f"--nofile={nofile}:{nofile}", "--", sys.executable, "-m", "pykbroker"]


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_block(count: int) -> int:
    """A base port with base..base+count-1 free, below Linux's ephemeral range (32768-60999) so
    that no client socket takes one of them between a stop and a restart."""
    for _ in range(200):
        base = random.randrange(21_000, 32_000 - count)
        if all(port_free(base + offset) for offset in range(count)):
            return base
    raise RuntimeError(f"no {count} consecutive free ports found")


def zookeeper_lists(zk_port: int, path: str) -> bool:
    """True while ZooKeeper's `dump` (ephemeral nodes) names `path`."""
    try:
        with socket.create_connection(("127.0.0.1", zk_port), timeout=3) as sock:
            sock.sendall(b"dump")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    except OSError:
        return True
    return any(line.strip() == path for line in b"".join(chunks).decode(errors="replace").splitlines())


def process_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def wait_gone(pid: int, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while not process_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def run_script(args: list[str], env: dict[str, str], nofile: int, limit: float = SCRIPT_LIMIT) -> str:
    """Run one of realkafka's scripts; its output, or RuntimeError with its last lines."""
    done = subprocess.run(args, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=limit, preexec_fn=limit_descriptors(nofile), stdin=subprocess.DEVNULL)
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        tail = " | ".join(output.splitlines()[-3:])
        raise RuntimeError(f"{Path(args[0]).name} {args[1]} failed ({done.returncode}): {tail}")
    return output


def read_state(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


class PykbrokerSingle:
    """One standalone pykbroker (no ZooKeeper), restarted on its port and its data."""
    name = "pykbroker"

    def __init__(self, workdir: Path, nofile: int) -> None:
        from pykbroker.testkit.process import BrokerProcess

        self.workdir = workdir
        overrides = {"listeners": f"PLAINTEXT://127.0.0.1:{free_port_block(1)}"}
        self.broker = BrokerProcess(workdir, overrides, start_timeout=START_LIMIT,
                                    command=pykbroker_command(nofile))

    @property
    def pid(self) -> int:
        return self.broker.process.pid

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def start(self) -> None:
        self.launch()

    def launch(self) -> None:
        self.broker.start()

    def kill(self) -> None:
        self.broker.kill()

    def await_restartable(self) -> float:
        return 0.0

    def shut_down(self) -> None:
        code = self.broker.stop(timeout=START_LIMIT)
        if code not in (0, None, -signal.SIGTERM):
            raise RuntimeError(f"exited with {code}")

    def alive(self) -> bool:
        return self.broker.is_running()

    def log_tail(self, lines: int = 3) -> str:
        return " | ".join(self.broker.log_text().strip().splitlines()[-lines:])

    def close(self) -> None:
        self.broker.stop()


class KafkaSingle:
    """Kafka 3.9.0 and its ZooKeeper through ../shared/realkafka/kafka.sh."""
    name = "kafka"

    def __init__(self, workdir: Path, nofile: int) -> None:
        self.workdir, self.nofile = workdir, nofile
        self.port = free_port_block(2)
        self.zk_port = self.port + 1
        self.env = {"REALKAFKA_RUNS": str(workdir), "KAFKA_HEAP_OPTS": KAFKA_HEAP,
                    "START_TIMEOUT": str(int(START_LIMIT))}
        self.started = False

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return int(read_state(self.workdir / str(self.port) / "state")["KAFKA_PID"])

    def script(self, *args: str) -> str:
        return run_script([str(REALKAFKA / "kafka.sh"), *args], self.env, self.nofile)

    def start(self) -> None:
        self.started = True
        self.script("start", str(self.port), str(self.zk_port))

    def launch(self) -> None:
        self.script("broker", str(self.port))

    def kill(self) -> None:
        self.script("kill", str(self.port))

    def await_restartable(self) -> float:
        """Seconds until ZooKeeper expires the killed broker's session (zookeeper.session.timeout.ms):
        before that a new broker cannot register. Not part of the restart time."""
        begin = time.monotonic()
        while zookeeper_lists(self.zk_port, "/brokers/ids/0"):
            if time.monotonic() - begin > 120:
                break
            time.sleep(0.2)
        return time.monotonic() - begin

    def shut_down(self) -> None:
        pid = self.pid
        os.kill(pid, signal.SIGTERM)
        if not wait_gone(pid, START_LIMIT):
            raise RuntimeError(f"did not stop within {START_LIMIT:.0f} s of SIGTERM")

    def alive(self) -> bool:
        try:
            return not process_gone(self.pid)
        except (OSError, KeyError, ValueError):
            return False

    def log_tail(self, lines: int = 3) -> str:
        path = self.workdir / str(self.port) / "logs" / "kafka.out"
        text = path.read_text(errors="replace") if path.exists() else ""
        return " | ".join(text.strip().splitlines()[-lines:])

    def close(self) -> None:
        if self.started:
            run_script([str(REALKAFKA / "kafka.sh"), "stop", str(self.port)], self.env, self.nofile)


class PykbrokerCluster:
    """Three pykbrokers with a ZooKeeper of pykbroker.testkit.zookeeper, Kafka's cluster.sh settings."""
    name = "pykbroker"

    def __init__(self, workdir: Path, nofile: int) -> None:
        from pykbroker.testkit.process import BrokerProcess
        from pykbroker.testkit.zookeeper import ZooKeeperProcess

        self.zookeeper = ZooKeeperProcess(workdir / "zk")
        self.workdir, self.nofile = workdir, nofile
        self.brokers = {}
        self._make = lambda broker_id, connect: BrokerProcess(
            workdir / f"broker-{broker_id}", {**CLUSTER_SETTINGS, "zookeeper.connect": connect},
            broker_id=broker_id, start_timeout=START_LIMIT, command=pykbroker_command(nofile))

    def start(self) -> PykbrokerCluster:
        self.zookeeper.start()
        for broker_id in (1, 2, 3):
            self.brokers[broker_id] = self._make(broker_id, self.zookeeper.connect)
            self.brokers[broker_id].start()
        return self

    @property
    def bootstrap(self) -> str:
        return ",".join(broker.bootstrap for broker in self.brokers.values())

    @property
    def pids(self) -> dict[int, int]:
        return {broker_id: broker.process.pid for broker_id, broker in self.brokers.items()}

    @property
    def log_paths(self) -> dict[int, Path]:
        return {broker_id: broker.log_path for broker_id, broker in self.brokers.items()}

    def close(self) -> None:
        for broker in self.brokers.values():
            broker.stop()
        self.zookeeper.stop()


class KafkaCluster:
    """Kafka 3.9.0's three brokers and ZooKeeper through ../shared/realkafka/cluster.sh."""
    name = "kafka"

    def __init__(self, workdir: Path, nofile: int) -> None:
        self.workdir, self.nofile = workdir, nofile
        self.base = free_port_block(4)
        self.env = {"CLUSTER_BASE_PORT": str(self.base), "CLUSTER_RUNS": str(workdir),
                    "KAFKA_HEAP": KAFKA_HEAP, "START_TIMEOUT": str(int(START_LIMIT))}
        self.started = False

    def script(self, command: str) -> str:
        return run_script([str(REALKAFKA / "cluster.sh"), command], self.env, self.nofile)

    def start(self) -> KafkaCluster:
        self.started = True
        self.script("start")
        return self

    @property
    def data(self) -> Path:
        return Path(read_state(self.workdir / f"cluster-{self.base}.state")["DATA"])

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.base + broker_id}" for broker_id in (1, 2, 3))

    @property
    def pids(self) -> dict[int, int]:
        return {broker_id: int((self.data / f"broker-{broker_id}.pid").read_text())
                for broker_id in (1, 2, 3)}

    @property
    def log_paths(self) -> dict[int, Path]:
        return {broker_id: self.data / f"broker-{broker_id}" / "logs" / "kafka.out"
                for broker_id in (1, 2, 3)}

    def close(self) -> None:
        if self.started:
            self.script("stop")


SINGLE = {"pykbroker": PykbrokerSingle, "kafka": KafkaSingle}
CLUSTER = {"pykbroker": PykbrokerCluster, "kafka": KafkaCluster}


def make_single(name: str, workdir: Path, nofile: int) -> PykbrokerSingle | KafkaSingle:
    workdir.mkdir(parents=True, exist_ok=True)
    return SINGLE[name](workdir, nofile)


def make_cluster(name: str, workdir: Path, nofile: int) -> PykbrokerCluster | KafkaCluster:
    workdir.mkdir(parents=True, exist_ok=True)
    return CLUSTER[name](workdir, nofile)
