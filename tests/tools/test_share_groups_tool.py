"""`pykbroker share-groups` is Kafka 4's kafka-share-groups.sh (ShareGroupCommand): its checks of
the command line, its tables (`--list --state`, `--describe` offsets, members and state, the
reset plan, `--delete` and `--delete-offsets` reports) and the share group requests it speaks.
The requests and answers are checked against the message schemas' own codecs; the tables on
answers built here. The live test drives a share group through a broker that serves share groups
(it is skipped where the broker does not advertise ShareGroupDescribe). Kafka 3.9 has no share
groups, so nothing here is compared with real Kafka."""

from __future__ import annotations

import time
import uuid

import pytest

from pykbroker.protocol import messages
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.wire import create_topic
from pykbroker.tools import group_protocol, share_groups
from pykbroker.tools import share_group_protocol as wire
from pykbroker.tools.group_protocol import FlexibleConnection, compact_string, uvarint
from pykbroker.tools.share_group_protocol import KafkaErrorInfo, ShareGroupDescription, ShareMember

TOPIC_ID = uuid.UUID("6c1b2e07-5a1d-4c5e-9a53-0a7f3d0c2b11")


def encoded(name: str, version: int, build) -> bytes:
    """A message of the schema `name`, built by `build(classes)` and encoded by its codec."""
    message = messages.by_name(name)
    return message.encode_bytes(build(message.classes), version=version)


def decoded(name: str, version: int, body: bytes):
    message, end = messages.by_name(name).decode(body, version=version)
    assert end == len(body)
    return message


# --- the requests and answers, against the schemas


class TestWire:
    def test_share_group_describe_request_is_the_schemas(self) -> None:
        request = decoded("ShareGroupDescribeRequest", 1, group_protocol.describe_groups_request(["g1", "g2"]))
        assert (request.group_ids, request.include_authorized_operations) == (["g1", "g2"], False)

    def test_a_share_group_describe_answer_is_read(self) -> None:
        def build(c):
            root = c["ShareGroupDescribeResponse"]
            member = root.Member(
                member_id="m-1",
                rack_id=None,
                member_epoch=5,
                client_id="app",
                client_host="/10.0.0.1",
                subscribed_topic_names=["orders"],
                assignment=c["Assignment"](
                    topic_partitions=[c["TopicPartitions"](topic_id=TOPIC_ID, topic_name="orders", partitions=[1, 0])]
                ),
            )
            group = root.DescribedGroup(
                error_code=0,
                error_message=None,
                group_id="g",
                group_state="Stable",
                group_epoch=7,
                assignment_epoch=6,
                assignor_name="simple",
                members=[member],
                authorized_operations=-2147483648,
            )
            return root(throttle_time_ms=0, groups=[group])

        [group] = wire.parse_share_group_describe(encoded("ShareGroupDescribeResponse", 1, build))
        assert (group.group_id, group.state, group.group_epoch, group.assignment_epoch) == ("g", "Stable", 7, 6)
        assert group.members == (
            ShareMember("m-1", None, 5, "app", "/10.0.0.1", ("orders",), (("orders", 1), ("orders", 0))),
        )
        assert group.error is None

    def test_a_described_group_error_keeps_the_brokers_message(self) -> None:
        def build(c):
            root = c["ShareGroupDescribeResponse"]
            group = root.DescribedGroup(error_code=69, error_message="Group g not found.", group_id="g")
            return root(groups=[group])

        [group] = wire.parse_share_group_describe(encoded("ShareGroupDescribeResponse", 1, build))
        assert group.error == KafkaErrorInfo(69, "Group g not found.")
        assert group.error.java_text() == "org.apache.kafka.common.errors.GroupIdNotFoundException: Group g not found."

    def test_describe_offsets_asks_for_every_partition_or_for_some(self) -> None:
        every = decoded("DescribeShareGroupOffsetsRequest", 0, wire.describe_offsets_request("g", None))
        assert [(g.group_id, g.topics) for g in every.groups] == [("g", None)]
        some = decoded("DescribeShareGroupOffsetsRequest", 0, wire.describe_offsets_request("g", {"t": [2, 0]}))
        assert [(t.topic_name, t.partitions) for t in some.groups[0].topics] == [("t", [0, 2])]

    def test_a_describe_offsets_answer_is_read(self) -> None:
        def build(c):
            root = c["DescribeShareGroupOffsetsResponse"]
            partitions = [
                root.DescribeShareGroupOffsetsResponsePartition(partition_index=0, start_offset=12, leader_epoch=3),
                root.DescribeShareGroupOffsetsResponsePartition(partition_index=1, start_offset=-1, leader_epoch=-1),
                root.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=2, start_offset=0, leader_epoch=0, error_code=3, error_message=None
                ),
            ]
            topic = root.DescribeShareGroupOffsetsResponseTopic(
                topic_name="t", topic_id=TOPIC_ID, partitions=partitions
            )
            return root(groups=[root.DescribeShareGroupOffsetsResponseGroup(group_id="g", topics=[topic])])

        [group] = wire.parse_describe_offsets(encoded("DescribeShareGroupOffsetsResponse", 0, build))
        assert group.error is None
        assert [(p.partition, p.start_offset, p.leader_epoch) for p in group.partitions] == [
            (0, 12, 3),
            (1, -1, -1),
            (2, 0, 0),
        ]
        assert group.partitions[2].error == KafkaErrorInfo(3, "This server does not host this topic-partition.")

    def test_alter_offsets_request_and_answer(self) -> None:
        request = decoded(
            "AlterShareGroupOffsetsRequest", 0, wire.alter_offsets_request("g", {("t", 1): 5, ("t", 0): 4, ("u", 0): 9})
        )
        assert request.group_id == "g"
        assert [
            (t.topic_name, [(p.partition_index, p.start_offset) for p in t.partitions]) for t in request.topics
        ] == [
            ("t", [(0, 4), (1, 5)]),
            ("u", [(0, 9)]),
        ]

        def build(c):
            root = c["AlterShareGroupOffsetsResponse"]
            partitions = [
                root.AlterShareGroupOffsetsResponsePartition(partition_index=0),
                root.AlterShareGroupOffsetsResponsePartition(partition_index=1, error_code=3, error_message="gone"),
            ]
            topic = root.AlterShareGroupOffsetsResponseTopic(topic_name="t", topic_id=TOPIC_ID, partitions=partitions)
            return root(responses=[topic])

        change = wire.parse_alter_offsets(encoded("AlterShareGroupOffsetsResponse", 0, build))
        assert change.error is None
        assert change.partitions == {("t", 0): None, ("t", 1): KafkaErrorInfo(3, "gone")}

    def test_delete_offsets_request_and_answer(self) -> None:
        request = decoded("DeleteShareGroupOffsetsRequest", 0, wire.delete_offsets_request("g", ["t", "u"]))
        assert (request.group_id, [t.topic_name for t in request.topics]) == ("g", ["t", "u"])

        def build(c):
            root = c["DeleteShareGroupOffsetsResponse"]
            return root(
                error_code=68,
                error_message=None,
                responses=[root.DeleteShareGroupOffsetsResponseTopic(topic_name="t", topic_id=TOPIC_ID)],
            )

        change = wire.parse_delete_offsets(encoded("DeleteShareGroupOffsetsResponse", 0, build))
        assert change.error == KafkaErrorInfo(68, "The group is not empty.")
        assert change.topics == {"t": None}


# --- the tables


def lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line]


class TestList:
    def test_state_column_follows_the_widest_group_id(self) -> None:
        text = share_groups.format_group_states([("orders-share-group-1", "Stable"), ("g", "Empty")])
        assert text.splitlines() == [
            f"{'GROUP':<20} STATE",
            "orders-share-group-1 Stable",
            f"{'g':<20} Empty",
        ]

    def test_short_ids_keep_fifteen_columns(self) -> None:
        assert share_groups.format_group_states([]) == f"{'GROUP':<15} STATE\n"

    def test_states_are_read_in_any_case_and_only_share_group_states_pass(self) -> None:
        assert share_groups.parse_states("stable, EMPTY") == {"Stable", "Empty"}
        with pytest.raises(share_groups.ToolError, match="Invalid state list 'Assigning'. Valid states are: "):
            share_groups.parse_states("Assigning")


class TestDescribe:
    ROWS = [
        share_groups.OffsetRow("orders", 0, 12, 3, 4),
        share_groups.OffsetRow("orders", 1, None, None, None),
    ]

    def test_offsets_show_the_start_offset_and_lag(self) -> None:
        text = share_groups.format_offsets("g", self.ROWS, verbose=False)
        assert text.startswith("\n") and text.endswith("\n")
        assert text.splitlines()[1] == f"{'GROUP':<15} {'TOPIC':<15} {'PARTITION':<10} {'START-OFFSET':<13} LAG"
        assert lines(text) == [
            ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"],
            ["g", "orders", "0", "12", "4"],
            ["g", "orders", "1", "-", "-"],
        ]

    def test_verbose_offsets_add_the_leader_epoch(self) -> None:
        text = share_groups.format_offsets("g", self.ROWS, verbose=True)
        assert text.splitlines()[1] == (
            f"{'GROUP':<15} {'TOPIC':<15} {'PARTITION':<10} {'LEADER-EPOCH':<13} {'START-OFFSET':<13} LAG"
        )
        assert lines(text)[1] == ["g", "orders", "0", "3", "12", "4"]

    def test_a_group_without_partitions_says_so(self) -> None:
        assert share_groups.format_offsets("g", [], verbose=False) == "\nShare group 'g' has no offset information.\n"

    def test_lag_is_the_log_end_past_the_start_offset(self) -> None:
        started = wire.SharePartitionOffset("t", 0, 7, 2)
        assert share_groups.row_of(started, 10) == share_groups.OffsetRow("t", 0, 7, 2, 3)
        unstarted = wire.SharePartitionOffset("t", 1, -1, -1)
        assert share_groups.row_of(unstarted, 10) == share_groups.OffsetRow("t", 1, None, None, None)

    GROUP = ShareGroupDescription(
        "g",
        None,
        "Stable",
        9,
        8,
        "simple",
        (
            ShareMember("zeta", None, 9, "client-2", "/10.0.0.2", ("b", "a"), (("b", 0), ("a", 2), ("a", 1))),
            ShareMember("alpha", None, 8, "client-1", "/10.0.0.1", ("a",), ()),
        ),
        (1, "localhost", 9092),
    )

    def test_members_are_sorted_with_their_assignment(self) -> None:
        text = share_groups.format_members(self.GROUP, verbose=False)
        assert text.splitlines()[1] == (
            f"{'GROUP':<15} {'CONSUMER-ID':<15} {'HOST':<15} {'CLIENT-ID':<15} {'#PARTITIONS':<12} ASSIGNMENT"
        )
        assert lines(text)[1:] == [
            ["g", "alpha", "/10.0.0.1", "client-1", "0"],
            ["g", "zeta", "/10.0.0.2", "client-2", "3", "a:1,2;b:0"],
        ]

    def test_verbose_members_add_the_member_epoch(self) -> None:
        text = share_groups.format_members(self.GROUP, verbose=True)
        assert lines(text)[0][-2:] == ["MEMBER-EPOCH", "ASSIGNMENT"]
        assert lines(text)[2] == ["g", "zeta", "/10.0.0.2", "client-2", "3", "9", "a:1,2;b:0"]

    def test_state_shows_the_coordinator(self) -> None:
        text = share_groups.format_state(self.GROUP, verbose=False)
        assert text.splitlines()[1:] == [
            f"{'GROUP':<15} {'COORDINATOR (ID)':<25} {'STATE':<15} #MEMBERS",
            f"{'g':<15} {'localhost:9092  (1)':<25} {'Stable':<15} 2",
        ]

    def test_verbose_state_adds_the_epochs(self) -> None:
        text = share_groups.format_state(self.GROUP, verbose=True)
        assert text.splitlines()[1] == (
            f"{'GROUP':<15} {'COORDINATOR (ID)':<25} {'STATE':<15} "
            f"{'GROUP-EPOCH':<12} {'ASSIGNMENT-EPOCH':<17} #MEMBERS"
        )
        assert lines(text)[1] == ["g", "localhost:9092", "(1)", "Stable", "9", "8", "2"]


class TestReports:
    def test_a_reset_plan_is_kafkas_table(self) -> None:
        text = share_groups.format_reset_plan({"g": {("t", 0): 5}})
        assert text == f"\n{'GROUP':<15} {'TOPIC':<15} {'PARTITION':<10} NEW-OFFSET\n{'g':<15} {'t':<15} {'0':<10} 5\n"

    def test_an_empty_reset_plan_prints_an_empty_line(self) -> None:
        assert share_groups.format_reset_plan({}) == "\n"

    def test_export_is_topic_partition_offset(self) -> None:
        assert share_groups.export_csv({("t", 0): 5}) == "t,0,5\n"

    def test_deletion_reports_kafkas_messages(self) -> None:
        assert share_groups.format_deletion(["g"], {}) == "Deletion of requested share groups ('g') was successful.\n"
        failed = {"x": "org.apache.kafka.common.errors.GroupIdNotFoundException: Group 'x' is not a share group."}
        assert share_groups.format_deletion(["g"], failed).splitlines() == [
            "",
            "Error: Deletion of some share groups failed:",
            f"* Group 'x' could not be deleted due to: {failed['x']}",
            "",
            "These share groups were deleted successfully: 'g'",
        ]

    def test_delete_offsets_table_and_errors(self) -> None:
        assert (
            share_groups.format_delete_offsets(None, {"t": None}) == f"\n{'TOPIC':<15} STATUS\n{'t':<15} Successful\n"
        )
        unknown = KafkaErrorInfo(3, "This server does not host this topic-partition.")
        text = share_groups.format_delete_offsets(unknown, {"t": None, "gone": unknown})
        assert text.splitlines()[1:] == [
            f"{'TOPIC':<15} STATUS",
            f"{'gone':<15} Error: This server does not host this topic-partition.",
            f"{'t':<15} Successful",
        ]
        not_empty = KafkaErrorInfo(68, "The group is not empty.")
        assert share_groups.format_delete_offsets(not_empty, {"t": not_empty}).splitlines()[:2] == [
            "",
            "Error: The group is not empty.",
        ]


# --- the command line


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "Command must include exactly one action"),
        (["--describe"], "Option [describe] takes one of these options: [all-groups], [group]"),
        (["--describe", "--group", "g", "--members", "--state"], "takes at most one of these options"),
        (["--describe", "--group", "g", "--state", "Stable"], "Option [describe] does not take a value for [state]"),
        (["--delete"], "Option [delete] takes the options [group] or [all-groups]."),
        (["--delete", "--group", "g", "--all-groups"], "Option [delete] takes either [group] or [all-groups]"),
        (["--delete", "--group", "g", "--topic", "t"], "Option [delete] does not take the options [topic]"),
        (["--delete-offsets", "--group", "g"], "Option [delete-offsets] takes the following options: [group], [topic]"),
        (
            ["--reset-offsets", "--group", "g", "--topic", "t", "--to-latest"],
            "takes the option: [execute] or [dry-run]",
        ),
        (
            ["--reset-offsets", "--group", "g", "--topic", "t", "--to-latest", "--dry-run", "--execute"],
            "only accepts one of [execute] and [dry-run]",
        ),
        (
            ["--reset-offsets", "--topic", "t", "--to-latest", "--dry-run"],
            "Option [reset-offsets] takes the option: [group]",
        ),
        (
            ["--reset-offsets", "--group", "g", "--to-latest", "--dry-run"],
            "takes one of these options: [all-topics], [from-file], [topic]",
        ),
        (
            ["--reset-offsets", "--group", "g", "--topic", "t", "--dry-run"],
            "takes one of these options: [from-file], [to-current], [to-datetime], [to-earliest], [to-latest], "
            "[to-offset]",
        ),
        (
            ["--reset-offsets", "--group", "g", "--topic", "t", "--to-latest", "--to-earliest", "--dry-run"],
            'Option "[to-earliest]" can\'t be used with option "[to-latest]"',
        ),
        (["--list", "--members"], "Option(s) [members] are unavailable given other options on the command line"),
        (["--list", "--group", "g"], 'Option "[group]" can\'t be used with option "[list]"'),
        (["--describe", "--group", "g", "--topic", "t"], 'Option "[topic]" can\'t be used with option "[describe]"'),
        (["--reset-offsets", "--group", "g", "--topic", "t", "--by-duration", "PT1H", "--dry-run"], "unrecognized"),
    ],
)
def test_command_lines_kafka_refuses(pykbroker, argv: list[str], message: str) -> None:
    run = pykbroker("share-groups", "--bootstrap-server", "localhost:1", *argv)
    assert run.status == 2
    assert message in run.err


# --- against a broker that serves share groups

SHARE_SETTINGS = {
    "group.coordinator.rebalance.protocols": "classic,consumer,share",
    "group.share.min.session.timeout.ms": "1000",
    "group.share.session.timeout.ms": "1500",
    "group.share.min.heartbeat.interval.ms": "100",
    "group.share.heartbeat.interval.ms": "100",
}
SHARE_GROUP_HEARTBEAT = 76
DEADLINE_S = 30


@pytest.fixture(scope="module")
def share_broker():
    with EmbeddedBroker(SHARE_SETTINGS) as running:
        client = wire.ShareGroupClient({"bootstrap.servers": running.bootstrap}, 10)
        if not client.serves_share_groups():
            pytest.skip("the broker does not advertise ShareGroupDescribe")
        yield running


def heartbeat(bootstrap: str, group: str, member: str, epoch: int, topics: list[str] | None) -> tuple[int, int, bool]:
    """ShareGroupHeartbeat v1 as a share consumer sends it: (error code, member epoch, assigned?)."""
    client = wire.ShareGroupClient({"bootstrap.servers": bootstrap}, 10)
    _, host, port = client.coordinator(group)
    names = uvarint(0) if topics is None else uvarint(len(topics) + 1) + b"".join(compact_string(t) for t in topics)
    body = compact_string(group) + compact_string(member) + epoch.to_bytes(4, "big", signed=True)
    body += uvarint(0) + names + b"\x00"  # no rack id, the subscription, no tags
    with FlexibleConnection(host, port, client.config, 10) as connection:
        answer = connection.flexible_request(SHARE_GROUP_HEARTBEAT, 1, body)
    reader = wire.CompactReader(answer)
    reader.take(">i")  # throttle time
    error = reader.take(">h")
    reader.string(), reader.string()  # error message, member id
    member_epoch = reader.take(">i")
    reader.take(">i")  # heartbeat interval
    present = reader.take(">b") == 1  # the Assignment struct (-1: none sent)
    return error, member_epoch, present and reader.array_length() > 0  # some topic partitions


def produce(bootstrap: str, topic: str, partition: int, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    for index in range(count):
        producer.produce(topic, value=f"v{index}".encode(), partition=partition)
    assert producer.flush(10) == 0


def test_a_share_group_is_listed_described_reset_and_deleted(share_broker, pykbroker) -> None:
    bootstrap = share_broker.bootstrap
    topic, group, member = "share-tool-topic", "share-tool-group", str(uuid.uuid4())
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, 0, 3)
    error, epoch, assigned = heartbeat(bootstrap, group, member, 0, [topic])
    deadline = time.monotonic() + DEADLINE_S
    while not assigned and time.monotonic() < deadline:  # assigned once the share state is initialized
        time.sleep(0.1)
        error, epoch, assigned = heartbeat(bootstrap, group, member, epoch, None)
    assert error == 0 and assigned

    def tool(*argv: str):
        return pykbroker("share-groups", "--bootstrap-server", bootstrap, *argv)

    assert group in tool("--list").out.split()
    assert [group, "Stable"] in lines(tool("--list", "--state").out)
    members = tool("--describe", "--group", group, "--members")
    assert lines(members.out)[1] == [group, member, *lines(members.out)[1][2:4], "2", f"{topic}:0,1"]
    state = tool("--describe", "--group", group, "--state", "--verbose")
    row = lines(state.out)[1]
    assert (row[0], row[3], row[-1]) == (group, "Stable", "1")
    refused = tool("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
    assert (refused.status, refused.err.strip()) == (1, f"Share group '{group}' is not empty.")

    assert heartbeat(bootstrap, group, member, -1, None)[0] == 0  # the member leaves
    reset = tool("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
    assert reset.status == 0, reset.err
    assert sorted(lines(reset.out)[1:]) == [[group, topic, "0", "0"], [group, topic, "1", "0"]]
    described = tool("--describe", "--group", group)
    assert described.status == 0, described.err
    assert lines(described.out)[1:] == [[group, topic, "0", "0", "3"], [group, topic, "1", "0", "0"]]
    assert f"Share group '{group}' has no active members." in tool("--describe", "--group", group, "--members").err

    deleted_offsets = tool("--delete-offsets", "--group", group, "--topic", topic)
    assert lines(deleted_offsets.out) == [["TOPIC", "STATUS"], [topic, "Successful"]]
    deleted = tool("--delete", "--group", group)
    assert deleted.out == f"Deletion of requested share groups ('{group}') was successful.\n"
    missing = tool("--describe", "--group", group)
    assert missing.status == 1
    assert "GroupIdNotFoundException" in missing.err
