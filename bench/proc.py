"""Resident memory, CPU time and open descriptors of a running process (and its children), from /proc."""
from __future__ import annotations

import os
from pathlib import Path


def process_tree(pid: int) -> list[int]:
    """The process and, recursively, its children (should the broker ever spawn workers)."""
    pids, index = [pid], 0
    while index < len(pids):
        for children in Path(f"/proc/{pids[index]}/task").glob("*/children"):
            try:
                pids += [int(child) for child in children.read_text().split()]
            except OSError:
                pass
        index += 1
    return pids


def _resident_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise OSError(f"no VmRSS for process {pid}")


def _user_and_system_ticks(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])  # utime, stime


def _cpu_ticks(pid: int) -> int:
    return sum(_user_and_system_ticks(pid))


def user_and_system_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds so far of the process (all threads), without its children."""
    user, system = _user_and_system_ticks(pid)
    ticks = os.sysconf("SC_CLK_TCK")
    return user / ticks, system / ticks


def resident_mib(pid: int) -> float:
    """VmRSS of the process and its children, in MiB (2^20 bytes)."""
    total = _resident_kib(pid)
    for child in process_tree(pid)[1:]:
        try:
            total += _resident_kib(child)
        except OSError:
            pass
    return total / 1024


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time so far of the process (all threads) and its live children."""
    ticks = _cpu_ticks(pid)
    for child in process_tree(pid)[1:]:
        try:
            ticks += _cpu_ticks(child)
        except OSError:
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def open_descriptors(pid: int) -> int:
    """Open file descriptors of the process (entries of /proc/<pid>/fd)."""
    return len(os.listdir(f"/proc/{pid}/fd"))
