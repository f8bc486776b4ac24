"""Config values by type: the types and sources DescribeConfigs reports, parsing and formatting
values the way Kafka does, the validators a definition uses, and `ConfigError`.

Values are parsed as Kafka parses them: strings are trimmed, booleans are true/false in any
case, lists are comma separated (an empty string is an empty list), numbers are decimal.

    parse_typed("num.partitions", ConfigType.INT, " 3 ")      # 3
    format_value(ConfigType.DOUBLE, 1e7)                       # '1.0E7'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from enum import IntEnum
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
DOUBLE_MAX = 1.7976931348623157e308
MS_PER_MINUTE = 60 * 1000
MS_PER_HOUR = 60 * MS_PER_MINUTE


class ConfigType(IntEnum):
    """A config's type; the values are the ids DescribeConfigs (v3+) reports."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """Where a config value comes from; the values are DescribeConfigs' config_source ids."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigError(KafkaError):
    """An invalid or unknown config; names the key. Answers requests with INVALID_CONFIG."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(ErrorCode.INVALID_CONFIG, message)
        self.key = key


def invalid_value(key: str, raw: Any, reason: str) -> ConfigError:
    return ConfigError(key, f"Invalid value {raw} for configuration {key}: {reason}")


# --------------------------------------------------------------------------------------------
# Parsing and formatting values by type

_INTEGER = re.compile(r"[+-]?[0-9]+")
_INTEGER_RANGES = {
    ConfigType.SHORT: (-(2**15), 2**15 - 1),
    ConfigType.INT: (-(2**31), INT_MAX),
    ConfigType.LONG: (-(2**63), LONG_MAX),
}


def to_raw(value: Any) -> str:
    """A Python value given for a config (e.g. an --override) as the string a file would hold."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, (list, tuple)):
        return ",".join(to_raw(item) for item in value)
    return str(value)


def parse_typed(key: str, config_type: ConfigType, raw: str) -> Any:
    """Parse a config's string value into its Python value; ConfigError naming the key if malformed."""
    text = raw.strip()
    if config_type is ConfigType.BOOLEAN:
        return _parse_boolean(key, raw, text)
    if config_type in _INTEGER_RANGES:
        return _parse_integer(key, config_type, raw, text)
    if config_type is ConfigType.DOUBLE:
        return _parse_double(key, raw, text)
    if config_type is ConfigType.LIST:
        return [] if not text else re.split(r"\s*,\s*", text)
    return text


def _parse_boolean(key: str, raw: str, text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise invalid_value(key, raw, "Expected value to be either true or false")
    return text.lower() == "true"


def _parse_integer(key: str, config_type: ConfigType, raw: str, text: str) -> int:
    low, high = _INTEGER_RANGES[config_type]
    if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
        raise invalid_value(key, raw, f"Not a number of type {config_type.name}")
    return int(text)


def _parse_double(key: str, raw: str, text: str) -> float:
    try:
        if "_" in text:
            raise ValueError(text)
        return float(text)
    except ValueError:
        raise invalid_value(key, raw, "Not a number of type DOUBLE") from None


def format_value(config_type: ConfigType, value: Any) -> str | None:
    """A parsed value in the string form Kafka reports it (e.g. in DescribeConfigs)."""
    if value is None:
        return None
    if config_type is ConfigType.BOOLEAN:
        return "true" if value else "false"
    if config_type is ConfigType.LIST:
        return ",".join(str(item) for item in value)
    if config_type is ConfigType.DOUBLE:
        return java_double_string(float(value))
    return str(value)


def java_double_string(value: float) -> str:
    """A double as Java prints it: 0.5, 1.0, 1.0E7, 1.7976931348623157E308."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(value)  # plain decimal notation in this range, as in Java
    return _java_scientific(value)


def _java_scientific(value: float) -> str:
    from decimal import Decimal  # rarely needed: imported on first use

    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    if not isinstance(exponent, int):  # 'n', 'N', 'F': NaN and the infinities have no digits
        raise ValueError(f"not a finite double: {value!r}")
    digits_text = "".join(map(str, digits)).rstrip("0") or "0"
    power = exponent + len(digits) - 1
    mantissa = digits_text[0] + "." + (digits_text[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{power}"


# --------------------------------------------------------------------------------------------
# Validators: callables (key, value) that raise ConfigError for a value out of bounds

Validator = Callable[[str, Any], None]


def at_least(minimum: float) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and value < minimum:
            raise invalid_value(key, value, f"Value must be at least {minimum}")

    return check


def between(minimum: float, maximum: float) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and not minimum <= value <= maximum:
            raise invalid_value(key, value, f"Value must be in the range [{minimum}, {maximum}]")

    return check


def one_of(*allowed: str) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and value not in allowed:
            raise invalid_value(key, value, f"String must be one of: {', '.join(allowed)}")

    return check


def provided_class(*provided: str) -> Validator:
    """A setting naming a Java class that Kafka loads at start: only the classes this broker
    provides are accepted; any other stops the broker at start, as Kafka's cannot load it."""

    def check(key: str, value: Any) -> None:
        if value is not None and value not in provided:
            raise invalid_value(
                key, value, f"Class {value} could not be found (this broker provides {', '.join(provided)})"
            )

    return check


def each_one_of(*allowed: str) -> Validator:
    def check(key: str, value: Any) -> None:
        for item in value or ():
            if item not in allowed:
                raise invalid_value(key, item, f"String must be one of: {', '.join(allowed)}")

    return check


def one_of_ignoring_case(*allowed: str) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and value.lower() not in allowed:
            upper = ", ".join(a.upper() for a in allowed)
            raise invalid_value(key, value, f"String must be one of (case insensitive): {upper}")

    return check


def non_empty_list(key: str, value: Any) -> None:
    if not value:
        raise invalid_value(key, "", "Empty list not allowed")


def gzip_level(key: str, value: Any) -> None:
    if value != -1 and not 1 <= value <= 9:
        raise invalid_value(key, value, "Value must be -1 or in the range [1, 9]")


_HTTP_LISTENER = re.compile(r"http://\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)/?")


def parse_http_listener(key: str, text: str) -> tuple[str, int]:
    """(host, port) of an address such as 'http://127.0.0.1:9404' (host '' = every interface,
    port 0 = any free port)."""
    match = _HTTP_LISTENER.fullmatch(text.strip())
    if match is None:
        raise invalid_value(key, text, "Unable to parse as an HTTP listener (http://host:port)")
    port = int(match.group(2))
    if port > 65535:
        raise invalid_value(key, text, f"Port {port} is out of range")
    return match.group(1), port


def http_listener(key: str, value: Any) -> None:
    if value:
        parse_http_listener(key, value)


_THROTTLED_REPLICA = re.compile(r"[0-9]+:[0-9]+")


def throttled_replicas(key: str, value: Any) -> None:
    """Either ['*'] or a list of partition:broker pairs."""
    if value == ["*"] or all(_THROTTLED_REPLICA.fullmatch(item.strip()) for item in value):
        return
    raise invalid_value(
        key, ",".join(value), "must be the literal '*' or a list of replicas in the form partitionId:brokerId"
    )
