"""Produce then consume throughput with confluent-kafka, for each broker and record size.

    python bench/throughput.py [--quick] [--broker pykbroker|tansu ...]

For each record size (1 KB and 100 B) a fresh 3-partition topic gets N records from one producer
(linger.ms=5, batch.size=1 MiB, acks=1, no compression, null keys). Then one consumer assigned to
all partitions from offset 0 reads them all back, and then three consumers, one per partition,
started together, read them again. Every client runs in its own process (bench/clients.py).

Figures are records/s and MB/s of record values (MB = 2^20 bytes, as Kafka's perf tools count);
the full plan repeats each size on fresh topics and reports the median. Each figure is a number
or "n/a (reason)": a broker that does not serve an API yet, fails or stalls costs at most the
phase time limits and never stops the run.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import proc, wire  # noqa: E402
from bench.figure import Figure, measured, not_available  # noqa: E402
from bench.plan import MIB, Plan, size_label  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CLIENT_GRACE = 30.0
CONSUMER_START_DELAY = 2.0   # time for every consumer process to start and connect
CONSUMER_IDLE_STOP = 1.0     # a side-by-side consumer stops this long after its last record
PARTITIONS = 3


@dataclass
class PhaseRecord:
    """One client run, for the details table."""
    broker: str
    phase: str
    records: int = 0
    data_bytes: int = 0
    seconds: float = 0.0
    broker_cpu_seconds: float | None = None
    client_cpu_seconds: float | None = None
    broker_rss_mib: float | None = None
    reason: str = ""


@dataclass
class ThroughputResult:
    figures: dict[str, Figure] = field(default_factory=dict)
    phases: list[PhaseRecord] = field(default_factory=list)
    bytes_written: int = 0
    notes: list[str] = field(default_factory=list)


def client_args(command: str, bootstrap: str, topic: str, time_limit: float, **options) -> list[str]:
    args = [sys.executable, "-m", "bench.clients", command, "--bootstrap", bootstrap,
            "--topic", topic, "--time-limit", str(time_limit)]
    for key, value in options.items():
        flag = f"--{key.replace('_', '-')}"
        args += [flag] if value is True else [flag, str(value)]
    return args


def client_result(stdout: str, stderr: str, returncode: int) -> dict:
    lines = stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = stderr.strip().splitlines()[-1:] or ["no output"]
        return {"ok": False, "reason": f"client exited with {returncode}: {tail[0]}"}


def run_clients(commands: list[list[str]], time_limit: float) -> list[dict]:
    """Run client processes side by side; kill any still running after the limit and a grace."""
    processes = [subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, text=True) for args in commands]
    deadline = time.monotonic() + time_limit + CLIENT_GRACE
    results = []
    for process in processes:
        try:
            stdout, stderr = process.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            results.append({"ok": False, "reason": f"client did not stop within "
                                                   f"{time_limit + CLIENT_GRACE:.0f}s"})
            continue
        results.append(client_result(stdout, stderr, process.returncode))
    return results


def run_client(command: str, bootstrap: str, topic: str, time_limit: float, **options) -> dict:
    return run_clients([client_args(command, bootstrap, topic, time_limit, **options)], time_limit)[0]


def consume_side_by_side(bootstrap: str, topic: str, time_limit: float, count: int,
                         partitions: int) -> dict:
    """One consumer process per partition, started together; one result for them all."""
    start_at = time.monotonic() + CONSUMER_START_DELAY
    commands = [client_args("consume", bootstrap, topic, time_limit, count=count, assign=partition,
                            idle_stop=CONSUMER_IDLE_STOP, start_at=start_at)
                for partition in range(partitions)]
    return combined(run_clients(commands, time_limit + CONSUMER_START_DELAY), count)


def combined(results: list[dict], expected: int) -> dict:
    """Records and bytes summed; seconds from the first consumer's start to the last record."""
    failed = [result for result in results if not result.get("ok")]
    if failed:
        return {"ok": False, "reason": failed[0].get("reason", "a consumer failed")}
    begin = min(result["begin"] for result in results)
    end = max(result["begin"] + result["seconds"] for result in results)
    records = sum(result["records"] for result in results)
    merged = {"ok": True, "records": records, "bytes": sum(result["bytes"] for result in results),
              "seconds": end - begin,
              "client_cpu_seconds": sum(result["client_cpu_seconds"] for result in results)}
    if records < expected:
        merged["reason"] = f"{records} of {expected} records read"
    return merged


def broker_cpu(pid: int) -> float | None:
    try:
        return proc.cpu_seconds(pid)
    except OSError:
        return None


def broker_rss(pid: int) -> float | None:
    try:
        return proc.resident_mib(pid)
    except OSError:
        return None


def run_phase(broker, phase: str, run: Callable[[], dict]) -> tuple[dict, PhaseRecord]:
    """Run the clients of one phase, noting the broker's CPU time and resident memory."""
    cpu_before = broker_cpu(broker.pid)
    result = run()
    cpu_after = broker_cpu(broker.pid)
    record = PhaseRecord(broker.name, phase, result.get("records", 0), result.get("bytes", 0),
                         result.get("seconds", 0.0), client_cpu_seconds=result.get("client_cpu_seconds"),
                         broker_rss_mib=broker_rss(broker.pid), reason=result.get("reason", ""))
    if cpu_before is not None and cpu_after is not None:
        record.broker_cpu_seconds = cpu_after - cpu_before
    return result, record


def usable(run: dict) -> bool:
    return bool(run.get("ok") and run.get("seconds"))


def complete(run: dict | None) -> bool:
    return run is not None and usable(run) and not run.get("reason")


def rate_figures(runs: list[dict]) -> tuple[Figure, Figure]:
    """(MB/s, records/s): the median over the runs, or n/a with the first run's reason."""
    good = [run for run in runs if usable(run)]
    if not good:
        reason = runs[0].get("reason", "failed") if runs else "not run"
        return not_available(reason), not_available(reason)
    notes = [f"median of {len(good)}"] if len(good) > 1 else []
    notes += [f"partial: {run['reason']}" for run in good if run.get("reason")][:1]
    note = "; ".join(notes)
    return (measured(statistics.median(run["bytes"] / MIB / run["seconds"] for run in good), note),
            measured(statistics.median(run["records"] / run["seconds"] for run in good), note))


def unserved_apis(bootstrap: str) -> list[str]:
    apis = wire.advertised_apis(bootstrap)
    wanted = {wire.PRODUCE: "Produce", wire.FETCH: "Fetch"}
    return [name for key, name in wanted.items() if key not in apis]


def fresh_topic(label: str) -> str:
    return f"bench-{label}-{uuid.uuid4().hex[:8]}"


def create_topic(broker, topic: str, time_limit: float) -> dict:
    created = run_client("create-topic", broker.bootstrap, topic, time_limit, partitions=PARTITIONS)
    if created.get("ok") and created["partitions"] != PARTITIONS:
        created["note"] = f"topic has {created['partitions']} partitions, not {PARTITIONS}"
    return created


@dataclass(frozen=True)
class Readiness:
    """Why the broker cannot be written to or read from ('' when it can)."""
    produce: str = ""
    consume: str = ""


def probe_topic(broker, plan: Plan) -> tuple[str, dict]:
    topic = fresh_topic("probe")
    return topic, create_topic(broker, topic, plan.probe_time_limit)


def readiness(broker, plan: Plan) -> Readiness:
    """Checked in seconds, not minutes: advertised APIs, then one record written and read back."""
    try:
        missing = unserved_apis(broker.bootstrap)
    except (OSError, EOFError, RuntimeError) as error:
        return Readiness(f"ApiVersions failed: {error}", f"ApiVersions failed: {error}")
    no_fetch = "broker does not serve Fetch yet" if "Fetch" in missing else ""
    if "Produce" in missing:
        return Readiness("broker does not serve Produce yet", no_fetch or "nothing can be written")
    topic, created = probe_topic(broker, plan)
    if not created.get("ok"):
        reason = created.get("reason", "topic creation failed")
        return Readiness(reason, reason)
    half = plan.probe_time_limit / 2
    written = run_client("produce", broker.bootstrap, topic, half, count=1, size=100)
    if not written.get("ok"):
        return Readiness(f"test write failed: {written.get('reason', '')}", "nothing can be written")
    if no_fetch:
        return Readiness("", no_fetch)
    read = run_client("consume", broker.bootstrap, topic, half, count=1,
                      partitions=created["partitions"])
    return Readiness("", "" if read.get("ok") else f"test read failed: {read.get('reason', '')}")


@dataclass
class Round:
    """One fresh topic written, then read back by one consumer, then by one per partition."""
    written: dict
    read: dict | None = None
    read_side_by_side: dict | None = None
    seconds: float = 0.0


def read_back(broker, plan: Plan, topic: str, partitions: int, count: int, label: str,
              result: ThroughputResult) -> tuple[dict, dict]:
    limit = plan.phase_time_limit
    read, record = run_phase(broker, f"consume {label}", lambda: run_client(
        "consume", broker.bootstrap, topic, limit, count=count, partitions=partitions))
    result.phases.append(record)
    if not complete(read):
        return read, {"ok": False, "reason": "not run: one consumer did not read everything"}
    together, record = run_phase(broker, f"consume {label}, {partitions} consumers", lambda:
                                 consume_side_by_side(broker.bootstrap, topic, limit, count, partitions))
    result.phases.append(record)
    return read, together


def one_round(broker, plan: Plan, size: int, ready: Readiness, result: ThroughputResult,
              tag: str) -> Round:
    if not broker.process_alive():
        return Round({"ok": False, "reason": "broker process is gone"})
    begin, label = time.monotonic(), f"{size_label(size)}{tag}"
    topic, count, limit = fresh_topic(f"{size}b"), plan.record_counts[size], plan.phase_time_limit
    created = create_topic(broker, topic, limit)
    if not created.get("ok"):
        return Round({"ok": False, "reason": created.get("reason", "topic creation failed")})
    if created.get("note"):
        result.notes.append(f"{broker.name}, {label}: {created['note']}")
    written, record = run_phase(broker, f"produce {label}", lambda: run_client(
        "produce", broker.bootstrap, topic, limit, count=count, size=size))
    result.phases.append(record)
    result.bytes_written += written.get("bytes", 0)
    if not written.get("ok") or ready.consume:
        return Round(written, seconds=time.monotonic() - begin)
    read, together = read_back(broker, plan, topic, created["partitions"], written["records"],
                               label, result)
    return Round(written, read, together, time.monotonic() - begin)


def worth_another(last: Round, ready: Readiness, deadline: float) -> bool:
    """Repeat only after a clean round, and only when one more fits in the time budget."""
    clean = complete(last.written) and (bool(ready.consume) or complete(last.read))
    clean = clean and (bool(ready.consume) or complete(last.read_side_by_side))
    return clean and time.monotonic() + 1.5 * last.seconds < deadline


def consume_reason(rounds: list[Round], ready: Readiness) -> str:
    if ready.consume:
        return ready.consume
    return "nothing was written" if not any(usable(r.written) for r in rounds) else ""


def measure_size(broker, plan: Plan, size: int, ready: Readiness, result: ThroughputResult,
                 deadline: float) -> None:
    if ready.produce:
        mark_direction(result, "produce", size, ready.produce)
        mark_direction(result, "consume", size, ready.consume)
        return
    rounds = []
    for repetition in range(plan.repetitions):
        if rounds and not worth_another(rounds[-1], ready, deadline):
            break
        tag = f" #{repetition + 1}" if plan.repetitions > 1 else ""
        rounds.append(one_round(broker, plan, size, ready, result, tag))
    figures = result.figures
    figures[f"produce_mbps_{size}"], figures[f"produce_rps_{size}"] = rate_figures(
        [r.written for r in rounds])
    reason = consume_reason(rounds, ready)
    if reason:
        mark_direction(result, "consume", size, reason)
        return
    figures[f"consume_mbps_{size}"], figures[f"consume_rps_{size}"] = rate_figures(
        [r.read for r in rounds if r.read is not None])
    figures[f"consume_parallel_mbps_{size}"], figures[f"consume_parallel_rps_{size}"] = rate_figures(
        [r.read_side_by_side for r in rounds if r.read_side_by_side is not None])


def mark_direction(result: ThroughputResult, direction: str, size: int, reason: str) -> None:
    for kind in [direction] + (["consume_parallel"] if direction == "consume" else []):
        result.figures[f"{kind}_mbps_{size}"] = not_available(reason)
        result.figures[f"{kind}_rps_{size}"] = not_available(reason)


def mark_size(result: ThroughputResult, size: int, reason: str) -> None:
    mark_direction(result, "produce", size, reason)
    mark_direction(result, "consume", size, reason)


def mark_all(result: ThroughputResult, plan: Plan, reason: str) -> ThroughputResult:
    for size in plan.record_counts:
        mark_size(result, size, reason)
    return result


def measure(broker, plan: Plan) -> ThroughputResult:
    """Throughput figures of a running broker for every record size of the plan.

    Each size gets up to plan.repetitions rounds on fresh topics (median reported); rounds after
    the first run only while the broker's share of plan.throughput_budget lasts.
    """
    result = ThroughputResult()
    ready = readiness(broker, plan)
    deadline = time.monotonic() + plan.throughput_budget
    for size in plan.record_counts:
        measure_size(broker, plan, size, ready, result, deadline)
    return result


def write_bulk(broker, plan: Plan, size: int) -> tuple[dict, PhaseRecord]:
    """Write plan.bulk_bytes more data (no consume), to see whether memory grows with the log."""
    topic = fresh_topic("bulk")
    created = create_topic(broker, topic, plan.bulk_time_limit)
    if not created.get("ok"):
        return created, PhaseRecord(broker.name, "bulk write", reason=created.get("reason", ""))
    return run_phase(broker, "bulk write", lambda: run_client(
        "produce", broker.bootstrap, topic, plan.bulk_time_limit,
        count=plan.bulk_bytes // size, size=size))


def measure_fresh_broker(broker, plan: Plan) -> ThroughputResult:
    try:
        broker.start()
    except Exception as error:
        return mark_all(ThroughputResult(), plan, f"broker did not start: {error}")
    try:
        return measure(broker, plan)
    finally:
        broker.stop()


def main() -> None:
    import argparse
    import tempfile

    from bench import report
    from bench.brokers import make_broker
    from bench.plan import FULL, QUICK

    parser = argparse.ArgumentParser(description="Produce and consume throughput, pykbroker beside tansu.")
    parser.add_argument("--quick", action="store_true", help="fewer records, shorter limits")
    parser.add_argument("--broker", action="append", choices=["pykbroker", "tansu"])
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    figures, phases = {}, []
    for name in args.broker or ["pykbroker", "tansu"]:
        with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as workdir:
            result = measure_fresh_broker(make_broker(name, Path(workdir)), plan)
        figures[name], phases = result.figures, phases + result.phases
    print(report.summary_table(figures, plan, only_throughput=True))
    print()
    print(report.phase_table(phases))


if __name__ == "__main__":
    main()
