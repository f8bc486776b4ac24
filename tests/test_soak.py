"""The soak (`make soak`, bench/soak): a run of a few seconds writes its report, its samples and
its plots; and the verdict tells a flat series from a growing one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.soak.analysis import RSS_ALLOWANCE, trend

REPO = Path(__file__).resolve().parent.parent
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_a_few_seconds_of_soak_write_the_report_the_samples_and_the_plots(tmp_path):
    env = {**os.environ, "SOAK_SECONDS": "4"}
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.soak",
            "--targets",
            "single",
            "--results-dir",
            str(tmp_path / "results"),
            "--workdir",
            str(tmp_path / "brokers"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-2000:]

    [report] = (tmp_path / "results").glob("soak-*.md")
    text = report.read_text()
    assert "**Verdict: " in text
    assert "| single |" in text  # the broker's row and the target's row
    [samples] = (tmp_path / "results").glob("soak-*.csv")
    assert samples.read_text().startswith("at_s,load_average,single_rss_mib,single_descriptors,single_threads")
    assert len(samples.read_text().splitlines()) > 4
    plots = sorted(path.name.removeprefix(report.stem) for path in (tmp_path / "results").glob("soak-*.png"))
    assert plots == ["-cpu.png", "-descriptors.png", "-latency.png", "-overview.png", "-rss.png", "-threads.png"]
    for plot in (tmp_path / "results").glob("soak-*.png"):
        assert plot.read_bytes().startswith(PNG_SIGNATURE)
        assert f"]({plot.name})" in text  # the report shows every plot


def test_memory_that_keeps_growing_after_warm_up_is_not_flat_and_noise_is():
    times = [5.0 * i for i in range(100)]
    noisy = [100 + (3 if i % 2 else -3) for i in range(100)]
    growing = [100 + 0.2 * i for i in range(100)]  # +15 MiB from the first quarter to the last

    assert trend(times, noisy, RSS_ALLOWANCE).flat
    leaking = trend(times, growing, RSS_ALLOWANCE)
    assert not leaking.flat
    assert round(leaking.growth) == 15 and round(leaking.slope_per_hour) == 144
