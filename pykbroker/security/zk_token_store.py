"""Delegation tokens in ZooKeeper, in Kafka 3.9's layout (`DelegationTokenManagerZk`):

    /delegation_token/tokens/<token id>                  the token's JSON (`delegation_tokens.encode_token`)
    /delegation_token/token_changes/token_change_<seq>   the token id: it was written or removed

A write (create, renew, expire) sets the token's znode, then adds a change notification; a
removal deletes the znode, then adds one. Every broker watches the notifications and reads the
named token again (gone: removed), as Kafka's `TokenChangedNotificationHandler` does, so a token
made through one broker authenticates on all. Notifications older than 15 minutes are deleted, as
Kafka's `ZkNodeChangeNotificationListener` does.

Every call blocks on ZooKeeper: the token manager runs them on worker threads (and at start);
the watch runs on ZooKeeper's threads.
"""

from __future__ import annotations

import logging
import threading

from ..cluster.zk_client import KafkaZkClient, WatchResult
from ..common.time import SYSTEM_CLOCK, Clock
from .delegation_tokens import TokenChangeListener, TokenInformation, decode_token, encode_token

log = logging.getLogger(__name__)

CHANGE_EXPIRATION_MS = 15 * 60 * 1000


class ZkTokenStore:
    def __init__(self, zk_client: KafkaZkClient, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.zk_client = zk_client
        self.clock = clock
        self._last_seen: str | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def load_all(self) -> list[TokenInformation]:
        """Kafka's `loadCache`: every token znode (one that cannot be read is logged and skipped)."""
        self.zk_client.create_delegation_token_paths()
        tokens = []
        for token_id in self.zk_client.get_delegation_token_ids():
            try:
                info = self.read(token_id)
            except ValueError:
                log.error("Error while getting Token for tokenId: %s", token_id, exc_info=True)
                continue
            if info is not None:
                tokens.append(info)
        log.info("Loaded the token cache. Total token count: %d", len(tokens))
        return tokens

    def read(self, token_id: str) -> TokenInformation | None:
        return decode_token(self.zk_client.get_delegation_token_info(token_id))

    def write(self, info: TokenInformation) -> None:
        self.zk_client.set_or_create_delegation_token(info.token_id, encode_token(info))
        self.zk_client.create_token_change_notification(info.token_id)

    def remove(self, token_id: str) -> None:
        self.zk_client.delete_delegation_token(token_id)
        self.zk_client.create_token_change_notification(token_id)

    def watch(self, on_change: TokenChangeListener) -> None:
        """Follow the change notifications made after now (`load_all` read the earlier ones)."""
        existing = sorted(self.zk_client.get_token_change_notifications())
        self._last_seen = existing[-1] if existing else None
        self.zk_client.watch_token_change_notifications(lambda children: self._on_changes(children, on_change))

    def _on_changes(self, children: list[str], on_change: TokenChangeListener) -> WatchResult:
        if self._stopped:
            return False
        with self._lock:
            for child in sorted(children):
                if self._last_seen is not None and child <= self._last_seen:
                    continue
                self._last_seen = child
                self._process(child, on_change)
        return None

    def _process(self, child: str, on_change: TokenChangeListener) -> None:
        try:
            notification = self.zk_client.get_token_change_notification(child)
            if notification is None:
                return
            token_id = notification.data.decode("utf-8")
            info = self.read(token_id)
        except Exception:  # noqa: BLE001 - one bad notification must not stop the watch
            log.warning("Could not process the token change notification %s", child, exc_info=True)
            return
        log.info("Processing Token Notification for tokenId: %s", token_id)
        on_change(token_id, info)
        if self.clock.now_ms() - notification.ctime_ms > CHANGE_EXPIRATION_MS:
            self.zk_client.delete_token_change_notification(child)

    def close(self) -> None:
        self._stopped = True
