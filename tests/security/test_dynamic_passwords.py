"""Sensitive dynamic broker configs as Kafka's ZooKeeper-mode broker keeps them: encoded with
`password.encoder.secret` in `/config/brokers/<id>` (Kafka's PasswordEncoder format), refused
without a secret, decoded again when the broker applies them (a PKCS12 key store rotated with a
new password reaches the next TLS handshake). On a single broker they stay in the embedded store
as given."""
from __future__ import annotations

import socket
import ssl
from types import SimpleNamespace

import pytest
from cryptography import x509
from kazoo.client import KazooClient

from pykbroker.config import BrokerConfig
from pykbroker.handlers.config_admin import decoded_broker_configs, is_password_config, store_broker_configs
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.security.password_encoder import PasswordEncoder, PasswordEncoderError
from pykbroker.testing import ZooKeeperProcess, zookeeper_available

from .certs import Pki
from .sasl_support import SaslBroker
from .test_dynamic_listener_configs import change

DN = "CN=broker,OU=test,O=pykbroker"
PREFIX = "listener.name.ssl."


def test_the_encoder_round_trips_and_needs_the_same_secret():
    encoded = PasswordEncoder("secret").encode("keystore-password")
    fields = dict(part.split(":", 1) for part in encoded.split(","))
    assert (fields["keyFactoryAlgorithm"], fields["cipherAlgorithm"], fields["keyLength"], fields["iterations"],
            fields["passwordLength"]) == ("PBKDF2WithHmacSHA512", "AES/CBC/PKCS5Padding", "128", "4096", "17")
    assert PasswordEncoder("secret").decode(encoded) == "keystore-password"
    with pytest.raises(PasswordEncoderError):
        PasswordEncoder("another").decode(encoded)


@pytest.mark.parametrize("name, sensitive", [
    ("listener.name.ssl.ssl.keystore.password", True), ("listener.name.sasl_ssl.plain.sasl.jaas.config", True),
    ("listener.name.ssl.ssl.keystore.key", True), ("listener.name.ssl.ssl.keystore.location", False),
    ("sasl.kerberos.min.time.before.relogin", False),
])
def test_password_configs_are_those_kafka_encodes(name, sensitive):
    assert is_password_config(name) is sensitive


class Store:
    def __init__(self):
        self.kept = {}

    def set_broker_configs(self, node_id, configs):
        self.kept[node_id] = dict(configs)


def services(tmp_path, **overrides):
    config = BrokerConfig({"log.dirs": str(tmp_path), "zookeeper.connect": "127.0.0.1:2181", **overrides})
    return SimpleNamespace(config=config, metadata=Store())


def test_in_a_cluster_a_password_needs_the_encoder_secret(tmp_path):
    without = services(tmp_path)
    with pytest.raises(KafkaError) as refused:
        store_broker_configs(without, 0, {PREFIX + "ssl.keystore.password": "pw"})
    assert (refused.value.code, refused.value.message) == (ErrorCode.INVALID_REQUEST,
                                                          "Password encoder secret not configured")
    store_broker_configs(without, 0, {PREFIX + "ssl.keystore.location": "/tmp/ks"})  # no password: kept as is
    assert without.metadata.kept[0] == {PREFIX + "ssl.keystore.location": "/tmp/ks"}

    with_secret = services(tmp_path, **{"password.encoder.secret": "s3cret"})
    store_broker_configs(with_secret, 0, {PREFIX + "ssl.keystore.password": "pw"})
    stored = with_secret.metadata.kept[0][PREFIX + "ssl.keystore.password"]
    assert "encryptedPassword:" in stored and "pw" not in stored.split("encryptedPassword:")[1].split(",")[0]
    assert decoded_broker_configs(with_secret.config, with_secret.metadata.kept[0]) == {
        PREFIX + "ssl.keystore.password": "pw"}


def test_the_old_secret_still_decodes_and_an_undecodable_password_is_left_out(tmp_path):
    old = PasswordEncoder("old").encode("pw")
    config = services(tmp_path, **{"password.encoder.secret": "new", "password.encoder.old.secret": "old"}).config
    assert decoded_broker_configs(config, {PREFIX + "ssl.key.password": old}) == {PREFIX + "ssl.key.password": "pw"}
    config = services(tmp_path, **{"password.encoder.secret": "new"}).config
    assert decoded_broker_configs(config, {PREFIX + "ssl.key.password": old, "x": "1"}) == {"x": "1"}


@pytest.fixture(scope="module")
def cluster_broker(tmp_path_factory):
    if not zookeeper_available():
        pytest.skip("needs java and ZooKeeper (Debian's zookeeper package)")
    directory = tmp_path_factory.mktemp("dynamic-passwords")
    pki = Pki(directory / "pki")
    first = pki.issue("broker", DN)
    with ZooKeeperProcess(directory / "zookeeper") as zookeeper:
        connect = zookeeper.connect_string("/dyn")
        overrides = {
            "zookeeper.connect": connect,
            "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL",
            "password.encoder.secret": "cluster-secret",
            PREFIX + "ssl.keystore.type": "PKCS12",
            PREFIX + "ssl.keystore.location": str(first.pkcs12(directory / "first.p12", "first-pw")),
            PREFIX + "ssl.keystore.password": "first-pw",
        }
        zk = KazooClient(hosts=connect)
        zk.start(timeout=10)
        try:
            with SaslBroker(directory / "broker", overrides, broker_id=0) as broker:
                yield broker, zk, pki, directory
        finally:
            zk.stop()


def test_a_cluster_broker_encodes_a_rotated_keystore_password_in_zookeeper(cluster_broker):
    import json

    from confluent_kafka.admin import AdminClient

    broker, zk, pki, directory = cluster_broker
    renewed = pki.issue("renewed", DN)
    location = str(renewed.pkcs12(directory / "renewed.p12", "renewed-pw"))
    admin = AdminClient({"bootstrap.servers": broker.plain_bootstrap})
    assert change(admin, (PREFIX + "ssl.keystore.location", location),
                  (PREFIX + "ssl.keystore.password", "renewed-pw")) is None
    stored = json.loads(zk.get("/config/brokers/0")[0])["config"]
    assert stored[PREFIX + "ssl.keystore.location"] == location
    encoded = stored[PREFIX + "ssl.keystore.password"]
    assert PasswordEncoder("cluster-secret").decode(encoded) == "renewed-pw"
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    with socket.create_connection(("127.0.0.1", broker.ports["SSL"]), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            presented = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
    assert presented.serial_number == renewed.certificate.serial_number
