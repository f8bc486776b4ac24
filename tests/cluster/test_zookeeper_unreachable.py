"""A broker whose ZooKeeper cannot be reached says so about once a second, not at every one of
the ZooKeeper client's tries (no ZooKeeper needed: the broker is pointed at a closed port)."""
import logging
import socket
import subprocess
import sys

from pykbroker.cluster.zk_session import KazooLogFilter
from pykbroker.common.time import FakeClock

SECONDS = 3


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_zookeeper_is_logged_about_once_a_second_until_the_broker_gives_up(tmp_path):
    settings = {
        "zookeeper.connect": f"127.0.0.1:{closed_port()}",
        "zookeeper.connection.timeout.ms": str(SECONDS * 1000),
        "listeners": f"PLAINTEXT://127.0.0.1:{closed_port()}",
        "log.dirs": str(tmp_path / "logs"),
        "broker.id": "1",
    }
    args = [arg for key, value in settings.items() for arg in ("--override", f"{key}={value}")]
    done = subprocess.run([sys.executable, "-m", "pykbroker", *args], cwd=tmp_path, timeout=120,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)

    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 1, done.stderr
    assert "Timed out waiting for connection to ZooKeeper" in lines[-1]
    assert any("Connection refused" in line for line in lines), done.stderr  # the cause is still said
    assert len(lines) <= 2 * SECONDS + 4, done.stderr


def record(level: int, msg: str) -> logging.LogRecord:
    return logging.LogRecord("kazoo.client", level, __file__, 1, msg, (), None)


def test_the_filter_lets_one_line_through_per_second_and_every_error():
    clock = FakeClock()
    kept = KazooLogFilter(interval_ms=1000, clock=clock)

    assert kept.filter(record(logging.WARNING, "Connection dropped: refused"))
    assert not kept.filter(record(logging.WARNING, "Connection dropped: refused"))
    assert not kept.filter(record(logging.INFO, "Zookeeper session closed"))
    assert kept.filter(record(logging.ERROR, "Unhandled exception in connection loop"))
    clock.advance(1000)
    assert kept.filter(record(logging.WARNING, "Connection dropped: refused"))


def test_the_filter_drops_the_line_before_every_try():
    assert not KazooLogFilter(clock=FakeClock()).filter(record(logging.INFO, "Connecting to %s(%s):%s"))
