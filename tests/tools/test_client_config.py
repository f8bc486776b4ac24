"""`client_config` reads a Java client properties file as Kafka's tools do and gives librdkafka's settings."""

from __future__ import annotations

import pytest

from pykbroker.tools.client_config import ToolError, client_config, parse_properties


def write(tmp_path, text: str) -> str:
    path = tmp_path / "client.properties"
    path.write_text(text)
    return str(path)


def test_without_a_file_only_the_bootstrap_servers_are_set():
    assert client_config("h1:9092,h2:9092", None) == {"bootstrap.servers": "h1:9092,h2:9092"}


def test_scram_over_sasl_ssl_with_a_pem_trust_store(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n")
    path = write(
        tmp_path,
        f"""# the tools' client settings
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="alice" password="alice-secret";
ssl.truststore.location={ca}
ssl.endpoint.identification.algorithm=
client.id=tools
""",
    )
    assert client_config("h:9093", path) == {
        "bootstrap.servers": "h:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "client.id": "tools",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
        "ssl.ca.location": str(ca),
        "ssl.endpoint.identification.algorithm": "none",
    }


def test_plain_login_module_and_pem_text_trust_store(tmp_path):
    path = write(
        tmp_path,
        "sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required "
        "username='bob' password='pw';\nssl.truststore.certificates = PEMTEXT\n",
    )
    assert client_config("h:1", path) == {
        "bootstrap.servers": "h:1",
        "sasl.username": "bob",
        "sasl.password": "pw",
        "ssl.ca.pem": "PEMTEXT",
    }


def test_key_stores_pkcs12_and_pem(tmp_path):
    pkcs12 = write(tmp_path, "ssl.keystore.type=PKCS12\nssl.keystore.location=/k.p12\nssl.keystore.password=pw\n")
    assert client_config("h:1", pkcs12)["ssl.keystore.location"] == "/k.p12"
    assert client_config("h:1", pkcs12)["ssl.keystore.password"] == "pw"
    pem = write(tmp_path, "ssl.keystore.type=PEM\nssl.keystore.location=/k.pem\nssl.key.password=kp\n")
    assert client_config("h:1", pem) == {
        "bootstrap.servers": "h:1",
        "ssl.certificate.location": "/k.pem",
        "ssl.key.location": "/k.pem",
        "ssl.key.password": "kp",
    }


def test_a_jks_or_pkcs12_trust_store_is_one_clear_error(tmp_path):
    for store_type in ("JKS", "PKCS12"):
        path = write(tmp_path, f"ssl.truststore.location=/t.jks\nssl.truststore.type={store_type}\n")
        with pytest.raises(ToolError, match=f"a {store_type} trust store cannot be read"):
            client_config("h:1", path)


def test_unknown_keys_are_ignored_with_one_warning(tmp_path, capsys):
    path = write(tmp_path, "security.protocol=PLAINTEXT\nlinger.ms=5\nbatch.size=10\n")
    assert client_config("h:1", path) == {"bootstrap.servers": "h:1", "security.protocol": "PLAINTEXT"}
    assert capsys.readouterr().err.splitlines() == [
        "WARN: these client configs are not used by pykbroker's tools: batch.size, linger.ms"
    ]


def test_a_missing_file_is_a_tool_error(tmp_path):
    with pytest.raises(ToolError, match="cannot read"):
        client_config("h:1", str(tmp_path / "absent.properties"))


def test_extra_settings_win():
    assert client_config("h:1", None, {"client.id": "x"}) == {"bootstrap.servers": "h:1", "client.id": "x"}


def test_java_properties_syntax():
    assert parse_properties("a=1\nb : 2\nc 3\n! comment\nd=x\\\n  y\ne=tab\\tand\\\\\n") == {
        "a": "1",
        "b": "2",
        "c": "3",
        "d": "xy",
        "e": "tab\tand\\",
    }
