"""Looking at and removing groups: ListGroups, DescribeGroups and DeleteGroups.

Only Empty groups can be deleted (NON_EMPTY_GROUP otherwise); deleting one removes its offsets
and writes tombstones for them and for its group records. ListGroups shows each group's type
("classic" or "consumer") and filters on it; DescribeGroups describes classic groups only (a
consumer group answers Dead, as Kafka 4 does for a group of another type).

`GroupAdmin` reads the groups of the `GroupMetadataManager` and removes offsets through the
`OffsetStore`.
"""

from __future__ import annotations

import logging

from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from .group import GroupMetadata
from .manager import GroupMetadataManager
from .model import DEAD_SUMMARY, EMPTY_SUMMARY, GroupOverview, GroupSummary
from .offset_store import OffsetStore
from .state import DEAD, EMPTY

log = logging.getLogger(__name__)


class GroupAdmin:
    def __init__(self, groups: GroupMetadataManager, store: OffsetStore) -> None:
        self.groups = groups
        self.store = store

    def handle_list_groups(
        self, states: list[str] | None = None, types: list[str] | None = None
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        if not self.groups.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self.groups.is_loading else ErrorCode.NONE
        wanted_states = {s.lower() for s in states or []}
        wanted_types = {t.lower() for t in types or []}
        overviews = [
            g.overview()
            for g in self.groups.current_groups()
            if not (g.consumer is not None and g.consumer.deleted)
            and (not wanted_states or g.is_in_states(wanted_states))
        ]
        overviews = [o for o in overviews if not wanted_types or o.group_type in wanted_types]
        return error, overviews

    def handle_describe_group(self, group_id: str) -> tuple[ErrorCode, GroupSummary]:
        error = self.groups.validate_group_status(group_id, ApiKey.DESCRIBE_GROUPS)
        if error is not None:
            return error, EMPTY_SUMMARY
        group = self.groups.get_group(group_id)
        if group is None or group.consumer is not None:  # Kafka describes only classic groups here
            return ErrorCode.NONE, DEAD_SUMMARY
        return ErrorCode.NONE, group.summary()

    def handle_delete_groups(self, group_ids: list[str]) -> dict[str, ErrorCode]:
        errors: dict[str, ErrorCode] = {}
        deletable: list[GroupMetadata] = []
        for group_id in group_ids:
            error = self.groups.validate_group_status(group_id, ApiKey.DELETE_GROUPS)
            group = None if error is not None else self.groups.get_group(group_id)
            if error is not None:
                errors[group_id] = error
            elif group is None or group.is_(DEAD):
                errors[group_id] = self.groups.missing_group_error(group_id)
            elif group.is_(EMPTY) and not group.is_active_consumer_group:
                group.transition_to(DEAD)
                deletable.append(group)
            else:
                errors[group_id] = ErrorCode.NON_EMPTY_GROUP
        if deletable:
            removed = self.store.cleanup_group_metadata(deletable, lambda group: group.offsets.remove_all())
            errors.update({group.group_id: ErrorCode.NONE for group in deletable})
            log.info(
                "The following groups were deleted: %s. A total of %d offsets were removed.",
                ", ".join(g.group_id for g in deletable),
                removed,
            )
        return errors
