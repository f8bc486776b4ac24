"""A broker with a PLAINTEXT and a SASL_PLAINTEXT listener for the SASL tests, users, and client
settings for every client library.

    with sasl_broker(tmp_path) as broker:           # PLAIN users from the JAAS config, SCRAM enabled
        create_scram_user(broker.plain_bootstrap, "carol", "carol-secret", "SCRAM-SHA-512")
        conf = confluent_conf(broker.sasl_bootstrap, "SCRAM-SHA-512", "carol", "carol-secret")
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from pathlib import Path

from pykbroker.testing import BrokerProcess

MECHANISMS = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
PLAIN_USERS = {"alice": "alice-secret", "admin": "admin-secret"}
_LISTENING = re.compile(r"pykbroker started: listening on (\w+)://([\d.]+):(\d+)")


def jaas_plain(users: dict[str, str], username: str | None = None, password: str | None = None) -> str:
    options = "".join(f' user_{user}="{secret}"' for user, secret in users.items())
    own = f' username="{username}" password="{password}"' if username else ""
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required{own}{options};"


def jaas_scram(username: str | None = None, password: str | None = None) -> str:
    own = f' username="{username}" password="{password}"' if username else ""
    return f"org.apache.kafka.common.security.scram.ScramLoginModule required{own};"


def sasl_overrides(listener: str = "sasl_plaintext", **extra: str) -> dict[str, str]:
    return {
        "sasl.enabled.mechanisms": MECHANISMS,
        f"listener.name.{listener}.plain.sasl.jaas.config": jaas_plain(PLAIN_USERS),
        f"listener.name.{listener}.scram-sha-256.sasl.jaas.config": jaas_scram(),
        f"listener.name.{listener}.scram-sha-512.sasl.jaas.config": jaas_scram(),
        "group.initial.rebalance.delay.ms": "0",
        **extra,
    }


class SaslBroker(BrokerProcess):
    """A BrokerProcess that knows the port of each of its listeners."""

    ports: dict[str, int]

    def _wait_until_listening(self) -> None:
        super()._wait_until_listening()
        expected = len(self.overrides["listeners"].split(","))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found = {name: int(port) for name, _, port in _LISTENING.findall(self.log_text())}
            if len(found) >= expected:
                self.ports = found
                return
            time.sleep(0.02)
        raise TimeoutError("the broker did not report all its listeners")

    @property
    def plain_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ports['PLAINTEXT']}"

    @property
    def sasl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ports['SASL_PLAINTEXT']}"


@contextmanager
def sasl_broker(directory: Path, **extra: str):
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        **sasl_overrides(**extra),
    }
    broker = SaslBroker(directory, overrides)
    with broker:
        yield broker


def create_scram_user(bootstrap: str, user: str, password: str, mechanism: str, iterations: int = 4096,
                      **client_conf: str) -> None:
    """AlterUserScramCredentials through confluent-kafka's AdminClient."""
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap, **client_conf})
    kind = getattr(ScramMechanism, mechanism.replace("-", "_"))
    upsertion = UserScramCredentialUpsertion(user, ScramCredentialInfo(kind, iterations), password.encode())
    for future in admin.alter_user_scram_credentials([upsertion]).values():
        future.result(timeout=30)


def confluent_conf(bootstrap: str, mechanism: str, user: str, password: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }


def kafka_python_conf(bootstrap: str, mechanism: str, user: str, password: str) -> dict:
    return {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }
