"""How this broker reaches the others: `InterBrokerSecurity`, the inter-broker listener's security
protocol and how to meet it, and `open_broker_connection`, `BrokerConnection.open` with the client's
module (`broker_client.py`) imported on the first connection, which a single broker may never open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

    from ..security.sasl.client import SaslClientCredentials
    from .broker_client import BrokerConnection


@dataclass(frozen=True)
class InterBrokerSecurity:
    """The inter-broker listener's security protocol and how to meet it: for SSL/SASL_SSL the TLS
    client side, for SASL_PLAINTEXT/SASL_SSL the credentials this broker authenticates with."""

    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl: SaslClientCredentials | None = None


async def open_broker_connection(*args: Any, **kwargs: Any) -> BrokerConnection:
    """`BrokerConnection.open(*args, **kwargs)`."""
    from .broker_client import BrokerConnection

    return await BrokerConnection.open(*args, **kwargs)
