"""What a request handler is given besides the request: who asked, in which version, and the
services it may use.

`services` holds the broker's services, each typed as the narrow interface handlers use (see
`services.py`): handlers reach the cluster metadata, the replica manager and the coordinators
through it, never each other and never the broker itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...security.principal import ANONYMOUS, KafkaPrincipal
from .services import BrokerServices

if TYPE_CHECKING:
    from ...quota.client_quotas import ClientQuotaManager
    from ...quota.request_time import RequestClock


class CloseConnection(Exception):
    """Raised (by the server or a handler) when a request cannot be answered: the connection is
    closed after one log line. A produce with acks=0 that failed uses it to make the client
    refresh its metadata, as Kafka does."""


@dataclass(eq=False)  # one per request, never compared
class RequestContext:
    """One request as its handler sees it: its header, the connection it came on and the broker's services."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    listener_name: str
    services: BrokerServices
    request_size: int = 0
    principal: KafkaPrincipal = ANONYMOUS  # who the connection authenticated as (TLS, SASL)
    security_protocol: str = "PLAINTEXT"  # of the listener the request came in on
    connection_id: str = ""  # the client connection's id, unique while the broker runs
    # client quotas (`support/quota_requests.py`): the request's running time, when the request
    # quota measures it; the throttle a handler decided and the quota that called for it; whether
    # the handler recorded the request quota itself (Produce, Fetch do, as Kafka's)
    request_clock: RequestClock | None = None
    throttle_time_ms: int = 0
    throttled_by: ClientQuotaManager | None = None
    request_quota_recorded: bool = False
