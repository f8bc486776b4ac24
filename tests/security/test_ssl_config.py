"""Key and trust stores from Kafka's ssl.* keys, per listener; what cannot be honoured stops the
broker at start with one line naming the key."""
from __future__ import annotations

import ssl
import subprocess
import sys

import pytest

from pykbroker.config import BrokerConfig, ConfigError
from pykbroker.security.ssl_config import ServerSsl, client_ssl_context

from .certs import Pki
from .tls_support import pem_keystore


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.broker = pki.issue("broker", "CN=broker,O=pykbroker")
    pki.other = pki.issue("other", "CN=other")
    return pki


def config(tmp_path, **values) -> BrokerConfig:
    return BrokerConfig({"log.dirs": str(tmp_path / "logs"), "listeners": "SSL://127.0.0.1:0",
                         **{key.replace("_", "."): value for key, value in values.items()}})


def server(tmp_path, values: dict) -> ServerSsl:
    return ServerSsl.for_listener(config(tmp_path, **{k.replace(".", "_"): v for k, v in values.items()}), "SSL")


def test_inline_pem_with_an_encrypted_key(pki, tmp_path):
    key = pki.broker.encrypted_key(tmp_path / "enc.key", "s3cret").read_text()
    tls = server(tmp_path, {"ssl.keystore.type": "PEM", "ssl.keystore.key": key,
                            "ssl.keystore.certificate.chain": pki.broker.chain_pem.read_text(),
                            "ssl.key.password": "s3cret"})
    assert tls.client_auth == "none" and tls.context.verify_mode == ssl.CERT_NONE
    assert tls.context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert tls.context.maximum_version == ssl.TLSVersion.TLSv1_3


def test_pem_values_that_lost_their_line_breaks_still_load(pki, tmp_path):
    """A properties file with continuation lines joins a PEM block into one line."""
    chain = " ".join(pki.broker.chain_pem.read_text().splitlines())
    key = " ".join(pki.broker.key_pem.read_text().splitlines())
    server(tmp_path, {"ssl.keystore.type": "PEM", "ssl.keystore.key": key, "ssl.keystore.certificate.chain": chain})


def test_pkcs12_key_store_and_pem_trust_store_with_required_client_auth(pki, tmp_path):
    store = pki.broker.pkcs12(tmp_path / "broker.p12", "changeit")
    tls = server(tmp_path, {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(store),
                            "ssl.keystore.password": "changeit", "ssl.truststore.type": "PEM",
                            "ssl.truststore.location": str(pki.ca_pem), "ssl.client.auth": "required"})
    assert tls.context.verify_mode == ssl.CERT_REQUIRED
    # a PKCS12 file under the default type JKS loads as Java's JKS key store reads it (keystore.type.compat)
    server(tmp_path, {"ssl.keystore.location": str(store), "ssl.keystore.password": "changeit"})


def test_listener_overrides_win(pki, tmp_path):
    base = pem_keystore(pki.broker, tmp_path / "store.pem")
    cfg = BrokerConfig({"log.dirs": str(tmp_path), "listeners": "SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                        "listener.security.protocol.map": "SSL:SSL,INTERNAL:SSL",
                        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(base),
                        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem),
                        "listener.name.internal.ssl.client.auth": "required",
                        "listener.name.internal.ssl.enabled.protocols": "TLSv1.3"})
    assert ServerSsl.for_listener(cfg, "SSL").client_auth == "none"
    internal = ServerSsl.for_listener(cfg, "INTERNAL")
    assert internal.client_auth == "required"
    assert internal.context.minimum_version == ssl.TLSVersion.TLSv1_3
    assert "listener.name.internal.ssl.client.auth" not in cfg.unknown_keys


def test_client_context_checks_host_names_unless_the_algorithm_is_empty(pki, tmp_path):
    cfg = config(tmp_path, **{"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)})
    assert client_ssl_context(cfg, "SSL").check_hostname is True
    cfg = config(tmp_path, **{"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem),
                              "ssl.endpoint.identification.algorithm": ""})
    assert client_ssl_context(cfg, "SSL").check_hostname is False


def test_cipher_suites_without_tls13_suites_cap_the_protocol_at_tls12(pki, tmp_path):
    store = pem_keystore(pki.broker, tmp_path / "store.pem")
    tls = server(tmp_path, {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(store),
                            "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
    assert tls.context.maximum_version == ssl.TLSVersion.TLSv1_2


@pytest.mark.parametrize("case, key", [
    ("wrong-pkcs12-password", "ssl.keystore.location"),
    ("jks", "ssl.keystore.location"),
    ("missing-file", "ssl.keystore.location"),
    ("mismatched-key", "ssl.keystore.location"),
    ("encrypted-key-without-password", "ssl.key.password"),
    ("wrong-key-password", "ssl.key.password"),
    ("no-keystore", "ssl.keystore.location"),
    ("pem-with-store-password", "ssl.keystore.password"),
    ("unknown-protocol", "ssl.enabled.protocols"),
    ("bad-rule", "ssl.principal.mapping.rules"),
    ("some-tls13-suites", "ssl.cipher.suites"),
    ("listener-override", "listener.name.ssl.ssl.keystore.location"),
])
def test_what_cannot_be_honoured_names_its_key(pki, tmp_path, case, key):
    p12 = pki.broker.pkcs12(tmp_path / "broker.p12", "changeit")
    pem = pem_keystore(pki.broker, tmp_path / "store.pem")
    mismatched = tmp_path / "mismatched.pem"
    mismatched.write_bytes(pki.broker.chain_pem.read_bytes() + pki.other.key_pem.read_bytes())
    encrypted = tmp_path / "enc.pem"
    encrypted.write_bytes(pki.broker.chain_pem.read_bytes()
                          + pki.broker.encrypted_key(tmp_path / "enc.key", "s3cret").read_bytes())
    jks = tmp_path / "broker.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02" + b"\x00" * 64)
    pem_store = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pem)}
    values = {
        "wrong-pkcs12-password": {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(p12),
                                  "ssl.keystore.password": "wrong"},
        "jks": {"ssl.keystore.location": str(jks), "ssl.keystore.password": "changeit"},
        "missing-file": {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(tmp_path / "nope.pem")},
        "mismatched-key": {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(mismatched)},
        "encrypted-key-without-password": {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(encrypted)},
        "wrong-key-password": {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(encrypted),
                               "ssl.key.password": "wrong"},
        "no-keystore": {},
        "pem-with-store-password": {**pem_store, "ssl.keystore.password": "x"},
        "unknown-protocol": {**pem_store, "ssl.enabled.protocols": "SSLv3"},
        "bad-rule": {**pem_store, "ssl.principal.mapping.rules": "RULE:^CN=(.*)/$1/X/"},
        "some-tls13-suites": {**pem_store, "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"},
        "listener-override": {**pem_store, "listener.name.ssl.ssl.keystore.location": str(tmp_path / "nope.pem")},
    }[case]
    with pytest.raises(ConfigError) as error:
        ServerSsl.for_listener(BrokerConfig({"log.dirs": str(tmp_path), "listeners": "SSL://127.0.0.1:0", **values}),
                               "SSL")
    assert error.value.key == key
    assert key in str(error.value)


def test_the_broker_stops_at_start_with_one_line(pki, tmp_path):
    p12 = pki.broker.pkcs12(tmp_path / "broker.p12", "changeit")
    result = subprocess.run(
        [sys.executable, "-m", "pykbroker", "--override", f"log.dirs={tmp_path / 'logs'}",
         "--override", "listeners=SSL://127.0.0.1:0", "--override", "ssl.keystore.type=PKCS12",
         "--override", f"ssl.keystore.location={p12}", "--override", "ssl.keystore.password=wrong"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "ssl.keystore.location" in errors[0] and "password" in errors[0], result.stderr
