"""One driver per client: it runs the scenarios the client has an interface for (a method named
after the scenario, `compression` for the compression scenarios) and reports a result for each."""
from __future__ import annotations

import traceback
from dataclasses import dataclass

from ..scenarios import SCENARIOS, NotApplicable, create_topic, topic_name

PASS, FAIL, NOT_APPLICABLE, SKIPPED = "pass", "FAIL", "n/a", "skipped"


@dataclass(frozen=True)
class Result:
    status: str  # PASS, FAIL, NOT_APPLICABLE (no interface for it), SKIPPED (client missing)
    detail: str = ""


class Driver:
    name = "client"
    version = ""

    def unavailable(self) -> str | None:
        """Why the client cannot run here (not installed), or None."""
        return None

    def method(self, scenario: str):
        if scenario.startswith("compression-"):
            compression = getattr(self, "compression", None)
            codec = scenario.removeprefix("compression-")
            return None if compression is None else (
                lambda bootstrap, topic: compression(bootstrap, topic, codec))
        return getattr(self, scenario.replace("-", "_"), None)

    def run_all(self, bootstrap: str, scenarios: list[str], run_id: str) -> dict[str, Result]:
        return {s: self.run_one(bootstrap, s, run_id) for s in scenarios}

    def run_one(self, bootstrap: str, scenario: str, run_id: str) -> Result:
        method = self.method(scenario)
        if method is None:
            return Result(NOT_APPLICABLE, f"{self.name} has no interface for this")
        topic = topic_name(self.name, scenario, run_id)

        def scenario_run():
            partitions = SCENARIOS[scenario][1]
            if partitions:
                create_topic(bootstrap, topic, partitions)
            method(bootstrap, topic)

        return outcome(scenario_run)


def outcome(scenario_run) -> Result:
    """What calling `scenario_run()` makes of the scenario: PASS when it returns, NOT_APPLICABLE
    when it raises NotApplicable, FAIL (naming the failure and where) when it raises anything
    else."""
    try:
        scenario_run()
    except NotApplicable as reason:
        return Result(NOT_APPLICABLE, str(reason))
    except Exception as failure:  # noqa: BLE001 - any failure is the scenario's result
        where = traceback.extract_tb(failure.__traceback__)[-1]
        return Result(FAIL, f"{type(failure).__name__}: {failure} "
                            f"({where.filename.rsplit('/', 1)[-1]}:{where.lineno})")
    return Result(PASS)


def all_drivers() -> list[Driver]:
    from .with_aiokafka import AioKafkaDriver
    from .with_confluent import ConfluentDriver
    from .with_java import JavaDriver
    from .with_kafka_python import KafkaPythonDriver
    from .with_kcat import KcatDriver

    return [KafkaPythonDriver(), ConfluentDriver(), AioKafkaDriver(), KcatDriver(), JavaDriver()]
