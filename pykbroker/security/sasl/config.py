"""The broker's SASL settings for one listener, read as Kafka 3.9 reads them, and checked at start.

    settings = SaslListenerSettings.from_config(config, "SASL_PLAINTEXT")
    settings.enabled_mechanisms           # ['PLAIN', 'SCRAM-SHA-256']
    settings.jaas["PLAIN"].options        # {'user_alice': 'alice-secret', ...}

Kafka builds a listener's SASL configs from the broker's with the listener's prefix overriding
(`listener.name.<listener lower case>.<key>`), and loads each enabled mechanism's JAAS config from
`listener.name.<listener>.<mechanism lower case>.sasl.jaas.config`. A broker ignores the
unprefixed `sasl.jaas.config` (it logs a warning); without a JAAS config for an enabled mechanism
Kafka (here without a JAAS file) does not start. `connections.max.reauth.ms` may be set per
listener and per listener and mechanism (`listener.name.<l>.<mechanism>.connections.max.reauth.ms`).

Mechanisms served: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. GSSAPI (Kerberos) and OAUTHBEARER are not:
a SASL listener that enables one of them stops the broker at start rather than being served
without it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import SaslConfigError
from .jaas import JaasConfigError, JaasEntry, parse_single_entry
from .plain import PLAIN_LOGIN_MODULE
from .scram import MECHANISMS as SCRAM_MECHANISMS

log = logging.getLogger(__name__)

PLAIN = "PLAIN"
SERVED_MECHANISMS = (PLAIN, *SCRAM_MECHANISMS)
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
KNOWN_LOGIN_MODULES = {
    PLAIN_LOGIN_MODULE,
    SCRAM_LOGIN_MODULE,
}
DEFAULT_MAX_RECEIVE_SIZE = 524288


class _Config(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...


def listener_prefix(listener_name: str) -> str:
    return f"listener.name.{listener_name.lower()}."


def _listener_value(config: _Config, listener_name: str, key: str, default: Any = None) -> Any:
    value = config.get(listener_prefix(listener_name) + key)
    return value if value is not None else config.get(key, default)


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return [str(item).strip() for item in value or [] if str(item).strip()]


@dataclass
class SaslListenerSettings:
    listener_name: str
    enabled_mechanisms: list[str]
    jaas: dict[str, JaasEntry] = field(default_factory=dict)
    max_reauth_ms: dict[str, int] = field(default_factory=dict)
    max_receive_size: int = DEFAULT_MAX_RECEIVE_SIZE

    @classmethod
    def from_config(cls, config: _Config, listener_name: str) -> SaslListenerSettings:
        """The listener's settings; SaslConfigError (with the key) for what cannot be honoured."""
        prefix = listener_prefix(listener_name)
        key = "sasl.enabled.mechanisms"
        mechanisms = list(dict.fromkeys(_as_list(_listener_value(config, listener_name, key, ["GSSAPI"]))))
        if not mechanisms:
            raise SaslConfigError(key, f"No SASL mechanisms are enabled for listener {listener_name}")
        for mechanism in mechanisms:
            if mechanism not in SERVED_MECHANISMS:
                raise SaslConfigError(
                    key,
                    f"Listener {listener_name} enables SASL mechanism {mechanism} ({key}), which this broker "
                    f"does not serve (only {', '.join(SERVED_MECHANISMS)})",
                )
        settings = cls(listener_name, mechanisms)
        for mechanism in mechanisms:
            settings.jaas[mechanism] = _jaas_entry(config, prefix, listener_name, mechanism)
            reauth = config.get(f"{prefix}{mechanism.lower()}.connections.max.reauth.ms")
            if reauth is None:
                reauth = _listener_value(config, listener_name, "connections.max.reauth.ms", 0)
            settings.max_reauth_ms[mechanism] = _as_int("connections.max.reauth.ms", reauth)
        settings.max_receive_size = _as_int(
            "sasl.server.max.receive.size",
            _listener_value(config, listener_name, "sasl.server.max.receive.size", DEFAULT_MAX_RECEIVE_SIZE),
        )
        return settings


def _as_int(key: str, value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SaslConfigError(key, f"Invalid value {value} for configuration {key}: Not a number") from None


def _jaas_entry(config: _Config, prefix: str, listener_name: str, mechanism: str) -> JaasEntry:
    key = f"{prefix}{mechanism.lower()}.sasl.jaas.config"
    text = config.get(key)
    if text is None:
        if config.get("sasl.jaas.config") is not None:
            log.warning("Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config")
        raise SaslConfigError(
            key,
            f"Could not find a JAAS configuration for SASL mechanism {mechanism} on listener {listener_name}: "
            f"set {key}",
        )
    try:
        entry = parse_single_entry(str(text))
    except JaasConfigError as exc:
        raise SaslConfigError(key, f"Invalid {key}: {exc}") from None
    if entry.login_module not in KNOWN_LOGIN_MODULES:
        raise SaslConfigError(key, f"Invalid {key}: no LoginModule found for {entry.login_module}")
    return entry


def inter_broker_credentials(config: _Config, listener_name: str) -> tuple[str, str, str]:
    """(mechanism, username, password) this broker authenticates with to the others: the JAAS
    options `username` and `password` of the inter-broker listener's inter-broker mechanism."""
    mechanism = str(config.get("sasl.mechanism.inter.broker.protocol", "GSSAPI"))
    settings = SaslListenerSettings.from_config(config, listener_name)
    if mechanism not in settings.enabled_mechanisms:
        raise SaslConfigError(
            "sasl.mechanism.inter.broker.protocol",
            "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when SASL is used "
            "for inter-broker communication",
        )
    options = settings.jaas[mechanism].options
    username, password = options.get("username"), options.get("password")
    if username is None or password is None:
        key = f"{listener_prefix(listener_name)}{mechanism.lower()}.sasl.jaas.config"
        raise SaslConfigError(
            key,
            f"{key} needs the options username and password: this broker's credentials for inter-broker {mechanism}",
        )
    return mechanism, username, password
