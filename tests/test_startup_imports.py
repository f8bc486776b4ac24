"""A broker imports what its configuration uses: importing `pykbroker.broker` and starting a plain
broker (a PLAINTEXT listener, the embedded metadata store) until it answers Metadata loads no
ZooKeeper client, no TLS or SASL code, no compression codec, no RE2, no tools and never pyspark.
A configuration or a request that needs one of them loads it.

Each case runs in a fresh interpreter, whose `sys.modules` is what the case loaded. No test here
measures time.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pykbroker

# the child imports the same pykbroker as this process, whatever its working directory
SOURCE_ROOT = str(Path(pykbroker.__file__).resolve().parents[1])

# What a plain broker must not load, each with the code of the project that is its only user
ZOOKEEPER = ["kazoo", "pykbroker.cluster.zk_client", "pykbroker.cluster.zk_session"]
TLS = ["cryptography", "pykbroker.security.ssl_config", "pykbroker.security.ssl_principal"]
SASL = [
    "pykbroker.security.sasl.authenticator",
    "pykbroker.security.sasl.client",
    "pykbroker.security.sasl.config",
    "pykbroker.security.sasl.credentials",
    "pykbroker.security.sasl.jaas",
    "pykbroker.security.sasl.plain",
    "pykbroker.security.sasl.scram",
]
CODECS = ["gzip", "zstandard", "lz4", "snappy", "cramjam"]
OTHERS = [
    "re2",
    "crc32c",
    "pykbroker.security.password_encoder",
    "pykbroker.server.metrics_http",
    "pykbroker.tools",
    "pyspark",
]
# What a plain broker loads only once its configuration or a request uses it
ON_FIRST_USE = [
    "pykbroker.security.authorizer",  # authorizer.class.name
    "pykbroker.server.faults.injector",  # a fault, or a config request (the fault keys)
    "pykbroker.replication.fetcher",  # a partition followed (a cluster)
    "pykbroker.replication.broker_client",  # a connection to another broker
]
HEAVY = ZOOKEEPER + TLS + SASL + CODECS + OTHERS + ON_FIRST_USE

PLAIN_BROKER = """
    import pykbroker.broker
    report("imported")
    from pykbroker.testkit.embedded import EmbeddedBroker
    from pykbroker.testkit.wire import metadata
    with EmbeddedBroker(OVERRIDES) as broker:
        metadata(broker.bootstrap)
        report("answered Metadata")
"""


def loaded_in_fresh_interpreter(code: str, overrides: dict[str, str] | None = None) -> dict[str, list[str]]:
    """{step: the modules of HEAVY loaded when `code` called report(step)}."""
    prelude = textwrap.dedent(f"""
        import json, sys
        HEAVY = {HEAVY!r}
        OVERRIDES = {overrides or {}!r}
        steps = {{}}
        def report(step):
            steps[step] = [n for n in HEAVY if any(m == n or m.startswith(n + ".") for m in sys.modules)]
    """)
    script = prelude + textwrap.dedent(code) + "\nprint(json.dumps(steps))\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SOURCE_ROOT, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env, cwd=Path(__file__).parent
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_plain_broker_loads_no_optional_module_from_import_until_it_answers_metadata(tmp_path):
    steps = loaded_in_fresh_interpreter(PLAIN_BROKER, {"log.dirs": str(tmp_path / "logs")})

    assert steps == {"imported": [], "answered Metadata": []}


def test_a_sasl_listener_loads_sasl_and_still_no_tls_or_zookeeper(tmp_path):
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
    overrides = {
        "log.dirs": str(tmp_path / "logs"),
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
    }

    steps = loaded_in_fresh_interpreter(PLAIN_BROKER, overrides)

    assert steps["imported"] == []
    loaded = set(steps["answered Metadata"])
    assert {"pykbroker.security.sasl.authenticator", "pykbroker.security.sasl.plain"} <= loaded
    assert not loaded & set(ZOOKEEPER + TLS + CODECS)


def test_each_codec_regex_and_crc_loads_its_library_on_first_use():
    steps = loaded_in_fresh_interpreter("""
        from pykbroker.records import compression
        from pykbroker.records.batch import crc32c_of
        from pykbroker.coordinator.group.topic_regex import compile_topic_regex
        report("imported")
        compression.decompress(compression.GZIP, compression.compress(compression.GZIP, b"record"))
        report("gzip")
        compression.decompress(compression.ZSTD, compression.compress(compression.ZSTD, b"record"))
        report("zstd")
        compression.decompress(compression.LZ4, compression.compress(compression.LZ4, b"record"))
        report("lz4")
        compression.decompress(compression.SNAPPY, compression.compress(compression.SNAPPY, b"record"))
        report("snappy")
        compile_topic_regex("orders-.*")
        report("regex")
        crc32c_of(b"record")
        report("crc")
    """)

    assert steps["imported"] == []
    assert steps["gzip"] == ["gzip"]
    assert steps["zstd"] == ["gzip", "zstandard"]
    assert "lz4" in steps["lz4"]
    assert "snappy" in steps["snappy"]
    assert "re2" in steps["regex"]
    assert "crc32c" in steps["crc"]


def test_zookeeper_mode_and_encoded_passwords_load_their_modules_when_used():
    steps = loaded_in_fresh_interpreter("""
        from pykbroker.handlers.support.config_admin import password_encoder
        from pykbroker.config import BrokerConfig
        import pykbroker.broker
        report("imported")
        password_encoder(BrokerConfig({"password.encoder.secret": "secret"})).encode("keystore-password")
        report("password encoded")
        import pykbroker.cluster.zk_store
        report("zookeeper store")
    """)

    assert steps["imported"] == []
    assert {"cryptography", "pykbroker.security.password_encoder"} <= set(steps["password encoded"])
    assert {"kazoo", "pykbroker.cluster.zk_client"} <= set(steps["zookeeper store"])


def test_describe_configs_and_a_fault_load_their_modules_with_the_first_request_and_work(tmp_path):
    steps = loaded_in_fresh_interpreter("""
        import json, sys
        from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
        from pykbroker.testkit.embedded import EmbeddedBroker
        from pykbroker.testkit.wire import metadata
        with EmbeddedBroker(OVERRIDES) as broker:
            metadata(broker.bootstrap)
            report("answered Metadata")
            assert "pykbroker.config.describe" not in sys.modules
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            described = admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")])
            configs = next(iter(described.values())).result(60)
            assert configs["num.partitions"].value == "1", configs["num.partitions"]
            assert "pykbroker.config.describe" in sys.modules
            report("described configs")
            rule = {"api": "Metadata", "topic": "orders", "error": "LEADER_NOT_AVAILABLE"}
            entry = ConfigEntry("pykbroker.fault.injection", json.dumps(rule),
                                incremental_operation=AlterConfigOpType.APPEND)
            resource = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[entry])
            admin.incremental_alter_configs([resource])[resource].result(60)
            assert [t.error_code for t in metadata(broker.bootstrap, ["orders"]).topics] == [5]
            report("injected a fault")
    """, {"log.dirs": str(tmp_path / "logs")})

    assert steps["answered Metadata"] == []
    assert steps["described configs"] == ["pykbroker.server.faults.injector"]  # the fault keys are answered
    assert steps["injected a fault"] == steps["described configs"]


def test_an_authorizer_loads_the_acl_modules_at_start_and_denies_without_acls(tmp_path):
    steps = loaded_in_fresh_interpreter("""
        from pykbroker.testkit.embedded import EmbeddedBroker
        from pykbroker.testkit.wire import metadata
        with EmbeddedBroker(OVERRIDES) as broker:
            assert [t.error_code for t in metadata(broker.bootstrap, ["orders"]).topics] == [29]
            report("answered Metadata")
    """, {"log.dirs": str(tmp_path / "logs"), "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})

    assert steps["answered Metadata"] == ["pykbroker.security.authorizer"]
