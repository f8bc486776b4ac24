"""Produce then consume throughput with confluent-kafka, for each broker and record size.

    python bench/throughput.py [--quick] [--broker pykbroker|kafka|tansu ...]   (one broker after the other)

For each record size (1 KB and 100 B) a fresh 3-partition topic gets N records from one producer
(linger.ms=5, batch.size=1 MiB, acks=1, no compression, null keys). Then one tuned consumer
assigned to all partitions from offset 0 reads them all back; then a consumer with the client's
default settings, subscribed to the topic; then three tuned consumers, one per partition, started
together. Every client runs in its own process (bench/clients.py). Several running brokers take
turns (measure_alternating): each round runs every broker once, the order rotating by one broker
from round to round.

Figures are records/s and MB/s of record values (MB = 2^20 bytes, as Kafka's perf tools count),
and the broker's CPU seconds (utime + stime of the broker process) per GB moved; the full plan
repeats each size on fresh topics and reports the median. Each figure is a number
or "n/a (reason)": a broker that does not serve an API yet, fails or stalls costs at most the
phase time limits and never stops the run.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

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
    kind: str = ""          # produce, consume, consume_default, consume_parallel, bulk
    size: int = 0           # record size in bytes
    load: str = ""          # the 1-minute load average when the phase began
    detail: str = ""        # what else the phase showed (the default consumer's group join)


@dataclass
class ThroughputResult:
    figures: dict[str, Figure] = field(default_factory=dict)
    phases: list[PhaseRecord] = field(default_factory=list)
    bytes_written: int = 0
    notes: list[str] = field(default_factory=list)
    current_size: int = 0


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


def broker_pid(broker) -> int | None:
    try:
        return broker.pid
    except (AttributeError, KeyError, ValueError):
        return None


def broker_cpu(pid: int | None) -> float | None:
    try:
        return None if pid is None else proc.cpu_seconds(pid)
    except OSError:
        return None


def broker_rss(pid: int | None) -> float | None:
    try:
        return None if pid is None else proc.resident_mib(pid)
    except OSError:
        return None


def run_phase(broker, phase: str, run: Callable[[], dict]) -> tuple[dict, PhaseRecord]:
    """Run the clients of one phase, noting the broker's CPU time and resident memory."""
    load = load_average()
    cpu_before = broker_cpu(broker_pid(broker))
    result = run()
    cpu_after = broker_cpu(broker_pid(broker))
    record = PhaseRecord(broker.name, phase, result.get("records", 0), result.get("bytes", 0),
                         result.get("seconds", 0.0), client_cpu_seconds=result.get("client_cpu_seconds"),
                         broker_rss_mib=broker_rss(broker_pid(broker)), reason=result.get("reason", ""))
    record.load = load
    if result.get("join_seconds") is not None:
        record.detail = f"group join {result['join_seconds']:.2f} s"
    if cpu_before is not None and cpu_after is not None:
        record.broker_cpu_seconds = cpu_after - cpu_before
    return result, record


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return ""


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
    if not read.get("ok"):
        return Readiness("", f"test read failed: {read.get('reason', '')}")
    # A first group join may create the broker's offsets topic (Kafka: 50 partitions): not timed.
    run_client("consume", broker.bootstrap, topic, plan.probe_time_limit * 3, count=1, default=True)
    return Readiness()


@dataclass
class Round:
    """One fresh topic written, then read back by the tuned consumer, the default consumer and
    one tuned consumer per partition."""
    written: dict
    read: dict | None = None
    read_default: dict | None = None
    read_side_by_side: dict | None = None
    seconds: float = 0.0

    def reads(self) -> list[dict | None]:
        return [self.read, self.read_default, self.read_side_by_side]


CONSUME_KINDS = ("consume", "consume_default", "consume_parallel")
KINDS = ("produce",) + CONSUME_KINDS


def not_run(why: str) -> dict:
    return {"ok": False, "reason": f"not run: {why}"}


def read_back(broker, plan: Plan, topic: str, partitions: int, count: int, label: str,
              result: ThroughputResult, skip: frozenset[str] = frozenset()) -> tuple[dict, dict, dict]:
    """The three consume phases; a kind in `skip` (it failed in an earlier round) is not run."""
    limit = plan.phase_time_limit
    read = timed_phase(broker, f"consume {label}", "consume", result, lambda: run_client(
        "consume", broker.bootstrap, topic, limit, count=count, partitions=partitions))
    default = (not_run("failed in an earlier round") if "consume_default" in skip else
               timed_phase(broker, f"consume {label}, default consumer", "consume_default", result,
                           lambda: run_client("consume", broker.bootstrap, topic, limit,
                                              count=count, default=True)))
    if not complete(read):
        return read, default, not_run("one consumer did not read everything")
    together = timed_phase(broker, f"consume {label}, {partitions} consumers", "consume_parallel",
                           result, lambda: consume_side_by_side(broker.bootstrap, topic, limit,
                                                                count, partitions))
    return read, default, together


def timed_phase(broker, phase: str, kind: str, result: ThroughputResult,
                run: Callable[[], dict]) -> dict:
    """Run one phase, keep its record (with kind and record size) in the result."""
    outcome, record = run_phase(broker, phase, run)
    record.kind, record.size = kind, result.current_size
    result.phases.append(record)
    return outcome


def one_round(broker, plan: Plan, size: int, ready: Readiness, result: ThroughputResult,
              tag: str, skip: frozenset[str] = frozenset()) -> Round:
    if not broker.process_alive():
        return Round({"ok": False, "reason": "broker process is gone"})
    begin, label = time.monotonic(), f"{size_label(size)}{tag}"
    topic, count, limit = fresh_topic(f"{size}b"), plan.record_counts[size], plan.phase_time_limit
    result.current_size = size
    created = create_topic(broker, topic, limit)
    if not created.get("ok"):
        return Round({"ok": False, "reason": created.get("reason", "topic creation failed")})
    if created.get("note"):
        result.notes.append(f"{broker.name}, {label}: {created['note']}")
    written = timed_phase(broker, f"produce {label}", "produce", result, lambda: run_client(
        "produce", broker.bootstrap, topic, limit, count=count, size=size))
    result.bytes_written += written.get("bytes", 0)
    if not written.get("ok") or ready.consume:
        return Round(written, seconds=time.monotonic() - begin)
    read, default, together = read_back(broker, plan, topic, created["partitions"],
                                        written["records"], label, result, skip)
    return Round(written, read, default, together, time.monotonic() - begin)


def clean(last: Round, ready: Readiness) -> bool:
    """A round whose produce and tuned consume phases are complete (consume phases count only
    when the broker reads); a default consumer that failed is left out of later rounds."""
    core = [last.read, last.read_side_by_side]
    return complete(last.written) and (bool(ready.consume) or all(map(complete, core)))


def failed_kinds(rounds: list[Round]) -> frozenset[str]:
    """The default consumer, once it failed in a round (a broker whose group join does not work)."""
    failed = [r for r in rounds if r.read_default is not None and not complete(r.read_default)
              and not r.read_default.get("reason", "").startswith("not run")]
    return frozenset({"consume_default"} if failed else set())


def consume_reason(rounds: list[Round], ready: Readiness) -> str:
    if ready.consume:
        return ready.consume
    return "nothing was written" if not any(usable(r.written) for r in rounds) else ""


@dataclass
class BrokerRounds:
    """One broker's part of the alternating rounds: its readiness, its rounds per record size,
    and its throughput time so far (against plan.throughput_budget)."""
    broker: object
    ready: Readiness
    result: ThroughputResult
    rounds: dict[int, list[Round]] = field(default_factory=dict)
    spent: float = 0.0

    def wants_round(self, plan: Plan, size: int) -> bool:
        """The first round of a size always; another only after a clean one, within budget."""
        done = self.rounds.get(size, [])
        if self.ready.produce:
            return False
        if not done:
            return True
        return clean(done[-1], self.ready) and self.spent + 1.5 * done[-1].seconds < plan.throughput_budget


def size_figures(entry: BrokerRounds, size: int) -> None:
    result, rounds, ready = entry.result, entry.rounds.get(size, []), entry.ready
    if ready.produce:
        mark_size(result, size, ready.produce)
        return
    figures = result.figures
    figures[f"produce_mbps_{size}"], figures[f"produce_rps_{size}"] = rate_figures(
        [r.written for r in rounds])
    reason = consume_reason(rounds, ready)
    if reason:
        mark_direction(result, "consume", size, reason)
        return
    for index, kind in enumerate(CONSUME_KINDS):
        runs = [r.reads()[index] for r in rounds if r.reads()[index] is not None]
        figures[f"{kind}_mbps_{size}"], figures[f"{kind}_rps_{size}"] = rate_figures(runs)


def cpu_figures(result: ThroughputResult, size: int) -> None:
    """Broker CPU seconds (utime + stime) per GB (2^30 bytes) moved, over every round of a kind."""
    for kind in KINDS:
        phases = [phase for phase in result.phases if phase.kind == kind and phase.size == size
                  and phase.broker_cpu_seconds is not None and phase.data_bytes]
        if not phases:
            reason = result.figures.get(f"{kind}_mbps_{size}", not_available("not run")).reason
            result.figures[f"cpu_per_gb_{kind}_{size}"] = not_available(reason or "not measured")
            continue
        gigabytes = sum(phase.data_bytes for phase in phases) / 2**30
        cpu = sum(phase.broker_cpu_seconds or 0.0 for phase in phases)
        note = f"{len(phases)} rounds" if len(phases) > 1 else ""
        result.figures[f"cpu_per_gb_{kind}_{size}"] = measured(cpu / gigabytes, note)


def settle_disk() -> None:
    """Flush what the previous broker wrote, so that its write-back does not slow the next one."""
    os.sync()


def rotated(items: list, by: int) -> list:
    by %= max(1, len(items))
    return items[by:] + items[:by]


def measure_alternating(brokers: list, plan: Plan,
                        say: Callable[[str], None] = lambda _: None) -> dict[str, ThroughputResult]:
    """Throughput figures of running brokers, taking turns: for each record size, round 1 runs
    every broker once in the given order, round 2 in that order rotated by one, and so on; the
    median of each broker's rounds is reported. A broker that is not ready, fails or runs out of
    its plan.throughput_budget sits out the rest of its rounds."""
    entries = [BrokerRounds(broker, readiness(broker, plan), ThroughputResult()) for broker in brokers]
    for size in plan.record_counts:
        for repetition in range(plan.repetitions):
            tag = f" #{repetition + 1}" if plan.repetitions > 1 else ""
            for entry in rotated(entries, repetition):
                if not entry.wants_round(plan, size):
                    continue
                settle_disk()
                say(f"{entry.broker.name}: {size_label(size)} round {repetition + 1}")
                done = one_round(entry.broker, plan, size, entry.ready, entry.result, tag,
                                 failed_kinds(entry.rounds.get(size, [])))
                entry.rounds.setdefault(size, []).append(done)
                entry.spent += done.seconds
    for entry in entries:
        for size in plan.record_counts:
            size_figures(entry, size)
            cpu_figures(entry.result, size)
    return {entry.broker.name: entry.result for entry in entries}


def mark_direction(result: ThroughputResult, direction: str, size: int, reason: str) -> None:
    kinds = CONSUME_KINDS if direction == "consume" else (direction,)
    for kind in kinds:
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
    """Throughput figures of one running broker for every record size of the plan."""
    return measure_alternating([broker], plan)[broker.name]


def write_bulk(broker, plan: Plan, size: int) -> tuple[dict, PhaseRecord]:
    """Write plan.bulk_bytes more data (no consume), to see whether memory grows with the log."""
    topic = fresh_topic("bulk")
    created = create_topic(broker, topic, plan.bulk_time_limit)
    if not created.get("ok"):
        return created, PhaseRecord(broker.name, "bulk write", reason=created.get("reason", ""))
    written, record = run_phase(broker, "bulk write", lambda: run_client(
        "produce", broker.bootstrap, topic, plan.bulk_time_limit,
        count=plan.bulk_bytes // size, size=size))
    record.kind, record.size = "bulk", size
    return written, record


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

    parser = argparse.ArgumentParser(
        description="Produce and consume throughput, pykbroker beside Kafka 3.9.0 and tansu.")
    parser.add_argument("--quick", action="store_true", help="fewer records, shorter limits")
    parser.add_argument("--broker", action="append", choices=list(report.BROKER_ORDER))
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    figures, phases = {}, []
    for name in args.broker or list(report.BROKER_ORDER):
        with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as workdir:
            result = measure_fresh_broker(make_broker(name, Path(workdir)), plan)
        figures[name], phases = result.figures, phases + result.phases
    print(report.comparison_table(report.comparisons(figures, plan, only_throughput=True)))
    print()
    print(report.phase_table(phases))


if __name__ == "__main__":
    main()
