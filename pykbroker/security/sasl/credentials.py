"""SCRAM credentials as the authenticator looks them up: the user's configs in the metadata store
(`/config/users/<sanitized user>` in a cluster, kept current by the `/config/changes` watch; the
embedded store on one broker), one `salt=...,stored_key=...,server_key=...,iterations=N` value per
mechanism name.
"""

from __future__ import annotations

import logging
from typing import Protocol

from ..sanitizer import sanitize
from .authenticator import CredentialLookup
from .scram import ScramCredential

log = logging.getLogger(__name__)


class UserConfigs(Protocol):
    def user_configs(self, user: str) -> dict[str, str]: ...


def scram_credential_lookup(store: UserConfigs) -> CredentialLookup:
    def lookup(mechanism: str, user: str) -> ScramCredential | None:
        text = store.user_configs(sanitize(user)).get(mechanism)
        if text is None:
            return None
        try:
            return ScramCredential.from_config(text)
        except ValueError:
            log.warning("The stored %s credential of user %s is not valid", mechanism, user)
            return None

    return lookup
