"""The Java client (kafka-clients 3.9.1): `compat/java/CompatScenarios.java`, compiled once per
process, runs every scenario in one JVM."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from .. import java
from ..scenarios import SCENARIOS, create_topic, topic_name
from . import FAIL, NOT_APPLICABLE, PASS, Driver, Result

SOURCE = Path(__file__).resolve().parents[1] / "java" / "CompatScenarios.java"
_compiled: Path | None = None


def compiled() -> Path:
    global _compiled
    if _compiled is None:
        directory = Path(tempfile.mkdtemp(prefix="compat-java-"))
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        _compiled = java.compile_sources([SOURCE], directory)
    return _compiled


class JavaDriver(Driver):
    name = "java"

    def unavailable(self):
        try:
            jars = java.class_path()
            java.tool("javac")
            java.tool("java")
        except java.JavaUnavailable as missing:
            return str(missing)
        self.version = f"kafka-clients {java.kafka_clients_version(jars[0])}"
        return None

    def run_all(self, bootstrap, scenarios, run_id):
        results: dict[str, Result] = {}
        runnable = []
        for scenario in scenarios:
            partitions = SCENARIOS[scenario][1]
            try:
                if partitions:
                    create_topic(bootstrap, topic_name(self.name, scenario, run_id), partitions)
                runnable.append(scenario)
            except Exception as failure:  # noqa: BLE001
                results[scenario] = Result(FAIL, f"setup: {type(failure).__name__}: {failure}")
        if runnable:
            try:
                outcome = java.run_main(compiled(), "CompatScenarios", bootstrap, run_id,
                                        *runnable, timeout=60 + 60 * len(runnable))
                output = outcome.stdout
            except Exception as failure:  # noqa: BLE001
                output = ""
                problem = f"{type(failure).__name__}: {failure}"
            else:
                problem = (f"no result (exit code {outcome.returncode}): "
                           f"{java.without_logging_noise(outcome.stderr)[-2000:]}")
            reported = {}
            for line in output.splitlines():
                if line.startswith("RESULT "):
                    _, scenario, status, *detail = line.split(" ", 3)
                    reported[scenario] = Result({"pass": PASS, "n/a": NOT_APPLICABLE}.get(
                        status, FAIL), " ".join(detail))
            for scenario in runnable:
                results[scenario] = reported.get(scenario, Result(FAIL, problem))
        return {s: results[s] for s in scenarios}
