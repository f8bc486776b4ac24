"""The failures of a SASL exchange, as Kafka distinguishes them.

- `SaslFailure` is Java's `SaslException`: the client is told only "Authentication failed during
  authentication due to invalid credentials with SASL mechanism <m>" (the reason stays in the
  broker's log, so that nothing about users leaks).
- `SaslAuthenticationFailure` is Kafka's `SaslAuthenticationException`: its message goes to the
  client as is.
"""

from __future__ import annotations


class SaslFailure(Exception):
    """A failed exchange whose reason is not told to the client."""


class SaslAuthenticationFailure(Exception):
    """A failed exchange whose message is the client's error message."""
