"""Startup time and resident memory of a broker.

Startup time runs from spawning the process until it answers a Metadata request over a raw socket
(polled every 5 ms). Resident memory is VmRSS from /proc/<pid>/status: idle a couple of seconds
after start, then after the throughput data is written, and for pykbroker after writing much more
(its memory should stay flat however much the logs hold).
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench import proc
from bench.brokers import make_broker
from bench.figure import Figure, measured, not_available


def one_start(name: str, workdir: Path) -> float:
    broker = make_broker(name, workdir)
    try:
        return broker.start()
    finally:
        broker.stop()


def startup_figure(seconds: list[float], failure: str = "") -> Figure:
    if not seconds:
        return not_available(failure or "no start succeeded")
    note = f"median of {len(seconds)}" if len(seconds) > 1 else ""
    return measured(statistics.median(seconds), note)


def extra_starts(name: str, workdir: Path, trials: int) -> tuple[list[float], str]:
    """Seconds of up to `trials` separate starts (each stopped at once), and why one failed."""
    seconds = []
    for trial in range(trials):
        try:
            seconds.append(one_start(name, workdir / f"start-{trial}"))
        except Exception as error:  # a broker that fails to start once is not timed again
            return seconds, str(error)
    return seconds, ""


def resident_figure(pid: int, note: str = "") -> Figure:
    try:
        return measured(proc.resident_mib(pid), note)
    except OSError:
        return not_available("broker process is gone")


def idle_resident(pid: int, seconds: float) -> Figure:
    time.sleep(seconds)
    return resident_figure(pid)
