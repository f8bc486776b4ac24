"""`pykbroker groups` is Kafka 4's kafka-groups.sh (GroupsCommand): every group with its type and
protocol, and Kafka's filters; and `pykbroker consumer-groups --describe` shows a consumer-protocol
(KIP-848) group as Kafka 4's kafka-consumer-groups.sh does. The tables are checked on answers
built here (ListGroups v5, ConsumerGroupDescribe v0 bodies); the live part lists a classic group."""

from __future__ import annotations

import struct
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from pykbroker.testkit.process import BrokerProcess
from pykbroker.tools import consumer_group_view, group_protocol, groups
from pykbroker.tools.group_protocol import ListedGroup, compact_string, uvarint

CLASSIC = ListedGroup("classic-app", "consumer", "Stable", "classic")
SIMPLE = ListedGroup("offsets-only", "", "Empty", "classic")
CONNECT = ListedGroup("connect-cluster", "connect", "Stable", "classic")
MODERN = ListedGroup("kip848-app", "consumer", "Stable", "consumer")
SHARE = ListedGroup("shared", "share", "Stable", "share")
ALL = [CLASSIC, SIMPLE, CONNECT, MODERN, SHARE]


def listed(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()[1:]]


class TestGroupsList:
    def test_every_group_is_listed_with_its_type_and_protocol(self) -> None:
        text = groups.format_groups(ALL, groups.GroupFilter())
        lines = text.splitlines()
        assert lines[0] == f"{'GROUP':<20} {'TYPE':<20} {'PROTOCOL':<20}"
        assert lines[1] == f"{'classic-app':<20} {'Classic':<20} {'consumer':<20} "  # each cell and a space
        assert listed(text) == [
            ["classic-app", "Classic", "consumer"],
            ["offsets-only", "Classic"],
            ["connect-cluster", "Classic", "connect"],
            ["kip848-app", "Consumer", "consumer"],
            ["shared", "Share", "share"],
        ]

    def test_columns_widen_to_the_longest_value(self) -> None:
        long = ListedGroup("a-group-id-longer-than-twenty", "consumer", "Stable", "consumer")
        lines = groups.format_groups([long], groups.GroupFilter()).splitlines()
        assert lines[0].index("TYPE") == len(long.group_id) + 1

    @pytest.mark.parametrize(
        ("group_filter", "expected"),
        [
            (groups.GroupFilter(consumer=True), ["classic-app", "offsets-only", "kip848-app"]),
            (groups.GroupFilter(share=True), ["shared"]),
            (groups.GroupFilter(group_type="Classic"), ["classic-app", "offsets-only", "connect-cluster"]),
            (groups.GroupFilter(group_type="Classic", protocol="connect"), ["connect-cluster"]),
            (groups.GroupFilter(protocol="consumer"), ["classic-app", "kip848-app"]),
            (groups.GroupFilter(streams=True), []),
        ],
    )
    def test_filters_are_kafkas(self, group_filter: groups.GroupFilter, expected: list[str]) -> None:
        assert [row[0] for row in listed(groups.format_groups(ALL, group_filter))] == expected

    def test_a_list_groups_v5_answer_is_read(self) -> None:
        body = struct.pack(">ih", 0, 0) + uvarint(3)
        for group in (CLASSIC, SHARE):
            body += b"".join(compact_string(v) for v in (group.group_id, group.protocol_type, group.state, group.type))
            body += b"\x00"
        error, parsed = group_protocol.parse_list_groups(body + b"\x00")
        assert error is None and parsed == [CLASSIC, SHARE]


def run_groups(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        status = groups.main(list(argv))
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        ([], 2, "Command must include exactly one action: --list."),
        (["--list", "--consumer", "--share"], 2, 'Option "[consumer]" can\'t be used with option "[share]"'),
        (["--list", "--share", "--protocol", "x"], 2, 'Option "[share]" can\'t be used with option "[protocol]"'),
        (["--list", "--group-type", "nope"], 1, "--group-type must be a valid group type."),
    ],
)
def test_command_lines_kafka_refuses(capsys, argv: list[str], status: int, message: str) -> None:
    code, _, err = run_groups(capsys, "--bootstrap-server", "127.0.0.1:1", *argv)
    assert code == status and message in err


def test_a_classic_group_is_listed_by_a_running_broker(tmp_path, capsys) -> None:
    with BrokerProcess(tmp_path, {"group.initial.rebalance.delay.ms": "0"}) as broker:
        broker.create_topic("t", 1)
        committer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "committed-only"})
        committer.commit(offsets=[TopicPartition("t", 0, 1)], asynchronous=False)
        committer.close()
        member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "joined", "session.timeout.ms": 6000})
        try:
            member.subscribe(["t"])
            while not member.assignment():
                member.poll(0.1)
            status, out, err = run_groups(capsys, "--bootstrap-server", broker.bootstrap, "--list")
        finally:
            member.close()
        assert (status, err) == (0, "")
        # a group that only commits offsets has no protocol type (a "simple" consumer group)
        assert sorted(listed(out)) == [["committed-only", "Classic"], ["joined", "Classic", "consumer"]]
        _, consumers, _ = run_groups(capsys, "--bootstrap-server", broker.bootstrap, "--list", "--consumer")
        assert sorted(row[0] for row in listed(consumers)) == ["committed-only", "joined"]
        _, shares, _ = run_groups(capsys, "--bootstrap-server", broker.bootstrap, "--list", "--share")
        assert listed(shares) == []


# --- consumer-protocol groups in `consumer-groups --describe`

T_ORDERS = uuid.UUID(int=1)
T_AUDIT = uuid.UUID(int=2)


def assignment_bytes(topics: list[tuple[uuid.UUID, str, list[int]]]) -> bytes:
    out = uvarint(len(topics) + 1)
    for topic_id, name, partitions in topics:
        out += topic_id.bytes + compact_string(name) + uvarint(len(partitions) + 1)
        out += b"".join(struct.pack(">i", p) for p in partitions) + b"\x00"
    return out + b"\x00"


def member_bytes(
    member_id: str, epoch: int, host: str, current: list, target: list, instance: str | None = None
) -> bytes:
    out = compact_string(member_id) + (compact_string(instance) if instance else b"\x00") + b"\x00"
    out += struct.pack(">i", epoch) + compact_string("app-client") + compact_string(host)
    out += uvarint(2) + compact_string("orders") + b"\x00"  # subscribed topics; no regex
    return out + assignment_bytes(current) + assignment_bytes(target) + b"\x00"


def describe_body() -> bytes:
    body = struct.pack(">i", 0) + uvarint(2)
    body += struct.pack(">h", 0) + b"\x00" + compact_string("app") + compact_string("Reconciling")
    body += struct.pack(">ii", 7, 7) + compact_string("uniform") + uvarint(3)
    body += member_bytes("m-1", 7, "/10.0.0.1", [(T_ORDERS, "orders", [0, 1])], [(T_ORDERS, "orders", [0])])
    body += member_bytes(
        "m-2", 6, "/10.0.0.2", [(T_AUDIT, "audit", [0])], [(T_ORDERS, "orders", [1]), (T_AUDIT, "audit", [0])]
    )
    return body + struct.pack(">i", -(2**31)) + b"\x00" + b"\x00"


def described() -> group_protocol.DescribedConsumerGroup:
    (group,) = group_protocol.parse_consumer_group_describe(describe_body())
    return group


def test_a_consumer_group_describe_answer_is_read() -> None:
    group = described()
    assert (group.group_id, group.state, group.group_epoch, group.assignment_epoch) == ("app", "Reconciling", 7, 7)
    assert group.assignor_name == "uniform"
    assert [(m.member_id, m.member_epoch, m.assigned(), m.targeted()) for m in group.members] == [
        ("m-1", 7, [("orders", 0), ("orders", 1)], [("orders", 0)]),
        ("m-2", 6, [("audit", 0)], [("orders", 1), ("audit", 0)]),
    ]


def test_members_verbose_shows_epochs_and_both_assignments_as_kafka_4() -> None:
    text = consumer_group_view.format_consumer_members(described(), verbose=True)
    lines = text.split("\n")
    assert lines[0] == ""
    assert lines[1].split() == [
        "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
        "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT",
    ]  # fmt: skip
    assert lines[2] == (
        f"{'app':<15} {'m-1':<15} {'/10.0.0.1':<15} {'app-client':<15} {'2':<15} "
        f"{'7':<15} {'orders:0,1':<20} {'7':<15} {'orders:0':<20}"
    )
    assert lines[3].split()[5:] == ["6", "audit:0", "7", "audit:0;orders:1"]


def test_members_without_verbose_stop_at_the_partition_count() -> None:
    text = consumer_group_view.format_consumer_members(described(), verbose=False)
    assert [line.split() for line in text.splitlines()[1:]] == [
        ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"],
        ["app", "m-1", "/10.0.0.1", "app-client", "2"],
        ["app", "m-2", "/10.0.0.2", "app-client", "1"],
    ]


def test_state_verbose_shows_the_group_and_target_assignment_epochs() -> None:
    text = consumer_group_view.format_state("app", "localhost:9092  (1)", "uniform", "Stable", 2, (7, 7), True)
    header, row = text.strip("\n").split("\n")
    assert header.split() == [
        "GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE",
        "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS",
    ]  # fmt: skip
    assert row == f"{'app':<15} {'localhost:9092  (1)':<25} {'uniform':<20} {'Stable':<20} {'7':<15} {'7':<25} 2"
    classic = consumer_group_view.format_state("old", "h:1  (0)", "range", "Stable", 1, None, True)
    assert classic.split("\n")[2].split()[5:7] == ["-", "-"]


def test_state_names_are_kafkas() -> None:
    assert [consumer_group_view.state_name(s) for s in ("stable", "ASSIGNING", "Reconciling", "x")] == [
        "Stable",
        "Assigning",
        "Reconciling",
        "Unknown",
    ]


def test_consumer_groups_describe_members_prints_a_consumer_protocol_group_as_kafka_4(capsys) -> None:
    import argparse

    from pykbroker.tools import consumer_groups
    from pykbroker.tools.group_admin import GroupDescription

    group = described()
    description = GroupDescription("app", "Unknown", "uniform", None, [], type="Consumer")
    args = argparse.Namespace(output="text", verbose=True)
    consumer_groups.describe_members({"app": group}, description, args, consumer_groups.Outcome())
    captured = capsys.readouterr()
    assert captured.out == consumer_group_view.format_consumer_members(group, verbose=True)
    assert captured.err == "\nWarning: Consumer group 'app' is rebalancing.\n"  # Reconciling
