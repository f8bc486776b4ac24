"""SASL/PLAIN (RFC 4616) as Kafka 3.9's PlainSaslServer, with the users of the JAAS config's
`PlainLoginModule` options `user_<name>="<password>"` (Kafka's PlainServerCallbackHandler).

    server = PlainSaslServer({"alice": "alice-secret"})
    server.evaluate(b"\\0alice\\0alice-secret")     # b"" and server.authorization_id == "alice"
"""

from __future__ import annotations

import hmac

from .errors import SaslAuthenticationFailure
from .jaas import JaasEntry

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
USER_PREFIX = "user_"


def plain_users(entry: JaasEntry) -> dict[str, str]:
    """{user: password} of a JAAS entry (only a PlainLoginModule's options name users)."""
    if entry.login_module != PLAIN_LOGIN_MODULE:
        return {}
    return {key[len(USER_PREFIX) :]: value for key, value in entry.options.items() if key.startswith(USER_PREFIX)}


def _extract_tokens(text: str) -> list[str]:
    """Kafka 3.9's PlainSaslServer.extractTokens: up to four NUL-separated pieces."""
    tokens: list[str] = []
    start = 0
    for _ in range(4):
        end = text.find("\0", start)
        if end == -1:
            tokens.append(text[start:])
            break
        tokens.append(text[start:end])
        start = end + 1
    if len(tokens) != 3:
        raise SaslAuthenticationFailure(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
    return tokens


class PlainSaslServer:
    def __init__(self, users: dict[str, str]) -> None:
        self.users = users
        self.complete = False
        self.authorization_id: str | None = None

    def evaluate(self, response: bytes) -> bytes:
        authzid, username, password = _extract_tokens(bytes(response).decode("utf-8", errors="replace"))
        if not username:
            raise SaslAuthenticationFailure("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationFailure("Authentication failed: password not specified")
        expected = self.users.get(username)
        if expected is None or not hmac.compare_digest(password.encode(), expected.encode()):
            raise SaslAuthenticationFailure("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationFailure(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.authorization_id = username
        self.complete = True
        return b""


def plain_client_token(username: str, password: str) -> bytes:
    """The client's one message (Kafka's PlainSaslClient sends no authorization id)."""
    return f"\0{username}\0{password}".encode()
