"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka 3.9 implements them: the
credential format Kafka stores, the messages, the server's exchange (`ScramSaslServer`) and the
client's (`ScramSaslClient`, for brokers authenticating to each other).

    credential = ScramCredential.from_password(SCRAM_SHA_256, "alice-secret", iterations=4096)
    text = credential.to_config()       # 'salt=...,stored_key=...,server_key=...,iterations=4096'
    server = ScramSaslServer(SCRAM_SHA_256, lambda user: credentials.get(user))
    server_first = server.evaluate(client_first)   # raises SaslFailure / SaslAuthenticationFailure

Kafka's server accepts only gs2 header "n" (no channel binding), parses the messages with Kafka's
own patterns, ignores extensions other than `tokenauth`, compares the proof in constant time and
never tells the client why it failed (the authenticator answers with a generic message).

With `tokenauth=true` the user name is a delegation token's id: the credential is the token's
(`token_lookup`), the authorization id is the token's owner and `token_expiry_ms` the token's
expiry, which ends the session (Kafka's CREDENTIAL_LIFETIME_MS negotiated property).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .errors import SaslAuthenticationFailure, SaslFailure


@dataclass(frozen=True)
class ScramMechanism:
    mechanism_name: str
    hash_name: str
    type_code: int  # the public ScramMechanism type (DescribeUserScramCredentials, Alter...)
    min_iterations: int = 4096

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def hi(self, password: bytes, salt: bytes, iterations: int) -> bytes:
        return hashlib.pbkdf2_hmac(self.hash_name, password, salt, iterations)


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", "sha256", 1)
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", "sha512", 2)
MECHANISMS = {m.mechanism_name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
MECHANISMS_BY_TYPE = {m.type_code: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
MAX_ITERATIONS = 16384  # AlterUserScramCredentials' upper bound (Kafka's ZkAdminManager)
TOKEN_AUTH = "tokenauth"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(
        cls, mechanism: ScramMechanism, salt: bytes, salted_password: bytes, iterations: int
    ) -> ScramCredential:
        """Kafka's ScramFormatter.generateCredential (what AlterUserScramCredentials stores)."""
        client_key = mechanism.hmac(salted_password, b"Client Key")
        return cls(salt, mechanism.hash(client_key), mechanism.hmac(salted_password, b"Server Key"), iterations)

    @classmethod
    def from_password(
        cls, mechanism: ScramMechanism, password: str, iterations: int = 4096, salt: bytes | None = None
    ) -> ScramCredential:
        salt = salt if salt is not None else secure_random_string().encode()
        return cls.from_salted_password(mechanism, salt, mechanism.hi(password.encode(), salt, iterations), iterations)

    def to_config(self) -> str:
        """Kafka's ScramCredentialUtils.credentialToString: the value kept in ZooKeeper."""
        return (
            f"salt={_b64(self.salt)},stored_key={_b64(self.stored_key)},"
            f"server_key={_b64(self.server_key)},iterations={self.iterations}"
        )

    @classmethod
    def from_config(cls, text: str) -> ScramCredential:
        """Kafka's ScramCredentialUtils.credentialFromString; ValueError when not valid."""
        props = {}
        for item in text.split(","):
            key, sep, value = item.partition("=")
            if sep:
                props[key] = value
        try:
            return cls(
                base64.b64decode(props["salt"], validate=True),
                base64.b64decode(props["stored_key"], validate=True),
                base64.b64decode(props["server_key"], validate=True),
                int(props["iterations"]),
            )
        except (KeyError, ValueError, binascii.Error):
            raise ValueError(f"Credentials not valid: {text}") from None


class TokenScramCredential(Protocol):
    """A delegation token's credential as the SCRAM server needs it (`delegation_tokens.TokenCredential`)."""

    @property
    def credential(self) -> ScramCredential: ...

    @property
    def owner(self) -> str: ...

    @property
    def expiry_timestamp(self) -> int: ...


def secure_random_string() -> str:
    """Kafka's ScramFormatter.secureRandomString: 130 random bits in base 36."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    while value:
        value, digit = divmod(value, 36)
        out.append(digits[digit])
    return "".join(reversed(out)) or "0"


def username_from_sasl_name(sasl_name: str) -> str:
    """Kafka's ScramFormatter.username: '=2C' is ',' and '=3D' is '='; any other '=' is invalid."""
    username = sasl_name.replace("=2C", ",")
    if "=" in username.replace("=3D", ""):
        raise ValueError(f"Invalid username: {sasl_name}")
    return username.replace("=3D", "=")


def sasl_name(username: str) -> str:
    return username.replace("=", "=3D").replace(",", "=2C")


# Kafka's ScramMessages patterns (Java's `[a-b&&[^c]]` classes written out)
_VALUE_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]+"
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_B64C = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64C}{{4}})*(?:{_B64C}{{3}}=|{_B64C}{{2}}==)?"
_RESERVED = rf"(m={_VALUE},)?"
_EXTENSIONS = rf"(,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})"
)
_SERVER_FIRST = re.compile(
    rf"{_RESERVED}r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_BASE64}),i=(?P<iterations>[0-9]+){_EXTENSIONS}"
)
_CLIENT_FINAL = re.compile(rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")
_SERVER_FINAL = re.compile(rf"(?:e=(?P<error>{_VALUE_SAFE}))|(?:v=(?P<signature>{_BASE64})){_EXTENSIONS}")


def _text(data: bytes) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _parse_extensions(text: str) -> dict[str, str]:
    """Kafka's Utils.parseMap(text, "=", ",")."""
    extensions = {}
    for item in text.split(",") if text else []:
        key, _, value = item.partition("=")
        extensions[key] = value
    return extensions


@dataclass(frozen=True)
class ClientFirstMessage:
    sasl_name: str
    nonce: str
    authorization_id: str
    extensions_text: str  # without the leading comma

    @classmethod
    def parse(cls, data: bytes) -> ClientFirstMessage:
        message = _text(data)
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise SaslFailure(f"Invalid SCRAM client first message format: {message}")
        extensions = match.group("extensions")
        return cls(match.group("saslname"), match.group("nonce"), match.group("authzid") or "", extensions[1:])

    @property
    def extensions(self) -> dict[str, str]:
        return _parse_extensions(self.extensions_text)

    def bare(self) -> str:
        suffix = f",{self.extensions_text}" if self.extensions_text else ""
        return f"n={self.sasl_name},r={self.nonce}{suffix}"


@dataclass(frozen=True)
class ServerFirstMessage:
    nonce: str
    salt: bytes
    iterations: int

    def to_message(self) -> str:
        return f"r={self.nonce},s={_b64(self.salt)},i={self.iterations}"

    @classmethod
    def parse(cls, data: bytes) -> ServerFirstMessage:
        message = _text(data)
        match = _SERVER_FIRST.fullmatch(message)
        if match is None:
            raise SaslFailure(f"Invalid SCRAM server first message format: {message}")
        iterations = int(match.group("iterations"))
        if not 0 < iterations <= 0x7FFFFFFF:
            raise SaslFailure(f"Invalid SCRAM server first message format: invalid iterations {iterations}")
        return cls(match.group("nonce"), base64.b64decode(match.group("salt")), iterations)


@dataclass(frozen=True)
class ClientFinalMessage:
    channel_binding: bytes
    nonce: str
    proof: bytes

    @classmethod
    def parse(cls, data: bytes) -> ClientFinalMessage:
        message = _text(data)
        match = _CLIENT_FINAL.fullmatch(message)
        if match is None:
            raise SaslFailure(f"Invalid SCRAM client final message format: {message}")
        return cls(
            base64.b64decode(match.group("channel")), match.group("nonce"), base64.b64decode(match.group("proof"))
        )

    def without_proof(self) -> str:
        return f"c={_b64(self.channel_binding)},r={self.nonce}"


def _auth_message(first: ClientFirstMessage, server_first: ServerFirstMessage, final_without_proof: str) -> bytes:
    return f"{first.bare()},{server_first.to_message()},{final_without_proof}".encode()


class ScramSaslServer:
    """One server-side SCRAM exchange: client-first -> server-first, client-final -> server-final.

    `lookup(username)` gives the user's credential for this mechanism, or None."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        lookup: Callable[[str], ScramCredential | None],
        token_lookup: Callable[[str], TokenScramCredential | None] | None = None,
    ) -> None:
        self.mechanism = mechanism
        self.lookup = lookup
        self.token_lookup = token_lookup
        self.state = "RECEIVE_CLIENT_FIRST_MESSAGE"
        self.authorization_id: str | None = None
        self.token_authenticated = False
        self.token_expiry_ms: int | None = None
        self._client_first: ClientFirstMessage | None = None
        self._server_first: ServerFirstMessage | None = None
        self._credential: ScramCredential | None = None

    @property
    def complete(self) -> bool:
        return self.state == "COMPLETE"

    def evaluate(self, response: bytes) -> bytes:
        try:
            if self.state == "RECEIVE_CLIENT_FIRST_MESSAGE":
                return self._client_first_message(response)
            if self.state == "RECEIVE_CLIENT_FINAL_MESSAGE":
                return self._client_final_message(response)
            raise SaslAuthenticationFailure(f"Unexpected challenge in Sasl server state {self.state}")
        except (SaslFailure, SaslAuthenticationFailure):
            self._clear()
            self.state = "FAILED"
            raise

    def _client_first_message(self, response: bytes) -> bytes:
        first = ClientFirstMessage.parse(response)
        server_nonce = secure_random_string()
        try:
            username = username_from_sasl_name(first.sasl_name)
        except ValueError as exc:
            raise SaslFailure("Authentication failed: Credentials could not be obtained") from exc
        if first.extensions.get(TOKEN_AUTH, "").lower() == "true":
            token = self.token_lookup(username) if self.token_lookup is not None else None
            if token is None:
                raise SaslFailure(f"Token Authentication failed: Invalid tokenId : {username}")
            credential: ScramCredential | None = token.credential
            authorization_id = token.owner
            self.token_authenticated = True
            self.token_expiry_ms = token.expiry_timestamp
        else:
            credential = self.lookup(username)
            authorization_id = username
        if credential is None:
            raise SaslFailure("Authentication failed: Invalid user credentials")
        if first.authorization_id and first.authorization_id != username:
            raise SaslAuthenticationFailure(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        if credential.iterations < self.mechanism.min_iterations:
            raise SaslFailure(
                f"Iterations {credential.iterations} is less than the minimum "
                f"{self.mechanism.min_iterations} for {self.mechanism.mechanism_name}"
            )
        self.authorization_id = authorization_id
        self._client_first = first
        self._credential = credential
        self._server_first = ServerFirstMessage(first.nonce + server_nonce, credential.salt, credential.iterations)
        self.state = "RECEIVE_CLIENT_FINAL_MESSAGE"
        return self._server_first.to_message().encode()

    def _client_final_message(self, response: bytes) -> bytes:
        final = ClientFinalMessage.parse(response)
        first, server_first, credential = self._client_first, self._server_first, self._credential
        assert first is not None and server_first is not None and credential is not None
        # Kafka 3.9 checks that the nonce ends with the server-first one (librdkafka up to 2.0
        # sends the client nonce twice, and Kafka 3.9 accepts it)
        if not final.nonce.endswith(server_first.nonce):
            raise SaslFailure("Invalid client nonce in the final client message.")
        auth_message = _auth_message(first, server_first, final.without_proof())
        client_signature = self.mechanism.hmac(credential.stored_key, auth_message)
        if len(client_signature) != len(final.proof):
            # Kafka's xor raises IllegalArgumentException here: not an authentication failure
            raise ValueError("Argument arrays must be of the same length")
        client_key = bytes(a ^ b for a, b in zip(client_signature, final.proof))
        if not hmac.compare_digest(self.mechanism.hash(client_key), credential.stored_key):
            raise SaslFailure("Invalid client credentials")
        server_signature = self.mechanism.hmac(credential.server_key, auth_message)
        self._clear()
        self.state = "COMPLETE"
        return f"v={_b64(server_signature)}".encode()

    def _clear(self) -> None:
        self._credential = None
        self._client_first = None
        self._server_first = None


class ScramSaslClient:
    """The client's side of one exchange (Kafka's ScramSaslClient), for inter-broker connections."""

    def __init__(self, mechanism: ScramMechanism, username: str, password: str) -> None:
        self.mechanism = mechanism
        self.username = username
        self.password = password
        self._nonce = secure_random_string()
        self._first: ClientFirstMessage | None = None
        self._server_signature: bytes | None = None

    def first_message(self) -> bytes:
        self._first = ClientFirstMessage(sasl_name(self.username), self._nonce, "", "")
        return f"n,,{self._first.bare()}".encode()

    def final_message(self, server_first_bytes: bytes) -> bytes:
        server_first = ServerFirstMessage.parse(server_first_bytes)
        if not server_first.nonce.startswith(self._nonce):
            raise SaslFailure("Invalid server nonce: does not start with client nonce")
        if server_first.iterations < self.mechanism.min_iterations:
            raise SaslFailure(
                f"Requested iterations {server_first.iterations} is less than the minimum "
                f"{self.mechanism.min_iterations} for {self.mechanism.mechanism_name}"
            )
        assert self._first is not None
        salted = self.mechanism.hi(self.password.encode(), server_first.salt, server_first.iterations)
        without_proof = f"c={_b64(b'n,,')},r={server_first.nonce}"
        auth_message = _auth_message(self._first, server_first, without_proof)
        client_key = self.mechanism.hmac(salted, b"Client Key")
        signature = self.mechanism.hmac(self.mechanism.hash(client_key), auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self._server_signature = self.mechanism.hmac(self.mechanism.hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={_b64(proof)}".encode()

    def verify_server_final(self, data: bytes) -> None:
        message = _text(data)
        match = _SERVER_FINAL.fullmatch(message)
        if match is None:
            raise SaslFailure(f"Invalid SCRAM server final message format: {message}")
        if match.group("error") is not None:
            raise SaslFailure(
                f"Sasl authentication using {self.mechanism.mechanism_name} failed with error: {match.group('error')}"
            )
        signature = base64.b64decode(match.group("signature"))
        if self._server_signature is None or not hmac.compare_digest(signature, self._server_signature):
            raise SaslFailure("Invalid server signature in server final message")
