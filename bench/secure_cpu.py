"""Where pykbroker's CPU goes on its TLS listeners: produce over PLAINTEXT, SSL and SASL_SSL alone.

    python -m bench.secure_cpu [--quick] [--records N] [--rounds N] [--latency] [--py-spy DIR]

One pykbroker with the listeners and certificates of bench/secure.py (no Kafka: this compares
pykbroker's listeners with each other, not with Kafka). After a warm-up of every listener, each
round writes `--records` records of 1 KB (same producer settings as bench/secure.py) to a fresh
3-partition topic over each listener, the order of the listeners turned around every round, and
prints the broker's user and system CPU seconds per GB written. `--latency` adds a fixed-rate
phase per listener (5,000 records of 1 KB a second for 5 s, acks=1) with its percentiles and the
broker CPU it cost. `--py-spy DIR` records each phase's stacks (py-spy, native frames, collapsed
"raw" format) into DIR, one file per phase; py-spy pauses the broker for each sample, so its
phases' rates and latencies are not figures, only the shares of the stacks are.

On a machine shared with other work, compare the listeners within one run and over several
rounds: a single phase's CPU per GB moves by 10 % or more with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import secure  # noqa: E402
from bench.proc import user_and_system_seconds  # noqa: E402
from bench.throughput import run_client  # noqa: E402

LISTENERS = ("PLAINTEXT", "SSL", "SASL_SSL")
RECORD_SIZE = 1024
TIME_LIMIT = 120.0
GB = 1024**3
PY_SPY = Path(sys.executable).parent / "py-spy"


def client_config(protocol: str, ca: Path) -> str:
    return json.dumps({} if protocol == "PLAINTEXT" else secure.client_settings(protocol, ca))


def fresh_topic(broker) -> str:
    topic = f"secure-cpu-{uuid.uuid4().hex[:8]}"
    created = run_client(
        "create-topic", secure.bootstrap(broker, "PLAINTEXT"), topic, TIME_LIMIT, partitions=secure.PARTITIONS
    )
    if not created.get("ok"):
        raise RuntimeError(f"topic not created: {created.get('reason')}")
    return topic


def start_py_spy(pid: int, output: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            str(PY_SPY),
            "record",
            "--pid",
            str(pid),
            "--rate",
            "250",
            "--format",
            "raw",
            "--native",
            "--output",
            str(output),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_py_spy(spy: subprocess.Popen) -> None:
    spy.send_signal(signal.SIGINT)
    try:
        spy.wait(30)
    except subprocess.TimeoutExpired:
        spy.kill()
        spy.wait()


def phase(broker, protocol: str, kind: str, records: int, ca: Path, spy_dir: Path | None, label: str) -> str:
    """Run one produce or latency phase over `protocol`; its line of results."""
    topic = fresh_topic(broker)
    where, config = secure.bootstrap(broker, protocol), client_config(protocol, ca)
    spy = start_py_spy(broker.pid, spy_dir / f"{label}-{kind}-{protocol}.txt") if spy_dir else None
    if spy:
        time.sleep(1.0)  # py-spy attached before the phase begins
    user, system = user_and_system_seconds(broker.pid)
    try:
        if kind == "latency":
            result = run_client(
                "latency",
                where,
                topic,
                TIME_LIMIT,
                size=RECORD_SIZE,
                rate=secure.QUICK_LATENCY.rate,
                seconds=secure.QUICK_LATENCY.seconds,
                config=config,
            )
        else:
            result = run_client("produce", where, topic, TIME_LIMIT, count=records, size=RECORD_SIZE, config=config)
    finally:
        if spy:
            stop_py_spy(spy)
    user_after, system_after = user_and_system_seconds(broker.pid)
    used_user, used_system = user_after - user, system_after - system
    if not result.get("ok"):
        return f"{protocol:9} {kind}: failed: {result.get('reason')}"
    if kind == "latency":
        return (
            f"{protocol:9} latency: p50 {result['p50_ms']:.2f} ms, p99 {result['p99_ms']:.2f} ms, "
            f"max {result['max_ms']:.2f} ms; broker CPU user {used_user:.2f} s, system {used_system:.2f} s"
        )
    gb = result["bytes"] / GB
    rate = result["bytes"] / (1024 * 1024) / result["seconds"]
    return (
        f"{protocol:9} produce: {rate:7.1f} MB/s; broker CPU per GB: user {used_user / gb:.2f} s, "
        f"system {used_system / gb:.2f} s, total {(used_user + used_system) / gb:.2f} s"
    )


def run(workdir: Path, records: int, rounds: int, latency: bool, spy_dir: Path | None) -> None:
    keystore, ca = secure.certificates(workdir / "pki")
    broker = secure.SecurePykbroker(workdir / "pykbroker", keystore, ca)
    broker.start()
    try:
        secure.create_scram_user(broker, 60.0)
        for protocol in secure.PROTOCOLS:
            secure.throughput_phases(broker, protocol, RECORD_SIZE, secure.WARM_UP_RECORDS // 2, TIME_LIMIT, ca)
        for round_index in range(rounds):
            order = LISTENERS if round_index % 2 == 0 else LISTENERS[::-1]
            for protocol in order:
                print(phase(broker, protocol, "produce", records, ca, spy_dir, f"round{round_index + 1}"), flush=True)
            if latency:
                for protocol in order:
                    print(
                        phase(broker, protocol, "latency", records, ca, spy_dir, f"round{round_index + 1}"), flush=True
                    )
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100,000 records, one round")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--latency", action="store_true", help="a fixed-rate latency phase per listener too")
    parser.add_argument("--py-spy", dest="py_spy", default="", help="record each phase's stacks into this directory")
    args = parser.parse_args()
    records, rounds = (100_000, 1) if args.quick else (args.records, args.rounds)
    spy_dir = Path(args.py_spy) if args.py_spy else None
    if spy_dir:
        spy_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-secure-cpu-") as directory:
        run(Path(directory), records, rounds, args.latency, spy_dir)


if __name__ == "__main__":
    main()
