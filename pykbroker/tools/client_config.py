"""What every command-line tool shares: the client's configuration, the common flags, the errors.

`client_config` turns `--bootstrap-server` and a Java client properties file (`--command-config`,
`--consumer.config`, `--producer.config`: the file Kafka's own tools read) into a confluent-kafka
(librdkafka) configuration dictionary:

    security.protocol, sasl.mechanism, client.id       -> the same keys
    sasl.jaas.config (PLAIN or SCRAM login module)     -> sasl.username, sasl.password
    ssl.truststore.location (PEM)                      -> ssl.ca.location
    ssl.truststore.certificates (PEM text)             -> ssl.ca.pem
    ssl.keystore.location (PKCS12)                     -> ssl.keystore.location, ssl.keystore.password
    ssl.keystore.location (PEM)                        -> ssl.certificate.location, ssl.key.location
    ssl.keystore.certificate.chain, ssl.keystore.key   -> ssl.certificate.pem, ssl.key.pem
    ssl.key.password                                   -> ssl.key.password
    ssl.endpoint.identification.algorithm ("" = none)  -> the same key

Settings librdkafka cannot honour (a JKS or PKCS12 trust store) are a `ToolError`; keys without a
librdkafka counterpart are ignored with one warning line on stderr.

`ToolError` is a tool's failure: one line on stderr and exit status 1 (`run_tool` does that);
usage errors exit with status 2 (argparse's own behaviour).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .kafka_errors import kafka_message

# Keys spelled and meant the same in Kafka's Java client and in librdkafka
SAME_KEYS = (
    "security.protocol",
    "sasl.mechanism",
    "client.id",
    "ssl.key.password",
    "ssl.cipher.suites",
    "metadata.max.age.ms",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
    "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms",
)
# Keys handled below, with the keys they are read together with
TRANSLATED_KEYS = (
    "sasl.jaas.config",
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.keystore.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.endpoint.identification.algorithm",
)
# Read by the tools themselves, not passed to librdkafka: how long to wait for an answer (Kafka's
# admin client default, 60 s)
TOOL_KEYS = ("default.api.timeout.ms",)
# Ignored silently: bootstrap.servers (--bootstrap-server wins, as in Kafka's tools) and Java-only
# settings that change nothing a librdkafka client needs
HARMLESS_JAVA_KEYS = (
    "bootstrap.servers",
    "ssl.protocol",
    "ssl.enabled.protocols",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
)

_JAAS_OPTION = re.compile(r"""(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s;]+))""")
_LOGIN_MODULES_WITH_PASSWORDS = ("PlainLoginModule", "ScramLoginModule")


class ToolError(Exception):
    """A tool's failure: reported as one line on stderr, exit status 1."""


def add_common_arguments(parser: argparse.ArgumentParser, *, config_flag: str = "--command-config") -> None:
    """`--bootstrap-server` (required) and the client properties file flag, as Kafka's tools name them."""
    parser.add_argument(
        "--bootstrap-server",
        required=True,
        metavar="HOST:PORT",
        help="REQUIRED: the Kafka server(s) to connect to, host:port[,host:port]",
    )
    parser.add_argument(
        config_flag,
        dest=config_flag.lstrip("-").replace("-", "_").replace(".", "_"),
        metavar="FILE",
        help="a property file with client configs (security settings), as Kafka's Java clients read it",
    )


@dataclass
class ClientSettings:
    """What a tool's client needs: librdkafka's configuration, and how long to wait for an answer
    (`default.api.timeout.ms` of the properties file; Kafka's default, 60 s)."""

    config: dict
    api_timeout_s: float = 60.0


def client_config(bootstrap_server: str, command_config: str | None, extra: dict | None = None) -> dict:
    """The confluent-kafka configuration for `--bootstrap-server` and a Java client properties file."""
    return client_settings(bootstrap_server, command_config, extra).config


def client_settings(bootstrap_server: str, command_config: str | None, extra: dict | None = None) -> ClientSettings:
    """`client_config` and the API timeout, from one reading of the properties file (which may be a pipe)."""
    properties = read_properties(command_config) if command_config is not None else {}
    config: dict = {"bootstrap.servers": bootstrap_server}
    config.update(translate_java_properties(properties))
    config.update(extra or {})
    return ClientSettings(config, _api_timeout_seconds(properties))


def _api_timeout_seconds(properties: dict[str, str]) -> float:
    value = properties.get("default.api.timeout.ms")
    if value is None:
        return ClientSettings.api_timeout_s
    try:
        return int(value) / 1000
    except ValueError:
        raise ToolError(f"default.api.timeout.ms: not a number of milliseconds: {value}") from None


def translate_java_properties(properties: dict[str, str]) -> dict:
    """librdkafka settings for Kafka Java client properties; see the module's docstring."""
    if not properties:
        return {}
    config: dict = {key: properties[key] for key in SAME_KEYS if key in properties}
    config.update(_sasl_credentials(properties))
    config.update(_trust_store(properties))
    config.update(_key_store(properties))
    if "ssl.endpoint.identification.algorithm" in properties:
        algorithm = properties["ssl.endpoint.identification.algorithm"].strip().lower()
        config["ssl.endpoint.identification.algorithm"] = algorithm or "none"
    known = {*SAME_KEYS, *TRANSLATED_KEYS, *TOOL_KEYS, *HARMLESS_JAVA_KEYS}
    ignored = sorted(set(properties) - known)
    if ignored:
        print(f"WARN: these client configs are not used by pykbroker's tools: {', '.join(ignored)}", file=sys.stderr)
    return config


def _sasl_credentials(properties: dict[str, str]) -> dict:
    jaas = properties.get("sasl.jaas.config")
    if jaas is None:
        return {}
    if not any(module in jaas for module in _LOGIN_MODULES_WITH_PASSWORDS):
        raise ToolError(f"sasl.jaas.config: only PLAIN and SCRAM login modules are supported, got {jaas.split()[0]}")
    options = {m.group(1): _unquote(m.group(2) or m.group(3) or m.group(4) or "") for m in _JAAS_OPTION.finditer(jaas)}
    if "username" not in options or "password" not in options:
        raise ToolError('sasl.jaas.config: the login module needs username="..." and password="..."')
    return {"sasl.username": options["username"], "sasl.password": options["password"]}


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _trust_store(properties: dict[str, str]) -> dict:
    if "ssl.truststore.certificates" in properties:
        return {"ssl.ca.pem": properties["ssl.truststore.certificates"]}
    location = properties.get("ssl.truststore.location")
    if location is None:
        return {}
    store_type = _store_type(properties.get("ssl.truststore.type"), location)
    if store_type != "PEM":
        raise ToolError(
            f"ssl.truststore.location: a {store_type} trust store cannot be read by the tools' client (librdkafka); "
            "give the CA certificates as a PEM file with ssl.truststore.type=PEM"
        )
    return {"ssl.ca.location": location}


def _key_store(properties: dict[str, str]) -> dict:
    if "ssl.keystore.certificate.chain" in properties or "ssl.keystore.key" in properties:
        config = {"ssl.certificate.pem": properties.get("ssl.keystore.certificate.chain", "")}
        config["ssl.key.pem"] = properties.get("ssl.keystore.key", "")
        return config
    location = properties.get("ssl.keystore.location")
    if location is None:
        return {}
    store_type = _store_type(properties.get("ssl.keystore.type"), location)
    if store_type == "PKCS12":
        config = {"ssl.keystore.location": location}
        if "ssl.keystore.password" in properties:
            config["ssl.keystore.password"] = properties["ssl.keystore.password"]
        return config
    if store_type == "PEM":
        return {"ssl.certificate.location": location, "ssl.key.location": location}
    raise ToolError(
        f"ssl.keystore.location: a {store_type} key store cannot be read by the tools' client (librdkafka); "
        "use a PKCS12 or PEM key store"
    )


def _store_type(declared: str | None, location: str) -> str:
    """The store's type as declared, else guessed from its content (Kafka's default, JKS, otherwise)."""
    if declared:
        return declared.strip().upper()
    try:
        head = Path(location).read_bytes()[:64]
    except OSError as error:
        raise ToolError(f"cannot read {location}: {error.strerror or error}") from None
    return "PEM" if b"-----BEGIN" in head else "JKS"


def read_properties(path: str) -> dict[str, str]:
    """A Java properties file: `key=value`, `key: value` or `key value`, `#`/`!` comments, `\\` continuations."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ToolError(f"cannot read {path}: {error.strerror or error}") from None
    return parse_properties(text)


def parse_properties(text: str) -> dict[str, str]:
    properties = {}
    for line in _logical_lines(text):
        match = re.match(r"((?:[^\s=:\\]|\\.)+)\s*[=:\s]?\s*(.*)$", line)
        if match:
            properties[_unescape(match.group(1))] = _unescape(match.group(2))
    return properties


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing_backslashes = len(line) - len(line.rstrip("\\"))
        if trailing_backslashes % 2 == 1:
            pending += line[:-1]
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _unescape(text: str) -> str:
    replacements = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
    return re.sub(r"\\(.)", lambda m: replacements.get(m.group(1), m.group(1)), text)


def run_tool(
    body: Callable[[], int],
    tool_name: str = "pykbroker",
    *,
    error_prefix: str = "Error: ",
    tool_error_prefix: str = "",
) -> int:
    """Run a tool's body: a `ToolError` becomes its line on stderr (after `tool_error_prefix`, as
    some of Kafka's tools print their own failures), a client's `KafkaException` the line
    `error_prefix` + its message, both exit status 1; Ctrl-C exits with 130, a closed stdout
    with 1. `tool_name` names the tool (kept for callers that pass it)."""
    from confluent_kafka import KafkaException

    try:
        return body()
    except ToolError as error:
        print(f"{tool_error_prefix}{error}", file=sys.stderr)
        return 1
    except KafkaException as error:
        print(f"{error_prefix}{describe_kafka_exception(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`pykbroker topics --list | head -1`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def describe_kafka_exception(error: BaseException) -> str:
    """The message of a confluent-kafka exception as Kafka's client words it: the broker's message,
    or Kafka's default one for the error code (not librdkafka's "Broker: ..." description)."""
    args = getattr(error, "args", ())
    if args and hasattr(args[0], "str"):
        return kafka_message(args[0])
    return str(error)
