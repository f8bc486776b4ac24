"""Delegation tokens as Kafka 3.9 keeps them (KIP-48, KIP-373): the token's information, its HMAC,
the JSON kept for it in ZooKeeper, and the cache every broker authenticates from.

    info = TokenInformation("Pz3...", KafkaPrincipal("User", "alice"), ...)
    hmac = token_hmac(info.token_id, "the-secret")     # HmacSHA512(secret, token id)
    data = encode_token(info)   # b'{"version":3,"owner":"User%3Aalice",...}' (`/delegation_token/tokens/<id>`)
    cache.update(info, hmac)    # also the token's SCRAM credentials, one per SCRAM mechanism

A token authenticates over SCRAM (`tokenauth=true`): the user name is the token id, the password
is the base64 of its HMAC, and the connection's principal is the token's owner. The cache holds,
for each token, a SCRAM credential made from that password for every SCRAM mechanism Kafka knows
(4096 iterations), as Kafka's `DelegationTokenManager.updateCache` does.

Where tokens are kept: `TokenStore` is the interface; `zk_token_store.ZkTokenStore` keeps them in
Kafka's znodes (with change notifications so every broker follows), `FileTokenStore` keeps the same
JSON in one file on a single broker.
"""

from __future__ import annotations

import base64
import hmac as hmac_lib
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ..common.files import write_atomically
from .acl import parse_principal
from .principal import KafkaPrincipal
from .sanitizer import desanitize, sanitize
from .sasl.scram import MECHANISMS, ScramCredential

CURRENT_VERSION = 3  # of the token's JSON (DelegationTokenManagerZk.CurrentVersion)
HMAC_ALGORITHM = "sha512"  # Kafka's HmacSHA512
TOKEN_FILE = "delegation-tokens.json"


@dataclass(frozen=True)
class TokenInformation:
    """Kafka's `TokenInformation`: who owns the token, who asked for it, who may renew it, and when
    it was issued, expires (renewable) and can live until at most (all ms since the epoch)."""

    token_id: str
    owner: KafkaPrincipal
    token_requester: KafkaPrincipal
    renewers: tuple[KafkaPrincipal, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int

    def owner_or_renewer(self, principal: KafkaPrincipal) -> bool:
        """Kafka's `ownerOrRenewer` (3.9: the requester too): who may describe the token."""
        return principal == self.owner or principal == self.token_requester or principal in self.renewers

    def may_renew(self, principal: KafkaPrincipal) -> bool:
        """Kafka's `allowedToRenew`: the owner or a renewer (renew and expire)."""
        return principal == self.owner or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_timestamp < now_ms or self.expiry_timestamp < now_ms

    def with_expiry(self, expiry_timestamp: int) -> TokenInformation:
        return replace(self, expiry_timestamp=expiry_timestamp)


def new_token_id() -> str:
    """Kafka's `CoreUtils.generateUuidAsBase64`: a random UUID, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")


def token_hmac(token_id: str, secret_key: str) -> bytes:
    """Kafka's `DelegationTokenManager.createHmac`: HmacSHA512 of the token id under the secret."""
    return hmac_lib.new(secret_key.encode("utf-8"), token_id.encode("utf-8"), HMAC_ALGORITHM).digest()


def hmac_as_base64(token_hmac_bytes: bytes) -> str:
    """The token's SCRAM password (Kafka's `DelegationToken.hmacAsBase64String`)."""
    return base64.b64encode(token_hmac_bytes).decode("ascii")


def encode_token(info: TokenInformation) -> bytes:
    """The znode data of `/delegation_token/tokens/<id>` (Kafka's `toJsonCompatibleMap`)."""
    raw = {
        "version": CURRENT_VERSION,
        "owner": sanitize(str(info.owner)),
        "tokenRequester": sanitize(str(info.token_requester)),
        "renewers": [sanitize(str(renewer)) for renewer in info.renewers],
        "issueTimestamp": info.issue_timestamp,
        "maxTimestamp": info.max_timestamp,
        "expiryTimestamp": info.expiry_timestamp,
        "tokenId": info.token_id,
    }
    return json.dumps(raw, separators=(",", ":")).encode()


def decode_token(data: bytes | None) -> TokenInformation | None:
    """Kafka's `fromBytes`: versions 1-3 (before 3 the requester is the owner); ValueError when
    the JSON is not a token's."""
    if not data:
        return None
    try:
        raw = json.loads(data)
        version = int(raw["version"])
        if not 0 < version <= CURRENT_VERSION:
            raise ValueError(f"unknown delegation token version {version}")
        owner = parse_principal(desanitize(raw["owner"]))
        requester = parse_principal(desanitize(raw["tokenRequester"])) if version >= 3 else owner
        return TokenInformation(
            str(raw["tokenId"]),
            owner,
            requester,
            tuple(parse_principal(desanitize(text)) for text in raw["renewers"]),
            int(raw["issueTimestamp"]),
            int(raw["maxTimestamp"]),
            int(raw["expiryTimestamp"]),
        )
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a delegation token: {exc}") from None


@dataclass(frozen=True)
class TokenCredential:
    """What SCRAM authentication with a token needs: the credential for the mechanism, the owner's
    name (the principal's) and the token's expiry (the session's end)."""

    credential: ScramCredential
    owner: str
    expiry_timestamp: int


# (mechanism name, token id) -> the token's credential, or None
TokenCredentialLookup = Callable[[str, str], "TokenCredential | None"]


class DelegationTokenCache:
    """Kafka's `DelegationTokenCache`: the tokens this broker knows, by id and by HMAC, with their
    SCRAM credentials. Updated from the event loop, a worker thread and ZooKeeper's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, TokenInformation] = {}
        self._ids_by_hmac: dict[str, str] = {}
        self._hmacs: dict[str, str] = {}
        self._credentials: dict[str, dict[str, ScramCredential]] = {}

    def update(self, info: TokenInformation, token_hmac_bytes: bytes) -> None:
        password = hmac_as_base64(token_hmac_bytes)
        with self._lock:
            same_hmac = self._hmacs.get(info.token_id) == password
            credentials = self._credentials.get(info.token_id) if same_hmac else None
        if credentials is None:  # PBKDF2 per mechanism: only for a token not seen before
            credentials = {
                name: ScramCredential.from_password(mechanism, password, mechanism.min_iterations)
                for name, mechanism in MECHANISMS.items()
            }
        with self._lock:
            self._remove(info.token_id)
            self._tokens[info.token_id] = info
            self._hmacs[info.token_id] = password
            self._ids_by_hmac[password] = info.token_id
            self._credentials[info.token_id] = credentials

    def remove(self, token_id: str) -> None:
        with self._lock:
            self._remove(token_id)

    def _remove(self, token_id: str) -> None:
        self._tokens.pop(token_id, None)
        self._credentials.pop(token_id, None)
        password = self._hmacs.pop(token_id, None)
        if password is not None:
            self._ids_by_hmac.pop(password, None)

    def token(self, token_id: str) -> TokenInformation | None:
        with self._lock:
            return self._tokens.get(token_id)

    def token_for_hmac(self, token_hmac_bytes: bytes) -> TokenInformation | None:
        with self._lock:
            token_id = self._ids_by_hmac.get(hmac_as_base64(token_hmac_bytes))
            return None if token_id is None else self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        with self._lock:
            return list(self._tokens.values())

    def credential(self, mechanism: str, token_id: str) -> TokenCredential | None:
        """Kafka's `ScramServerCallbackHandler` for a `tokenauth` client."""
        with self._lock:
            info = self._tokens.get(token_id)
            credential = self._credentials.get(token_id, {}).get(mechanism)
        if info is None or credential is None:
            return None
        return TokenCredential(credential, info.owner.name, info.expiry_timestamp)


# (token id, its information or None once removed): a change another broker made
TokenChangeListener = Callable[[str, "TokenInformation | None"], None]


class TokenStore(Protocol):
    """Where tokens are kept. Blocking calls: the token manager runs them on worker threads."""

    def load_all(self) -> list[TokenInformation]: ...

    def write(self, info: TokenInformation) -> None: ...

    def remove(self, token_id: str) -> None: ...

    def watch(self, on_change: TokenChangeListener) -> None: ...

    def close(self) -> None: ...


class FileTokenStore:
    """The tokens of a single broker, the znodes' JSON in one file (`delegation-tokens.json`)."""

    def __init__(self, state_dir: str | Path) -> None:
        self.path = Path(state_dir) / TOKEN_FILE
        self._lock = threading.Lock()

    def load_all(self) -> list[TokenInformation]:
        with self._lock:
            return list(self._read().values())

    def _read(self) -> dict[str, TokenInformation]:
        if not self.path.exists():
            return {}
        raw = json.loads(self.path.read_text())
        tokens = {}
        for data in raw.get("tokens", {}).values():
            info = decode_token(json.dumps(data).encode())
            if info is not None:
                tokens[info.token_id] = info
        return tokens

    def _write_all(self, tokens: dict[str, TokenInformation]) -> None:
        raw = {"version": 1, "tokens": {tid: json.loads(encode_token(info)) for tid, info in sorted(tokens.items())}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, json.dumps(raw, indent=1))

    def write(self, info: TokenInformation) -> None:
        with self._lock:
            tokens = self._read()
            tokens[info.token_id] = info
            self._write_all(tokens)

    def remove(self, token_id: str) -> None:
        with self._lock:
            tokens = self._read()
            if tokens.pop(token_id, None) is not None:
                self._write_all(tokens)

    def watch(self, on_change: TokenChangeListener) -> None:
        """A single broker is the only writer: nothing to follow."""

    def close(self) -> None:
        pass
