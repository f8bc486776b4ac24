"""The delegation-token settings of a broker (Kafka's `delegation.token.*` keys), read without
loading the token machinery: a broker without `delegation.token.secret.key` loads none of it.

    settings = TokenSettings.from_config(config)
    settings.enabled          # a non-empty secret key (or its old name delegation.token.master.key)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenSettings:
    """The `delegation.token.*` settings: the secret key, the tokens' lifetimes and the expiry check."""

    secret_key: str | None
    max_lifetime_ms: int = 604800000
    expiry_time_ms: int = 86400000  # the default renewal period
    expiry_check_interval_ms: int = 3600000

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | Any) -> TokenSettings:
        secret = config["delegation.token.secret.key"]
        if secret is None:
            secret = config["delegation.token.master.key"]
        return cls(
            None if secret is None else str(secret),
            int(config["delegation.token.max.lifetime.ms"]),
            int(config["delegation.token.expiry.time.ms"]),
            int(config["delegation.token.expiry.check.interval.ms"]),
        )

    @property
    def enabled(self) -> bool:
        """Kafka's `tokenAuthEnabled`: a non-empty secret key."""
        return bool(self.secret_key)
