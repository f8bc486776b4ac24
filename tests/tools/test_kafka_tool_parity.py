"""Kafka's own tools and pykbroker's print the same text against the same broker.

Kafka 3.9's command-line tools run as Java classes from `../shared/realkafka/libs` (or from
`$KAFKA_HOME/libs`, an unpacked Kafka distribution); they need no real Kafka broker, only the
pykbroker of this module. The build in `../shared` carries `kafka.admin.ConfigCommand` but not
the tools jar (`org.apache.kafka.tools.TopicCommand`): the TopicCommand comparison runs where a
distribution is given through KAFKA_HOME.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from compat.realkafka import REALKAFKA
from tests.ci import skip_or_fail_in_ci

from .conftest import fresh

QUIET_LOG4J = """log4j.rootLogger=ERROR, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%p %m (%c)%n
"""


def kafka_libs() -> Path:
    home = os.environ.get("KAFKA_HOME")
    return Path(home) / "libs" if home else REALKAFKA / "libs"


def has_class(libs: Path, class_name: str) -> bool:
    entry = class_name.replace(".", "/") + ".class"
    for jar in libs.glob("kafka*.jar"):
        with zipfile.ZipFile(jar) as archive:
            if entry in archive.namelist():
                return True
    return False


@pytest.fixture(scope="module")
def kafka_tool(tmp_path_factory):
    """Run one of Kafka's tool classes; its stdout."""
    libs = kafka_libs()
    if shutil.which("java") is None or not libs.is_dir():
        skip_or_fail_in_ci(f"Kafka's tools need java and the jars in {libs}")
    log4j = tmp_path_factory.mktemp("log4j") / "log4j.properties"
    log4j.write_text(QUIET_LOG4J)

    def run(class_name: str, *args: str) -> str:
        if not has_class(libs, class_name):
            pytest.skip(f"{class_name} is not in {libs} (set KAFKA_HOME to a Kafka 3.9 distribution)")
        command = ["java", f"-Dlog4j.configuration=file:{log4j}", "-cp", f"{libs}/*", class_name, *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run


@pytest.fixture(scope="module")
def tuned_topic(broker):
    """A topic of 3 partitions with two configs of its own."""
    from pykbroker import cli

    topic = fresh("parity")
    status = cli.main(
        [
            "topics",
            "--bootstrap-server",
            broker.bootstrap,
            "--create",
            "--topic",
            topic,
            "--partitions",
            "3",
            "--config",
            "retention.ms=86400000",
            "--config",
            "cleanup.policy=compact",
        ]
    )
    assert status == 0
    return topic


@pytest.mark.parametrize("describe_all", [False, True], ids=["dynamic", "all"])
def test_configs_describe_prints_what_kafkas_config_command_prints(
    broker, pykbroker, kafka_tool, tuned_topic, describe_all
):
    args = [
        "--bootstrap-server",
        broker.bootstrap,
        "--describe",
        "--entity-type",
        "topics",
        "--entity-name",
        tuned_topic,
        *(["--all"] if describe_all else []),
    ]
    theirs = kafka_tool("kafka.admin.ConfigCommand", *args)
    ours = pykbroker("configs", *args)
    assert ours.status == 0
    assert ours.out == theirs


def test_topics_describe_prints_what_kafkas_topic_command_prints(broker, pykbroker, kafka_tool, tuned_topic):
    args = ["--bootstrap-server", broker.bootstrap, "--describe", "--topic", tuned_topic]
    theirs = kafka_tool("org.apache.kafka.tools.TopicCommand", *args)
    ours = pykbroker("topics", *args)
    assert ours.status == 0
    assert ours.out == theirs
