"""One soak run: the brokers started, the load (bench/soak/load.py) on each target at the same
time, a sample (bench/soak/sampling.py) every few seconds, then everything stopped and the report
and plots written.

The targets run side by side for the whole duration: "single" is one pykbroker broker
(`BrokerProcess`), "cluster" three pykbroker brokers on a ZooKeeper of their own
(`BrokerCluster`), topics of replication factor 3. Both get the same load.
"""

from __future__ import annotations

import tempfile
import time
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path

from bench.brokers import pykbroker_version
from bench.soak.analysis import warmup_s
from bench.soak.load import Cadence, Load, Target
from bench.soak.plots import write_plots
from bench.soak.report import SoakRun, markdown, write_samples_csv
from bench.soak.sampling import Sampler
from pykbroker.testkit.cluster import BrokerCluster
from pykbroker.testkit.process import BrokerProcess

RESULTS = Path(__file__).resolve().parent.parent / "results"
TARGETS = ("single", "cluster")
CLUSTER_SIZE = 3
DEFAULT_INTERVAL_S = 5.0
BROKER_SETTINGS = {
    "num.partitions": "3",
    # segments of the soak's topics roll every half minute or so; retention deletes them soon after
    "log.retention.check.interval.ms": "30000",
    "log.segment.delete.delay.ms": "10000",
}


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


TARGET_TEXTS = {
    "single": "one broker",
    "cluster": "a three-broker cluster on ZooKeeper (replication factor 3, `min.insync.replicas=2`)",
}


def describe_load(cadence: Cadence, names: list[str]) -> str:
    targets = " and ".join(TARGET_TEXTS[name] for name in names)
    return (
        f"Load on each target, all at once: a producer with acks=1 and one with acks=all, "
        f"{cadence.records_per_second} records of 200 B per second each (linger.ms=1; their delivery "
        f"latencies are the produce latency below); a transactional producer, a transaction of "
        f"{cadence.records_per_transaction} records every {cadence.transaction_every_s:g} s, committed and "
        f"aborted in turn; a consumer group (read_committed, auto-commit) of {cadence.steady_members} steady "
        f"members over those three topics, and a member that joins every {cadence.churn_every_s:g} s and "
        f"leaves after {cadence.churn_stay_s:g} s; a topic created, written to (20 records, by a producer of "
        f"its own) and deleted every {cadence.topic_every_s:g} s. The three topics have 3 partitions, "
        "`segment.bytes=65536` and `retention.bytes=262144` (the transactional one, which gets a tenth "
        "of the bytes, 8192 and 32768), so that segments roll and are deleted "
        "throughout (the brokers check retention every 30 s, `log.retention.check.interval.ms=30000`, and "
        "remove deleted segments 10 s later, `log.segment.delete.delay.ms=10000`). "
        f"The targets, loaded at the same time on the same machine: {targets}."
    )


def start_single(stack: ExitStack, workdir: Path) -> tuple[Target, dict[str, int]]:
    broker = BrokerProcess(workdir / "single", BROKER_SETTINGS, start_timeout=60)
    broker.start()
    stack.callback(broker.stop)
    assert broker.process is not None
    return Target("single", broker.bootstrap, 1), {"single": broker.process.pid}


def start_cluster(stack: ExitStack, workdir: Path) -> tuple[Target, dict[str, int]]:
    cluster = BrokerCluster(workdir / "cluster", size=CLUSTER_SIZE, overrides=BROKER_SETTINGS, start_timeout=120)
    cluster.start()
    stack.callback(cluster.stop)
    pids = {f"cluster-{bid}": broker.process.pid for bid, broker in cluster.brokers.items() if broker.process}
    return Target("cluster", cluster.bootstrap, CLUSTER_SIZE), pids


STARTERS = {"single": start_single, "cluster": start_cluster}


def sample_interval(duration_s: float, asked: float | None) -> float:
    """5 s, or less for a run too short for a dozen samples at that pace."""
    return asked if asked else min(DEFAULT_INTERVAL_S, max(0.5, duration_s / 12))


def run_soak(
    duration_s: float,
    targets: list[str],
    results_dir: Path,
    *,
    interval_s: float | None = None,
    workdir: Path | None = None,
) -> Path:
    """Run the soak and write its results; the path of the report."""
    interval = sample_interval(duration_s, interval_s)
    cadence = Cadence().scaled_to(duration_s)
    started = datetime.now(timezone.utc)
    with ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pykbroker-soak-")))
        pids: dict[str, int] = {}
        loads: list[Load] = []
        for name in targets:
            say(f"starting {name}")
            target, own = STARTERS[name](stack, workdir)
            pids.update(own)
            loads.append(Load(target, cadence))
        run = SoakRun(
            started=started.strftime("%Y-%m-%d %H:%M UTC"),
            duration_s=duration_s,
            interval_s=interval,
            version=pykbroker_version(),
            labels=list(pids),
            load=describe_load(cadence, targets),
        )
        for load in loads:
            load.start()
            stack.callback(stop_load, load, run)
        say(f"load running for {duration_s:g} s on {', '.join(targets)}; sampling {', '.join(pids)}")
        run.samples = sample_for(Sampler(pids, loads), duration_s, interval)
        for load in loads:
            stop_load(load, run)
            counts, _ = load.stats.drain()
            run.totals[load.target.name] = counts
            run.errors[load.target.name] = list(load.stats.errors)
        say("stopping")
    return write_results(run, results_dir, started)


def stop_load(load: Load, run: SoakRun) -> None:
    if load.stop_event.is_set():
        return
    stuck = load.stop(timeout_s=30)
    if stuck:
        run.notes.append(f"on {load.target.name}, {', '.join(stuck)} did not stop within 30 s")


def sample_for(sampler: Sampler, duration_s: float, interval_s: float) -> list:
    samples = []
    begin = time.monotonic()
    next_report = begin + 60
    while (elapsed := time.monotonic() - begin) < duration_s:
        time.sleep(min(interval_s, max(0.0, duration_s - elapsed)))
        samples.append(sampler.take())
        if time.monotonic() >= next_report:
            say(progress(samples[-1]))
            next_report += 60
    return samples


def progress(sample) -> str:  # noqa: ANN001
    brokers = ", ".join(
        f"{label} {b.rss_mib:.0f} MiB/{b.descriptors} fds" if b else f"{label} gone"
        for label, b in sample.brokers.items()
    )
    return f"{sample.at_s / 60:.0f} min: {brokers}"


def write_results(run: SoakRun, results_dir: Path, started: datetime) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    stem = results_dir / f"soak-{started.strftime('%Y-%m-%d-%H%M')}"
    plots = write_plots(run.samples, run.labels, warmup_s(run.duration_s), stem)
    write_samples_csv(run, stem.with_suffix(".csv"))
    report = stem.with_suffix(".md")
    report.write_text(markdown(run, plots))
    return report
