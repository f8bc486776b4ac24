"""The broker's delegation tokens: Kafka 3.9's `DelegationTokenManager` (ZooKeeper mode).

    manager = DelegationTokenManager(TokenSettings.from_config(config), store)
    manager.startup()                       # load every token, follow the other brokers (blocking)
    result = await manager.create(owner, requester, renewers, max_lifetime_ms)
    error, expiry = await manager.renew(principal, hmac, renew_period_ms)
    error, expiry = await manager.expire(principal, hmac, expiry_period_ms)
    await manager.expire_tokens()           # the controller's periodic check

Tokens are enabled by `delegation.token.secret.key` (or its old name `delegation.token.master.key`);
without one every operation answers DELEGATION_TOKEN_AUTH_DISABLED. A token lives at most
`delegation.token.max.lifetime.ms` (or the shorter lifetime asked for), and expires
`delegation.token.expiry.time.ms` after its creation or last renewal unless renewed; the check
that removes expired tokens runs every `delegation.token.expiry.check.interval.ms` on the active
controller (on a single broker, on it). The owner or a renewer may renew or expire a token; a
token expired by a negative period is removed at once.

Every change is written to the token store (ZooKeeper's znodes, or a file on a single broker) on
a worker thread, one change at a time (Kafka's manager lock), and then to this broker's cache.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from ..common.time import SYSTEM_CLOCK, Clock
from ..protocol.errors import ErrorCode
from .delegation_tokens import (
    DelegationTokenCache,
    TokenCredential,
    TokenInformation,
    TokenStore,
    new_token_id,
    token_hmac,
)
from .principal import KafkaPrincipal
from .token_settings import TokenSettings

log = logging.getLogger(__name__)

ERROR_TIMESTAMP = -1


@dataclass(frozen=True)
class CreateTokenResult:
    error: ErrorCode
    owner: KafkaPrincipal
    token_requester: KafkaPrincipal
    issue_timestamp: int = ERROR_TIMESTAMP
    expiry_timestamp: int = ERROR_TIMESTAMP
    max_timestamp: int = ERROR_TIMESTAMP
    token_id: str = ""
    hmac: bytes = b""


class DelegationTokenManager:
    def __init__(self, settings: TokenSettings, store: TokenStore | None, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.cache = DelegationTokenCache()
        self._lock = threading.Lock()  # one change at a time, as Kafka's `lock.synchronized`

    @property
    def enabled(self) -> bool:
        return self.settings.enabled and self.store is not None

    # -- lifecycle ------------------------------------------------------------------------
    def startup(self) -> None:
        """Load every stored token and follow the changes other brokers make (blocking)."""
        if not self.enabled or self.store is None:
            return
        for info in self.store.load_all():
            self.cache.update(info, self.hmac(info.token_id))
        self.store.watch(self._changed_elsewhere)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()

    def _changed_elsewhere(self, token_id: str, info: TokenInformation | None) -> None:
        with self._lock:
            if info is None:
                self.cache.remove(token_id)
            else:
                self.cache.update(info, self.hmac(token_id))

    # -- what the handlers ask --------------------------------------------------------------
    def hmac(self, token_id: str) -> bytes:
        assert self.settings.secret_key
        return token_hmac(token_id, self.settings.secret_key)

    async def create(
        self, owner: KafkaPrincipal, requester: KafkaPrincipal, renewers: list[KafkaPrincipal], max_lifetime_ms: int
    ) -> CreateTokenResult:
        if not self.enabled:
            return CreateTokenResult(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, owner, requester)
        try:
            return await anyio.to_thread.run_sync(self._create, owner, requester, renewers, max_lifetime_ms)
        except Exception:  # the store failed (ZooKeeper, the disk): Kafka's generic answer
            log.exception("Error creating a delegation token for %s", owner)
            return CreateTokenResult(ErrorCode.UNKNOWN_SERVER_ERROR, owner, requester)

    def _create(
        self, owner: KafkaPrincipal, requester: KafkaPrincipal, renewers: list[KafkaPrincipal], max_lifetime_ms: int
    ) -> CreateTokenResult:
        with self._lock:
            token_id = new_token_id()
            issued = self.clock.now_ms()
            lifetime = self.settings.max_lifetime_ms
            if max_lifetime_ms > 0:
                lifetime = min(max_lifetime_ms, lifetime)
            max_timestamp = issued + lifetime
            expiry = min(max_timestamp, issued + self.settings.expiry_time_ms)
            info = TokenInformation(token_id, owner, requester, tuple(renewers), issued, max_timestamp, expiry)
            token_hmac_bytes = self.hmac(token_id)
            self._update(info)
            log.info("Created a delegation token: %s for owner: %s", token_id, owner)
            return CreateTokenResult(
                ErrorCode.NONE, owner, requester, issued, expiry, max_timestamp, token_id, token_hmac_bytes
            )

    async def renew(self, principal: KafkaPrincipal, token_hmac_bytes: bytes, period_ms: int) -> tuple[ErrorCode, int]:
        return await self._change(self._renew, principal, token_hmac_bytes, period_ms)

    async def expire(self, principal: KafkaPrincipal, token_hmac_bytes: bytes, period_ms: int) -> tuple[ErrorCode, int]:
        return await self._change(self._expire, principal, token_hmac_bytes, period_ms)

    async def _change(
        self,
        change: Callable[[KafkaPrincipal, TokenInformation, int], tuple[ErrorCode, int]],
        principal: KafkaPrincipal,
        token_hmac_bytes: bytes,
        period_ms: int,
    ) -> tuple[ErrorCode, int]:
        if not self.enabled:
            return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, ERROR_TIMESTAMP

        def locked() -> tuple[ErrorCode, int]:
            with self._lock:
                info = self.cache.token_for_hmac(token_hmac_bytes)
                if info is None:
                    return ErrorCode.DELEGATION_TOKEN_NOT_FOUND, ERROR_TIMESTAMP
                if not info.may_renew(principal):
                    return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, ERROR_TIMESTAMP
                return change(principal, info, period_ms)

        try:
            return await anyio.to_thread.run_sync(locked)
        except Exception:
            log.exception("Error changing a delegation token for %s", principal)
            return ErrorCode.UNKNOWN_SERVER_ERROR, ERROR_TIMESTAMP

    def _renew(self, principal: KafkaPrincipal, info: TokenInformation, period_ms: int) -> tuple[ErrorCode, int]:
        now = self.clock.now_ms()
        if info.expired(now):
            return ErrorCode.DELEGATION_TOKEN_EXPIRED, ERROR_TIMESTAMP
        period = self.settings.expiry_time_ms if period_ms < 0 else period_ms
        expiry = min(info.max_timestamp, now + period)
        self._update(info.with_expiry(expiry))
        log.info("Delegation token renewed for token: %s for owner: %s", info.token_id, info.owner)
        return ErrorCode.NONE, expiry

    def _expire(self, principal: KafkaPrincipal, info: TokenInformation, period_ms: int) -> tuple[ErrorCode, int]:
        now = self.clock.now_ms()
        if period_ms < 0:  # at once
            self._remove(info.token_id)
            log.info("Token expired for token: %s for owner: %s", info.token_id, info.owner)
            return ErrorCode.NONE, now
        if info.expired(now):
            return ErrorCode.DELEGATION_TOKEN_EXPIRED, ERROR_TIMESTAMP
        expiry = min(info.max_timestamp, now + period_ms)
        self._update(info.with_expiry(expiry))
        log.info("Updated expiry time for token: %s for owner: %s", info.token_id, info.owner)
        return ErrorCode.NONE, expiry

    def tokens(self, eligible: Callable[[TokenInformation], bool]) -> list[tuple[TokenInformation, bytes]]:
        """The tokens `eligible` accepts, each with its HMAC (DescribeDelegationToken)."""
        return [(info, self.hmac(info.token_id)) for info in self.cache.tokens() if eligible(info)]

    def credential(self, mechanism: str, token_id: str) -> TokenCredential | None:
        """The token's SCRAM credential for `mechanism` (authentication with `tokenauth=true`)."""
        return self.cache.credential(mechanism, token_id) if self.enabled else None

    # -- the expiry check ---------------------------------------------------------------------
    async def expire_tokens(self) -> None:
        """Remove every expired token (Kafka's `expireTokens`)."""
        if not self.enabled:
            return
        try:
            await anyio.to_thread.run_sync(self._expire_tokens)
        except Exception:
            log.exception("Error removing expired delegation tokens")

    def _expire_tokens(self) -> None:
        with self._lock:
            for info in self.cache.tokens():
                if info.expired(self.clock.now_ms()):
                    log.info("Delegation token expired for token: %s for owner: %s", info.token_id, info.owner)
                    self._remove(info.token_id)

    # -- writing ------------------------------------------------------------------------------
    def _update(self, info: TokenInformation) -> None:
        assert self.store is not None
        self.store.write(info)
        self.cache.update(info, self.hmac(info.token_id))

    def _remove(self, token_id: str) -> None:
        assert self.store is not None
        self.store.remove(token_id)
        self.cache.remove(token_id)
