"""What an injected fault is: `FaultRule`, which requests it matches and what it does to them,
checked when it is made; and `PartitionFault`, what a firing rule does to one partition.

Names follow Kafka's: an API is named as in its message schemas ("Produce") or by its key, an
error by its `Errors` name ("NOT_LEADER_OR_FOLLOWER") or code.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from ...protocol import messages
from ...protocol.api_keys import MESSAGE_NAMES, ApiKey
from ...protocol.errors import ErrorCode
from .responses import PARTITIONED_APIS

_API_KEYS_BY_NAME = {name.lower(): key for key, name in MESSAGE_NAMES.items()}


def api_key_of(api: str | int) -> int:
    """The API key of a Kafka API name ("Produce", case-insensitive) or key."""
    if isinstance(api, int):
        if api not in MESSAGE_NAMES:
            raise ValueError(f"unknown API key {api}")
        return api
    if not isinstance(api, str):
        raise ValueError(f"an API is a name or a key, not {api!r}")
    key = _API_KEYS_BY_NAME.get(api.replace("_", "").lower())  # "Produce", "produce", "LIST_OFFSETS"
    if key is None:
        raise ValueError(f"unknown API {api!r} (Kafka's names: Produce, Fetch, Metadata, ...)")
    return int(key)


def error_code_of(error: str | int) -> ErrorCode:
    """An error code from Kafka's name ("NOT_LEADER_OR_FOLLOWER") or number."""
    try:
        return ErrorCode(error) if isinstance(error, int) else ErrorCode[error.upper()]
    except (KeyError, ValueError, AttributeError):
        raise ValueError(f"unknown error {error!r}") from None


def can_carry_error(api_key: int) -> bool:
    """Whether a response of the API can be given an injected error."""
    if api_key in PARTITIONED_APIS or api_key in (ApiKey.FETCH, ApiKey.METADATA, ApiKey.FIND_COORDINATOR):
        return True
    try:
        root = messages.response(api_key).spec.root
    except (KeyError, FileNotFoundError):
        return False
    return any(f.attr == "error_code" for f in root.fields)


@dataclass(frozen=True)
class PartitionFault:
    """What an injected fault does to one partition of a request: answer it with `error`, or
    (a consumer's fetch) return no records for it, as when nothing new arrived."""

    error: int | None = None
    paused: bool = False


@dataclass
class FaultRule:
    """Which requests a fault hits, and what it does to them (see the package's description)."""

    api: str | int | None = None
    topic: str | None = None
    partition: int | None = None
    client_id: str | None = None
    error: str | int | None = None
    count: int | None = None
    probability: float = 1.0
    latency_ms: int = 0
    drop_connection: bool = False
    pause_fetch: bool = False

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """ValueError naming what makes the rule unusable."""
        api_key = self.api_key
        if self.error is not None:
            error_code_of(self.error)
            if api_key is None:
                raise ValueError("an error needs an API: its responses are shaped per API")
            if not can_carry_error(api_key):
                raise ValueError(f"{MESSAGE_NAMES[api_key]} responses have no error code to inject")
        if not (self.error is not None or self.latency_ms > 0 or self.drop_connection or self.pause_fetch):
            raise ValueError("a fault needs an effect: error, latency_ms, drop_connection or pause_fetch")
        if self.pause_fetch and api_key not in (None, ApiKey.FETCH):
            raise ValueError("pause_fetch applies to Fetch requests only")
        if self.partition is not None and self.topic is None:
            raise ValueError("a partition needs its topic")
        if self.count is not None and self.count < 1:
            raise ValueError("count must be at least 1 (or absent: until removed)")
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        if self.latency_ms < 0:
            raise ValueError("latency_ms must not be negative")

    @property
    def api_key(self) -> int | None:
        if self.pause_fetch and self.api is None:
            return int(ApiKey.FETCH)
        return None if self.api is None else api_key_of(self.api)

    @property
    def error_code(self) -> ErrorCode | None:
        return None if self.error is None else error_code_of(self.error)

    def to_dict(self) -> dict[str, Any]:
        """The fields that differ from the defaults, with names for the API and the error."""
        defaults = FaultRule.__dataclass_fields__
        values = {name: value for name, value in asdict(self).items() if value != defaults[name].default}
        if self.api is not None:
            values["api"] = MESSAGE_NAMES[api_key_of(self.api)]
        if self.error is not None:
            values["error"] = error_code_of(self.error).name
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> FaultRule:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown fault field(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        try:
            return cls(**values)
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    # -- matching ------------------------------------------------------------------------
    def matches_request(self, api_key: int, client_id: str | None) -> bool:
        own_key = self.api_key
        return (own_key is None or own_key == api_key) and (self.client_id is None or self.client_id == client_id)

    def matches_partition(self, topic: str | None, partition: int) -> bool:
        return (self.topic is None or self.topic == topic) and (self.partition is None or self.partition == partition)

    @property
    def per_partition(self) -> bool:
        """Whether the rule's effect is on partitions (and fires only when one matches)."""
        return self.topic is not None or self.pause_fetch
