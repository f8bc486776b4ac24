"""What the administration tools share beyond `client_config`: an admin client built from the common
flags, waiting on its futures, `--output json`, Kafka's topic filters and internal topic names."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any

from .client_config import ToolError, client_settings
from .client_config import describe_kafka_exception as error_message

# How long `wait` waits for an answer: `default.api.timeout.ms` of --command-config (60 s by default)
_timeout = {"seconds": 60.0}
# librdkafka retries a refused login or TLS handshake until the request times out: its first such
# error (reported through error_cb) ends the wait at once instead
_FATAL_CONNECTION_ERRORS = ("_AUTHENTICATION", "_SSL", "SASL_AUTHENTICATION_FAILED")
_connection_error: list[Any] = []
POLL_S = 0.2
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        choices=["text", "json"],
        default="text",
        help="text: Kafka's own format (default); json: one JSON document on stdout",
    )


def admin_client(args: argparse.Namespace) -> Any:
    from confluent_kafka.admin import AdminClient

    # log_level 0: librdkafka's own log lines (a refused connection, retried every few milliseconds)
    # would flood stderr; failures reach the tool through its futures and are reported in one line
    settings = client_settings(
        args.bootstrap_server, args.command_config, {"log_level": 0, "error_cb": _remember_connection_error}
    )
    _timeout["seconds"] = settings.api_timeout_s
    _connection_error.clear()
    return AdminClient(settings.config)


def _remember_connection_error(error: Any) -> None:
    if error.name() in _FATAL_CONNECTION_ERRORS and not _connection_error:
        _connection_error.append(error)


def _raise_connection_error() -> None:
    if _connection_error:
        from confluent_kafka import KafkaException

        raise KafkaException(_connection_error[0])


def _timed_out() -> ToolError:
    return ToolError(f"Timed out after {_timeout['seconds']:g} s waiting for the cluster's answer")


def wait(future: Any) -> Any:
    """The result of an admin future; a refused login or TLS handshake is raised at once, a
    client-side timeout is a ToolError."""
    import concurrent.futures

    deadline = time.monotonic() + _timeout["seconds"]
    while True:
        _raise_connection_error()
        try:
            return future.result(timeout=min(POLL_S, max(0.0, deadline - time.monotonic())))
        except concurrent.futures.TimeoutError:
            if time.monotonic() >= deadline:
                raise _timed_out() from None


def error_name(error: BaseException) -> str | None:
    """Kafka's error name (TOPIC_ALREADY_EXISTS, ...) of a confluent-kafka exception, if it has one."""
    args = getattr(error, "args", ())
    if args and hasattr(args[0], "name"):
        return str(args[0].name())
    return None


# librdkafka's error names whose Java exception is not the name in CamelCase
JAVA_EXCEPTIONS = {
    "UNKNOWN_TOPIC_OR_PART": "UnknownTopicOrPartitionException",
    "_UNKNOWN_PARTITION": "UnknownTopicOrPartitionException",
    "_UNKNOWN_TOPIC": "UnknownTopicOrPartitionException",
    "INVALID_CONFIG": "InvalidConfigurationException",
    "_TIMED_OUT": "TimeoutException",
    "REQUEST_TIMED_OUT": "TimeoutException",
    "NOT_LEADER_FOR_PARTITION": "NotLeaderOrFollowerException",
    "PREFERRED_LEADER_NOT_AVAILABLE": "PreferredLeaderNotAvailableException",
}


def java_exception_name(kafka_error_name: str) -> str:
    """The Java client's exception class for a Kafka error name: TOPIC_AUTHORIZATION_FAILED ->
    TopicAuthorizationFailedException, with the exceptions of JAVA_EXCEPTIONS."""
    if kafka_error_name in JAVA_EXCEPTIONS:
        return JAVA_EXCEPTIONS[kafka_error_name]
    return "".join(word.capitalize() for word in kafka_error_name.lstrip("_").split("_")) + "Exception"


def java_style_error(error: BaseException) -> str:
    """An error as a Java client's exception prints: "org.apache.kafka.common.errors.<Class>: <message>"."""
    name = java_exception_name(error_name(error) or "UNKNOWN_SERVER_ERROR")
    return f"org.apache.kafka.common.errors.{name}: {error_message(error)}"


def print_json(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")


def is_internal(topic: str) -> bool:
    return topic in INTERNAL_TOPICS


def topic_filter(raw: str) -> re.Pattern[str]:
    """Kafka's IncludeList: a regular expression (commas as alternatives, spaces and surrounding quotes
    ignored) that must match a whole topic name."""
    pattern = raw.strip().replace(",", "|").replace(" ", "")
    pattern = re.sub(r"^[\"']+", "", pattern)
    pattern = re.sub(r"[\"']+$", "", pattern)
    try:
        return re.compile(pattern)
    except re.error as error:
        raise ToolError(f"{raw} is an invalid regex: {error}") from None


def matching_topics(all_topics: list[str], pattern: str | None, exclude_internal: bool) -> list[str]:
    """The sorted topics `pattern` (Kafka's IncludeList) selects; all of them without a pattern."""
    selector = topic_filter(pattern) if pattern is not None else None
    return [
        topic
        for topic in sorted(all_topics)
        if (selector is None or selector.fullmatch(topic)) and not (exclude_internal and is_internal(topic))
    ]


# A metadata request that timed out or lost its connection is tried again until the tool's
# timeout, as Kafka's admin client retries a disconnected request until default.api.timeout.ms.
RETRIED_UNTIL_DEADLINE = ("_TIMED_OUT", "_TRANSPORT")


def cluster_metadata(admin: Any, topic: str | None = None) -> Any:
    """The cluster's metadata (all topics, or one), within the tool's timeout."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + _timeout["seconds"]
    while True:
        _raise_connection_error()
        try:
            return admin.list_topics(topic, timeout=min(POLL_S, max(0.01, deadline - time.monotonic())))
        except KafkaException as error:
            if error_name(error) not in RETRIED_UNTIL_DEADLINE:
                admin.poll(POLL_S)  # serves error_cb: the cause of a dropped connection, if it was a refused login
                _raise_connection_error()
                raise
            if error_name(error) == "_TRANSPORT":
                admin.poll(POLL_S)  # a refused login ends the tool at once; a dropped connection is retried
                _raise_connection_error()
            if time.monotonic() >= deadline:
                _raise_connection_error()
                raise


def list_topic_names(admin: Any) -> list[str]:
    return list(cluster_metadata(admin).topics)
