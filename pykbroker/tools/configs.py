"""`pykbroker configs`: Kafka's kafka-configs.sh (ConfigCommand) with its flags and output.

    pykbroker configs --bootstrap-server HOST:PORT --describe --entity-type topics --entity-name t [--all]
    pykbroker configs --bootstrap-server HOST:PORT --alter --entity-type brokers --entity-name 0 \\
        --add-config log.cleaner.threads=2,listener.security.protocol.map=[A:PLAINTEXT,B:SSL]
    pykbroker configs --bootstrap-server HOST:PORT --alter --entity-type users --entity-name alice \\
        --add-config 'SCRAM-SHA-512=[iterations=8192,password=alice-secret]'
    pykbroker configs --bootstrap-server HOST:PORT --alter --group g --add-config consumer.session.timeout.ms=50000

Topics, brokers and groups (Kafka 4's GROUP config resource) go through DescribeConfigs and
IncrementalAlterConfigs, users' SCRAM credentials
through Describe/AlterUserScramCredentials. What the tools' client (librdkafka) cannot express is a
ToolError naming it: client quotas (users' and clients' quota configs), broker loggers, and the
cluster-wide broker default as a resource of its own (`--entity-default` for brokers is described
from a live broker's DYNAMIC_DEFAULT_BROKER_CONFIG entries, and cannot be altered).

Groups as Kafka 4's tool: a named group is described (without --all) when the cluster lists it or
it has configs of its own, else "The group 'g' doesn't exist and doesn't have dynamic config.";
without a name, every group the cluster lists (ListGroups v5 of `group_protocol`, all types; over
SASL the tools' client's listing, classic and consumer groups only). Groups that have configs but
are not listed are not found without their name (Kafka's tool also asks ListConfigResources).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ..common.java_order import hash_map_order, string_hash
from . import group_protocol
from .admin_support import (
    add_output_argument,
    admin_client,
    error_message,
    error_name,
    java_exception_name,
    list_topic_names,
    print_json,
    wait,
)
from .client_config import ToolError, add_common_arguments, client_settings, read_properties, run_tool

ENTITY_TYPES = ("topics", "clients", "users", "brokers", "broker-loggers", "ips", "groups")
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
DEFAULT_SCRAM_ITERATIONS = 4096
MIN_SCRAM_ITERATIONS = 4096
# Split --add-config on commas that are not inside [...] (Kafka's own pattern)
OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
# ConfigEntry.ConfigSource names, by the number confluent-kafka reports
SOURCE_NAMES = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "DYNAMIC_CLIENT_METRICS_CONFIG",
    8: "DYNAMIC_GROUP_CONFIG",
}
DYNAMIC_SOURCE = {"topics": 1, "brokers": 2, "groups": 8}
DEFAULT_BROKER_SOURCE = 3
ENTITY_SHORTCUTS = (
    ("topic", "topics"),
    ("broker", "brokers"),
    ("user", "users"),
    ("client", "clients"),
    ("group", "groups"),
)
DEFAULT_SHORTCUTS = (("broker_defaults", "brokers"), ("user_defaults", "users"), ("client_defaults", "clients"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker configs",
        description="Change configs for topics, clients, users, brokers, broker-loggers or groups dynamically.",
    )
    add_common_arguments(parser)
    parser.add_argument("--describe", action="store_true", help="List configs for the given entity.")
    parser.add_argument("--alter", action="store_true", help="Alter the configuration for the entity.")
    parser.add_argument("--all", action="store_true", help="List all configs for the given entity, static ones too.")
    parser.add_argument("--entity-type", action="append", default=[], choices=ENTITY_TYPES, help="Type of entity.")
    parser.add_argument(
        "--entity-name", action="append", default=[], help="Name of entity (topic, broker id, user, group id)."
    )
    parser.add_argument("--entity-default", action="store_true", help="Default entity name for brokers/users/clients.")
    parser.add_argument(
        "--add-config", help="Key Value pairs of configs to add: 'k1=v1,k2=[v1,v2,v2],k3=v3' (brackets group commas)."
    )
    parser.add_argument("--add-config-file", help="Path to a properties file with configs to add.")
    parser.add_argument(
        "--delete-config", action="append", default=[], help="config keys to remove 'k1,k2' (repeatable)"
    )
    parser.add_argument("--topic", help="The topic's name.")
    parser.add_argument("--broker", help="The broker's ID.")
    parser.add_argument("--broker-defaults", action="store_true", help="The config defaults for all brokers.")
    parser.add_argument("--broker-logger", help="The broker's ID for its logger config.")
    parser.add_argument("--user", help="The user's principal name.")
    parser.add_argument("--user-defaults", action="store_true", help="The config defaults for all users.")
    parser.add_argument("--client", help="The client's ID.")
    parser.add_argument("--client-defaults", action="store_true", help="The config defaults for all clients.")
    parser.add_argument("--group", help="The group's ID.")
    add_output_argument(parser)
    return parser


def entity_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[str, str | None]:
    """The one entity (type, name) the command names; name None: all of that type, "" the default."""
    types = list(args.entity_type)
    names: list[str | None] = [*args.entity_name, *([""] if args.entity_default else [])]
    for flag, entity_type in ENTITY_SHORTCUTS:
        if getattr(args, flag) is not None:
            types.append(entity_type)
            names.append(getattr(args, flag))
    if args.broker_logger is not None:
        types.append("broker-loggers")
        names.append(args.broker_logger)
    for flag, entity_type in DEFAULT_SHORTCUTS:
        if getattr(args, flag):
            types.append(entity_type)
            names.append("")
    if not types:
        parser.error("--entity-type must be specified")
    if len(types) > 1:
        raise ToolError("Only one entity type at a time is supported by pykbroker configs")
    if len(names) > 1:
        raise ToolError("More entity names specified than entity types")
    name = names[0] if names else None
    if types[0] == "groups":
        check_group_entity(args, name)
    return types[0], name


def check_group_entity(args: argparse.Namespace, name: str | None) -> None:
    """Kafka 4's checks of a groups entity: no default group, and a name to alter."""
    if args.describe and args.entity_default:
        raise ToolError("--entity-default must not be specified with --describe of groups")
    if args.alter and not name:
        raise ToolError("An entity name must be specified with --alter of groups")


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.describe == args.alter:
        parser.error("Command must include exactly one action: --describe, --alter")
    if args.alter and not (args.add_config or args.add_config_file or args.delete_config):
        parser.error(
            "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"
        )
    if args.describe and (args.add_config or args.add_config_file or args.delete_config):
        parser.error('Option "[describe]" can\'t be used with --add-config, --add-config-file or --delete-config')
    if args.all and not args.describe:
        parser.error('Option "[all]" can only be used with option "[describe]"')


# --- parsing --add-config and --delete-config ------------------------------------------------------


def parse_configs_to_add(add_config: str | None, add_config_file: str | None) -> dict[str, str]:
    configs: dict[str, str] = {}
    if add_config_file is not None:
        configs.update(read_properties(add_config_file))
    if add_config is not None:
        for pair in re.split("," + OUTSIDE_BRACKETS, add_config):
            parts = re.split(r"\s*=\s*" + OUTSIDE_BRACKETS, pair)
            if len(parts) != 2:
                raise ToolError(
                    "requirement failed: Invalid entity config: all configs to be added must be in the format "
                    '"key=val" or  "key=[val1,val2]" to group values which contain commas.'
                )
            configs[parts[0].strip()] = re.sub(r"[\[\]]", "", parts[1]).strip()
    for key in configs:
        if not re.fullmatch(r"[$a-zA-Z0-9._-]*", key):
            raise ToolError(f"Invalid character found for config key: {key}")
    return configs


def parse_configs_to_delete(values: list[str]) -> list[str]:
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


# --- topics and brokers ----------------------------------------------------------------------------


def config_resource(entity_type: str, name: str) -> Any:
    from confluent_kafka.admin import ConfigResource, ResourceType

    if entity_type == "groups":
        return ConfigResource(ResourceType.GROUP, name)

    if entity_type == "brokers":
        if name == "":
            raise ToolError(
                "Altering the cluster-wide broker default (--entity-default) is not supported: the tools' client "
                "(librdkafka) cannot name that resource; alter each broker with --entity-name"
            )
        if not name.isdigit():
            raise ToolError(f"The entity name for brokers must be a valid integer broker id, found: {name}")
    return ConfigResource("topic" if entity_type == "topics" else "broker", name)


def resource_entries(admin: Any, entity_type: str, name: str, describe_all: bool) -> list[Any]:
    """The entity's config entries, by name: all of them with --all, else the dynamic ones."""
    if entity_type == "brokers" and name == "":
        return _default_broker_entries(admin)
    resource = config_resource(entity_type, name)
    entries = wait(admin.describe_configs([resource])[resource]).values()
    if not describe_all:
        entries = [entry for entry in entries if entry.source == DYNAMIC_SOURCE[entity_type]]
    return sorted(entries, key=lambda entry: entry.name)


def _default_broker_entries(admin: Any) -> list[Any]:
    nodes = wait(admin.describe_cluster()).nodes
    if not nodes:
        return []
    resource = config_resource("brokers", str(nodes[0].id))
    entries = wait(admin.describe_configs([resource])[resource]).values()
    return sorted((entry for entry in entries if entry.source == DEFAULT_BROKER_SOURCE), key=lambda entry: entry.name)


def synonyms_of(entry: Any) -> list[tuple[str, str, str | None]]:
    """(source, name, value) per synonym, the entry's own source first as Kafka lists them.

    confluent-kafka keeps one synonym per name, so of several synonyms sharing the entry's name (a
    broker override over a cluster default over the static default) only the first and the last remain."""
    synonyms = [(SOURCE_NAMES.get(s.source, str(s.source)), s.name, s.value) for s in entry.synonyms.values()]
    own = (SOURCE_NAMES.get(entry.source, str(entry.source)), entry.name, entry.value)
    if not synonyms or (synonyms[0][0], synonyms[0][2]) == (own[0], own[2]):
        return synonyms
    return [own, *synonyms]


def _value(value: str | None) -> str:
    return "null" if value is None else value


def describe_resources(admin: Any, args: argparse.Namespace, entity_type: str, name: str | None) -> dict:
    singular = entity_type[:-1]
    if entity_type == "groups" and name is not None and not args.all and not _group_exists(admin, args, name):
        _text(args, f"The {singular} '{name}' doesn't exist and doesn't have dynamic config.")
        return {"entities": []}
    names = [name] if name is not None else _all_names(admin, args, entity_type)
    described = []
    for entity in names:
        if entity == "":
            _text(args, f"Default configs for {entity_type} in the cluster are:")
        else:
            _text(args, f"{'All' if args.all else 'Dynamic'} configs for {singular} {entity} are:")
        try:
            entries = resource_entries(admin, entity_type, entity, args.all)
        except ToolError:
            raise
        except Exception as error:
            raise config_error(args, error) from None
        for entry in entries:
            synonyms = ", ".join(f"{source}:{key}={_value(value)}" for source, key, value in synonyms_of(entry))
            sensitive = "true" if entry.is_sensitive else "false"
            _text(args, f"  {entry.name}={_value(entry.value)} sensitive={sensitive} synonyms={{{synonyms}}}")
        described.append(
            {
                "entityType": entity_type,
                "entityName": entity,
                "configs": [
                    {
                        "name": entry.name,
                        "value": entry.value,
                        "source": SOURCE_NAMES.get(entry.source, str(entry.source)),
                        "sensitive": bool(entry.is_sensitive),
                        "readOnly": bool(entry.is_read_only),
                        "synonyms": [
                            {"source": source, "name": key, "value": value} for source, key, value in synonyms_of(entry)
                        ],
                    }
                    for entry in entries
                ],
            }
        )
    return {"entities": described}


def _all_names(admin: Any, args: argparse.Namespace, entity_type: str) -> list[str]:
    if entity_type == "topics":  # in the order of the HashSet Kafka's tool lists them in
        return hash_map_order(sorted(list_topic_names(admin)), string_hash)
    if entity_type == "groups":
        return hash_map_order(sorted(_group_ids(admin, args)), string_hash)
    return [str(node.id) for node in wait(admin.describe_cluster()).nodes] + [""]


# --- groups ----------------------------------------------------------------------------------------


def _group_ids(admin: Any, args: argparse.Namespace) -> list[str]:
    """The id of every group the cluster lists, of every type (ListGroups v5 asked of each broker).

    Over SASL, which the tools' own group requests do not speak, the tools' client lists the
    classic and consumer groups only."""
    settings = client_settings(args.bootstrap_server, args.command_config)
    if str(settings.config.get("security.protocol", "PLAINTEXT")).upper().startswith("SASL"):
        return [group.group_id for group in wait(admin.list_consumer_groups()).valid]
    brokers = [(str(node.host), int(node.port)) for node in wait(admin.describe_cluster()).nodes]
    listed = group_protocol.list_groups(settings.config, brokers, settings.api_timeout_s)
    return [group.group_id for group in listed]


def _group_exists(admin: Any, args: argparse.Namespace, name: str) -> bool:
    """Whether Kafka's tool would describe the group: it is listed, or it is a group config
    resource, that is it has configs of its own (dynamic group configs)."""
    try:
        if name in _group_ids(admin, args):
            return True
        return bool(resource_entries(admin, "groups", name, describe_all=False))
    except ToolError:
        raise
    except Exception as error:
        raise config_error(args, error) from None


def alter_resource(admin: Any, args: argparse.Namespace, entity_type: str, name: str) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    to_add = parse_configs_to_add(args.add_config, args.add_config_file)
    to_delete = parse_configs_to_delete(args.delete_config)
    resource = config_resource(entity_type, name)
    try:
        current = {entry.name for entry in resource_entries(admin, entity_type, name, describe_all=False)}
    except Exception as error:
        raise config_error(args, error) from None
    invalid = [key for key in to_delete if key not in current]
    if invalid:
        raise ToolError(f"Invalid config(s): {','.join(invalid)}")
    for key in to_delete:
        resource.add_incremental_config(ConfigEntry(key, "", incremental_operation=AlterConfigOpType.DELETE))
    for key, value in to_add.items():
        resource.add_incremental_config(ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET))
    try:
        wait(admin.incremental_alter_configs([resource])[resource])
    except Exception as error:
        raise config_error(args, error) from None


def config_error(args: argparse.Namespace, error: BaseException) -> ToolError:
    return ToolError(f"Error while executing config command with args '{' '.join(args.argv)}': {error_message(error)}")


# --- users: SCRAM credentials ----------------------------------------------------------------------


def describe_users(admin: Any, args: argparse.Namespace, name: str | None) -> dict:
    if name == "":
        return {"users": []}  # defaults carry quotas only, which the tools' client cannot describe
    if name is None:
        try:
            descriptions = wait(admin.describe_user_scram_credentials())
        except Exception as error:
            raise config_error(args, error) from None
        results: dict[str, tuple[Any, str | None]] = {user: (d, None) for user, d in descriptions.items()}
    else:
        results = {name: _describe_user(admin, name)}
    users: list[dict[str, Any]] = []
    for user, (description, failure) in results.items():
        if failure is not None:
            _text(args, f"Error retrieving SCRAM credential configs for user-principal '{user}': {failure}")
            users.append({"user": user, "error": failure})
            continue
        infos = [(_mechanism_name(info.mechanism), info.iterations) for info in description.scram_credential_infos]
        text = ", ".join(f"{mechanism}=iterations={iterations}" for mechanism, iterations in infos)
        _text(args, f"SCRAM credential configs for user-principal '{user}' are {text}")
        users.append({"user": user, "credentials": [{"mechanism": m, "iterations": i} for m, i in infos]})
    return {"users": users}


def _describe_user(admin: Any, user: str) -> tuple[Any, str | None]:
    try:
        return wait(admin.describe_user_scram_credentials([user])[user]), None
    except ToolError:
        raise
    except Exception as error:
        exception = java_exception_name(error_name(error) or "UNKNOWN")
        return None, f"ExecutionException: org.apache.kafka.common.errors.{exception}: {error_message(error)}"


def _mechanism_name(mechanism: Any) -> str:
    return str(mechanism.name).replace("_", "-")


def alter_user(admin: Any, args: argparse.Namespace, user: str) -> None:
    to_add = parse_configs_to_add(args.add_config, args.add_config_file)
    to_delete = parse_configs_to_delete(args.delete_config)
    unknown = [key for key in [*to_add, *to_delete] if key not in SCRAM_MECHANISMS]
    if unknown:
        raise ToolError(
            "Only SCRAM credential configs can be altered for 'users' by pykbroker configs (client quotas are not "
            f"supported by the tools' client). Unexpected config names: {', '.join(unknown)}"
        )
    if user == "":
        raise ToolError(
            "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using "
            "--bootstrap-server."
        )
    alterations = [_scram_deletion(user, mechanism) for mechanism in to_delete]
    alterations += [_scram_upsertion(user, mechanism, value) for mechanism, value in to_add.items()]
    try:
        for future in admin.alter_user_scram_credentials(alterations).values():
            wait(future)
    except Exception as error:
        raise config_error(args, error) from None


def _scram_mechanism(name: str) -> Any:
    from confluent_kafka.admin import ScramMechanism

    return ScramMechanism[name.replace("-", "_")]


def _scram_deletion(user: str, mechanism: str) -> Any:
    from confluent_kafka.admin import UserScramCredentialDeletion

    return UserScramCredentialDeletion(user, _scram_mechanism(mechanism))


def _scram_upsertion(user: str, mechanism: str, value: str) -> Any:
    from confluent_kafka.admin import ScramCredentialInfo, UserScramCredentialUpsertion

    match = re.fullmatch(r"(?:iterations=(-?[0-9]*),)?password=(.*)", value)
    if match is None:
        raise ToolError(f"Invalid credential property {mechanism}={value}")
    iterations_text, password = match.groups()
    iterations = int(iterations_text) if iterations_text and iterations_text != "-1" else DEFAULT_SCRAM_ITERATIONS
    if iterations < MIN_SCRAM_ITERATIONS:
        raise ToolError(
            f"Iterations {iterations} is less than the minimum {MIN_SCRAM_ITERATIONS} required for {mechanism}"
        )
    info = ScramCredentialInfo(_scram_mechanism(mechanism), iterations)
    return UserScramCredentialUpsertion(user, info, password.encode("utf-8"))


# --- entry point -----------------------------------------------------------------------------------


def run(admin: Any, args: argparse.Namespace, entity_type: str, name: str | None) -> dict:
    if entity_type in ("clients", "ips"):
        raise ToolError(
            f"'{entity_type}' configs are quotas, which the tools' client (librdkafka) cannot describe or alter"
        )
    if entity_type == "broker-loggers":
        raise ToolError(
            "broker-loggers are not supported: the tools' client (librdkafka) has no BROKER_LOGGER resource"
        )
    if args.describe:
        if entity_type == "users":
            return describe_users(admin, args, name)
        return describe_resources(admin, args, entity_type, name)
    if name is None:
        raise ToolError("An entity name must be specified for every entity type")
    if entity_type == "users":
        alter_user(admin, args, name)
    else:
        alter_resource(admin, args, entity_type, name)
    if name:
        _text(args, f"Completed updating config for {entity_type[:-1]} {name}.")
    else:
        _text(args, f"Completed updating default config for {entity_type} in the cluster.")
    return {"entityType": entity_type, "entityName": name, "altered": True}


def _text(args: argparse.Namespace, line: str) -> None:
    if args.output == "text":
        print(line)


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(argv)
    check_arguments(parser, args)

    def body() -> int:
        entity_type, name = entity_of(parser, args)
        document = run(admin_client(args), args, entity_type, name)
        if args.output == "json":
            print_json(document)
        return 0

    return run_tool(
        body, "configs", error_prefix=f"Error while executing config command with args '{' '.join(argv)}': "
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
