"""Helpers for tests against real brokers and real clients: a broker tuned for quick group
tests, group members in processes of their own, and waiting for a condition."""
from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

from pykbroker.testkit.process import BrokerProcess  # noqa: F401 - tests import it from here
from pykbroker.testkit.waiting import wait_until  # noqa: F401 - tests import it from here

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 30

# Kafka's own settings, turned down so that rebalances and failure detection are quick
GROUP_BROKER_CONFIG = {
    "group.initial.rebalance.delay.ms": "100",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "10",
}


def group_broker(directory, **overrides) -> BrokerProcess:
    return BrokerProcess(directory, {**GROUP_BROKER_CONFIG, **overrides})




class MemberProcess:
    """A consumer group member of one client library, in its own process (see
    `member_process.py`); `assignment` is the partitions it last reported owning."""

    def __init__(self, library: str, bootstrap: str, group: str, topic: str, *,
                 session_ms: int = 4000, strategy: str = "range") -> None:
        self.library = library
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.coordinator.member_process", library, bootstrap,
             group, topic, str(session_ms), strategy],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        self.events: list[dict] = []
        self.assignment: frozenset[int] = frozenset()
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            event = json.loads(line)
            self.events.append(event)
            if "assignment" in event:
                self.assignment = frozenset(event["assignment"])

    def close(self) -> None:
        """Close the consumer cleanly (it leaves the group) and wait for the process."""
        self.process.stdin.write("close\n")
        self.process.stdin.flush()
        self.process.wait(WAIT_SECONDS)
        self.assignment = frozenset()

    def kill(self) -> None:
        """SIGKILL: the member vanishes without leaving the group."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(WAIT_SECONDS)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(WAIT_SECONDS)


def covers_exactly(members, partitions: int) -> bool:
    """The members' assignments are disjoint, non-empty and cover all partitions."""
    owned = [m.assignment for m in members]
    return (all(owned) and sum(len(a) for a in owned) == partitions
            and frozenset().union(*owned) == frozenset(range(partitions)))
