"""The listeners' TLS contexts, which dynamic broker configs change for new connections without a
restart (Kafka's DynamicListenerConfig and the listeners' SslFactory), and their SASL settings,
which dynamic broker configs change only from the next start, as with Kafka.

    security = ListenerSecurity(bound_listeners, tls_by_listener, authentication_by_listener)
    security.validate(proposed_config)   # ConfigError / SaslConfigError: Kafka refuses the change
    security.apply(new_config)           # the next TLS handshake uses the new settings

A TLS listener is rebuilt when its effective `ssl.*` values or the modification time of its
key or trust store file changed; the new key store must load and keep its certificate's
distinguished name and subject alternative names unless `ssl.allow.dn.changes` /
`ssl.allow.san.changes` (Kafka's SslFactory.validateReconfiguration). Connections already
established keep the context and the SASL settings they began with.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..config.types import ConfigError
from ..security.sasl.errors import SaslConfigError
from .connection import ListenerAuthentication, ServedListener

if TYPE_CHECKING:  # loaded by the broker with its first TLS or SASL listener
    from ..security.sasl.config import SaslListenerSettings
    from ..security.ssl_config import ServerSsl

log = logging.getLogger(__name__)


class ListenerSecurity:
    def __init__(
        self,
        listeners: Iterable[ServedListener],
        tls: dict[str, ServerSsl],
        authentication: dict[str, ListenerAuthentication],
    ) -> None:
        self.listeners = list(listeners)
        self.tls = tls  # by listener name: the TLS listeners' server sides now
        self.authentication = authentication  # by listener name: the SASL listeners
        self.next_start_sasl: dict[str, SaslListenerSettings] = {}  # changed settings, for the next start

    def _changed_tls(self, config: Any) -> list[tuple[str, ServerSsl]]:
        if not self.tls:
            return []
        from ..security.ssl_config import ssl_fingerprint

        return [(name, ssl) for name, ssl in self.tls.items() if ssl_fingerprint(config, name) != ssl.fingerprint]

    def validate(self, config: Any) -> None:
        """Whether every listener can take `config`: ConfigError or SaslConfigError if not."""
        self._validate_tls(config)
        self._validate_sasl(config)

    def _validate_tls(self, config: Any) -> None:
        changed = self._changed_tls(config)
        if not changed:
            return
        from ..security.ssl_config import reconfigured_server_ssl

        for name, current in changed:
            reconfigured_server_ssl(current, config, name)

    def _validate_sasl(self, config: Any) -> None:
        if not self.authentication:
            return
        from ..security.sasl.config import SaslListenerSettings

        for name in self.authentication:
            SaslListenerSettings.from_config(config, name)

    def apply(self, config: Any) -> None:
        """New connections from now on use `config`'s TLS contexts; a listener whose new TLS
        settings cannot be used keeps its current ones (and the failure is logged). A listener's
        SASL settings stay those it started with, as Kafka builds a listener's logins and JAAS
        configuration once (SaslChannelBuilder reconfigures only the TLS of SASL_SSL): a changed
        `listener.name.<l>.<mechanism>.sasl.jaas.config` is stored and used from the next start."""
        self._apply_tls(config)
        self._apply_sasl(config)

    def _apply_tls(self, config: Any) -> None:
        changed = self._changed_tls(config)
        if not changed:
            return
        from ..security.ssl_config import reconfigured_server_ssl

        for name, current in changed:
            try:
                new = reconfigured_server_ssl(current, config, name)
            except ConfigError as exc:
                log.error("Listener %s keeps its TLS settings: the new ones cannot be used: %s", name, exc)
                continue
            self.tls[name] = new
            for listener in self.listeners:
                if listener.name == name:
                    listener.tls = new
            log.info("Listener %s: new TLS settings for new connections", name)

    def _apply_sasl(self, config: Any) -> None:
        if not self.authentication:
            return
        from ..security.sasl.config import SaslListenerSettings

        for name, authentication in self.authentication.items():
            try:
                settings = SaslListenerSettings.from_config(config, name)
            except SaslConfigError:
                continue  # refused by validate() before it was stored
            if settings != authentication.settings and settings != self.next_start_sasl.get(name):
                self.next_start_sasl[name] = settings
                log.info(
                    "Listener %s keeps the SASL settings it started with (JAAS config, mechanisms); "
                    "the new ones apply from the next start, as with Kafka",
                    name,
                )
