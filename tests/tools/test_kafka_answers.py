"""pykbroker answers as Kafka 3.9.0 does, compared with a real Kafka 3.9.0 (ZooKeeper mode) in the
same test: ApiVersions' feature fields, UpdateFeatures (raw and through Kafka's FeatureCommand),
DescribeConfigs of a broker (every key, value, source, flags, type and synonym, in Kafka's order).

Both brokers run Kafka's example settings for one node (`compat.realkafka.SINGLE_BROKER_SETTINGS`)
with Kafka's ACL authorizer, the unauthenticated caller a super user (so that Kafka's AclCommand
can list and change ACLs while every other request is allowed); pykbroker also with
`group.coordinator.rebalance.protocols=classic`, Kafka 3.9's groups, so that its group features
are not finalized, as on Kafka. The messages Kafka's tools print (TopicCommand, ConfigCommand,
LeaderElectionCommand, AclCommand) are compared too. Without java or Kafka's jars these tests skip
with one line, and fail in CI (`tests/ci.py`).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from compat import realkafka
from pykbroker.common.java_order import scala_hash_map_order
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.wire import WireClient
from tests.ci import skip_or_fail_in_ci

from .test_kafka_tool_parity import QUIET_LOG4J, kafka_libs, kafka_run  # noqa: F401 (kafka_run: a fixture)

FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"
KAFKA_39_GROUPS = {"group.coordinator.rebalance.protocols": "classic"}
ACLS_BY_A_SUPER_USER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "User:ANONYMOUS"}

ApiVersions = messages.request(ApiKey.API_VERSIONS)
UpdateFeatures = messages.request(ApiKey.UPDATE_FEATURES)
Update = UpdateFeatures.classes["FeatureUpdateKey"]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory):
    """Kafka 3.9.0: one broker and its ZooKeeper."""
    why_not = realkafka.unavailable()
    if why_not:
        skip_or_fail_in_ci(why_not)
    with KafkaWithAcls(tmp_path_factory.mktemp("realkafka")) as running:
        yield running


class KafkaWithAcls(realkafka.KafkaBroker):
    def extra_settings(self, port: int) -> dict[str, str]:
        return dict(ACLS_BY_A_SUPER_USER)


@pytest.fixture(scope="module")
def pyk():
    with EmbeddedBroker({**realkafka.SINGLE_BROKER_SETTINGS, **KAFKA_39_GROUPS, **ACLS_BY_A_SUPER_USER}) as running:
        yield running


@pytest.fixture(scope="module")
def both(pyk, kafka):
    return {"pykbroker": pyk.bootstrap, "kafka": kafka.bootstrap}


def api_versions(bootstrap: str, version: int):
    request = ApiVersions.cls(client_software_name="parity", client_software_version="1")
    with WireClient(bootstrap) as client:
        return client.request(ApiKey.API_VERSIONS, version, request)


def update_features(bootstrap: str, version: int, updates: list, validate_only: bool = False):
    extra = {"validate_only": validate_only} if version >= 1 else {}
    request = UpdateFeatures.cls(timeout_ms=10000, feature_updates=updates, **extra)
    with WireClient(bootstrap) as client:
        answer = client.request(ApiKey.UPDATE_FEATURES, version, request)
    return answer.error_code, answer.error_message, [(r.feature, r.error_code, r.error_message) for r in answer.results]


# -- ApiVersions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [3, 4])
def test_api_versions_features_fields_are_kafkas(both, version):
    """v3 and v4: no finalized feature at epoch 0 (the `/feature` znode as the controller creates
    it), not ready for a ZooKeeper migration; ApiVersions itself 0-4 and UpdateFeatures 0-1."""
    for bootstrap in both.values():
        answer = api_versions(bootstrap, version)
        ranges = {key.api_key: (key.min_version, key.max_version) for key in answer.api_keys}
        assert (answer.error_code, answer.finalized_features, answer.finalized_features_epoch) == (0, [], 0)
        assert answer.zk_migration_ready is False
        assert (ranges[ApiKey.API_VERSIONS], ranges[ApiKey.UPDATE_FEATURES]) == ((0, 4), (0, 1))


def test_api_versions_v4_also_lists_supported_features_whose_lowest_level_is_0(both):
    """KAFKA-17011: v3 readers refuse a supported feature whose lowest level is 0, v4 ones take it.
    Kafka 3.9 in ZooKeeper mode supports no feature at all; pykbroker supports KIP-848's
    group.version and KIP-932's share.version (levels 0-1, finalized by its setting), which only
    v4 answers list."""
    supported = {
        name: [(f.name, f.min_version, f.max_version) for f in api_versions(bootstrap, 4).supported_features]
        for name, bootstrap in both.items()
    }
    assert supported == {"pykbroker": [("group.version", 0, 1), ("share.version", 0, 1)], "kafka": []}
    assert api_versions(both["pykbroker"], 3).supported_features == []


# -- DescribeConfigs of a broker ------------------------------------------------------------------

DescribeConfigs = messages.request(ApiKey.DESCRIBE_CONFIGS)
BROKER_RESOURCE = 4
KAFKA_4_GROUPS = "Kafka 4's consumer and share groups (KIP-848, KIP-932), with Kafka 4.1's settings and defaults"
# Keys whose answer must differ, and why. The set-up's ports, paths and ZooKeeper are normalised instead.
DIFFERING_KEYS = {
    "advertised.listeners": "the set-up: kafka.sh sets it; pykbroker, on a free port, advertises its listener",
    "zookeeper.connect": "the set-up: the single pykbroker runs with its embedded metadata, Kafka with a ZooKeeper",
    "group.coordinator.rebalance.protocols": KAFKA_4_GROUPS + " (default classic,consumer,share; Kafka 3.9 classic)",
    "group.share.partition.max.record.locks": KAFKA_4_GROUPS + " (default 2000; Kafka 3.9 200)",
}
PYKBROKER_ONLY_KEYS = {  # Kafka 3.9.0 lists none of these
    "group.consumer.migration.policy": KAFKA_4_GROUPS,
    "group.share.max.share.sessions": KAFKA_4_GROUPS,
    **{
        f"share.coordinator.{key}": KAFKA_4_GROUPS
        for key in (
            "append.linger.ms", "load.buffer.size", "snapshot.update.records.per.snapshot",
            "state.topic.compression.codec", "state.topic.min.isr", "state.topic.num.partitions",
            "state.topic.replication.factor", "state.topic.segment.bytes", "threads", "write.timeout.ms",
        )
    },
}


def broker_configs(bootstrap: str, documentation: bool = False) -> list:
    resource = DescribeConfigs.classes["DescribeConfigsResource"](
        resource_type=BROKER_RESOURCE, resource_name="0", configuration_keys=None
    )
    request = DescribeConfigs.cls(resources=[resource], include_synonyms=True, include_documentation=documentation)
    with WireClient(bootstrap) as client:
        (result,) = client.request(ApiKey.DESCRIBE_CONFIGS, 4, request).results
    assert result.error_code == 0
    return result.configs


def comparable(entry, bootstrap: str, data: str) -> tuple:
    """An entry without what the set-up decides: its data directory and its listeners' port (0,
    a free one, for pykbroker)."""
    port = bootstrap.rsplit(":", 1)[1]

    def normal(value):
        return value if value is None else re.sub(rf"(//[^:/,]*):(?:0|{port})\b", r"\1:<port>", value.replace(data, "<data>"))

    synonyms = [(s.name, normal(s.value), s.source) for s in entry.synonyms]
    return (normal(entry.value), entry.read_only, entry.config_source, entry.is_sensitive, entry.config_type, synonyms)


def test_describe_configs_of_a_broker_lists_kafkas_keys_values_and_order(both):
    """Every key Kafka 3.9.0 lists, with its value, source, read-only and sensitive flags, type
    and synonyms (Kafka's defaults), in Kafka's order; the differences that must be, with why."""
    answers = {}
    for name, bootstrap in both.items():
        entries = broker_configs(bootstrap)
        data = next(e.value for e in entries if e.name == "log.dirs")
        answers[name] = {e.name: comparable(e, bootstrap, data) for e in entries}
    pykbroker, kafka_answer = answers["pykbroker"], answers["kafka"]
    assert set(kafka_answer) - set(pykbroker) == set()
    assert set(pykbroker) - set(kafka_answer) == set(PYKBROKER_ONLY_KEYS)
    differing = {key for key in kafka_answer if pykbroker[key] != kafka_answer[key]}
    assert differing == set(DIFFERING_KEYS), {key: (pykbroker[key], kafka_answer[key]) for key in differing}
    assert [key for key in pykbroker if key in kafka_answer] == list(kafka_answer)  # Kafka's order


def alter_broker_config(bootstrap: str, resource_name: str, key: str, value: str | None) -> None:
    """Sets (or with None deletes) `key` of the broker `resource_name` ("" for every broker)."""
    alter = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS)
    config = alter.classes["AlterableConfig"](name=key, config_operation=0 if value is not None else 1, value=value)
    resource = alter.classes["AlterConfigsResource"](
        resource_type=BROKER_RESOURCE, resource_name=resource_name, configs=[config]
    )
    with WireClient(bootstrap) as client:
        answer = client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, alter.cls(resources=[resource], validate_only=False))
    assert [r.error_code for r in answer.responses] == [0]


def test_dynamic_per_broker_and_cluster_default_synonyms_come_in_kafkas_order(both):
    key = "log.cleaner.backoff.ms"
    for bootstrap in both.values():
        alter_broker_config(bootstrap, "", key, "20000")
        alter_broker_config(bootstrap, "0", key, "30000")
    try:
        described = {}
        for name, bootstrap in both.items():
            wait_until_configs_show(bootstrap, key, "30000")
            (entry,) = [e for e in broker_configs(bootstrap) if e.name == key]
            described[name] = (entry.value, entry.config_source, [(s.value, s.source) for s in entry.synonyms])
        expected = ("30000", 2, [("30000", 2), ("20000", 3), ("15000", 5)])  # per broker, cluster default, default
        assert described["pykbroker"] == described["kafka"] == expected
    finally:
        for bootstrap in both.values():
            alter_broker_config(bootstrap, "0", key, None)
            alter_broker_config(bootstrap, "", key, None)


def test_a_key_kafka_does_not_know_is_kept_dynamically_and_described_as_a_secret(both):
    """Kafka keeps a broker key it does not know (a plug-in's) and, unable to tell its type,
    describes it as sensitive: no value."""
    key = "custom.plugin.setting"
    for bootstrap in both.values():
        alter_broker_config(bootstrap, "0", key, "on")
    try:
        for bootstrap in both.values():
            deadline = time.monotonic() + 30
            while not (found := [e for e in broker_configs(bootstrap) if e.name == key]):
                assert time.monotonic() < deadline
                time.sleep(0.2)
            (entry,) = found
            shown = (entry.value, entry.is_sensitive, entry.config_source, entry.config_type, entry.read_only)
            assert shown == (None, True, 2, 0, True)  # DYNAMIC_BROKER_CONFIG, UNKNOWN type
    finally:
        for bootstrap in both.values():
            alter_broker_config(bootstrap, "0", key, None)


def wait_until_configs_show(bootstrap: str, key: str, value: str) -> None:
    """Kafka applies dynamic broker configs when its ZooKeeper watch fires: a moment later."""
    deadline = time.monotonic() + 30
    while not any(e.name == key and e.value == value for e in broker_configs(bootstrap)):
        assert time.monotonic() < deadline, f"{key} never became {value} on {bootstrap}"
        time.sleep(0.2)


def test_describe_configs_documentation_is_given_where_this_broker_has_its_own():
    """Documentation (v3+, when asked): Kafka's text is its own prose, which this project does not
    copy; pykbroker answers null, but for the keys it accepts without acting on them, which say so."""
    with EmbeddedBroker(KAFKA_39_GROUPS) as broker:
        documented = {e.name: e.documentation for e in broker_configs(broker.bootstrap, documentation=True)}
    assert documented["num.io.threads"] is None
    assert "does not act on it" in documented["metrics.num.samples"]


# -- the messages Kafka's tools print -------------------------------------------------------------

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
CONFIG_COMMAND = "kafka.admin.ConfigCommand"
LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
ACL_COMMAND = "kafka.admin.AclCommand"
GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
THREE = "parity-three"  # a topic of 3 partitions on both brokers
TOOL_CASES = {
    "replication factor above the brokers": (TOPIC_COMMAND, "--create", "--topic", "rf-three", "--replication-factor", "3"),
    "fewer partitions than now": (TOPIC_COMMAND, "--alter", "--topic", THREE, "--partitions", "2"),
    "an invalid config value": (
        CONFIG_COMMAND, "--alter", "--entity-type", "topics", "--entity-name", THREE, "--add-config", "retention.ms=soon",
    ),
    "leader election of a missing topic": (
        LEADER_ELECTION, "--election-type", "preferred", "--topic", "no-such-topic", "--partition", "0",
    ),
}


@pytest.fixture(scope="module")
def three_partitions(both):
    create = messages.request(ApiKey.CREATE_TOPICS)
    topic = create.classes["CreatableTopic"](name=THREE, num_partitions=3, replication_factor=1, assignments=[], configs=[])
    for bootstrap in both.values():
        with WireClient(bootstrap) as client:
            answer = client.request(ApiKey.CREATE_TOPICS, 7, create.cls(topics=[topic], timeout_ms=30000))
        assert answer.topics[0].error_code == 0
    return THREE


def printed(run, bootstrap: str) -> tuple[int, str, list[str]]:
    """Exit status, stdout and the lines of stderr but the stack frames, without the port."""
    port = bootstrap.rsplit(":", 1)[1]
    lines = [line.replace(port, "<port>") for line in run.err.splitlines() if not line.lstrip().startswith(("at ", "..."))]
    return run.status, run.out.replace(port, "<port>"), lines


@pytest.mark.parametrize("case", TOOL_CASES)
def test_kafkas_tools_print_kafkas_messages(both, three_partitions, kafka_run, case):
    tool, *args = TOOL_CASES[case]
    runs = {name: printed(kafka_run(tool, "--bootstrap-server", b, *args), b) for name, b in both.items()}
    assert runs["pykbroker"] == runs["kafka"]
    assert runs["kafka"][0] == 1


def test_kafka_acls_adds_and_lists_what_it_does_against_kafka(both, kafka_run):
    """The same resources with the same entries. Their order is not Kafka's to compare: Kafka's
    broker answers from Java hash sets whose hash codes include enums' identity hash codes
    (ResourcePattern, AccessControlEntry), so it changes from one Kafka process to the next."""
    add = ("--add", "--allow-principal", "User:alice", "--allow-principal", "User:bob", "--operation", "Read",
           "--operation", "Describe", "--topic", "acl-a", "--topic", "acl-b", "--group", "acl-g")
    for args in (add, ("--list",)):
        runs = {name: printed(kafka_run(ACL_COMMAND, "--bootstrap-server", b, *args), b) for name, b in both.items()}
        assert listing(runs["pykbroker"]) == listing(runs["kafka"])
        assert "ResourcePattern(resourceType=TOPIC, name=acl-a, patternType=LITERAL)" in runs["kafka"][1]


def listing(run: tuple[int, str, list[str]]) -> tuple[int, dict[str, list[str]], list[str]]:
    """AclCommand's output as {resource line: its entries, sorted}."""
    status, out, err = run
    resources: dict[str, list[str]] = {}
    for block in out.split("\n\n"):
        lines = [line.strip() for line in block.strip().splitlines()]
        if lines:
            resources[lines[0]] = sorted(lines[1:])
    return status, resources, err


def test_reset_offsets_warns_in_kafkas_order(pyk, tmp_path):
    """pykbroker's consumer-groups --reset-offsets warns about offsets out of range in the order of
    the Java HashMap Kafka's tool checks them in (Kafka's tool, against the same broker)."""
    create = messages.request(ApiKey.CREATE_TOPICS)
    topics = [
        create.classes["CreatableTopic"](name=name, num_partitions=count, replication_factor=1, assignments=[], configs=[])
        for name, count in (("warn-wide", 20), ("warn-wide2", 12))
    ]
    with WireClient(pyk.bootstrap) as client:
        client.request(ApiKey.CREATE_TOPICS, 7, create.cls(topics=topics, timeout_ms=30000))
    args = ("--bootstrap-server", pyk.bootstrap, "--reset-offsets", "--group", "warned", "--topic", "warn-wide",
            "--topic", "warn-wide2", "--to-offset", "100", "--dry-run")
    log4j = tmp_path / "log4j.properties"
    log4j.write_text(QUIET_LOG4J.replace("rootLogger=ERROR", "rootLogger=WARN"))
    java = ["java", "-XX:TieredStopAtLevel=1", f"-Dlog4j.configuration=file:{log4j}", "-cp", f"{kafka_libs()}/*"]
    kafka = subprocess.run([*java, GROUP_COMMAND, *args], capture_output=True, text=True, timeout=180)
    ours = subprocess.run([sys.executable, "-m", "pykbroker", "consumer-groups", *args], capture_output=True, text=True,
                          timeout=180)
    warnings = re.compile(r"^WARN (New offset .*?)(?: \(org\..*\))?$", re.M)
    assert warnings.findall(ours.stderr) == warnings.findall(kafka.stderr)
    assert len(warnings.findall(kafka.stderr)) == 32


# -- UpdateFeatures -------------------------------------------------------------------------------


def update(feature: str, level: int, upgrade_type: int = 1, allow_downgrade: bool = False):
    return Update(feature=feature, max_version_level=level, upgrade_type=upgrade_type, allow_downgrade=allow_downgrade)


MANY = ["zeta", "alpha", "group.version", "b", "kraft.version", "metadata.version", "share.version", "a1", "a10"]
UPDATES = {
    "upgrade group.version": (1, [update("group.version", 1)]),
    "upgrade an unknown feature": (1, [update("foo", 2)]),
    "validate only": (1, [update("metadata.version", 21)], True),
    "delete a feature not finalized": (1, [update("share.version", 0, upgrade_type=2)]),
    "unsafe delete": (1, [update("foo", 0, upgrade_type=3)]),
    "level 0 as an upgrade": (1, [update("foo", 0, upgrade_type=1)]),
    "negative level as an upgrade": (1, [update("foo", -3, upgrade_type=1)]),
    "unknown upgrade type": (1, [update("foo", 1, upgrade_type=5)]),
    "upgrade type 0 with level 0": (1, [update("foo", 0, upgrade_type=0)]),
    "a feature twice: the first wins": (1, [update("foo", 0, upgrade_type=2), update("foo", 1)]),
    "no updates": (1, []),
    "v0 upgrade": (0, [update("group.version", 1)]),
    "v0 level 0 without allowDowngrade": (0, [update("foo", 0)]),
    "v0 deletion with allowDowngrade": (0, [update("foo", 0, allow_downgrade=True)]),
    "twelve features, in Kafka's order": (1, [update(name, 1) for name in [*MANY, "a2", "a3", "x"]]),
    "eleven features": (1, [update(name, 1) for name in [*MANY, "a2"]]),
}


@pytest.mark.parametrize("case", UPDATES)
def test_update_features_answers_as_kafka(both, case):
    version, updates, *validate_only = UPDATES[case]
    answers = {name: update_features(bootstrap, version, updates, *validate_only) for name, bootstrap in both.items()}
    assert answers["pykbroker"] == answers["kafka"]
    assert all(code == ErrorCode.INVALID_REQUEST for _, code, _ in answers["pykbroker"][2])


def test_update_features_results_come_in_scala_hash_map_order():
    names = ["zeta", "alpha", "group.version", "b", "kraft.version", "metadata.version", "share.version"]
    names += ["transaction.version", "a1", "a2", "a3", "a10", "x"]
    assert scala_hash_map_order(names) == [
        "zeta", "group.version", "a10", "b", "kraft.version", "share.version", "metadata.version",
        "a1", "a2", "a3", "alpha", "x", "transaction.version",
    ]  # as Kafka 3.9.0 answered these thirteen


def test_feature_command_prints_what_it_prints_against_kafka(both, kafka_run):
    """`kafka-features upgrade` and `disable` fail alike (exit 1, same lines). `describe` lists
    pykbroker's supported group features, where Kafka 3.9 in ZooKeeper mode has none."""
    for args in (("upgrade", "--feature", "group.version=1"), ("disable", "--feature", "group.version")):
        runs = {name: kafka_run(FEATURE_COMMAND, "--bootstrap-server", b, *args) for name, b in both.items()}
        assert runs["pykbroker"] == runs["kafka"]
        assert (runs["kafka"].status, runs["kafka"].err) == (1, "1 out of 1 operation(s) failed.\n")
    described = {name: kafka_run(FEATURE_COMMAND, "--bootstrap-server", b, "describe") for name, b in both.items()}
    assert (described["kafka"].status, described["kafka"].out) == (0, "")
    assert described["pykbroker"].status == 0
    assert described["pykbroker"].out.splitlines() == [
        "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\tEpoch: 0",
        "Feature: share.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\tEpoch: 0",
    ]


def test_update_features_needs_alter_on_the_cluster():
    """Without ALTER on the cluster the whole request is refused, before anything else."""
    settings = {
        **KAFKA_39_GROUPS,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found": "false",
    }
    with EmbeddedBroker(settings) as broker:
        answer = update_features(broker.bootstrap, 1, [update("foo", 1)])
    assert answer == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.", [])
