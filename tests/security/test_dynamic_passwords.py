"""Sensitive dynamic broker configs as Kafka's ZooKeeper-mode broker keeps them: encoded with
`password.encoder.secret` in `/config/brokers/<id>` (Kafka's PasswordEncoder format), refused
without a secret, decoded again when the broker applies them (a PKCS12 key store rotated with a
new password reaches the next TLS handshake). On a single broker they stay in the embedded store
as given."""
from __future__ import annotations

import base64
import json
import socket
import ssl
from types import SimpleNamespace

import pytest
from cryptography import x509
from kazoo.client import KazooClient

from pykbroker.cluster import zk_data
from pykbroker.config import BrokerConfig
from pykbroker.handlers.support.config_admin import decoded_broker_configs, is_password_config, store_broker_configs
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.security.password_encoder import PasswordEncoder, PasswordEncoderError
from pykbroker.testkit.zookeeper import ZooKeeperProcess, zookeeper_available

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


# Values written by a real Kafka 3.9.0 broker (ZooKeeper mode, `password.encoder.secret=s3cret`,
# default encoder settings) into `/config/brokers/0` for IncrementalAlterConfigs SETs of
# `listener.name.plaintext.ssl.key.password` = "pässwörd-123" and
# `listener.name.plaintext.ssl.keystore.password` = "k😀y".
KAFKA_ENCODED = {
    "pässwörd-123": (
        "initializationVector:sV4Hw25xKw6bNV56hDL/LA==,keyLength:128,salt:z+CcgIRZI8u+H5gzgL6qhk2SeIEUBN8"
        "lUYNxgJjFv+D6/2HaD8RuuFMi5fnEHy6QrtvmaSwlwDeJeF1025pnbUtMI8qn/3CtrYXK584uJBgJEfQ7NtBnfwh+qcaujYH"
        "RsRXMQA5bWnVFG05XGpa+L+wsCVKOVtpmdZvFCkWb5T2qFItl3RRcLqNstIrBWcsnA2jF8HWK+LlTaBbNabFTte9hQC/XzSr"
        "IJ6/mMkjsl1k7LJ5Z1XImciSwSfUpk6zvbVNJWn2PAA53gCGjQnWilZO9ZVetRqabAd7k81fqsF06w0hz8E3UBU+a6zZMWLK"
        "ZrDZ/WScUs57pUQHpuwDNmQ==,keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/CBC/PKCS5"
        "Padding,iterations:4096,passwordLength:12,encryptedPassword:r0REp//gcMVfjAa78mf+OA=="
    ),
    "k😀y": (
        "initializationVector:0OuzU3XR1n6PVSV7I9gb7Q==,keyLength:128,salt:sxFjRsG/BEJHFNiL4EFwfoq1AG3ljON"
        "uUV4NwAVSa+iObv4KWS4HMTo8hK+lc2Rsm8OBTk+z91WN/ZaBraZprpLNvv7yBw00gOwxcr/d0lr7Fko5hsyYT91tnQRFJLh"
        "WU2eCIg4wt32qn7opqdwx+tWWW4xiuVzqPLAUOizDk+xZVi8P8fPIZaSIxhtTs8xg8q/pjHwrQMhPwH6TTiW3YaGTfYHYNYY"
        "dq/n6cowF+YYvzEraQINjLfRrLlzCazkjqQgwqQy6xGuUGHYGgICiwzd6r9LAVQmY5qDIeDM/dVJeZGs066SVqodHofBDzd4"
        "vo5wng5iIcCCCvwy2YSX6NA==,keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/CBC/PKCS5"
        "Padding,iterations:4096,passwordLength:4,encryptedPassword:6piemw9GvH3KNtbK7mu7tQ=="
    ),
}


@pytest.mark.parametrize("password", list(KAFKA_ENCODED))
def test_a_value_encoded_by_kafka_decodes_with_the_same_secret(password):
    assert PasswordEncoder("s3cret").decode(KAFKA_ENCODED[password]) == password
    with pytest.raises(PasswordEncoderError):
        PasswordEncoder("other").decode(KAFKA_ENCODED[password])


def _layout(encoded):
    """The field names in order, and the values of the fixed fields (binary ones by decoded size)."""
    pairs = [part.split(":", 1) for part in encoded.split(",")]
    sizes = {name: len(base64.b64decode(value)) for name, value in pairs
             if name in ("initializationVector", "salt", "encryptedPassword")}
    return [name for name, _ in pairs], {n: v for n, v in pairs if n not in sizes}, sizes


@pytest.mark.parametrize("password", list(KAFKA_ENCODED))
def test_the_encoder_writes_kafkas_exact_layout(password):
    ours = PasswordEncoder("s3cret").encode(password)
    assert _layout(ours) == _layout(KAFKA_ENCODED[password])
    assert _layout(ours)[0] == [
        "initializationVector", "keyLength", "salt", "keyFactoryAlgorithm", "cipherAlgorithm", "iterations",
        "passwordLength", "encryptedPassword"]
    assert PasswordEncoder("s3cret").decode(ours) == password


def test_the_password_length_is_javas_utf16_length():
    fields = dict(part.split(":", 1) for part in KAFKA_ENCODED["k😀y"].split(","))
    assert fields["passwordLength"] == "4"  # Kafka's String.length(): the emoji is two UTF-16 units
    fields = dict(part.split(":", 1) for part in PasswordEncoder("s3cret").encode("k😀y").split(","))
    assert fields["passwordLength"] == "4"


def test_decoding_reads_kafkas_csv_map_loosely():
    spaced = KAFKA_ENCODED["pässwörd-123"].replace(",", " , ")
    assert PasswordEncoder("s3cret").decode(spaced) == "pässwörd-123"


def test_a_broker_config_znode_lists_its_keys_in_kafkas_order():
    # `/config/brokers/0` as Kafka 3.9.0 wrote it after these dynamic configs were set.
    kafka_order = ["log.retention.ms", "message.max.bytes", "listener.name.plaintext.ssl.keystore.password",
                   "num.io.threads", "listener.name.plaintext.ssl.key.password", "log.cleaner.threads",
                   "max.connections"]
    ours = json.loads(zk_data.encode_broker_config({key: "x" for key in sorted(kafka_order)}))
    assert ours["version"] == 1 and list(ours["config"]) == kafka_order


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
    plain = "keystore-password-in-plain-text"
    store_broker_configs(with_secret, 0, {PREFIX + "ssl.keystore.password": plain})
    stored = with_secret.metadata.kept[0][PREFIX + "ssl.keystore.password"]
    assert "encryptedPassword:" in stored and plain not in stored
    assert decoded_broker_configs(with_secret.config, with_secret.metadata.kept[0]) == {
        PREFIX + "ssl.keystore.password": plain}


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
        zk.start(timeout=30)
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
    assert _layout(encoded)[0] == _layout(KAFKA_ENCODED["pässwörd-123"])[0]  # Kafka's field order
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    with socket.create_connection(("127.0.0.1", broker.ports["SSL"]), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            presented = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
    assert presented.serial_number == renewed.certificate.serial_number
