"""Client quota entities and where their configs live, as Kafka 3.9 (ZooKeeper mode) keeps them.

An entity is a set of (entity type, name) pairs: `user`, `client-id` (alone or together) or `ip`;
a None name is the default entity (`<default>`). Kafka's ZooKeeper layout, which the metadata
stores keep (entity type, sanitized name):

    {user: U}                 users    U                      /config/users/U
    {user: U, client-id: C}   users    U/clients/C            /config/users/U/clients/C
    {client-id: C}            clients  C                      /config/clients/C
    {ip: I}                   ips      I                      /config/ips/I

with names sanitized (URL-encoded, `security.sanitizer`) and `<default>` for a default entity.
"""

from __future__ import annotations

from ..common.java_order import hash_map_order, string_hash
from ..security.sanitizer import desanitize, sanitize

USER = "user"  # Kafka's ClientQuotaEntity.USER
CLIENT_ID = "client-id"  # ClientQuotaEntity.CLIENT_ID
IP = "ip"  # ClientQuotaEntity.IP
DEFAULT_ENTITY = "<default>"  # ConfigEntityName.Default

USERS, CLIENTS, IPS = "users", "clients", "ips"  # the stores' entity types (Kafka's ConfigType)
CLIENTS_OF_USER = "/clients/"


def sanitize_entity_name(name: str | None) -> str:
    """Kafka's ZkAdminManager.sanitizeEntityName: None (the default) is `<default>`."""
    return DEFAULT_ENTITY if name is None else sanitize(name)


def desanitize_entity_name(name: str) -> str | None:
    return None if name == DEFAULT_ENTITY else desanitize(name)


def entity_in_java_order(entity: dict[str, str | None]) -> list[tuple[str, str | None]]:
    """An entity's (type, name) pairs in the order of Kafka's entity map (a java.util.HashMap)."""
    return [(entity_type, entity[entity_type]) for entity_type in hash_map_order(entity, string_hash)]


def store_path(user: str, client_id: str | None) -> str:
    """The `users` store name of a user or user/client entity (sanitized names)."""
    return user if client_id is None else f"{user}{CLIENTS_OF_USER}{client_id}"
