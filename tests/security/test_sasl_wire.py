"""SASL on the wire, request by request, as Kafka 3.9 answers (each expectation was checked against
Kafka 3.9.0 itself): the handshake's mechanisms in Kafka's order, its errors, v0 raw tokens,
requests before authentication, KIP-368 session lifetimes and re-authentication, hostile input
(garbage, oversized tokens, HTTP) closing only its own connection; and the pieces underneath
(Kafka's JAAS syntax, RFC 7677's SCRAM test vector, the credential text Kafka stores)."""
from __future__ import annotations

import base64
import socket
import struct
import time

import pytest

from pykbroker.protocol import headers, messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.security.sanitizer import desanitize, sanitize
from pykbroker.security.sasl.jaas import JaasConfigError, parse_jaas_config, parse_single_entry
from pykbroker.cluster.zk_data import encode_user_config
from pykbroker.security.sasl.scram import (
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ScramCredential,
    ScramSaslClient,
    ScramSaslServer,
)

from .sasl_support import create_scram_user, sasl_broker

HS = messages.request(ApiKey.SASL_HANDSHAKE).cls
AU = messages.request(ApiKey.SASL_AUTHENTICATE).cls
MD = messages.request(ApiKey.METADATA).cls
KAFKA_ORDER = ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]  # Kafka 3.9 lists them in HashSet order


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with sasl_broker(tmp_path_factory.mktemp("sasl-wire"), **{"connections.max.reauth.ms": "3000"}) as running:
        create_scram_user(running.plain_bootstrap, "carol", "carol-secret", "SCRAM-SHA-256")
        yield running


class Conn:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.cid = 0

    def send(self, key, version, body) -> int:
        self.cid += 1
        payload = headers.encode_request_header(key, version, self.cid, "wire")
        payload += messages.request(key).encode_bytes(body, version=version)
        self.raw(payload)
        return self.cid

    def raw(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def receive(self) -> bytes | None:
        data = b""
        while len(data) < 4:
            chunk = self.sock.recv(4 - len(data))
            if not chunk:
                return None
            data += chunk
        size = struct.unpack(">i", data)[0]
        body = b""
        while len(body) < size:
            chunk = self.sock.recv(size - len(body))
            if not chunk:
                return None
            body += chunk
        return body

    def ask(self, key, version, body):
        self.send(key, version, body)
        frame = self.receive()
        assert frame is not None, "connection closed"
        header, pos = headers.decode_response_header(bytearray(frame), key, version)
        return messages.response(key).decode(bytearray(frame), pos, version=version)[0]

    def closed(self) -> bool:
        return self.receive() is None


def port(broker):
    return broker.ports["SASL_PLAINTEXT"]


def plain_login(conn: Conn, user="alice", password="alice-secret"):
    assert conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="PLAIN")).error_code == 0
    return conn.ask(ApiKey.SASL_AUTHENTICATE, 2, AU(auth_bytes=f"\0{user}\0{password}".encode()))


def test_an_unknown_mechanism_is_refused_with_the_enabled_ones_after_the_delay(broker):
    conn = Conn(port(broker))
    started = time.monotonic()
    response = conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="GSSAPI"))
    assert time.monotonic() - started >= 0.09  # connection.failed.authentication.delay.ms=100
    assert (response.error_code, response.mechanisms) == (33, KAFKA_ORDER)
    assert conn.closed()


def test_plain_with_the_right_password_gets_the_session_lifetime_and_then_serves_requests(broker):
    conn = Conn(port(broker))
    response = plain_login(conn)
    assert (response.error_code, response.session_lifetime_ms) == (0, 3000)
    assert conn.ask(ApiKey.METADATA, 1, MD(topics=[])).brokers
    again = conn.ask(ApiKey.SASL_AUTHENTICATE, 2, AU(auth_bytes=b""))
    assert (again.error_code, again.error_message) == (
        34, "SaslAuthenticate request received after successful authentication")


@pytest.mark.parametrize("token, message", [
    (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
    (b"\0nobody\0x", "Authentication failed: Invalid username or password"),
    (b"\0alice\0", "Authentication failed: password not specified"),
    (b"a\0alice\0alice-secret\0x", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
    (b"bob\0alice\0alice-secret", "Authentication failed: Client requested an authorization id that is "
                                  "different from username"),
])
def test_plain_failures_carry_kafkas_messages_and_close_the_connection(broker, token, message):
    conn = Conn(port(broker))
    conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="PLAIN"))
    response = conn.ask(ApiKey.SASL_AUTHENTICATE, 2, AU(auth_bytes=token))
    assert (response.error_code, response.error_message) == (58, message)
    assert conn.closed()


@pytest.mark.parametrize("token", [b"n,,n=nobody,r=abc", b"garbage", b"n,,n=carol,r=abc,tokenauth=true"])
def test_scram_failures_tell_the_client_nothing_more(broker, token):
    conn = Conn(port(broker))
    conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="SCRAM-SHA-256"))
    response = conn.ask(ApiKey.SASL_AUTHENTICATE, 2, AU(auth_bytes=token))
    assert (response.error_code, response.error_message) == (
        58, "Authentication failed during authentication due to invalid credentials with SASL mechanism "
            "SCRAM-SHA-256")
    assert conn.closed()


def test_scram_with_the_right_password_completes_and_a_wrong_proof_fails(broker):
    for password, expected in (("carol-secret", 0), ("wrong", 58)):
        conn = Conn(port(broker))
        conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="SCRAM-SHA-256"))
        client = ScramSaslClient(SCRAM_SHA_256, "carol", password)
        first = conn.ask(ApiKey.SASL_AUTHENTICATE, 2, AU(auth_bytes=client.first_message()))
        final = conn.ask(ApiKey.SASL_AUTHENTICATE, 2, AU(auth_bytes=client.final_message(first.auth_bytes)))
        assert final.error_code == expected
        if expected == 0:
            client.verify_server_final(final.auth_bytes)
            assert final.session_lifetime_ms == 3000


def test_handshake_v0_then_raw_tokens(broker):
    conn = Conn(port(broker))
    assert conn.ask(ApiKey.SASL_HANDSHAKE, 0, HS(mechanism="PLAIN")).error_code == 0
    conn.raw(b"\0alice\0alice-secret")
    assert conn.receive() == b""  # PLAIN's empty answer, size-prefixed
    assert conn.ask(ApiKey.METADATA, 1, MD(topics=[])).brokers


def test_requests_before_authentication_close_the_connection(broker):
    conn = Conn(port(broker))
    conn.send(ApiKey.METADATA, 1, MD(topics=[]))
    assert conn.closed()
    conn = Conn(port(broker))  # after the handshake, a second handshake is ILLEGAL_SASL_STATE
    conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="PLAIN"))
    assert conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="PLAIN")).error_code == 34
    assert conn.closed()


@pytest.mark.parametrize("payload", [
    struct.pack(">i", 600000),              # above sasl.server.max.receive.size (524288)
    struct.pack(">i", -5),
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(64),  # a TLS ClientHello
])
def test_hostile_input_closes_only_its_connection(broker, payload):
    conn = Conn(port(broker))
    conn.sock.sendall(payload)
    assert conn.closed()
    assert plain_login(Conn(port(broker))).error_code == 0  # everyone else is served


def test_an_expired_session_is_closed_and_a_reauthentication_extends_it(broker):
    conn = Conn(port(broker))
    plain_login(conn)
    time.sleep(1.2)
    assert conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="PLAIN")).error_code == 0  # re-authentication
    assert conn.ask(ApiKey.SASL_AUTHENTICATE, 2,
                    AU(auth_bytes=b"\0alice\0alice-secret")).session_lifetime_ms == 3000
    time.sleep(2.0)
    assert conn.ask(ApiKey.METADATA, 1, MD(topics=[])).brokers  # 3.2 s after the first login
    time.sleep(1.5)
    conn.send(ApiKey.METADATA, 1, MD(topics=[]))
    assert conn.closed()


def test_reauthentication_may_not_change_the_principal_or_the_mechanism(broker):
    conn = Conn(port(broker))
    plain_login(conn)
    time.sleep(1.1)
    conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="PLAIN"))
    response = conn.ask(ApiKey.SASL_AUTHENTICATE, 2, AU(auth_bytes=b"\0admin\0admin-secret"))
    assert (response.error_code, response.error_message) == (
        58, "Cannot change principals during re-authentication from User.alice: User.admin")
    assert conn.closed()


def test_plaintext_listener_answers_sasl_requests_with_illegal_sasl_state(broker):
    conn = Conn(broker.ports["PLAINTEXT"])
    response = conn.ask(ApiKey.SASL_HANDSHAKE, 1, HS(mechanism="PLAIN"))
    assert (response.error_code, response.mechanisms) == (34, [])


# -- the pieces underneath ---------------------------------------------------------------------

def test_jaas_config_is_parsed_as_kafka_parses_it():
    entry = parse_single_entry(
        'org.apache.kafka.common.security.plain.PlainLoginModule Required user_alice="a;b=c" '
        "user_bob='b o b' username=admin /* comment */ password=\"x\\\"y\" // to the end\n;")
    assert entry.control_flag == "REQUIRED"
    assert entry.options == {"user_alice": "a;b=c", "user_bob": "b o b", "username": "admin", "password": 'x"y'}
    with pytest.raises(JaasConfigError, match="Value not specified for key 's'"):
        parse_jaas_config("M required user_bob='it''s' x=y;")  # two quoted words, as Java's tokenizer reads it
    with pytest.raises(JaasConfigError, match="JAAS config entry not terminated by semi-colon"):
        parse_jaas_config("M required a=b")
    with pytest.raises(JaasConfigError, match="Invalid login module control flag 'must'"):
        parse_jaas_config("M must;")
    with pytest.raises(JaasConfigError, match="Value not specified for key 'a'"):
        parse_jaas_config("M required a;")
    with pytest.raises(JaasConfigError, match="contains 2 login modules, should be 1 module"):
        parse_single_entry("M required; N required;")


def test_rfc_7677_test_vector():
    """RFC 7677 section 3: user, pencil, the client and server nonces and salt given there."""
    credential = ScramCredential.from_password(
        SCRAM_SHA_256, "pencil", 4096, salt=base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ=="))
    server = ScramSaslServer(SCRAM_SHA_256, lambda user: credential if user == "user" else None)
    server_first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO").decode()
    nonce = server_first.split(",")[0][2:]
    client = ScramSaslClient(SCRAM_SHA_256, "user", "pencil")
    client._nonce = "rOprNGfwEbeRWgbNEkqO"
    client.first_message()
    final = client.final_message(server_first.encode())
    server_final = server.evaluate(final)
    client.verify_server_final(server_final)
    assert server.complete and server.authorization_id == "user" and nonce.startswith("rOprNGfwEbeRWgbNEkqO")


def test_user_configs_are_written_as_kafka_writes_them():
    """Bytes Kafka 3.9.0 wrote for user bob (salt "saltsaltsalt", password "bob-secret", SCRAM-SHA-256
    with 4096 iterations and SCRAM-SHA-512 with 8192, through confluent-kafka's AdminClient)."""
    salt = b"saltsaltsalt"
    configs = {}
    for mechanism, iterations in ((SCRAM_SHA_256, 4096), (SCRAM_SHA_512, 8192)):
        salted = mechanism.hi(b"bob-secret", salt, iterations)
        configs[mechanism.mechanism_name] = ScramCredential.from_salted_password(
            mechanism, salt, salted, iterations).to_config()
    assert encode_user_config(configs) == KAFKA_BOB
    assert sanitize("carol@x y") == "carol%40x%20y" and desanitize("carol%40x%20y") == "carol@x y"


KAFKA_BOB = (
    b'{"version":1,"config":{"SCRAM-SHA-512":"salt=c2FsdHNhbHRzYWx0,stored_key=a7nlvmUI/UVhYvKrQeatdSyuYtMHE'
    b'ClZgZGIPR14kFHI9p/hYo6KNYeeE92q9jQ81agQ+Rd9KZ3p4QnsNYfxtw==,server_key=FAlHjxPf3trw2//LQkAko5XMASLAsF3'
    b'v7298NjsJXBi1OQn75T66nDd3P9u4449ovoT+T/GxJo52AXRBEhXZTw==,iterations=8192","SCRAM-SHA-256":"salt=c2Fs'
    b'dHNhbHRzYWx0,stored_key=oZGJ2dtGWREdLSAjTNL/aSmS3++g3zCPnspLv62M2GA=,server_key=lcsnyiRpybTiumld4W2xR'
    b'ovdbbKzBAw92Sr/tjf307M=,iterations=4096"}}'
)
