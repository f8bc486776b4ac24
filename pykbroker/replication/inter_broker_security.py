"""`InterBrokerSecurity`: the inter-broker listener's security protocol and how to meet it. It
lives apart from the inter-broker client (`broker_client.py`), which a broker imports only with its
first connection to another broker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

    from ..security.sasl.client import SaslClientCredentials


@dataclass(frozen=True, eq=False)  # one per broker, never compared
class InterBrokerSecurity:
    """The inter-broker listener's security protocol and how to meet it: for SSL/SASL_SSL the TLS
    client side, for SASL_PLAINTEXT/SASL_SSL the credentials this broker authenticates with."""

    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl: SaslClientCredentials | None = None
