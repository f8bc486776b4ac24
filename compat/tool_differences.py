"""What the tool scenario (`compat/tool_scenario.py`) may find different between pykbroker and Kafka
3.9.0, and why; the test (tests/compat/test_tool_scenario.py) fails on any other difference, and
docs/compatibility.md mirrors these tables (a test keeps them in step).

ACCEPTED             step pattern -> why the difference stays (fnmatch patterns over step names)
AWAITING_FEATURE     step -> what pykbroker does not serve yet; such a step must still differ (a step
                     that starts to behave as on Kafka fails the test until it is taken out)
PYKBROKER_TOOL_ACCEPTED   step -> why pykbroker's own subcommand prints something else than Kafka's
                     tool for that step
"""

from __future__ import annotations

from fnmatch import fnmatchcase

ACCEPTED = {
    "configs/describe-broker-loggers": "the broker's loggers are those of its own code: Kafka lists its log4j "
    "loggers (kafka.*, org.apache.kafka.*), pykbroker the Python loggers of the process (pykbroker.*, asyncio); "
    "the format and how to alter them are Kafka's",
    "features/describe": "pykbroker serves Kafka 4's consumer groups (KIP-848) and share groups (KIP-932) and lists "
    "their features, group.version and share.version, as supported and finalized (they follow "
    "group.coordinator.rebalance.protocols, as in Kafka 4); Kafka 3.9.0 in ZooKeeper mode has no features",
    "acls/as-dave-list-denied": "DescribeAcls without the right: Kafka's message prints its internal request "
    "object (processor, connection id, the identity hash of a session object); pykbroker sends the error "
    "code's standard message 'Cluster authorization failed.' (the same error, CLUSTER_AUTHORIZATION_FAILED)",
}

AWAITING_FEATURE: dict[str, str] = {}

PYKBROKER_TOOL_ACCEPTED = {
    "configs/describe-broker-default-altered": "librdkafka keeps one synonym per name: a key set as the cluster "
    "default lists DYNAMIC_DEFAULT_BROKER_CONFIG but not its DEFAULT_CONFIG synonym of the same name",
}


def accepted_reason(step_name: str) -> str | None:
    """Why the step may differ, or None."""
    for pattern, reason in ACCEPTED.items():
        if fnmatchcase(step_name, pattern):
            return reason
    return None


def _table(header: str, rows: dict[str, str]) -> str:
    lines = [f"| {header} |", "|---|---|"]
    lines += [f"| `{name}` | {text.replace('|', '/')} |" for name, text in rows.items()]
    return "\n".join(lines)


def markdown() -> str:
    """The three tables as docs/compatibility.md shows them."""
    return "\n\n".join(
        [
            _table("step | why it differs (accepted)", ACCEPTED),
            _table("step | waits for", AWAITING_FEATURE) if AWAITING_FEATURE else "No step waits for a feature.",
            _table("step | why pykbroker's own subcommand differs", PYKBROKER_TOOL_ACCEPTED),
        ]
    )
