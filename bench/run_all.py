"""Every benchmark in one run: pykbroker beside tansu, results to bench/results and docs/benchmarks.md.

    python -m bench              full run (a few minutes), updates docs/benchmarks.md
    python -m bench --quick      smoke test (about a minute), writes bench/results/quick.md only

Per broker: a few starts timed until Metadata is answered, one start kept running, idle resident
memory, produce and consume throughput (bench/throughput.py), resident memory after the data,
and for pykbroker after a further bulk write. Then the codec benchmark (bench/codec_bench.py).
Every figure is a number or "n/a (reason)"; every phase has a time limit.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import footprint, report, throughput  # noqa: E402
from bench.brokers import make_broker, pykbroker_version, tansu_version  # noqa: E402
from bench.figure import Figure, not_available  # noqa: E402
from bench.plan import BULK_BROKERS, BULK_RECORD_SIZE, FULL, MIB, QUICK, Plan  # noqa: E402

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DOCS = REPO / "docs" / "benchmarks.md"
CODEC_TIME_LIMIT = 120.0


@dataclass
class BrokerReport:
    figures: dict[str, Figure] = field(default_factory=dict)
    phases: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def all_unavailable(plan: Plan, reason: str) -> dict[str, Figure]:
    return {metric.key: not_available(reason) for metric in report.all_metrics(plan)}


def holding_note(bytes_held: int) -> str:
    return f"holding {bytes_held / MIB:,.0f} MB"


def bulk_figure(broker, plan: Plan, result: BrokerReport, bytes_held: int) -> Figure:
    if broker.name not in BULK_BROKERS:
        return not_available("not run: memory storage keeps every record in RAM")
    if plan.bulk_bytes == 0:
        return not_available("not run in this plan")
    if not result.figures.get(f"produce_mbps_{BULK_RECORD_SIZE}", not_available("")).measured:
        return not_available("produce does not work")
    say(f"{broker.name}: bulk write of {plan.bulk_bytes // MIB:,} MB")
    written, phase = throughput.write_bulk(broker, plan, BULK_RECORD_SIZE)
    result.phases.append(phase)
    if not written.get("ok"):
        return not_available(written.get("reason", "bulk write failed"))
    return footprint.resident_figure(broker.pid, holding_note(bytes_held + written["bytes"]))


def session(broker, plan: Plan, result: BrokerReport) -> None:
    """Idle memory, throughput, memory after the data, bulk write; on a running broker."""
    result.figures["idle_rss"] = footprint.idle_resident(broker.pid, plan.idle_seconds)
    say(f"{broker.name}: idle resident memory {result.figures['idle_rss'].text()} MB; throughput")
    measured = throughput.measure(broker, plan)
    result.figures.update(measured.figures)
    result.phases += measured.phases
    result.notes += measured.notes
    result.figures["rss_after_throughput"] = (
        footprint.resident_figure(broker.pid, holding_note(measured.bytes_written))
        if measured.bytes_written else not_available("nothing was written"))
    result.figures["rss_after_bulk"] = bulk_figure(broker, plan, result, measured.bytes_written)


def measure_broker(name: str, plan: Plan, workdir: Path) -> BrokerReport:
    result = BrokerReport(figures=all_unavailable(plan, "not reached"))
    say(f"{name}: {plan.startup_trials} start(s)")
    seconds, failure = footprint.extra_starts(name, workdir, plan.startup_trials - 1)
    broker = make_broker(name, workdir / "main")
    try:
        seconds.append(broker.start())
    except Exception as error:
        reason = f"broker did not start: {error}"
        result.figures = all_unavailable(plan, reason)
        result.figures["startup"] = footprint.startup_figure(seconds, reason)
        return result
    result.figures["startup"] = footprint.startup_figure(seconds, failure)
    try:
        session(broker, plan, result)
    except Exception as error:  # a harness bug or a dead broker must not lose the other broker
        result.notes.append(f"{name}: session stopped early: {type(error).__name__}: {error}")
    finally:
        if not broker.process_alive():
            result.notes.append(f"{name}: broker process died; log tail: {broker.log_tail(3)}")
        broker.stop()
    return result


def discard_data(directory: Path) -> None:
    """Delete a broker's logs and flush the disk, so their write-back does not slow the next one."""
    shutil.rmtree(directory, ignore_errors=True)
    os.sync()


def codec_output() -> str:
    try:
        done = subprocess.run([sys.executable, str(BENCH / "codec_bench.py")], cwd=REPO,
                              capture_output=True, text=True, timeout=CODEC_TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return f"n/a (did not finish within {CODEC_TIME_LIMIT:.0f} s)"
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"n/a (exited with {done.returncode}: {tail})"
    return done.stdout


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Run every benchmark, pykbroker beside tansu.")
    parser.add_argument("--quick", action="store_true",
                        help="fewer records and shorter limits; writes bench/results/quick.md only")
    parser.add_argument("--broker", action="append", choices=list(report.BROKER_ORDER),
                        help="measure only this broker (repeatable)")
    parser.add_argument("--no-codec", action="store_true", help="skip the codec benchmark")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where pykbroker keeps its logs during the run (default: a temp dir)")
    return parser.parse_args()


def output_path(plan: Plan) -> Path:
    return BENCH / "results" / ("latest.md" if plan is FULL else "quick.md")


def measure_all(names: list[str], plan: Plan, parent: Path | None) -> dict[str, BrokerReport]:
    workdir = Path(tempfile.mkdtemp(prefix="pykbroker-bench-", dir=parent))
    reports = {}
    try:
        for name in names:
            reports[name] = measure_broker(name, plan, workdir / name)
            discard_data(workdir / name)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return reports


def write_results(reports: dict[str, BrokerReport], plan: Plan, codec: str, seconds: float,
                  load_before: str, update_docs: bool) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    content = dict(
        title=f"Results ({plan.name} run, {stamp}, {seconds:.0f} s)",
        figures={name: result.figures for name, result in reports.items()},
        phases=[phase for result in reports.values() for phase in result.phases],
        notes=[note for result in reports.values() for note in result.notes], plan=plan,
        machine=report.machine_lines(tansu_version(), pykbroker_version(), load_before),
        codec_output=codec)
    path = output_path(plan)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.render(level=1, **content))
    if update_docs:
        report.update_docs(DOCS, report.render(level=3, **content))
    print()
    print(path.read_text())
    return path


def main() -> None:
    args = arguments()
    plan = QUICK if args.quick else FULL
    begin, load_before = time.monotonic(), report.load_average()
    reports = measure_all(args.broker or list(report.BROKER_ORDER), plan, args.workdir)
    say("codec benchmark")
    codec = "skipped (--no-codec)" if args.no_codec else codec_output()
    update_docs = plan is FULL and not args.no_docs
    path = write_results(reports, plan, codec, time.monotonic() - begin, load_before, update_docs)
    say(f"written to {path.relative_to(REPO)}" + (" and docs/benchmarks.md" if update_docs else ""))


if __name__ == "__main__":
    main()
