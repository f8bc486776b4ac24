"""Looking at and removing groups: ListGroups, DescribeGroups and DeleteGroups.

Only Empty groups can be deleted (NON_EMPTY_GROUP otherwise); deleting one removes its offsets
and writes tombstones for them and for its group record. Every group of this coordinator is a
"classic" group, so a ListGroups types filter matches them only if it names "classic".

This mixin expects `manager`, `is_active` and `validate_group_status` of the coordinator.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from .model import DEAD_SUMMARY, EMPTY_SUMMARY, GroupOverview, GroupSummary
from .state import DEAD, EMPTY

if TYPE_CHECKING:
    from .manager import GroupManager

log = logging.getLogger(__name__)

CLASSIC_GROUP_TYPE = "classic"


class Admin:
    # What this mixin uses of the coordinator, declared for the type checker only
    # (GroupCoordinator sets the attributes and defines the methods)
    manager: GroupManager
    is_active: bool

    if TYPE_CHECKING:

        def validate_group_status(self, group_id: str | None, api: int) -> ErrorCode | None: ...

    def handle_list_groups(
        self, states: list[str] | None = None, types: list[str] | None = None
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self.manager.is_loading else ErrorCode.NONE
        wanted_states = {s.lower() for s in states or []}
        wanted_types = {t.lower() for t in types or []}
        if wanted_types and CLASSIC_GROUP_TYPE not in wanted_types:
            return error, []
        groups = [
            g.overview() for g in self.manager.current_groups() if not wanted_states or g.is_in_states(wanted_states)
        ]
        return error, groups

    def handle_describe_group(self, group_id: str) -> tuple[ErrorCode, GroupSummary]:
        error = self.validate_group_status(group_id, ApiKey.DESCRIBE_GROUPS)
        if error is not None:
            return error, EMPTY_SUMMARY
        group = self.manager.get_group(group_id)
        if group is None:
            return ErrorCode.NONE, DEAD_SUMMARY
        return ErrorCode.NONE, group.summary()

    def handle_delete_groups(self, group_ids: list[str]) -> dict[str, ErrorCode]:
        errors: dict[str, ErrorCode] = {}
        deletable = []
        for group_id in group_ids:
            error = self.validate_group_status(group_id, ApiKey.DELETE_GROUPS)
            group = None if error is not None else self.manager.get_group(group_id)
            if error is not None:
                errors[group_id] = error
            elif group is None or group.is_(DEAD):
                errors[group_id] = (
                    ErrorCode.GROUP_ID_NOT_FOUND
                    if self.manager.group_not_exists(group_id)
                    else ErrorCode.NOT_COORDINATOR
                )
            elif group.is_(EMPTY):
                group.transition_to(DEAD)
                deletable.append(group)
            else:
                errors[group_id] = ErrorCode.NON_EMPTY_GROUP
        if deletable:
            removed = self.manager.cleanup_group_metadata(deletable, lambda group: group.offsets.remove_all())
            errors.update({group.group_id: ErrorCode.NONE for group in deletable})
            log.info(
                "The following groups were deleted: %s. A total of %d offsets were removed.",
                ", ".join(g.group_id for g in deletable),
                removed,
            )
        return errors
