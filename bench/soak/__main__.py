"""`python -m bench.soak --minutes N` (`make soak MINUTES=N`): N minutes of steady, moderate load on
one pykbroker broker and, at the same time, on a three-broker pykbroker cluster on ZooKeeper,
sampling every broker process; the report and plots go to bench/results/soak-<date>*.

    python -m bench.soak --minutes 60
    SOAK_SECONDS=8 python -m bench.soak --targets single --results-dir /tmp/soak   # smoke run

See bench/soak/run.py for what runs and bench/soak/analysis.py for the verdict.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from bench.soak.run import RESULTS, TARGETS, run_soak


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="how long the load runs (default 60)")
    parser.add_argument("--seconds", type=float, help="how long the load runs, in seconds (wins over --minutes)")
    parser.add_argument("--targets", default=",".join(TARGETS), help="single, cluster or both (default)")
    parser.add_argument("--interval", type=float, help="seconds between samples (default 5, less for short runs)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS, help="where the report goes")
    parser.add_argument("--workdir", type=Path, help="the brokers' data (default: a temporary directory)")
    return parser.parse_args(argv)


def stop_on_sigterm() -> None:
    """SIGTERM (and SIGINT, also when started in the background) ends the run through its clean-up:
    the load stopped, the brokers and ZooKeeper stopped, no report."""

    def interrupted(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    stop_on_sigterm()
    seconds = float(os.environ.get("SOAK_SECONDS") or args.seconds or args.minutes * 60)
    targets = [name.strip() for name in args.targets.split(",") if name.strip()]
    unknown = [name for name in targets if name not in TARGETS]
    if unknown or not targets:
        print(f"unknown target {unknown}; choose from {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    try:
        report = run_soak(seconds, targets, args.results_dir, interval_s=args.interval, workdir=args.workdir)
    except KeyboardInterrupt as stopped:
        print(f"soak interrupted ({stopped}); brokers stopped, no report", file=sys.stderr)
        return 130
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
