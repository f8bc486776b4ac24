"""The broker's loggers as Kafka's BROKER_LOGGER config resource shows them (not a handler).

DescribeConfigs lists every logger of this process with its level ("root" for the root logger;
a logger without a level of its own shows the root's level, as Kafka's log4j view does).
IncrementalAlterConfigs sets a logger's level (SET) or removes it (DELETE); the change is not
persisted. Levels use log4j's names: FATAL, ERROR, WARN, INFO, DEBUG, TRACE.
"""

from __future__ import annotations

import logging

from ...protocol.errors import ErrorCode, KafkaError
from .config_admin import OpType

ROOT_LOGGER = "root"
TRACE = 5  # below DEBUG: log4j's TRACE
LEVELS = {
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
}
VALID_LEVELS = ", ".join(sorted(LEVELS))


def logger_levels() -> dict[str, str]:
    """{logger name: level name} for the root logger and every logger created so far."""
    root_level = level_name(logging.getLogger().level)
    levels = {ROOT_LOGGER: root_level}
    for name, logger in sorted(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            levels[name] = level_name(logger.level) if logger.level else root_level
    return levels


def level_name(level: int) -> str:
    for name, value in LEVELS.items():
        if level >= value:
            return name
    return "TRACE"


def check_changes(operations: list[tuple[str, int, str | None]]) -> None:
    """Kafka's checks of log level changes; KafkaError with its code and message."""
    for name, op, value in operations:
        if op == OpType.SET:
            _require_logger(name)
            if value not in LEVELS:
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG,
                    f"Cannot set the log level of {name} to {value} as "
                    f"it is not a supported log level. Valid log levels "
                    f"are {VALID_LEVELS}",
                )
        elif op == OpType.DELETE:
            _require_logger(name)
            if name == ROOT_LOGGER:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST, f"Removing the log level of the {ROOT_LOGGER} logger is not allowed"
                )
        elif op in (OpType.APPEND, OpType.SUBTRACT):
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, f"{OpType(op).name} operation is not allowed for the BROKER_LOGGER resource"
            )
        else:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource"
            )


def apply_changes(operations: list[tuple[str, int, str | None]]) -> None:
    for name, op, value in operations:
        logger = _logger(name)
        if op != OpType.SET:
            logger.setLevel(logging.NOTSET)
        elif value is None:  # never: check_changes(), run first, refuses a level not in LEVELS
            raise ValueError(f"No log level given for {name}")
        else:
            logger.setLevel(LEVELS[value])


def _require_logger(name: str) -> None:
    if name != ROOT_LOGGER and not isinstance(logging.Logger.manager.loggerDict.get(name), logging.Logger):
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Logger {name} does not exist!")


def _logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == ROOT_LOGGER else logging.getLogger(name)
