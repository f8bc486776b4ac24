"""New offsets for `consumer-groups --reset-offsets`, computed as Kafka's ConsumerGroupCommand does:
each scenario (--to-earliest, --to-latest, --to-offset, --shift-by, --to-datetime, --by-duration,
--to-current, --from-file) gives an offset per partition; --to-offset, --shift-by and --from-file
are clamped to the partition's [log start, log end] with a warning, as Kafka does.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from confluent_kafka.admin import OffsetSpec

from ..common.java_order import hash_map_order, topic_partition_hash
from .client_config import ToolError
from .tool_support import Partition

if TYPE_CHECKING:
    from .group_admin import GroupAdmin

_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?",
    re.IGNORECASE,
)


@dataclass
class ResetRequest:
    scenario: str
    to_offset: int | None = None
    shift_by: int | None = None
    timestamp_ms: int | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ResetRequest:
        if args.to_offset is not None:
            return cls("to-offset", to_offset=args.to_offset)
        if args.shift_by is not None:
            return cls("shift-by", shift_by=args.shift_by)
        if args.to_datetime is not None:
            return cls("to-datetime", timestamp_ms=parse_datetime(args.to_datetime))
        if args.by_duration is not None:
            return cls("by-duration", timestamp_ms=int(time.time() * 1000) - parse_duration_ms(args.by_duration))
        for scenario in ("to_earliest", "to_latest", "to_current"):
            if getattr(args, scenario):
                return cls(scenario.replace("_", "-"))
        return cls("from-file")


def parse_datetime(text: str) -> int:
    """Kafka's Utils.getDateTime: `YYYY-MM-DDTHH:mm:SS.sss`, local time unless it ends with a zone
    (`Z`, `+01:00`, `+0100`). Milliseconds may be left out here."""
    if len(text.split("T")) != 2:
        raise ToolError("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format")
    normalized = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", text.replace("Z", "+00:00"))
    try:
        moment = datetime.fromisoformat(normalized)
    except ValueError:
        raise ToolError(f'Unparseable date: "{text}"') from None
    return int(moment.timestamp() * 1000)


def parse_duration_ms(text: str) -> int:
    """java.time.Duration.parse: `PnDTnHnMn.nS` (each part optional, signs allowed)."""
    match = _DURATION.fullmatch(text.strip())
    if not match or text.strip().upper() in ("P", "PT") or text.strip().upper().endswith("T"):
        raise ToolError(f"Text cannot be parsed to a Duration: {text}")
    sign, days, hours, minutes, seconds, fraction = match.groups()
    total_ms = (
        int(days or 0) * 86_400_000
        + int(hours or 0) * 3_600_000
        + int(minutes or 0) * 60_000
        + int(seconds or 0) * 1000
        + int(((fraction or "") + "000")[:3])
    )
    return -total_ms if sign == "-" else total_ms


def plan_reset(
    admin: GroupAdmin,
    group: str,
    partitions: list[Partition],
    request: ResetRequest,
    file_plan: dict[str, dict[Partition, int]] | None,
) -> dict[Partition, int]:
    scenario = request.scenario
    if scenario == "to-earliest":
        return required(admin.log_start_offsets(partitions), "Error getting starting offset of topic partition")
    if scenario == "to-latest":
        return required(admin.log_end_offsets(partitions), "Error getting ending offset of topic partition")
    if scenario == "to-offset":
        return clamp(admin, {partition: request.to_offset or 0 for partition in partitions})
    if scenario == "shift-by":
        return clamp(admin, shifted(admin.committed_offsets(group), partitions, request.shift_by or 0))
    if scenario in ("to-datetime", "by-duration"):
        return offsets_for_time(admin, partitions, request.timestamp_ms or 0)
    if scenario == "to-current":
        return current_offsets(admin, group, partitions)
    plan = (file_plan or {}).get(group)
    if plan is None:
        print(f"Error: No reset plan for group {group} found", file=sys.stderr)
        return {}
    return clamp(admin, dict(plan))


def required(offsets: dict[Partition, int | None], message: str) -> dict[Partition, int]:
    result = {}
    for (topic, partition), offset in offsets.items():
        if offset is None or offset < 0:
            raise ToolError(f"{message}: {topic}-{partition}")
        result[(topic, partition)] = offset
    return result


def shifted(committed: dict[Partition, int | None], partitions: list[Partition], shift_by: int) -> dict[Partition, int]:
    requested = {}
    for topic, partition in partitions:
        current = committed.get((topic, partition))
        if current is None:
            raise ToolError(
                f"Cannot shift offset for partition {topic}-{partition} since there is no current committed offset"
            )
        requested[(topic, partition)] = current + shift_by
    return requested


def clamp(admin: GroupAdmin, requested: dict[Partition, int]) -> dict[Partition, int]:
    """Kafka's checkOffsetsRange: an offset past the log end becomes the log end, one before the
    log start becomes the log start, each with a warning (in the order of the Java HashMap Kafka
    checks them in)."""
    starts = admin.log_start_offsets(requested)
    ends = admin.log_end_offsets(requested)
    result = {}
    for topic, partition in hash_map_order(sorted(requested), topic_partition_hash):
        offset = requested[(topic, partition)]
        start, end = starts.get((topic, partition)), ends.get((topic, partition))
        if end is not None and offset > end:
            warn(f"New offset ({offset}) is higher than latest offset for topic partition {topic}-{partition}. ", end)
            offset = end
        elif start is not None and offset < start:
            warn(
                f"New offset ({offset}) is lower than earliest offset for topic partition {topic}-{partition}. ", start
            )
            offset = start
        result[(topic, partition)] = offset
    return result


def warn(message: str, value: int) -> None:
    print(f"WARN {message}Value will be set to {value}", file=sys.stderr)


def offsets_for_time(admin: GroupAdmin, partitions: list[Partition], timestamp_ms: int) -> dict[Partition, int]:
    """The first offset at or after the time; a partition without one falls back to its log end."""
    found = admin.log_offsets(partitions, OffsetSpec.for_timestamp(timestamp_ms))
    result = {partition: offset for partition, offset in found.items() if offset is not None and offset >= 0}
    empty = [partition for partition in partitions if partition not in result]
    for topic, partition in hash_map_order(empty, topic_partition_hash):  # Kafka's HashMap of results
        print(f"\nWarn: Partition {partition} from topic {topic} is empty. Falling back to latest known offset.")
    result.update(required(admin.log_end_offsets(empty), "Error getting offset by timestamp of topic partition"))
    return result


def current_offsets(admin: GroupAdmin, group: str, partitions: list[Partition]) -> dict[Partition, int]:
    committed = admin.committed_offsets(group)
    with_offset = {p: committed[p] for p in partitions if committed.get(p) is not None}
    without = [p for p in partitions if p not in with_offset]
    result: dict[Partition, int] = {p: int(offset) for p, offset in with_offset.items() if offset is not None}
    result.update(required(admin.log_end_offsets(without), "Error getting ending offset of topic partition"))
    return result


def read_reset_plan(path: str, groups: list[str]) -> dict[str, dict[Partition, int]]:
    """A CSV plan as `--export` writes it: `topic,partition,offset` for a single group, or
    `group,topic,partition,offset`."""
    try:
        with open(path, encoding="utf-8") as file:
            lines = [line.strip() for line in file if line.strip()]
    except OSError as error:
        raise ToolError(f"cannot read {path}: {error.strerror or error}") from None
    plan: dict[str, dict[Partition, int]] = {}
    for line in lines:
        fields = [field.strip() for field in line.split(",")]
        try:
            if len(fields) == 3 and len(groups) == 1:
                group, (topic, partition, offset) = groups[0], fields
            elif len(fields) == 4:
                group, topic, partition, offset = fields
            else:
                raise ValueError(line)
            plan.setdefault(group, {})[(topic, int(partition))] = int(offset)
        except ValueError:
            raise ToolError(f"Invalid line in the reset plan {path}: {line!r}") from None
    return plan
