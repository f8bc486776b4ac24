"""A broker imports only what its configuration uses: a plaintext broker started as `make run`
starts it (`pykbroker --dev`), answering Metadata and a Produce, has not loaded the SASL, TLS
certificate, ZooKeeper, delegation-token, metrics-server or tool modules, nor a compression library,
nor the group coordinator, the share groups, the log cleaner, the fault injector, the ACL
authorizer, DescribeConfigs' entries, the replica fetchers, the inter-broker client, the log dir
mover, the TLS connection or the reassignment rules. A group request opens the group coordinator,
which then serves the group as always.

(`ssl` itself is not in the list: asyncio imports it whatever the broker does.)

A broker that has answered Metadata only, with no topic and no log, has not loaded the log
implementation, the records or a partition's machinery either: they load with its first log.
"""

import json
import subprocess
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from pykbroker.testkit.ports import free_port

# Runs the broker in-process, as the `pykbroker` command does; a line on stdin prints the modules
# loaded so far and ends the process.
BROKER_SCRIPT = """
import json, os, sys, threading
from pykbroker import cli

def print_modules_on_request():
    sys.stdin.readline()
    print(json.dumps(sorted(sys.modules)), flush=True)
    os._exit(0)

threading.Thread(target=print_modules_on_request, daemon=True).start()
sys.exit(cli.main(sys.argv[1:]))
"""

NOT_LOADED_BY_A_PLAIN_BROKER = [
    "kazoo",
    "zstandard",
    "lz4",
    "snappy",
    "cryptography",
    "pykbroker.records.lz4_kafka",
    "pykbroker.records.snappy_xerial",
    "pykbroker.security.sasl.scram",
    "pykbroker.security.sasl.authenticator",
    "pykbroker.security.ssl_config",
    "pykbroker.security.ssl_principal",
    "pykbroker.security.delegation_tokens",
    "pykbroker.security.token_manager",
    "pykbroker.security.token_settings",  # read only with delegation.token.secret.key set
    "pykbroker.cluster.zk_client",
    "pykbroker.cluster.zk_store",
    "pykbroker.server.metrics_http",
    "pykbroker.tools",
    "pykbroker.handlers.create_delegation_token",
    "pykbroker.handlers.describe_user_scram_credentials",
    "pykbroker.handlers.share_fetch",
    "difflib",
    # share groups (KIP-932): loaded with __share_group_state or on the first share request
    "pykbroker.coordinator.share.coordinator",
    "pykbroker.coordinator.share.default_persister",
    "pykbroker.coordinator.share.partitions",
    "pykbroker.coordinator.group.share.coordinator",
    "pykbroker.coordinator.group.share.records",
    # ZooKeeper records, the fault-injection config requests, the log cleaner
    "pykbroker.cluster.zk_data",
    "pykbroker.server.faults.configs",
    "pykbroker.handlers.support.config_admin",
    "pykbroker.log.cleaner",
    "pykbroker.log.compaction",
    # transactions: loaded with __transaction_state or on the first transaction request
    "pykbroker.coordinator.transaction.coordinator",
    "pykbroker.coordinator.transaction.markers",
    "pykbroker.coordinator.transaction.state_manager",
    # the group coordinator: loaded with __consumer_offsets or on the first group request
    "pykbroker.coordinator.group.coordinator",
    "pykbroker.coordinator.group.manager",
    "pykbroker.coordinator.group.loader",
    "pykbroker.coordinator.group.replay",
    "pykbroker.coordinator.group.relocation",
    "pykbroker.coordinator.group.rebalance",
    "pykbroker.coordinator.group.join",
    "pykbroker.coordinator.group.offsets",
    "pykbroker.coordinator.group.offset_store",
    "pykbroker.coordinator.group.admin",
    "pykbroker.coordinator.group.group",
    "pykbroker.coordinator.group.model",
    "pykbroker.coordinator.group.formats",
    "pykbroker.coordinator.group.config",
    "pykbroker.coordinator.group.log_io",
    # consumer groups (KIP-848): loaded on the first ConsumerGroupHeartbeat/Describe or record
    "pykbroker.coordinator.group.consumer.manager",
    "pykbroker.coordinator.group.consumer.records",
    # injected faults: loaded with the first fault or config request (`broker.faults`, `FaultSeam`)
    "pykbroker.server.faults.injector",
    "pykbroker.server.faults.interceptor",
    "pykbroker.server.faults.rules",
    "pykbroker.server.faults.fetch",
    # ACLs: loaded with authorizer.class.name or the first ACL request
    "pykbroker.security.authorizer",
    "pykbroker.security.acl_bindings",
    # DescribeConfigs' entries (and `decimal`, for Kafka's formatting of doubles)
    "pykbroker.config.describe",
    "decimal",
    # replication: a follower's fetchers and the inter-broker client, a replica's move between
    # log dirs, controlled shutdown (in a cluster), the transaction markers' request type
    "pykbroker.replication.fetcher",
    "pykbroker.replication.broker_client",
    "pykbroker.replication.log_dir_mover",
    "pykbroker.shutdown",
    "pykbroker.common.txn_marker",
    # the TLS connection, the single broker's reassignment and election rules, magic 0/1 messages
    "pykbroker.server.tls_io",
    "pykbroker.cluster.controller.election",
    "pykbroker.cluster.controller.reassignment",
    "pykbroker.records.legacy",
    # anyio's calls from worker threads into the loop: loaded with the first log start offsets
    # that retention moves
    "anyio.from_thread",
]

# Loaded with the first log (created here, or found on disk), not before
NOT_LOADED_BEFORE_THE_FIRST_LOG = [
    # the log implementation
    "pykbroker.log.log",
    "pykbroker.log.loader",
    "pykbroker.log.local_log",
    "pykbroker.log.segment",
    "pykbroker.log.segments",
    "pykbroker.log.index",
    "pykbroker.log.txn_index",
    "pykbroker.log.replay",
    "pykbroker.log.producer_state",
    "pykbroker.log.producer_snapshot",
    "pykbroker.log.validation",
    "pykbroker.log.retention",
    "pykbroker.log.scan",
    "pykbroker.log.epoch_cache",
    "pykbroker.log.lookups",
    "pykbroker.log.results",
    # the records
    "pykbroker.records.batch",
    "pykbroker.records.records",
    "pykbroker.records.control",
    "pykbroker.records.compression",
    # a partition's machinery
    "pykbroker.replication.partition",
    "pykbroker.replication.durability",
    # the log's deletions (`shutil.rmtree`), with the codecs shutil imports
    "shutil",
    "bz2",
    "lzma",
]


def modules_of_a_broker_that_served(tmp_path, serve) -> set[str]:
    port = free_port()
    args = ["--dev", "--dir", str(tmp_path / "data"), "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}"]
    broker = subprocess.Popen(
        [sys.executable, "-c", BROKER_SCRIPT, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        serve(f"127.0.0.1:{port}")
        out, _ = broker.communicate("modules\n", timeout=60)
        return set(json.loads(out.strip().splitlines()[-1]))
    finally:
        if broker.poll() is None:
            broker.kill()
            broker.wait()


def metadata_and_one_produce(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.list_topics(timeout=60)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1})
    producer.produce("plain", b"value")
    assert producer.flush(60) == 0


def test_a_plain_broker_loads_no_tls_sasl_zookeeper_tool_or_codec_modules(tmp_path):
    loaded = modules_of_a_broker_that_served(tmp_path, metadata_and_one_produce)
    assert "pykbroker.handlers.produce" in loaded  # it served, importing the handler on first use
    assert {name for name in loaded if name.split(".")[0] in ("kazoo", "zstandard", "lz4", "snappy")} == set()
    assert sorted(name for name in NOT_LOADED_BY_A_PLAIN_BROKER if name in loaded) == []


def metadata_only(bootstrap: str) -> None:
    AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=60)


def test_a_broker_without_a_log_has_not_loaded_the_log_implementation(tmp_path):
    loaded = modules_of_a_broker_that_served(tmp_path, metadata_only)
    assert "pykbroker.handlers.metadata" in loaded  # it served
    assert sorted(name for name in NOT_LOADED_BEFORE_THE_FIRST_LOG if name in loaded) == []
    assert sorted(name for name in NOT_LOADED_BY_A_PLAIN_BROKER if name in loaded) == []


def test_the_first_log_loads_the_log_implementation(tmp_path):
    loaded = modules_of_a_broker_that_served(tmp_path, metadata_and_one_produce)
    assert {"pykbroker.log.log", "pykbroker.replication.partition"} <= loaded


def produce_then_consume_and_commit_in_a_group(bootstrap: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1})
    for index in range(3):
        producer.produce("grouped", f"value-{index}".encode())
    assert producer.flush(60) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "first-group",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe(["grouped"])
        values: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(values) < 3 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
        assert values == [b"value-0", b"value-1", b"value-2"]
        consumer.commit(asynchronous=False)
        committed = consumer.committed([TopicPartition("grouped", 0)], timeout=30)
        assert committed[0].offset == 3
    finally:
        consumer.close()


def test_a_group_request_opens_the_group_coordinator_which_serves_the_group(tmp_path):
    loaded = modules_of_a_broker_that_served(tmp_path, produce_then_consume_and_commit_in_a_group)
    assert "pykbroker.coordinator.group.coordinator" in loaded
