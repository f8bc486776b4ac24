"""Every benchmark in one run: pykbroker beside Apache Kafka 3.9.0 and tansu, results to
bench/results and docs/benchmarks.md.

    python -m bench                      full run, updates docs/benchmarks.md and bench/results/throughput.png
    python -m bench --quick              smoke run: bench/results/quick.md and throughput-quick.png only
    python -m bench --only core          one section (repeatable); --skip SECTION leaves one out

Sections: `core` (one broker, plaintext; below), the sections of other modules listed in
EXTRA_SECTIONS (each a module with `run(workdir, plan, say) -> Section`, imported only when it
runs: a module not there yet is reported as "n/a (module missing)"), and `codec`.

The core section: per broker a few starts timed until Metadata is answered, then one start kept
running, with its idle resident memory; with the three brokers running, throughput rounds taking
turns (bench/throughput.py measure_alternating); then per broker its resident memory after the
data and, for the brokers that keep logs on disk (pykbroker, Kafka), after a further bulk write.
Every figure is a number or "n/a (reason)"; every phase has a time limit.
"""
from __future__ import annotations

import argparse
import compileall
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import footprint, report, throughput  # noqa: E402
from bench.brokers import kafka_version, make_broker, pykbroker_version, tansu_version  # noqa: E402
from bench.figure import Figure, not_available  # noqa: E402
from bench.plan import BULK_BROKERS, BULK_RECORD_SIZE, FULL, MIB, QUICK, Plan  # noqa: E402
from bench.plot import throughput_plot  # noqa: E402
from bench.sections import Section  # noqa: E402

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DOCS = REPO / "docs" / "benchmarks.md"
CODEC_TIME_LIMIT = 120.0

Say = Callable[[str], None]
SectionRunner = Callable[[Path, Plan, Say], Section]

# name -> (module, title): each module exposes `section(workdir: Path, plan: Plan, say) -> Section`
EXTRA_SECTIONS: dict[str, tuple[str, str]] = {
    "secure": ("bench.secure", "TLS and SASL_SSL, one broker"),
    "cluster": ("bench.cluster_throughput", "Three brokers, replication factor 3"),
    "latency": ("bench.latency", "Produce latency at a fixed rate"),
}
SECTION_NAMES = ("core", *EXTRA_SECTIONS, "codec")


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


def start_broker(name: str, plan: Plan, workdir: Path, result: BrokerReport):
    """Timed starts (the extra ones stopped at once); the running broker, or None."""
    say(f"{name}: {plan.startup_trials} start(s)")
    seconds, failure = footprint.extra_starts(name, workdir, plan.startup_trials - 1)
    broker = make_broker(name, workdir / "main")
    try:
        seconds.append(broker.start())
    except Exception as error:
        reason = f"broker did not start: {error}"
        result.figures = all_unavailable(plan, reason)
        result.figures["startup"] = footprint.startup_figure(seconds, reason)
        return None
    result.figures["startup"] = footprint.startup_figure(seconds, failure)
    result.figures["idle_rss"] = footprint.idle_resident(broker.pid, plan.idle_seconds)
    say(f"{name}: started in {result.figures['startup'].text(3)} s, idle resident memory "
        f"{result.figures['idle_rss'].text()} MB")
    return broker


def after_rounds(broker, plan: Plan, result: BrokerReport, bytes_written: int) -> None:
    """Resident memory after the data, then after a bulk write."""
    result.figures["rss_after_throughput"] = (
        footprint.resident_figure(broker.pid, holding_note(bytes_written))
        if bytes_written else not_available("nothing was written"))
    result.figures["rss_after_bulk"] = bulk_figure(broker, plan, result, bytes_written)


def stop_broker(broker, result: BrokerReport) -> None:
    if not broker.process_alive():
        result.notes.append(f"{broker.name}: broker process died; log tail: {broker.log_tail(3)}")
    broker.stop()


def measure_running(brokers: list, plan: Plan, reports: dict[str, BrokerReport]) -> None:
    measured = throughput.measure_alternating(brokers, plan, say)
    for broker in brokers:
        result, outcome = reports[broker.name], measured[broker.name]
        result.figures.update(outcome.figures)
        result.phases += outcome.phases
        result.notes += outcome.notes
        try:
            after_rounds(broker, plan, result, outcome.bytes_written)
        except Exception as error:  # a dead broker must not lose the others' figures
            result.notes.append(f"{broker.name}: stopped early: {type(error).__name__}: {error}")


def measure_all(names: list[str], plan: Plan, parent: Path | None) -> dict[str, BrokerReport]:
    workdir = Path(tempfile.mkdtemp(prefix="pykbroker-bench-", dir=parent))
    reports = {name: BrokerReport(figures=all_unavailable(plan, "not reached")) for name in names}
    running = []
    try:
        for name in names:
            broker = start_broker(name, plan, workdir / name, reports[name])
            if broker is not None:
                running.append(broker)
        try:
            measure_running(running, plan, reports)
        except Exception as error:  # a harness bug: keep what the brokers measured
            for name in names:
                reports[name].notes.append(f"{name}: throughput stopped: {type(error).__name__}: {error}")
    finally:
        for broker in running:
            stop_broker(broker, reports[broker.name])
        shutil.rmtree(workdir, ignore_errors=True)
        os.sync()
    return reports


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


def section_runner(name: str) -> SectionRunner | str:
    """The `run(workdir, plan, say) -> Section` of a module in EXTRA_SECTIONS, or why there is none."""
    module_name = EXTRA_SECTIONS[name][0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and module_name.startswith(error.name):
            return "module missing"
        return f"import failed: {error}"
    except Exception as error:
        return f"import failed: {type(error).__name__}: {error}"
    runner = getattr(module, "run", None)
    return runner if callable(runner) else f"{module_name} has no function run(workdir, plan, say)"


def extra_section(name: str, plan: Plan, parent: Path | None) -> Section:
    module_name, title = EXTRA_SECTIONS[name]
    runner = section_runner(name)
    if isinstance(runner, str):
        return Section(f"{title} (`{module_name}`)", notes=[f"n/a ({runner})"])
    say(f"section {name} ({module_name})")
    workdir = Path(tempfile.mkdtemp(prefix=f"pykbroker-bench-{name}-", dir=parent))
    try:
        return runner(workdir, plan, say)
    except Exception as error:  # one section failing must not lose the others
        return Section(f"{title} (`{module_name}`)",
                       notes=[f"n/a (section failed: {type(error).__name__}: {error})"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run every benchmark, pykbroker beside Apache Kafka 3.9.0 and tansu.")
    parser.add_argument("--quick", action="store_true",
                        help="fewer records and shorter limits; writes bench/results/quick.md only")
    parser.add_argument("--broker", action="append", choices=list(report.BROKER_ORDER),
                        help="core section: measure only this broker (repeatable)")
    parser.add_argument("--only", action="append", choices=SECTION_NAMES, metavar="SECTION",
                        help=f"run only this section (repeatable): {', '.join(SECTION_NAMES)}")
    parser.add_argument("--skip", action="append", choices=SECTION_NAMES, metavar="SECTION",
                        default=[], help="leave this section out (repeatable)")
    parser.add_argument("--no-codec", action="store_true", help="skip the codec benchmark (--skip codec)")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where the brokers keep their logs during the run (default: a temp dir)")
    return parser.parse_args()


def chosen_sections(args: argparse.Namespace) -> list[str]:
    skipped = set(args.skip) | ({"codec"} if args.no_codec else set())
    return [name for name in (args.only or SECTION_NAMES) if name not in skipped]


def output_paths(plan: Plan) -> tuple[Path, Path]:
    """The results markdown and the throughput plot of this plan."""
    results = BENCH / "results"
    if plan is FULL:
        return results / "latest.md", results / "throughput.png"
    return results / "quick.md", results / "throughput-quick.png"


def core_section(names: list[str], plan: Plan, parent: Path | None,
                 plot_path: Path) -> tuple[Section, str]:
    """The single-broker section and the markdown line of its plot."""
    reports = measure_all(names, plan, parent)
    figures = {name: result.figures for name, result in reports.items()}
    phases = [phase for result in reports.values() for phase in result.phases]
    notes = [note for result in reports.values() for note in result.notes]
    failure = throughput_plot(figures, plan, plot_path, subtitle=f"plan {plan.name}")
    link = (f"![Throughput by record size and broker]({plot_path.name})" if not failure
            else f"Throughput plot: n/a ({failure})")
    return report.core_section(figures, phases, notes, plan), link


def write_results(sections: list[Section], plan: Plan, codec: str | None, seconds: float,
                  load_before: str, plot_link: str, update_docs: bool) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    versions = {"pykbroker": pykbroker_version(), "kafka": kafka_version(), "tansu": tansu_version()}
    content = dict(title=f"Results ({plan.name} run, {stamp}, {seconds:.0f} s)", sections=sections,
                   plan=plan, machine=report.machine_lines(versions, load_before),
                   codec_output=codec)
    path, _ = output_paths(plan)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.render(level=1, plot=plot_link, **content))
    if update_docs:
        docs_link = plot_link.replace("](", "](../bench/results/", 1) if plot_link.startswith("!") else plot_link
        report.update_docs(DOCS, report.render(level=3, plot=docs_link, **content))
    print()
    print(path.read_text())
    return path


def compile_pykbroker() -> None:
    """Bytecode for every module, as an installed package (and `make run`) has it: a broker that
    compiles its sources while starting pays for it in start time and resident memory."""
    compileall.compile_dir(str(REPO / "pykbroker"), quiet=1)


def main() -> None:
    args = arguments()
    plan = QUICK if args.quick else FULL
    compile_pykbroker()
    names = chosen_sections(args)
    begin, load_before = time.monotonic(), report.load_average()
    sections, plot_link = [], ""
    if "core" in names:
        section, plot_link = core_section(args.broker or list(report.BROKER_ORDER), plan,
                                          args.workdir, output_paths(plan)[1])
        sections.append(section)
    sections += [extra_section(name, plan, args.workdir) for name in names if name in EXTRA_SECTIONS]
    codec = None
    if "codec" in names:
        say("codec benchmark")
        codec = codec_output()
    update_docs = plan is FULL and not args.no_docs
    path = write_results(sections, plan, codec, time.monotonic() - begin, load_before, plot_link,
                         update_docs)
    say(f"written to {path.relative_to(REPO)}" + (" and docs/benchmarks.md" if update_docs else ""))


if __name__ == "__main__":
    main()
