"""The brokers of the compatibility suite's security scenarios: one pykbroker and one Kafka 3.9.0
(`../shared/realkafka`) with the same settings, each with a test PKI of its own (`compat/certs.py`)
and three listeners:

    PLAIN   SASL_PLAINTEXT, mechanism PLAIN, users from the listener's JAAS config (admin, the
            super user, and dave); the inter-broker listener
    SCRAM   SASL_SSL, mechanism SCRAM-SHA-512, users created through AlterUserScramCredentials
    MTLS    SSL with ssl.client.auth=required; the principal is the certificate's DN after
            ssl.principal.mapping.rules: `User:erin` for CN=Erin,OU=compat,O=example

and Kafka's ACL authorizer with super.users=User:admin.

    with SecurePykBroker(tmp_dir) as broker:          # or SecureKafkaBroker(tmp_dir)
        broker.access("SCRAM", "alice")               # how alice connects: an Access
        broker.access("MTLS", cert="erin")
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pykbroker.testkit.process import BrokerProcess

from .certs import Issued, Pki
from .realkafka import SINGLE_BROKER_SETTINGS, KafkaBroker, free_port_block

SCRAM_MECHANISM = "SCRAM-SHA-512"
SCRAM_USERS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
# matrix: the caller of the authorization matrix (compat/authorization_matrix.py), ACLs set per request
PLAIN_USERS = {"admin": "admin-secret", "dave": "dave-secret", "matrix": "matrix-secret"}
SUPER_USER = "admin"
# client certificates on the MTLS listener: label -> DN; the mapping rule makes User:<cn in lower case>
CLIENT_CERTIFICATES = {"erin": "CN=Erin,OU=compat,O=example", "frank": "CN=Frank,OU=compat,O=example"}
PRINCIPAL_MAPPING = "RULE:^CN=([^,]+),OU=compat,.*$/$1/L,DEFAULT"
PASSWORD_ENCODER_SECRET = "compat-encoder-secret"
LISTENERS = {"PLAIN": "SASL_PLAINTEXT", "SCRAM": "SASL_SSL", "MTLS": "SSL"}
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@dataclass(frozen=True)
class Access:
    """How a client connects: a listener's address and protocol, and its credentials (a SASL
    user and password, or a client certificate as PEM files)."""

    bootstrap: str
    protocol: str
    mechanism: str | None = None
    user: str | None = None
    password: str | None = None
    ca: Path | None = None
    cert: Path | None = None  # the client certificate (PEM)
    key: Path | None = None  # its key (unencrypted PKCS#8 PEM)
    keystore: Path | None = None  # both in one PEM file, as Java's ssl.keystore.type=PEM reads it


def jaas_plain(users: dict[str, str], username: str, password: str) -> str:
    options = "".join(f' user_{user}="{secret}"' for user, secret in users.items())
    return (
        f"org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{username}" password="{password}"{options};'
    )


def pem_keystore(issued: Issued) -> Path:
    """The certificate chain and the key in one PEM file, beside the certificate."""
    path = issued.cert_pem.with_name(f"{issued.cert_pem.stem}-store.pem")
    path.write_bytes(issued.chain_pem.read_bytes() + issued.key_pem.read_bytes())
    return path


class SecurityPki:
    """The CA, the broker's certificate (127.0.0.1) and the client certificates."""

    def __init__(self, directory: Path) -> None:
        self.pki = Pki(directory)
        self.ca = self.pki.ca_pem
        self.broker_keystore = pem_keystore(self.pki.issue("broker", "CN=broker,OU=compat-broker,O=pykbroker"))
        self.clients = {label: self.pki.issue(label, dn, hosts=()) for label, dn in CLIENT_CERTIFICATES.items()}
        self.client_keystores = {label: pem_keystore(issued) for label, issued in self.clients.items()}


def secure_settings(ports: dict[str, int], pki: SecurityPki) -> dict[str, str]:
    """The broker settings both brokers get, besides the single broker's usual ones."""
    listeners = ",".join(f"{name}://127.0.0.1:{ports[name]}" for name in LISTENERS)
    admin_password = PLAIN_USERS[SUPER_USER]
    return {
        "listeners": listeners,
        "advertised.listeners": listeners,
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in LISTENERS.items()),
        "inter.broker.listener.name": "PLAIN",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.plain.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.plain.plain.sasl.jaas.config": jaas_plain(PLAIN_USERS, SUPER_USER, admin_password),
        "listener.name.scram.sasl.enabled.mechanisms": SCRAM_MECHANISM,
        f"listener.name.scram.{SCRAM_MECHANISM.lower()}.sasl.jaas.config": SCRAM_JAAS,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.broker_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca),
        "listener.name.mtls.ssl.client.auth": "required",
        "ssl.principal.mapping.rules": PRINCIPAL_MAPPING,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": f"User:{SUPER_USER}",
        "password.encoder.secret": PASSWORD_ENCODER_SECRET,
        # a connection that fails to authenticate (or asks before it has) is closed at once rather
        # than after Kafka's 100 ms (which its network thread's 300 ms poll makes about 300 ms)
        "connection.failed.authentication.delay.ms": "0",
    }


class _Secured:
    """What both secured brokers answer: the address of a listener, and how a client connects."""

    ports: dict[str, int]
    pki: SecurityPki

    def bootstrap_of(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    def access(
        self, listener: str, user: str | None = None, password: str | None = None, *, cert: str | None = None
    ) -> Access:
        """How `user` (its own password unless `password` is given) connects to `listener`; on
        MTLS with the client certificate `cert` (none without it)."""
        protocol = LISTENERS[listener]
        ca = self.pki.ca if "SSL" in protocol else None
        if protocol == "SSL":
            issued = self.pki.clients.get(cert) if cert else None
            return Access(
                self.bootstrap_of(listener),
                protocol,
                ca=ca,
                cert=issued and issued.cert_pem,
                key=issued and issued.key_pem,
                keystore=self.pki.client_keystores.get(cert) if cert else None,
            )
        mechanism = "PLAIN" if listener == "PLAIN" else SCRAM_MECHANISM
        known = PLAIN_USERS if listener == "PLAIN" else SCRAM_USERS
        return Access(
            self.bootstrap_of(listener), protocol, mechanism, user, known[user] if password is None else password, ca
        )

    def admin_access(self) -> Access:
        return self.access("PLAIN", SUPER_USER)


class SecureKafkaBroker(_Secured, KafkaBroker):
    """Kafka 3.9.0 (kafka.sh) with the three listeners: PLAIN on kafka.sh's port, ZooKeeper on
    the next, then SCRAM and MTLS."""

    ports_needed = 4

    def __init__(self, directory: str | os.PathLike) -> None:
        super().__init__(directory)
        self.pki = SecurityPki(self.runs / "pki")
        self.ports = {}

    def extra_settings(self, port: int) -> dict[str, str]:
        self.ports = {"PLAIN": port, "SCRAM": port + 2, "MTLS": port + 3}
        return secure_settings(self.ports, self.pki)


class SecurePykBroker(_Secured, BrokerProcess):
    """pykbroker with the same settings on three free ports."""

    label = "pykbroker"

    def __init__(self, directory: str | os.PathLike) -> None:
        directory = Path(directory)
        self.pki = SecurityPki(directory / "pki")
        base = free_port_block(len(LISTENERS))
        self.ports = {name: base + i for i, name in enumerate(LISTENERS)}
        super().__init__(directory / "broker", {**SINGLE_BROKER_SETTINGS, **secure_settings(self.ports, self.pki)})
