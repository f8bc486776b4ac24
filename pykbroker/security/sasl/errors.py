"""The failures of a SASL exchange, as Kafka distinguishes them.

- `SaslFailure` is Java's `SaslException`: the client is told only "Authentication failed during
  authentication due to invalid credentials with SASL mechanism <m>" (the reason stays in the
  broker's log, so that nothing about users leaks).
- `SaslAuthenticationFailure` is Kafka's `SaslAuthenticationException`: its message goes to the
  client as is.

`SaslConfigError`, a SASL setting the broker refuses, lives here too: the broker's config checks
catch it without loading the mechanisms.
"""

from __future__ import annotations


class SaslFailure(Exception):
    """A failed exchange whose reason is not told to the client."""


class SaslAuthenticationFailure(Exception):
    """A failed exchange whose message is the client's error message."""


class SaslConfigError(ValueError):
    """A SASL setting the broker cannot honour: (key, message)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
