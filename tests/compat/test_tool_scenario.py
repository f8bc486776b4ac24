"""Acceptance: Kafka 3.9.0's own command-line tools behave on pykbroker as on Kafka. One scenario
of named steps (`compat/tool_scenario.py`: topics, producing and consuming, offsets, consumer
groups, configs, client quotas, ACLs with SASL users, delete-records, leader election, log dirs,
the performance and verifiable clients, transactions, partition reassignment, delegation tokens,
features) runs against a secured pykbroker and a secured Kafka 3.9.0 (`compat/security_setup.py`),
started together for this module, each side's tools in one JVM (`compat/tool_shell.py`); exit
status, stdout and stderr are compared after normalizing. A difference fails unless
`compat/tool_differences.py` accepts it or the step waits for an API pykbroker does not serve yet
(AWAITING_FEATURE, strictly: such a step must still differ). pykbroker's own subcommands are held
to the output of Kafka's tool for the read-only steps that name them. docs/compatibility.md shows
the tables."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

import pytest

from compat import realkafka, tool_differences, tool_shell
from compat.security_setup import SecureKafkaBroker, SecurePykBroker
from compat.tool_differences import AWAITING_FEATURE, PYKBROKER_TOOL_ACCEPTED, accepted_reason
from compat.tool_scenario import BROKER_SETTINGS, STEPS, TOOLS, Side, run_side_by_side
from compat.tool_shell import TIMED_OUT, ToolShell, launcher_classes

from ..ci import skip_or_fail_in_ci
from .conftest import REPORT, started_together

pytestmark = pytest.mark.timeout(1200)  # the first test also starts both brokers and runs the scenario
COMPATIBILITY = Path(__file__).resolve().parents[2] / "docs" / "compatibility.md"


class TokenKafkaBroker(SecureKafkaBroker):
    """The secured Kafka with the scenario's settings."""

    def extra_settings(self, port: int) -> dict[str, str]:
        return {**super().extra_settings(port), **BROKER_SETTINGS}


def side(label: str, broker, data_dir: Path, shell: ToolShell) -> Side:
    """The broker as the steps see it, its files written into the shell's directory."""
    found = Side(
        label,
        broker.bootstrap_of("PLAIN"),
        broker.bootstrap_of("SCRAM"),
        broker.pki.ca,
        shell.work_dir,
        (data_dir,),
        shell,
    )
    found.write_files()
    return found


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    reason = realkafka.unavailable() or tool_shell.unavailable()
    if reason:
        skip_or_fail_in_ci(f"Kafka 3.9.0 and its tools cannot run here: {reason}")
    base = tmp_path_factory.mktemp("tool-scenario")
    ours, theirs = SecurePykBroker(base / "pykbroker"), TokenKafkaBroker(base / "kafka")
    ours.overrides.update(BROKER_SETTINGS)
    ours.start_timeout = 120  # it starts beside Kafka and the tools' two JVMs
    classes = launcher_classes(base / "classes")
    # both JVMs start (and load the tools' classes) while the brokers start
    with (
        ToolShell(base / "pykbroker-tools", classes) as our_shell,
        ToolShell(base / "kafka-tools", classes) as their_shell,
    ):
        with ThreadPoolExecutor(max_workers=2) as pool:
            warming = [pool.submit(shell.run, TOOLS["kafka-topics"], "--version") for shell in (our_shell, their_shell)]
            with started_together([ours, theirs]):
                for warm in warming:
                    warm.result()
                pykbroker = side("pykbroker", ours, ours.directory, our_shell)
                kafka = side("kafka", theirs, theirs.runs / str(theirs.port), their_shell)
                found = run_side_by_side(pykbroker, kafka)
    REPORT["compat: Kafka 3.9.0's tools on pykbroker and on Kafka 3.9.0"] = report(found)
    (base / "outcomes.json").write_text(json.dumps([asdict(outcome) for outcome in found], indent=1))
    return {outcome.step.name: outcome for outcome in found}


def report(found) -> str:
    lines = []
    for outcome in found:
        name = outcome.step.name
        verdict = (
            "same"
            if outcome.same
            else (
                "awaiting " + AWAITING_FEATURE[name]
                if name in AWAITING_FEATURE
                else "accepted"
                if accepted_reason(name)
                else "DIFFERENT"
            )
        )
        lines.append(f"{outcome.seconds:5.1f} s  {verdict:<12.60} {name}")
    return "\n".join(lines)


def shown(outcome) -> str:
    return f"pykbroker: {outcome.pykbroker}\nKafka 3.9.0: {outcome.kafka}"


@pytest.mark.parametrize("name", [step.name for step in STEPS])
def test_each_step_behaves_on_pykbroker_as_on_kafka(outcomes, name):
    outcome = outcomes[name]
    assert outcome.kafka.status != TIMED_OUT, f"the step did not end on Kafka: {outcome.kafka}"
    if name in AWAITING_FEATURE:
        assert not outcome.same, f"{name} now behaves as on Kafka: take it out of AWAITING_FEATURE"
    elif accepted_reason(name):
        assert not outcome.same, f"{name} now behaves as on Kafka: take it out of ACCEPTED"
    else:
        assert outcome.pykbroker == outcome.kafka, shown(outcome)


@pytest.mark.parametrize("name", [step.name for step in STEPS if step.pykbroker_tool])
def test_pykbrokers_own_tool_prints_what_kafkas_tool_prints(outcomes, name):
    outcome = outcomes[name]
    context = f"pykbroker's tool: {outcome.pykbroker_tool}\nKafka's tool: {outcome.pykbroker}"
    if name in PYKBROKER_TOOL_ACCEPTED:
        assert outcome.pykbroker_tool != outcome.pykbroker, f"{name}: take it out of PYKBROKER_TOOL_ACCEPTED"
    else:
        assert outcome.pykbroker_tool == outcome.pykbroker, context


def test_the_scenario_uses_every_tool_and_names_each_step_once():
    assert {step.tool for step in STEPS} == set(TOOLS)
    names = [step.name for step in STEPS]
    assert len(names) == len(set(names))
    tables = [*AWAITING_FEATURE, *PYKBROKER_TOOL_ACCEPTED]
    assert set(tables) <= set(names)
    for pattern in tool_differences.ACCEPTED:
        assert any(accepted_reason(name) for name in names if name == pattern or "*" in pattern), pattern
    assert not set(AWAITING_FEATURE) & {name for name in names if accepted_reason(name)}


def test_the_documented_tables_are_the_suites():
    text = COMPATIBILITY.read_text()
    section = re.search(r"^### Kafka's own tools.*?(?=^#{2,3} |\Z)", text, re.M | re.S)
    assert section, 'docs/compatibility.md lacks the section "Kafka\'s own tools"'
    assert tool_differences.markdown() in section.group(0)
