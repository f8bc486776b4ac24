"""One run of the client scenarios against one broker, and its table of results by client and
scenario (what `python -m compat` prints, and what the side-by-side comparison compares)."""
from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

from .drivers import FAIL, SKIPPED, Driver, Result, all_drivers
from .scenarios import SCENARIOS


class Table:
    """Results by (client, scenario), and the clients' versions."""

    def __init__(self, drivers: list[Driver], scenarios: list[str]) -> None:
        self.clients = [d.name for d in drivers]
        self.versions = {d.name: d.version for d in drivers}
        self.scenarios = scenarios
        self.results: dict[tuple[str, str], Result] = {}

    @property
    def failures(self) -> dict[tuple[str, str], Result]:
        return {cell: r for cell, r in self.results.items() if r.status == FAIL}

    def status(self, client: str, scenario: str) -> str:
        return self.results[(client, scenario)].status

    def text(self) -> str:
        width = max(map(len, self.scenarios))
        widths = [max(len(c), 7) for c in self.clients]
        lines = ["scenario".ljust(width) + "  " + "  ".join(c.ljust(w) for c, w in
                                                            zip(self.clients, widths))]
        for s in self.scenarios:
            lines.append(s.ljust(width) + "  " + "  ".join(
                self.status(c, s).ljust(w) for c, w in zip(self.clients, widths)))
        return "\n".join(line.rstrip() for line in lines)

    def markdown(self) -> str:
        lines = ["| scenario | " + " | ".join(self.clients) + " |",
                 "|---|" + "---|" * len(self.clients)]
        for s in self.scenarios:
            lines.append(f"| {s} | " + " | ".join(self.status(c, s) for c in self.clients) + " |")
        return "\n".join(lines)

    def details(self) -> str:
        lines = [f"{client}: {version}" for client, version in self.versions.items() if version]
        for (client, scenario), result in self.results.items():
            if result.status in (FAIL, SKIPPED):
                lines.append(f"{result.status} {client} {scenario}: {result.detail}")
        return "\n".join(lines)


def run_suite(bootstrap: str, drivers: list[Driver] | None = None,
              scenarios: list[str] | None = None, jobs: int | None = None) -> Table:
    """Runs every scenario with every client against the broker at `bootstrap`, the clients
    side by side (each on topics of its own), and returns the table."""
    drivers = all_drivers() if drivers is None else drivers
    scenarios = list(SCENARIOS) if scenarios is None else scenarios
    run_id = uuid.uuid4().hex[:8]
    table = Table(drivers, scenarios)

    def run(driver: Driver) -> dict[str, Result]:
        reason = driver.unavailable()
        if reason:
            return {s: Result(SKIPPED, reason) for s in scenarios}
        return driver.run_all(bootstrap, scenarios, run_id)

    with ThreadPoolExecutor(max_workers=jobs or len(drivers)) as pool:
        for driver, results in zip(drivers, pool.map(run, drivers)):
            for scenario, result in results.items():
                table.results[(driver.name, scenario)] = result
    table.versions = {d.name: d.version for d in drivers}
    return table
