"""The tool scenario: what a new user types with Kafka 3.9.0's own command-line tools, in order,
as named steps (`STEPS`), run against pykbroker and against Kafka 3.9.0 side by side, each side in
a JVM of its own (`compat/tool_shell.py`), over the secured brokers of `compat/security_setup.py`
(the admin over SASL PLAIN; dave, an ordinary user, under ACLs; zed, a SCRAM user the scenario
creates, over SASL_SSL).

A step's arguments may hold {B} (the PLAIN listener), {S} (the SCRAM listener), {admin}, {dave},
{zed} (the client config files of those users), {admin-props} (the admin's settings as
`--producer-props` words) and {F:name} (a file of `files`); `normalized` makes the two sides'
outputs comparable (ports, ids, times, directories, throughput figures, undefined orders).
`compat/tool_differences.py` says which remaining differences are accepted, and which steps wait
for an API pykbroker does not serve yet.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .security_setup import PLAIN_USERS, SCRAM_MECHANISM
from .tool_shell import Run, ToolShell

TOOLS = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-acls": "kafka.admin.AclCommand",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-console-producer": "kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-e2e-latency": "org.apache.kafka.tools.EndToEndLatency",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-delegation-tokens": "org.apache.kafka.tools.DelegationTokenCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
}
# pykbroker's own subcommand for a Kafka tool (pykbroker/cli.py TOOLS)
PYKBROKER_TOOLS = {
    "kafka-topics": "topics",
    "kafka-configs": "configs",
    "kafka-consumer-groups": "consumer-groups",
    "kafka-get-offsets": "get-offsets",
    "kafka-delete-records": "delete-records",
    "kafka-leader-election": "leader-election",
    "kafka-console-producer": "console-producer",
    "kafka-console-consumer": "console-consumer",
}


@dataclass(frozen=True)
class Step:
    """One command line. `unordered`: its output lines in any order (Kafka's is not defined);
    `figures`: every number is a measurement or an allocated id (throughput, latency, sizes,
    producer ids), compared as N; `until`: a change the step waits for (both brokers apply some
    changes a moment after acknowledging them: the step is run again, up to ~10 s, until its
    stdout holds this text); `pykbroker_tool`: pykbroker's own subcommand for the tool is held to
    the same output (read-only steps only: it runs on pykbroker beside Kafka's tool); `capture`: a
    regular expression whose named groups, found in the step's stdout, later steps name as {group}
    (a delegation token's id and HMAC)."""

    name: str
    tool: str
    args: str
    stdin: str = ""
    unordered: bool = False
    figures: bool = False
    until: str = ""
    capture: str = ""
    pykbroker_tool: bool = False
    timeout: int = 90

    def words(self) -> list[str]:
        return shlex.split(self.args)


def step(name: str, tool: str, args: str, **options: object) -> Step:
    # kafka-acls prints the entries of a Java HashSet of AccessControlEntry, whose hash codes are
    # those of enum constants (identity hashes): their order changes from one JVM to the next
    options.setdefault("unordered", tool == "kafka-acls")
    return Step(name, tool, args, **options)  # type: ignore[arg-type]


NO_TOKEN = "bm8tdG9rZW4="  # the HMAC a step names where no token was created (base64 of "no-token")
# what both brokers get besides the secured set-up's settings: delegation tokens enabled
BROKER_SETTINGS = {"delegation.token.secret.key": "compat-token-secret"}
A = "--bootstrap-server {B} --command-config {admin}"  # the admin, for the admin tools
TOPICS = "kafka-topics"
ORDERS_LINES = "".join(f"k{i % 4}:order-{i}\n" for i in range(12))


def admin_step(tool: str) -> Callable[..., Step]:
    """The steps of an admin tool run as the admin: a step's `args` follow the bootstrap server and
    the admin's client config ({A})."""

    def admin_tool_step(name: str, args: str, **options: object) -> Step:
        return step(name, tool, f"{A} {args}", **options)

    return admin_tool_step


topics = admin_step(TOPICS)
configs = admin_step("kafka-configs")
consumer_groups = admin_step("kafka-consumer-groups")
acls = admin_step("kafka-acls")
get_offsets = admin_step("kafka-get-offsets")
delete_records = admin_step("kafka-delete-records")
log_dirs = admin_step("kafka-log-dirs")
transactions = admin_step("kafka-transactions")
reassign = admin_step("kafka-reassign-partitions")
delegation_tokens = admin_step("kafka-delegation-tokens")


def console_producer(name: str, user: str, args: str, **options: object) -> Step:
    """The console producer with `user`'s client config ("admin", "dave")."""
    return step(
        name, "kafka-console-producer", f"--bootstrap-server {{B}} --producer.config {{{user}}} {args}", **options
    )


def console_consumer(name: str, user: str, args: str, **options: object) -> Step:
    """The console consumer with `user`'s client config ("admin", "dave")."""
    return step(
        name, "kafka-console-consumer", f"--bootstrap-server {{B}} --consumer.config {{{user}}} {args}", **options
    )


STEPS: list[Step] = [
    # --- topics
    topics("topics/list-on-a-new-broker", "--list"),
    topics("topics/create-orders", "--create --topic orders --partitions 3 --replication-factor 1"),
    topics(
        "topics/create-payments-with-configs",
        "--create --topic payments --partitions 2 --config retention.ms=86400000 --config cleanup.policy=compact",
    ),
    topics("topics/create-events", "--create --topic events"),
    topics("topics/create-single", "--create --topic single --partitions 1"),
    topics("topics/create-existing", "--create --topic orders"),
    topics("topics/create-if-not-exists", "--create --topic orders --if-not-exists"),
    topics("topics/create-replication-factor-too-large", "--create --topic wide --replication-factor 3"),
    topics("topics/create-unknown-config", "--create --topic odd --config nosuch.key=1"),
    topics("topics/create-invalid-config-value", "--create --topic odd --config retention.ms=abc"),
    topics("topics/create-config-without-value", "--create --topic odd --config abc"),
    topics("topics/create-zero-partitions", "--create --topic odd --partitions 0"),
    topics("topics/create-illegal-name", "--create --topic bad/name"),
    topics("topics/create-name-with-dot-warning", "--create --topic dotted.name"),
    topics("topics/create-colliding-name", "--create --topic dotted_name"),
    topics("topics/create-with-replica-assignment", "--create --topic placed --replica-assignment 0,0"),
    topics("topics/create-bad-replica-assignment", "--create --topic odd --replica-assignment 0,0:1"),
    topics("topics/create-without-topic", "--create"),
    topics("topics/list", "--list", pykbroker_tool=True),
    topics("topics/list-exclude-internal", "--list --exclude-internal"),
    topics("topics/list-regex", "--list --topic 'o.*'"),
    topics("topics/describe-orders", "--describe --topic orders", pykbroker_tool=True),
    topics("topics/describe-payments", "--describe --topic payments"),
    topics("topics/describe-all", "--describe --exclude-internal", unordered=True),
    topics("topics/describe-with-overrides", "--describe --topics-with-overrides", unordered=True),
    topics("topics/describe-under-replicated", "--describe --under-replicated-partitions"),
    topics("topics/describe-unavailable", "--describe --unavailable-partitions"),
    topics("topics/describe-at-min-isr", "--describe --at-min-isr-partitions --exclude-internal", unordered=True),
    topics("topics/describe-under-min-isr", "--describe --under-min-isr-partitions"),
    topics("topics/describe-missing", "--describe --topic nosuch"),
    topics("topics/alter-more-partitions", "--alter --topic events --partitions 4"),
    topics("topics/alter-fewer-partitions", "--alter --topic events --partitions 2"),
    topics("topics/alter-missing", "--alter --topic nosuch --partitions 2"),
    topics("topics/describe-altered", "--describe --topic events", pykbroker_tool=True),
    topics("topics/delete-missing", "--delete --topic nosuch"),
    topics("topics/delete-missing-if-exists", "--delete --topic nosuch --if-exists"),
    topics("topics/delete-dotted", "--delete --topic dotted.name"),
    topics("topics/delete-internal", "--delete --topic __consumer_offsets"),
    step("topics/version", TOPICS, "--version"),
    # --- producing and consuming
    console_producer(
        "console-producer/orders-with-keys",
        "admin",
        "--topic orders --property parse.key=true --property key.separator=:",
        stdin=ORDERS_LINES,
    ),
    console_producer(
        "console-producer/single-with-headers",
        "admin",
        "--topic single --property parse.headers=true --property parse.key=true",
        stdin="h1:v1,h2:v2\tkey-a\tvalue-a\nh1:v3\tkey-b\tvalue-b\n",
    ),
    console_producer(
        "console-producer/single-compressed",
        "admin",
        "--topic single --compression-codec gzip",
        stdin="zipped-1\nzipped-2\n",
    ),
    console_producer(
        "console-producer/line-without-separator",
        "admin",
        "--topic single --property parse.key=true",
        stdin="no separator here\n",
    ),
    console_producer("console-producer/bad-codec", "admin", "--topic single --compression-codec bogus", stdin="x\n"),
    console_consumer(
        "console-consumer/single-from-beginning",
        "admin",
        "--topic single --group single-readers --from-beginning --max-messages 4 --property "
        "print.key=true --property print.headers=true --property print.offset=true --property "
        "print.partition=true",
    ),
    console_consumer(
        "console-consumer/orders-partition-0",
        "admin",
        "--topic orders --partition 0 --offset earliest --timeout-ms 5000 --property "
        "print.key=true --property print.offset=true",
    ),
    console_consumer(
        "console-consumer/orders-all-as-group",
        "admin",
        "--topic orders --group readers --from-beginning --max-messages 12 --property print.key=true",
        unordered=True,
    ),
    console_consumer(
        "console-consumer/orders-offset-1-of-partition-1",
        "admin",
        "--topic orders --partition 1 --offset 1 --max-messages 1 --formatter "
        "org.apache.kafka.tools.consumer.NoOpMessageFormatter",
    ),
    console_consumer(
        "console-consumer/timestamps",
        "admin",
        "--topic single --partition 0 --offset 0 --max-messages 2 --property print.timestamp=true",
    ),
    console_consumer("console-consumer/offset-without-partition", "admin", "--topic orders --offset 1"),
    console_consumer(
        "console-consumer/missing-topic-times-out", "admin", "--topic nosuch --partition 0 --timeout-ms 2000"
    ),
    # --- offsets
    get_offsets("get-offsets/all", "--exclude-internal-topics", pykbroker_tool=True),
    get_offsets("get-offsets/orders-latest", "--topic orders --time -1"),
    get_offsets("get-offsets/orders-earliest", "--topic orders --time -2"),
    console_producer("console-producer/stamps-first", "admin", "--topic stamps", stdin="first\n"),
    console_producer("console-producer/stamps-second", "admin", "--topic stamps", stdin="second\n"),
    get_offsets("get-offsets/max-timestamp", "--topic stamps --time -3", pykbroker_tool=True),
    get_offsets("get-offsets/single-by-time-zero", "--topic single --time 0"),
    get_offsets("get-offsets/partitions-list", "--topic-partitions orders:1-,single:0", pykbroker_tool=True),
    get_offsets("get-offsets/missing-topic", "--topic nosuch", pykbroker_tool=True),
    get_offsets("get-offsets/bad-time", "--topic orders --time abc"),
    # --- consumer groups
    consumer_groups("consumer-groups/list", "--list", unordered=True),
    consumer_groups("consumer-groups/list-with-state", "--list --state", unordered=True, pykbroker_tool=True),
    consumer_groups("consumer-groups/describe-readers", "--describe --group readers", pykbroker_tool=True),
    consumer_groups("consumer-groups/describe-readers-state", "--describe --group readers --state"),
    consumer_groups("consumer-groups/describe-readers-members", "--describe --group readers --members"),
    consumer_groups("consumer-groups/describe-missing", "--describe --group nosuch"),
    consumer_groups(
        "consumer-groups/reset-to-earliest-dry-run",
        "--reset-offsets --group readers --topic orders --to-earliest --dry-run",
    ),
    consumer_groups(
        "consumer-groups/reset-to-offset-execute",
        "--reset-offsets --group readers --topic orders:0 --to-offset 1 --execute",
    ),
    consumer_groups(
        "consumer-groups/reset-shift-by-export",
        "--reset-offsets --group readers --all-topics --shift-by -1 --export --dry-run",
    ),
    consumer_groups(
        "consumer-groups/reset-to-datetime",
        "--reset-offsets --group readers --all-topics --to-datetime 2020-01-01T00:00:00.000 --execute",
    ),
    consumer_groups("consumer-groups/reset-without-scope", "--reset-offsets --group readers --to-earliest --execute"),
    consumer_groups(
        "consumer-groups/describe-after-reset", "--describe --group readers --offsets", pykbroker_tool=True
    ),
    consumer_groups("consumer-groups/delete-offsets-of-topic", "--delete-offsets --group readers --topic orders"),
    consumer_groups("consumer-groups/delete-offsets-missing-topic", "--delete-offsets --group readers --topic nosuch"),
    consumer_groups("consumer-groups/delete-readers", "--delete --group readers"),
    consumer_groups("consumer-groups/delete-missing", "--delete --group nosuch"),
    consumer_groups("consumer-groups/list-after-delete", "--list", unordered=True),
    # --- configs
    configs("configs/describe-topic-orders", "--describe --entity-type topics --entity-name orders"),
    configs("configs/describe-topic-payments", "--describe --entity-type topics --entity-name payments"),
    configs(
        "configs/describe-topic-payments-all",
        "--describe --entity-type topics --entity-name payments --all",
        pykbroker_tool=True,
    ),
    configs(
        "configs/alter-topic-add",
        "--alter --entity-type topics --entity-name orders --add-config retention.ms=3600000,max.message.bytes=2000000",
    ),
    configs("configs/describe-topic-altered", "--describe --topic orders", pykbroker_tool=True),
    configs(
        "configs/alter-topic-delete",
        "--alter --entity-type topics --entity-name orders --delete-config max.message.bytes",
    ),
    configs(
        "configs/alter-topic-unknown-key", "--alter --entity-type topics --entity-name orders --add-config nosuch=1"
    ),
    configs(
        "configs/alter-topic-invalid-value",
        "--alter --entity-type topics --entity-name orders --add-config retention.ms=abc",
    ),
    configs(
        "configs/alter-missing-topic", "--alter --entity-type topics --entity-name nosuch --add-config retention.ms=1"
    ),
    configs("configs/describe-all-topics", "--describe --entity-type topics", unordered=True),
    configs("configs/describe-brokers", "--describe --entity-type brokers"),
    configs("configs/describe-broker-0", "--describe --entity-type brokers --entity-name 0"),
    configs("configs/describe-broker-default", "--describe --entity-type brokers --entity-default"),
    configs(
        "configs/alter-broker-0", "--alter --entity-type brokers --entity-name 0 --add-config log.cleaner.threads=2"
    ),
    configs(
        "configs/describe-broker-0-altered",
        "--describe --broker 0",
        until="log.cleaner.threads=2 ",
        pykbroker_tool=True,
    ),
    configs(
        "configs/alter-broker-default",
        "--alter --entity-type brokers --entity-default --add-config log.cleaner.backoff.ms=20000",
    ),
    configs(
        "configs/describe-broker-default-altered",
        "--describe --broker-defaults",
        until="log.cleaner.backoff.ms=20000",
        pykbroker_tool=True,
    ),
    configs("configs/alter-broker-read-only", "--alter --entity-type brokers --entity-name 0 --add-config broker.id=7"),
    configs(
        "configs/alter-broker-delete",
        "--alter --entity-type brokers --entity-name 0 --delete-config log.cleaner.threads",
    ),
    configs(
        "configs/alter-broker-default-delete",
        "--alter --entity-type brokers --entity-default --delete-config log.cleaner.backoff.ms",
    ),
    configs("configs/describe-broker-loggers", "--describe --entity-type broker-loggers --entity-name 0"),
    configs("configs/alter-without-entity", "--alter --add-config retention.ms=1"),
    configs(
        "configs/scram-create-zed",
        "--alter --entity-type users --entity-name zed --add-config 'SCRAM-SHA-512=[password=zed-secret]'",
    ),
    configs("configs/scram-describe-zed", "--describe --entity-type users --entity-name zed"),
    configs("configs/users-describe", "--describe --entity-type users"),
    configs(
        "quotas/user-producer-rate",
        "--alter --entity-type users --entity-name zed --add-config producer_byte_rate=1048576",
    ),
    configs(
        "quotas/client-consumer-rate",
        "--alter --entity-type clients --entity-name reporter --add-config consumer_byte_rate=2097152",
    ),
    configs(
        "quotas/user-client-request-percentage",
        "--alter --entity-type users --entity-name zed --entity-type clients --entity-name "
        "reporter --add-config request_percentage=50",
    ),
    configs(
        "quotas/default-user", "--alter --entity-type users --entity-default --add-config producer_byte_rate=4194304"
    ),
    configs("quotas/describe-user", "--describe --entity-type users --entity-name zed"),
    configs("quotas/describe-clients", "--describe --entity-type clients"),
    configs("quotas/describe-user-clients", "--describe --entity-type users --entity-name zed --entity-type clients"),
    configs("quotas/describe-default-user", "--describe --entity-type users --entity-default"),
    configs(
        "quotas/remove-user-rate", "--alter --entity-type users --entity-name zed --delete-config producer_byte_rate"
    ),
    configs(
        "quotas/remove-default-user", "--alter --entity-type users --entity-default --delete-config producer_byte_rate"
    ),
    configs(
        "quotas/unknown-quota-key", "--alter --entity-type clients --entity-name reporter --add-config nosuch_rate=1"
    ),
    configs(
        "quotas/ip-connection-rate",
        "--alter --entity-type ips --entity-name 127.0.0.2 --add-config connection_creation_rate=10",
    ),
    configs("quotas/describe-ips", "--describe --entity-type ips"),
    # --- ACLs
    acls("acls/list-none", "--list"),
    acls(
        "acls/allow-dave-read-orders",
        "--add --allow-principal User:dave --operation Read --operation Describe --topic orders",
    ),
    acls("acls/producer-dave-orders", "--add --producer --allow-principal User:dave --topic orders"),
    acls("acls/consumer-dave-group", "--add --consumer --allow-principal User:dave --topic orders --group dave-group"),
    acls("acls/deny-dave-payments", "--add --deny-principal User:dave --operation All --topic payments"),
    acls(
        "acls/prefixed-topics",
        "--add --allow-principal User:dave --operation Write --topic logs- --resource-pattern-type prefixed",
    ),
    acls(
        "acls/allow-from-host",
        "--add --allow-principal User:zed --allow-host 127.0.0.1 --operation Describe --topic orders",
    ),
    acls("acls/cluster-create-for-dave", "--add --allow-principal User:dave --operation Create --cluster"),
    acls("acls/list-all", "--list"),
    acls("acls/list-orders", "--list --topic orders"),
    acls("acls/list-by-principal", "--list --principal User:dave"),
    acls("acls/list-prefixed-match", "--list --topic logs-app --resource-pattern-type match"),
    acls("acls/list-cluster", "--list --cluster"),
    acls("acls/add-without-principal", "--add --operation Read --topic orders"),
    acls("acls/invalid-operation-for-resource", "--add --allow-principal User:dave --operation AlterConfigs --group g"),
    step("acls/as-dave-list-denied", "kafka-acls", "--bootstrap-server {B} --command-config {dave} --list"),
    step("dave/list-topics", TOPICS, "--bootstrap-server {B} --command-config {dave} --list"),
    step(
        "dave/describe-payments", TOPICS, "--bootstrap-server {B} --command-config {dave} --describe --topic payments"
    ),
    step("dave/create-topic", TOPICS, "--bootstrap-server {B} --command-config {dave} --create --topic dave-topic"),
    console_producer(
        "dave/produce-orders",
        "dave",
        "--topic orders --property parse.key=true --property key.separator=:",
        stdin="k1:from-dave\n",
    ),
    console_producer("dave/produce-payments-denied", "dave", "--topic payments", stdin="denied\n", timeout=60),
    console_consumer(
        "dave/consume-orders-in-group",
        "dave",
        "--topic orders --group dave-group --from-beginning --max-messages 13",
        unordered=True,
    ),
    console_consumer(
        "dave/consume-in-other-group-denied", "dave", "--topic orders --group other-group --max-messages 1"
    ),
    step(
        "dave/alter-configs-denied",
        "kafka-configs",
        "--bootstrap-server {B} --command-config {dave} --alter --topic orders --add-config retention.ms=1",
    ),
    step(
        "dave/describe-groups",
        "kafka-consumer-groups",
        "--bootstrap-server {B} --command-config {dave} --describe --group dave-group",
    ),
    step("zed/list-topics-over-scram", TOPICS, "--bootstrap-server {S} --command-config {zed} --list"),
    step("zed/wrong-password", TOPICS, "--bootstrap-server {S} --command-config {F:zed-wrong.properties} --list"),
    acls("acls/remove-deny", "--remove --force --deny-principal User:dave --operation All --topic payments"),
    acls("acls/remove-all-of-orders", "--remove --force --topic orders"),
    acls("acls/list-after-remove", "--list"),
    # --- records
    delete_records("delete-records/orders-partition-0", "--offset-json-file {F:delete-first.json}"),
    delete_records("delete-records/beyond-the-end", "--offset-json-file {F:delete-beyond.json}"),
    delete_records("delete-records/not-json", "--offset-json-file {F:not-json.json}"),
    delete_records("delete-records/missing-file", "--offset-json-file /nonexistent/delete.json"),
    get_offsets("get-offsets/orders-earliest-after-delete", "--topic orders --time -2"),
    # --- leader election
    step(
        "leader-election/preferred-all",
        "kafka-leader-election",
        "--bootstrap-server {B} --admin.config {admin} --election-type preferred --all-topic-partitions",
    ),
    step(
        "leader-election/preferred-one",
        "kafka-leader-election",
        "--bootstrap-server {B} --admin.config {admin} --election-type preferred --topic orders --partition 0",
    ),
    step(
        "leader-election/unclean-one",
        "kafka-leader-election",
        "--bootstrap-server {B} --admin.config {admin} --election-type unclean --topic orders --partition 1",
    ),
    step(
        "leader-election/from-file-with-missing",
        "kafka-leader-election",
        "--bootstrap-server {B} --admin.config {admin} --election-type preferred --path-to-json-file {F:elect.json}",
    ),
    step(
        "leader-election/missing-partition-option",
        "kafka-leader-election",
        "--bootstrap-server {B} --admin.config {admin} --election-type preferred --topic orders",
    ),
    # --- log dirs
    log_dirs("log-dirs/describe-orders", "--describe --topic-list orders,single", figures=True),
    log_dirs("log-dirs/describe-broker-0", "--describe --broker-list 0 --topic-list payments", figures=True),
    log_dirs("log-dirs/describe-missing-broker", "--describe --broker-list 5"),
    # --- performance tools
    step(
        "producer-perf/1000-records",
        "kafka-producer-perf-test",
        "--topic perf --num-records 1000 --record-size 100 --throughput -1 --producer.config "
        "{admin} --producer-props bootstrap.servers={B} acks=all",
        figures=True,
    ),
    step(
        "producer-perf/transactional",
        "kafka-producer-perf-test",
        "--topic perf --num-records 200 --record-size 50 --throughput -1 --producer.config "
        "{admin} --producer-props bootstrap.servers={B} --transactional-id perf-tx "
        "--transaction-duration-ms 100",
        figures=True,
    ),
    step("producer-perf/missing-options", "kafka-producer-perf-test", "--topic perf"),
    step(
        "consumer-perf/1000-messages",
        "kafka-consumer-perf-test",
        "--bootstrap-server {B} --consumer.config {admin} --topic perf --messages 1000 --group perf-group",
        figures=True,
    ),
    step(
        "consumer-perf/show-detailed-stats",
        "kafka-consumer-perf-test",
        "--bootstrap-server {B} --consumer.config {admin} --topic perf --messages 100 "
        "--hide-header --group perf-group-2",
        figures=True,
    ),
    step("e2e-latency/50-messages", "kafka-e2e-latency", "{B} latency 50 all 100 {admin}", figures=True),
    step(
        "verifiable-producer/10-records",
        "kafka-verifiable-producer",
        "--bootstrap-server {B} --producer.config {admin} --topic verified --max-messages 10 --acks -1",
    ),
    step(
        "verifiable-consumer/10-records",
        "kafka-verifiable-consumer",
        "--bootstrap-server {B} --consumer.config {admin} --topic verified --group-id verifiers "
        "--max-messages 10 --reset-policy earliest",
    ),
    # --- transactions
    transactions("transactions/list", "list", figures=True),
    transactions("transactions/describe", "describe --transactional-id perf-tx", figures=True),
    transactions("transactions/describe-missing", "describe --transactional-id nosuch"),
    transactions("transactions/describe-producers", "describe-producers --topic perf --partition 0", figures=True),
    transactions("transactions/find-hanging", "find-hanging --broker-id 0"),
    transactions(
        "transactions/abort-missing-producer",
        "abort --topic perf --partition 0 --producer-id 12345 --producer-epoch 0 --coordinator-epoch 0",
    ),
    # --- partition reassignment
    reassign("reassign/generate", "--generate --topics-to-move-json-file {F:topics-to-move.json} --broker-list 0"),
    reassign("reassign/list-none", "--list"),
    reassign("reassign/execute-same-replicas", "--execute --reassignment-json-file {F:reassign.json}"),
    reassign("reassign/verify", "--verify --reassignment-json-file {F:reassign.json}"),
    reassign("reassign/execute-missing-broker", "--execute --reassignment-json-file {F:reassign-to-5.json}"),
    reassign("reassign/cancel", "--cancel --reassignment-json-file {F:reassign.json}"),
    reassign(
        "reassign/execute-with-throttle",
        "--execute --reassignment-json-file {F:reassign-events.json} --throttle 10000000",
    ),
    configs("configs/describe-throttled-topic", "--describe --entity-type topics --entity-name events"),
    reassign(
        "reassign/verify-clears-throttles",
        "--verify --reassignment-json-file {F:reassign-events.json}",
        until="Clearing topic-level throttles",
    ),
    configs("configs/describe-topic-after-verify", "--describe --entity-type topics --entity-name events"),
    reassign("reassign/execute-into-log-dir", "--execute --reassignment-json-file {F:reassign-log-dir.json}"),
    log_dirs("log-dirs/describe-after-move", "--describe --topic-list single", figures=True),
    # --- delegation tokens
    delegation_tokens(
        "delegation-tokens/create",
        "--create --max-life-time-period -1 --renewer-principal User:dave",
        capture=r"^(?P<tokenid>\S+)\s+(?P<hmac>\S+)\s+User:admin",
    ),
    delegation_tokens("delegation-tokens/describe", "--describe"),
    delegation_tokens("delegation-tokens/describe-by-owner", "--describe --owner-principal User:admin"),
    step(
        "delegation-tokens/describe-as-dave",
        "kafka-delegation-tokens",
        "--bootstrap-server {B} --command-config {dave} --describe",
    ),
    step(
        "delegation-tokens/list-topics-with-the-token", TOPICS, "--bootstrap-server {S} --command-config {token} --list"
    ),
    step(
        "delegation-tokens/create-with-a-token",
        "kafka-delegation-tokens",
        "--bootstrap-server {S} --command-config {token} --create --max-life-time-period -1",
    ),
    delegation_tokens("delegation-tokens/renew", "--renew --renew-time-period -1 --hmac {hmac}", figures=True),
    delegation_tokens("delegation-tokens/renew-unknown", "--renew --renew-time-period -1 --hmac bm90LWEtdG9rZW4="),
    delegation_tokens("delegation-tokens/expire", "--expire --expiry-time-period -1 --hmac {hmac}", figures=True),
    delegation_tokens("delegation-tokens/describe-after-expire", "--describe"),
    step(
        "delegation-tokens/list-topics-with-the-expired-token",
        TOPICS,
        "--bootstrap-server {S} --command-config {token} --list",
    ),
    # --- features
    step("features/describe", "kafka-features", "--bootstrap-server {B} --command-config {admin} describe"),
    step(
        "features/upgrade-unknown-dry-run",
        "kafka-features",
        "--bootstrap-server {B} --command-config {admin} upgrade --feature nosuch.feature=1 --dry-run",
    ),
    # --- clean up
    topics("topics/delete-orders", "--delete --topic orders"),
    topics("topics/delete-pattern", "--delete --topic 'p.*'"),
    topics("topics/list-at-the-end", "--list"),
]


def files(log_dir: Path) -> dict[str, str]:
    """The files the steps name with {F:name}: name -> content (`log_dir`: the broker's)."""
    delete = lambda *parts: json.dumps(  # noqa: E731
        {"partitions": [{"topic": t, "partition": p, "offset": o} for t, p, o in parts], "version": 1}
    )
    return {
        "delete-first.json": delete(("orders", 0, 2)),
        "delete-beyond.json": delete(("orders", 1, 999)),
        "not-json.json": "not json",
        "elect.json": json.dumps(
            {"partitions": [{"topic": "orders", "partition": 2}, {"topic": "nosuch", "partition": 0}]}
        ),
        "topics-to-move.json": json.dumps({"topics": [{"topic": "events"}], "version": 1}),
        "reassign.json": json.dumps(
            {"version": 1, "partitions": [{"topic": "single", "partition": 0, "replicas": [0], "log_dirs": ["any"]}]}
        ),
        "reassign-to-5.json": json.dumps(
            {"version": 1, "partitions": [{"topic": "single", "partition": 0, "replicas": [5]}]}
        ),
        "reassign-events.json": json.dumps(
            {"version": 1, "partitions": [{"topic": "events", "partition": p, "replicas": [0]} for p in range(4)]}
        ),
        "reassign-log-dir.json": json.dumps(
            {
                "version": 1,
                "partitions": [{"topic": "single", "partition": 0, "replicas": [0], "log_dirs": [str(log_dir)]}],
            }
        ),
    }


@dataclass
class Side:
    """One broker under test as the steps see it: its listeners, its client config files, its
    directories (to normalize), and the JVM that runs the tools against it."""

    label: str
    plain: str
    scram: str
    ca: Path
    work_dir: Path
    data_dirs: tuple[Path, ...]
    shell: ToolShell | None = None
    paths: dict[str, str] = field(default_factory=dict)
    captured: dict[str, str] = field(default_factory=dict)

    def write_files(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        configs = {
            "admin": plain_config("admin"),
            "dave": plain_config("dave"),
            "zed": scram_config("zed", "zed-secret", self.ca),
            "F:zed-wrong.properties": scram_config("zed", "not-the-password", self.ca),
        }
        configs.update({f"F:{name}": content for name, content in files(self.data_dirs[0] / "kafka-logs").items()})
        for key, content in configs.items():
            path = self.work_dir / (key.removeprefix("F:") if key.startswith("F:") else f"{key}.properties")
            path.write_text(content)
            self.paths[key] = str(path)

    def token_config(self) -> str:
        """SCRAM with the delegation token created last (KIP-48: the token id as the user name,
        its HMAC as the password, tokenauth=true)."""
        path = self.work_dir / "token.properties"
        user, hmac = self.captured.get("tokenid", "no-token"), self.captured.get("hmac", NO_TOKEN)
        path.write_text(scram_config(user, hmac, self.ca).replace('";\n', '" tokenauth=true;\n', 1))
        return str(path)

    def words(self, step: Step) -> list[str]:
        def filled(word: str) -> str:
            word = re.sub(r"\{(F:[^}]+|admin|dave|zed)\}", lambda m: self.paths[m.group(1)], word)
            if "{token}" in word:
                word = word.replace("{token}", self.token_config())
            word = word.replace("{hmac}", self.captured.get("hmac", NO_TOKEN))
            return word.replace("{B}", self.plain).replace("{S}", self.scram)

        return [filled(word) for word in step.words()]

    def run(self, step: Step) -> Run:
        assert self.shell is not None
        done = self.shell.run(TOOLS[step.tool], *self.words(step), stdin=step.stdin, timeout=step.timeout)
        for _ in range(20 if step.until else 0):
            if step.until in done.out or done.status != 0:
                break
            time.sleep(0.5)
            done = self.shell.run(TOOLS[step.tool], *self.words(step), stdin=step.stdin, timeout=step.timeout)
        found = re.search(step.capture, done.out, re.M) if step.capture else None
        if found:
            self.captured.update(found.groupdict())
        return done

    def run_pykbroker_tool(self, step: Step) -> Run:
        """The step through `pykbroker <subcommand>` (its own process, as a user runs it)."""
        done = subprocess.run(
            [sys.executable, "-m", "pykbroker", PYKBROKER_TOOLS[step.tool], *self.words(step)],
            input=step.stdin,
            capture_output=True,
            text=True,
            timeout=step.timeout,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    def normalized(self, step: Step, run: Run) -> Run:
        return Run(run.status, normalized(self, step, run.out), normalized(self, step, run.err))


def plain_config(user: str) -> str:
    return (
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{user}" password="{PLAIN_USERS[user]}";\n'
    )


def scram_config(user: str, password: str, ca: Path) -> str:
    return (
        f"security.protocol=SASL_SSL\nsasl.mechanism={SCRAM_MECHANISM}\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={ca}\n"
    )


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# a topic or cluster id (22 characters of URL-safe base64) where the tools print one
BASE64_ID = re.compile(r"((?:TopicId|Topic Id|topicId|ClusterId|Cluster ID|clusterId)\W{1,4})[A-Za-z0-9_-]{22}\b")
MILLIS = re.compile(r"(?<!\d)1[6-9]\d{11}(?!\d)")
DATETIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")
NUMBER = re.compile(r"(?<![A-Za-z_\d.-])-?\d+(?:\.\d+)?(?![A-Za-z_\d])")
RANDOM_GROUP = re.compile(r"\b(console-consumer|perf-consumer)-\d+\b")
AVERAGE_THROUGHPUT = re.compile(r'"avg_throughput":[0-9.E-]+')
# a set of operations in the order of a Java HashSet of enum constants (identity hashes)
OPERATION_SET = re.compile(r"(supports operations )([A-Za-z, ]+)")
CLIENT_SUFFIX = re.compile(r"\b((?:console-)?(?:producer|consumer|adminclient))-(\d+)\b")


def canonical_json(line: str) -> str:
    """A line that is a JSON object with its keys sorted (the verifiable clients print Java
    objects whose field order changes from one JVM to the next); any other line as it is."""
    if not line.startswith("{"):
        return line
    try:
        return json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return line


def normalized(side: Side, step: Step, text: str) -> str:
    """`text` with what may differ between two runs of the same step written as placeholders:
    the side's ports and directories, ids, times; all figures of a measuring step; the lines
    sorted where their order is not defined."""
    text = "\n".join(map(canonical_json, text.split("\n")))
    text = text.replace(side.plain, "{B}").replace(side.scram, "{S}")
    for name, value in side.captured.items():
        text = text.replace(value, f"{{{name}}}")
    for directory in sorted({str(side.work_dir), *map(str, side.data_dirs)}, key=len, reverse=True):
        text = text.replace(directory, "{dir}")
    text = UUID.sub("{uuid}", text)
    text = BASE64_ID.sub(r"\1{id}", text)
    text = MILLIS.sub("{ms}", text)
    text = DATETIME.sub("{time}", text)
    text = RANDOM_GROUP.sub(r"\1-{n}", text)
    text = CLIENT_SUFFIX.sub(r"\1-{n}", text)
    text = AVERAGE_THROUGHPUT.sub('"avg_throughput":N', text)
    text = OPERATION_SET.sub(lambda m: m.group(1) + ", ".join(sorted(m.group(2).split(", "))), text)
    if step.figures:
        text = NUMBER.sub("N", text)
    if step.unordered:  # (Kafka's tools pad the first and last entries of a set with a space)
        text = "\n".join(sorted(line.strip() for line in text.splitlines()))
    return text


@dataclass
class Outcome:
    """One step on both sides, normalized; and pykbroker's own tool on pykbroker where the step
    holds it to the same output."""

    step: Step
    pykbroker: Run
    kafka: Run
    pykbroker_tool: Run | None = None
    seconds: float = 0.0  # how long the step took (the slower side)

    @property
    def same(self) -> bool:
        return self.pykbroker == self.kafka


def run_normalized(side: Side, each: Step) -> Run:
    return side.normalized(each, side.run(each))


def run_side_by_side(pykbroker: Side, kafka: Side, steps: list[Step] = STEPS) -> list[Outcome]:
    """Every step on both sides at once (each side's JVM runs its steps in order)."""
    from concurrent.futures import ThreadPoolExecutor

    def own_tool(each: Step) -> Run | None:
        if not each.pykbroker_tool:
            return None
        return pykbroker.normalized(each, pykbroker.run_pykbroker_tool(each))

    outcomes = []
    with ThreadPoolExecutor(max_workers=3) as pool:
        for each in steps:
            started = time.monotonic()
            ours = pool.submit(run_normalized, pykbroker, each)
            tool = pool.submit(own_tool, each)  # read-only steps: at the same time as Kafka's tool
            theirs = run_normalized(kafka, each)
            outcomes.append(Outcome(each, ours.result(), theirs, tool.result(), time.monotonic() - started))
    return outcomes
