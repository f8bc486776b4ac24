"""A broker with a PLAINTEXT and a SASL_PLAINTEXT listener for the SASL tests (and, asked for, a
SASL_SSL listener and a SASL_PLAINTEXT listener REAUTH whose sessions are short), users, and
client settings for every client library.

    with sasl_broker(tmp_path) as broker:           # PLAIN users from the JAAS config, SCRAM enabled
        create_scram_user(broker.plain_bootstrap, "carol", "carol-secret", "SCRAM-SHA-512")
        conf = confluent_conf(broker.sasl_bootstrap, "SCRAM-SHA-512", "carol", "carol-secret")
    with sasl_broker(tmp_path, pki=Pki(tmp_path / "pki"), reauth_ms=3000) as broker:
        conf = confluent_conf(broker.bootstrap_of("SASL_SSL"), "PLAIN", "alice", "alice-secret",
                              "SASL_SSL", broker.ca)
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from pathlib import Path

from pykbroker.testkit.process import BrokerProcess

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

    def wait_until_listening(self) -> None:
        super().wait_until_listening()
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

    def bootstrap_of(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"


@contextmanager
def sasl_broker(directory: Path, *, pki=None, reauth_ms: int | None = None, command: list[str] | None = None,
                **extra: str):
    """PLAINTEXT and SASL_PLAINTEXT; with a `Pki` also SASL_SSL (its broker certificate, the CA
    as `broker.ca`); with `reauth_ms` also REAUTH, a SASL_PLAINTEXT listener whose
    `connections.max.reauth.ms` is that (KIP-368). Every SASL listener has the same users."""
    listeners = {"PLAINTEXT": "PLAINTEXT", "SASL_PLAINTEXT": "SASL_PLAINTEXT"}
    overrides = sasl_overrides()
    if pki is not None:
        from .tls_support import ssl_overrides

        listeners["SASL_SSL"] = "SASL_SSL"
        overrides.update(sasl_overrides("sasl_ssl"))
        overrides.update(ssl_overrides(pki, pki.issue("broker", "CN=broker,O=pykbroker")))
    if reauth_ms is not None:
        listeners["REAUTH"] = "SASL_PLAINTEXT"
        overrides.update(sasl_overrides("reauth"))
        overrides["listener.name.reauth.connections.max.reauth.ms"] = str(reauth_ms)
    overrides["listeners"] = ",".join(f"{name}://127.0.0.1:0" for name in listeners)
    overrides["listener.security.protocol.map"] = ",".join(f"{n}:{p}" for n, p in listeners.items())
    overrides.update(extra)
    broker = SaslBroker(directory, overrides, command=command)
    broker.ca = None if pki is None else pki.ca_pem
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


def confluent_conf(bootstrap: str, mechanism: str, user: str, password: str, protocol: str = "SASL_PLAINTEXT",
                   ca: Path | None = None) -> dict[str, str]:
    """librdkafka's settings (confluent-kafka; kcat takes the same as `-X key=value`)."""
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": protocol,
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
        **({"ssl.ca.location": str(ca)} if ca else {}),
    }


def kafka_python_conf(bootstrap: str, mechanism: str, user: str, password: str, protocol: str = "SASL_PLAINTEXT",
                      ca: Path | None = None) -> dict:
    return {
        "bootstrap_servers": bootstrap,
        "security_protocol": protocol,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
        **({"ssl_cafile": str(ca)} if ca else {}),
    }


def aiokafka_conf(bootstrap: str, mechanism: str, user: str, password: str, protocol: str = "SASL_PLAINTEXT",
                  ca: Path | None = None) -> dict:
    """aiokafka takes TLS settings as an SSLContext only."""
    conf = kafka_python_conf(bootstrap, mechanism, user, password, protocol)
    if ca:
        from aiokafka.helpers import create_ssl_context

        conf["ssl_context"] = create_ssl_context(cafile=str(ca))
    return conf


def java_properties(bootstrap: str, mechanism: str, user: str, password: str, protocol: str = "SASL_PLAINTEXT",
                    ca: Path | None = None) -> list[str]:
    """Java kafka-clients' security settings, as lines of a properties file."""
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    lines = [f"bootstrap.servers={bootstrap}", f"security.protocol={protocol}", f"sasl.mechanism={mechanism}",
             f"sasl.jaas.config=org.apache.kafka.common.security.{module} required "
             f'username="{user}" password="{password}";']
    if ca:
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={ca}"]
    return lines
