"""ListGroups, DescribeGroups and DeleteGroups as the coordinator answers them."""
from pykbroker.protocol.errors import ErrorCode

from .fakes import RANGE, coordinator, commit, fetch, join, new_member_id, stable_group


def test_list_groups_shows_each_group_with_protocol_type_state_and_type():
    c = coordinator()
    stable_group(c, 1, group="busy")
    commit(c, {("orders", 0): 1}, group="simple")
    error, groups = c.handle_list_groups()
    assert error == ErrorCode.NONE
    assert {(g.group_id, g.protocol_type, g.state, g.group_type) for g in groups} == {
        ("busy", "consumer", "Stable", "classic"), ("simple", "", "Empty", "classic")}


def test_list_groups_filters_by_state_and_type_case_insensitively():
    c = coordinator()
    stable_group(c, 1, group="busy")
    commit(c, {("orders", 0): 1}, group="simple")
    assert [g.group_id for g in c.handle_list_groups(states=["stable"])[1]] == ["busy"]
    assert [g.group_id for g in c.handle_list_groups(states=["Empty", "Dead"])[1]] == ["simple"]
    assert len(c.handle_list_groups(types=["Classic"])[1]) == 2
    assert c.handle_list_groups(types=["consumer"])[1] == []


def test_list_groups_reports_loading_partitions():
    c = coordinator()
    c.manager.loading_partitions.add(0)
    assert c.handle_list_groups()[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_describe_a_stable_group_shows_members_with_metadata_and_assignment():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    error, summary = c.handle_describe_group("g")
    assert error == ErrorCode.NONE
    assert (summary.state, summary.protocol_type, summary.protocol) == ("Stable", "consumer", "range")
    described = {m.member_id: m for m in summary.members}
    assert described[follower].metadata == RANGE[0][1]
    assert described[follower].assignment == follower.encode()
    assert (described[leader].client_id, described[leader].client_host) == ("client", "/127.0.0.1")


def test_describe_a_rebalancing_group_shows_members_without_metadata():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    join(c, member_id=leader)
    _, summary = c.handle_describe_group("g")
    assert (summary.state, summary.protocol) == ("PreparingRebalance", "")
    assert {(m.metadata, m.assignment) for m in summary.members} == {(b"", b"")}


def test_describe_an_unknown_group_says_dead_without_error():
    c = coordinator(partitions=2)
    _, summary = c.handle_describe_group("nobody")
    assert (summary.state, summary.protocol_type, summary.members) == ("Dead", "", [])
    c.on_resignation(c.partition_for("elsewhere"))
    error, summary = c.handle_describe_group("elsewhere")
    assert (error, summary.state) == (ErrorCode.NOT_COORDINATOR, "")


def test_delete_groups_deletes_empty_groups_with_their_offsets_only():
    c = coordinator()
    stable_group(c, 1, group="busy")
    commit(c, {("orders", 0): 1}, group="idle")
    errors = c.handle_delete_groups(["busy", "idle", "nobody"])
    assert errors == {"busy": ErrorCode.NON_EMPTY_GROUP, "idle": ErrorCode.NONE,
                      "nobody": ErrorCode.GROUP_ID_NOT_FOUND}
    assert c.manager.get_group("idle") is None
    assert fetch(c, group="idle", partitions=[("orders", 0)]) == {("orders", 0): -1}


def test_a_deleted_group_can_be_used_again():
    c = coordinator()
    commit(c, {("orders", 0): 1})
    c.handle_delete_groups(["g"])
    member = new_member_id(c)
    assert join(c, member_id=member) == [] and c.manager.get_group("g").has(member)
