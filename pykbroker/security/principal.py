"""Who a request comes from: Kafka's `KafkaPrincipal` ("User:alice"), set per connection by the
server (TLS client certificate, SASL) and read by the authorizer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")
