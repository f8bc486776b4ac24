"""What `pykbroker consumer-groups --describe` prints for a consumer-protocol (KIP-848) group, as
Kafka 4's ConsumerGroupCommand prints it, from a ConsumerGroupDescribe answer
(`group_protocol.DescribedConsumerGroup`):

- `--members`: GROUP, CONSUMER-ID, [GROUP-INSTANCE-ID,] HOST, CLIENT-ID, #PARTITIONS, and with
  `--verbose` CURRENT-EPOCH (the member's epoch), CURRENT-ASSIGNMENT, TARGET-EPOCH (the group's
  target assignment epoch), TARGET-ASSIGNMENT, assignments written `topic:0,1;other:2`;
- `--state`: GROUP, COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, [GROUP-EPOCH,
  TARGET-ASSIGNMENT-EPOCH with `--verbose`,] #MEMBERS.

Classic groups keep Kafka 3.9's layout (`consumer_groups`), except `--state --verbose`, which
Kafka 4 added for both types (a classic group's epochs print as `-`).
"""

from __future__ import annotations

from .group_protocol import DescribedConsumerGroup, DescribedMember
from .tool_support import assignment_string

MISSING = "-"
# ConsumerGroupDescribe's state names, as Kafka's GroupState prints them
STATE_NAMES = {name.lower(): name for name in ("Unknown", "Empty", "Assigning", "Reconciling", "Stable", "Dead")}


def state_name(wire_state: str) -> str:
    return STATE_NAMES.get(wire_state.strip().lower(), "Unknown")


def format_consumer_members(group: DescribedConsumerGroup, verbose: bool) -> str:
    members = list(group.members)
    widths = _member_widths(group.group_id, members)
    with_instance_id = any(member.instance_id for member in members)

    def identity(*cells: object) -> str:
        texts = [str(cell) for cell in cells]
        if not with_instance_id:
            del texts[2]
            keys = ["group", "consumer", "host", "client"]
        else:
            keys = ["group", "consumer", "instance", "host", "client"]
        return "".join(f"{text:<{widths[key]}} " for text, key in zip(texts, keys, strict=False)) + f"{texts[-1]:<15} "

    def epochs(*cells: object) -> str:
        texts = [str(cell) for cell in cells]
        return f"{texts[0]:<15} {texts[1]:<{widths['current']}} {texts[2]:<15} {texts[3]:<{widths['target']}}"

    header = identity("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    if verbose:
        header += epochs("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT")
    lines = ["", header]
    for member in members:
        row = identity(
            group.group_id,
            member.member_id,
            member.instance_id or "",
            member.client_host,
            member.client_id,
            len(member.assigned()),
        )
        if verbose:
            row += epochs(
                member.member_epoch,
                assignment_string(member.assigned(), MISSING),
                group.assignment_epoch,
                assignment_string(member.targeted(), MISSING),
            )
        lines.append(row)
    return "\n".join(lines) + "\n"


def _member_widths(group_id: str, members: list[DescribedMember]) -> dict[str, int]:
    return {
        "group": max([15] + [len(group_id) for _ in members]),
        "consumer": max([15] + [len(m.member_id) for m in members]),
        "instance": max([17] + [len(m.instance_id or "") for m in members]),
        "host": max([15] + [len(m.client_host) for m in members]),
        "client": max([15] + [len(m.client_id) for m in members]),
        "current": max([20] + [len(assignment_string(m.assigned(), MISSING)) for m in members]),
        "target": max([20] + [len(assignment_string(m.targeted(), MISSING)) for m in members]),
    }


def format_state(
    group_id: str,
    coordinator: str,
    assignment_strategy: str,
    state: str,
    members: int,
    epochs: tuple[int, int] | None,
    verbose: bool,
) -> str:
    """Kafka 4's printStates; `epochs` is (group epoch, target assignment epoch), None for a
    classic group."""
    group_width = max(15, len(group_id))
    coordinator_width = max(25, len(coordinator))
    strategy = assignment_strategy or MISSING

    def line(*cells: object) -> str:
        texts = [str(cell) for cell in cells]
        text = f"{texts[0]:<{group_width}} {texts[1]:<{coordinator_width}} {texts[2]:<20} {texts[3]:<20} "
        if verbose:
            return text + f"{texts[4]:<15} {texts[5]:<25} {texts[6]}"
        return text + texts[4]

    group_epoch, target_epoch = (MISSING, MISSING) if epochs is None else epochs
    if verbose:
        header = line(
            "GROUP",
            "COORDINATOR (ID)",
            "ASSIGNMENT-STRATEGY",
            "STATE",
            "GROUP-EPOCH",
            "TARGET-ASSIGNMENT-EPOCH",
            "#MEMBERS",
        )
        row = line(group_id, coordinator, strategy, state, group_epoch, target_epoch, members)
    else:
        header = line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
        row = line(group_id, coordinator, strategy, state, members)
    return f"\n{header}\n{row}\n"
