"""Dynamic listener settings, as Kafka's DynamicBrokerConfig: IncrementalAlterConfigs and
AlterConfigs on this broker take the per-listener security keys (`listener.name.<l>.ssl.*` key
stores, `listener.name.<l>.<mechanism>.sasl.jaas.config`, `sasl.kerberos.*`), check a new key store
before taking it, report them in DescribeConfigs with Kafka's sources (null for secrets), and
apply the TLS ones to new connections without a restart (the next TLS handshake presents the
rotated certificate) and the SASL ones from the next start, as Kafka does; at a start the stored
settings apply as they are (a stored key store's DN may differ from the static one's).

One broker with a PLAINTEXT listener (for the admin client), an SSL and a SASL_PLAINTEXT one.
"""
from __future__ import annotations

import socket
import ssl

import pytest
from confluent_kafka import KafkaError as ConfluentError
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource
from cryptography import x509

from ..test_admin_configs import BROKER, DYNAMIC_BROKER, STATIC, alter, describe, entries, outcome
from .certs import Pki
from .sasl_support import MECHANISMS, PLAIN_USERS, SaslBroker, confluent_conf, jaas_plain, jaas_scram
from .tls_support import pem_keystore, ssl_overrides

DN = "CN=broker,OU=test,O=pykbroker"
KEYSTORE = "listener.name.ssl.ssl.keystore.location"
JAAS = "listener.name.sasl_plaintext.plain.sasl.jaas.config"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.broker = pki.issue("broker", DN)
    return pki


@pytest.fixture(scope="module")
def broker(pki, tmp_path_factory):
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
        **ssl_overrides(pki, pki.broker, prefix="listener.name.ssl."),
        "sasl.enabled.mechanisms": MECHANISMS,
        JAAS: jaas_plain(PLAIN_USERS),
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": jaas_scram(),
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": jaas_scram(),
    }
    with SaslBroker(tmp_path_factory.mktemp("broker"), overrides) as running:
        yield running


@pytest.fixture(scope="module")
def admin(broker):
    return AdminClient({"bootstrap.servers": broker.plain_bootstrap})


def change(admin, *entries, name="0", validate_only=False):
    """IncrementalAlterConfigs SET of (key, value) on broker `name`; None or the KafkaError."""
    resource = ConfigResource("BROKER", name, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET) for key, value in entries])
    error = admin.incremental_alter_configs([resource], validate_only=validate_only)[resource].exception(timeout=15)
    return None if error is None else (error.args[0].code(), error.args[0].str())


def described(admin, key):
    resource = ConfigResource("BROKER", "0")
    return admin.describe_configs([resource])[resource].result(timeout=15)[key]


def presented_certificate(broker, pki) -> x509.Certificate:
    """The certificate the SSL listener presents to a new connection."""
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    with socket.create_connection(("127.0.0.1", broker.ports["SSL"]), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))


def test_a_rotated_keystore_is_presented_to_the_next_connection(broker, pki, admin):
    before = presented_certificate(broker, pki)
    assert before.serial_number == pki.broker.certificate.serial_number
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    with socket.create_connection(("127.0.0.1", broker.ports["SSL"]), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as established:
            renewed = pki.issue("renewed", DN)
            store = pem_keystore(renewed, pki.directory / "renewed-store.pem")
            assert change(admin, (KEYSTORE, str(store))) is None
            after = presented_certificate(broker, pki)
            assert after.serial_number == renewed.certificate.serial_number != before.serial_number
            # the connection made before keeps its session (and the certificate it was shown)
            peer = x509.load_der_x509_certificate(established.getpeercert(binary_form=True))
            assert peer.serial_number == before.serial_number
    entry = described(admin, KEYSTORE)
    assert (entry.value, entry.source, entry.is_sensitive) == (
        str(store), ConfigSource.DYNAMIC_BROKER_CONFIG.value, False)


@pytest.mark.parametrize("what", ["missing file", "another DN", "a SAN less"])
def test_a_keystore_the_listener_cannot_take_is_refused(broker, pki, admin, what):
    if what == "missing file":
        location = str(pki.directory / "no-such-store.pem")
    elif what == "another DN":
        location = str(pem_keystore(pki.issue("other", "CN=other,OU=test,O=pykbroker"), pki.directory / "other.pem"))
    else:
        location = str(pem_keystore(pki.issue("narrow", DN, hosts=("localhost",)), pki.directory / "narrow.pem"))
    current = presented_certificate(broker, pki).serial_number
    assert change(admin, (KEYSTORE, location)) == (ConfluentError.INVALID_REQUEST, "Invalid dynamic configuration")
    assert presented_certificate(broker, pki).serial_number == current
    assert described(admin, KEYSTORE).value != location


def test_validate_only_checks_and_changes_nothing(broker, pki, admin):
    renewed = pki.issue("validated", DN)
    store = str(pem_keystore(renewed, pki.directory / "validated.pem"))
    current = presented_certificate(broker, pki).serial_number
    assert change(admin, (KEYSTORE, store), validate_only=True) is None
    assert change(admin, (KEYSTORE, str(pki.directory / "nothing.pem")), validate_only=True) == (
        ConfluentError.INVALID_REQUEST, "Invalid dynamic configuration")
    assert presented_certificate(broker, pki).serial_number == current


@pytest.mark.parametrize("configs, message", [
    ({KEYSTORE: "/tmp/store.pem"}, "Cannot update these configs at default cluster level, broker id must be "
                                   "specified: Set(listener.name.ssl.ssl.keystore.location)"),
    ({"sasl.kerberos.min.time.before.relogin": "1000"}, "Cannot update these configs at default cluster level, "
                                                        "broker id must be specified: "
                                                        "Set(sasl.kerberos.min.time.before.relogin)"),
])
def test_listener_settings_are_per_broker_only(broker, configs, message):
    assert outcome(alter(broker, BROKER, "", configs)) == (42, message)


@pytest.mark.parametrize("key", ["ssl.keystore.type", "ssl.truststore.certificates", "ssl.key.password"])
def test_key_and_trust_stores_only_per_listener(admin, key):
    assert change(admin, (key, "x")) == (
        ConfluentError.INVALID_REQUEST,
        f"These security configs can be dynamically updated only per-listener using the listener prefix: Set({key})")


def test_sasl_kerberos_settings_are_accepted_and_described(admin):
    assert change(admin, ("sasl.kerberos.min.time.before.relogin", "120000"),
                  ("listener.name.sasl_plaintext.sasl.kerberos.service.name", "kafka")) is None
    entry = described(admin, "sasl.kerberos.min.time.before.relogin")
    assert (entry.value, entry.source, entry.is_read_only) == ("120000", ConfigSource.DYNAMIC_BROKER_CONFIG.value,
                                                               False)
    assert change(admin, ("sasl.kerberos.min.time.before.relogin", "soon")) == (
        ConfluentError.INVALID_REQUEST,
        "Invalid value soon for configuration sasl.kerberos.min.time.before.relogin: Not a number of type LONG")


def can_log_in(broker, user, password) -> bool:
    conf = confluent_conf(broker.sasl_bootstrap, "PLAIN", user, password)
    client = AdminClient({**conf, "socket.timeout.ms": 5000})
    try:
        client.list_topics(timeout=5)
        return True
    except Exception:
        return False


def test_a_changed_jaas_config_is_stored_but_logins_keep_the_listeners_until_the_next_start(broker, admin):
    """As Kafka 3.9 (checked against a real broker): the change is accepted and described, and
    the listener keeps the JAAS config it started with (see the restart test below)."""
    assert not can_log_in(broker, "dave", "dave-secret")
    assert change(admin, (JAAS, jaas_plain({**PLAIN_USERS, "dave": "dave-secret"}))) is None
    assert not can_log_in(broker, "dave", "dave-secret")
    assert can_log_in(broker, "alice", "alice-secret")
    entry = described(admin, JAAS)
    assert (entry.value, entry.is_sensitive, entry.source) == (None, True, ConfigSource.DYNAMIC_BROKER_CONFIG.value)
    # Kafka's synonyms of a per-mechanism key: itself (dynamic, then static), then sasl.jaas.config
    wire = entries(describe(broker, BROKER, "0", [JAAS], synonyms=True))[JAAS]
    assert [(s.name, s.value, s.source) for s in wire.synonyms] == [(JAAS, None, DYNAMIC_BROKER), (JAAS, None, STATIC)]
    assert wire.read_only


def test_at_the_next_start_the_stored_listener_settings_apply_as_they_are(pki, tmp_path):
    """As Kafka 3.9 (checked against a real broker), whose listeners are built at start from the
    static and the stored dynamic configs together: the changed JAAS config now lets dave in, and
    the stored key store is taken even though its certificate's DN is no longer the static
    key store's (the DN check is for changes while running)."""
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
        **ssl_overrides(pki, pki.broker, prefix="listener.name.ssl."),
        "sasl.enabled.mechanisms": "PLAIN",
        JAAS: jaas_plain(PLAIN_USERS),
    }
    with SaslBroker(tmp_path / "broker", overrides) as broker:
        admin = AdminClient({"bootstrap.servers": broker.plain_bootstrap})
        assert change(admin, (JAAS, jaas_plain({**PLAIN_USERS, "dave": "dave-secret"}))) is None
        store = pem_keystore(pki.issue("stored", DN), tmp_path / "stored-store.pem")
        assert change(admin, (KEYSTORE, str(store))) is None
        broker.stop()
        renamed = pki.issue("renamed", "CN=renamed,OU=test,O=pykbroker")
        pem_keystore(renamed, store)  # the stored location now holds a certificate of another name
        broker.start()

        assert can_log_in(broker, "dave", "dave-secret")
        assert presented_certificate(broker, pki).subject == renamed.certificate.subject
