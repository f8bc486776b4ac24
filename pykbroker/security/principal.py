"""Who a connection is: Kafka's `KafkaPrincipal` (type and name), e.g. `User:alice`.

`token_authenticated` marks a principal that authenticated with a delegation token; as in Kafka it
takes no part in equality (`User:alice` by token is `User:alice`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class KafkaPrincipal:
    """Who a connection authenticated as, e.g. `User:alice` (Kafka's KafkaPrincipal)."""

    principal_type: str
    name: str
    token_authenticated: bool = field(default=False, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")
