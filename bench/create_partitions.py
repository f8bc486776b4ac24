"""Time to create many partitions on a single broker (the embedded metadata store's writes).

Starts `python -m pykbroker` as a subprocess on a fresh data dir, then creates topics of
`--per-topic` partitions, `--per-request` topics per CreateTopics request (confluent-kafka
AdminClient, one request at a time, each awaited), and prints the seconds taken per thousand
partitions and in total, and the CPU seconds the broker process used (user + system, less
sensitive than wall time to other work on the machine).

    python -m bench.create_partitions --partitions 2000 5000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic

from .brokers import free_port, stop_process, wait_for_metadata

START_TIMEOUT = 60.0


def start_broker(workdir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    overrides = {
        "node.id": "0",
        "log.dirs": str(workdir / "data"),
        "listeners": f"PLAINTEXT://{bootstrap}",
        "advertised.listeners": f"PLAINTEXT://{bootstrap}",
    }
    args = [sys.executable, "-m", "pykbroker", "--log-level", "WARN"]
    for key, value in overrides.items():
        args += ["--override", f"{key}={value}"]
    with open(workdir / "broker.log", "ab") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    wait_for_metadata(bootstrap, time.monotonic() + START_TIMEOUT, process)
    return process, bootstrap


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def create_partitions(bootstrap: str, total: int, per_topic: int, per_request: int) -> list[float]:
    """Seconds elapsed after each thousand partitions."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    begin = time.monotonic()
    marks: list[float] = []
    created = 0
    topic_number = 0
    while created < total:
        batch = []
        while len(batch) < per_request and created + len(batch) * per_topic < total:
            batch.append(NewTopic(f"scale-{topic_number:06d}", per_topic, 1))
            topic_number += 1
        for future in admin.create_topics(batch, request_timeout=600, operation_timeout=600).values():
            future.result()
        before = created
        created += len(batch) * per_topic
        if created // 1000 > before // 1000:
            marks.append(time.monotonic() - begin)
    if not marks or created % 1000:
        marks.append(time.monotonic() - begin)
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--per-topic", type=int, default=10)
    parser.add_argument("--per-request", type=int, default=50)
    options = parser.parse_args()
    for total in options.partitions:
        with tempfile.TemporaryDirectory(prefix="pykbroker-create-") as directory:
            process, bootstrap = start_broker(Path(directory))
            try:
                cpu_before = cpu_seconds(process.pid)
                marks = create_partitions(bootstrap, total, options.per_topic, options.per_request)
                cpu = cpu_seconds(process.pid) - cpu_before
            finally:
                stop_process(process)
            steps = " ".join(f"{m:.1f}" for m in marks)
            print(f"{total} partitions: {marks[-1]:.1f} s, broker CPU {cpu:.1f} s (cumulative s per 1000: {steps})",
                  flush=True)


if __name__ == "__main__":
    main()
