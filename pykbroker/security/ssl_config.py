"""TLS contexts from Kafka's `ssl.*` keys, per listener, with Python's `ssl`.

    server = ServerSsl.for_listener(config, "SSL")        # the listener's server side
    server.context                                         # an ssl.SSLContext (server side)
    server.principal(der_certificate)                      # KafkaPrincipal of a client cert
    context = client_ssl_context(config, "SSL")            # what this broker dials other brokers with

Every key is read as Kafka's `valuesWithPrefixOverride` reads it: `listener.name.<listener in
lower case>.ssl.X` wins over `ssl.X`. Key stores: PEM (`ssl.keystore.type=PEM` with
`ssl.keystore.certificate.chain` + `ssl.keystore.key` inline, or one file at
`ssl.keystore.location`; an encrypted key needs `ssl.key.password`) and PKCS12 (read through
`cryptography`; `ssl.keystore.password`). A JKS file is refused: no maintained Python library
reads it. Trust stores alike (`ssl.truststore.certificates`, `ssl.truststore.location`); without
one the system's CAs are trusted, as Java trusts its cacerts. Anything that cannot be honoured —
a key store that cannot be read, a wrong password, a key that does not belong to its
certificate, an unknown protocol or cipher suite — raises `ConfigError` naming the key: the
broker stops at start.
"""

from __future__ import annotations

import os
import re
import secrets
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from ..config.definitions import BROKER_CONFIGS
from ..config.types import ConfigError
from .principal import ANONYMOUS, KafkaPrincipal
from .ssl_principal import SslPrincipalMapper, principal_of_certificate

# Every `ssl.*` setting of a listener (the broker's definitions are their one home); the two
# `ssl.allow.*` keys only decide whether a reconfigured keystore may change the broker's names.
_RECONFIGURATION_KEYS = tuple(key for key in BROKER_CONFIGS if key.startswith("ssl."))
SSL_KEYS = tuple(key for key in _RECONFIGURATION_KEYS if not key.startswith("ssl.allow."))

_PROTOCOLS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_CONTEXT_PROTOCOLS = {"TLS": ssl.TLSVersion.TLSv1_3, "SSL": ssl.TLSVersion.TLSv1_3, **_PROTOCOLS}
_KEY_MANAGER_ALGORITHMS = ("SunX509", "NewSunX509", "PKIX")
_TRUST_MANAGER_ALGORITHMS = ("PKIX", "SunX509", "SunPKIX")
_JKS_MAGIC = (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce")  # JKS, JCEKS
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)

# Java's (IANA) cipher suite names -> OpenSSL's, for `ssl.cipher.suites` (TLS 1.2 and below)
_TLS12_CIPHERS = {
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384": "DHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "DHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8": "ECDHE-ECDSA-AES256-CCM8",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CCM": "ECDHE-ECDSA-AES256-CCM",
    "TLS_DHE_RSA_WITH_AES_256_CCM_8": "DHE-RSA-AES256-CCM8",
    "TLS_DHE_RSA_WITH_AES_256_CCM": "DHE-RSA-AES256-CCM",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "DHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8": "ECDHE-ECDSA-AES128-CCM8",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CCM": "ECDHE-ECDSA-AES128-CCM",
    "TLS_DHE_RSA_WITH_AES_128_CCM_8": "DHE-RSA-AES128-CCM8",
    "TLS_DHE_RSA_WITH_AES_128_CCM": "DHE-RSA-AES128-CCM",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256": "DHE-RSA-AES256-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256": "DHE-RSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA": "DHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA": "DHE-RSA-AES128-SHA",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA256": "AES256-SHA256",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
}
# OpenSSL enables all three TLS 1.3 suites and Python cannot choose among them
_TLS13_CIPHERS = frozenset({"TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"})


class ListenerSslConfig:
    """The effective `ssl.*` values of one listener: `listener.name.<l>.ssl.X` over `ssl.X`."""

    def __init__(self, config: Any, listener_name: str) -> None:
        self.listener = listener_name.upper()
        self.prefix = f"listener.name.{listener_name.lower()}."
        self._config = config

    def key(self, key: str) -> str:
        """The key a value came from (prefixed when the listener overrides it), for messages."""
        return self.prefix + key if self._config.raw(self.prefix + key) is not None else key

    def __getitem__(self, key: str) -> Any:
        raw = self._config.raw(self.prefix + key)
        if raw is None:
            return self._config[key]
        definition = BROKER_CONFIGS[key]
        try:
            return definition.parse(raw)
        except ConfigError as exc:
            raise ConfigError(self.prefix + key, str(exc).replace(key, self.prefix + key)) from None


@dataclass
class ServerSsl:
    """A TLS listener's server side: its context and how it names a client's certificate."""

    listener: str
    context: ssl.SSLContext
    client_auth: str
    mapper: SslPrincipalMapper
    certificate: x509.Certificate | None = None  # the key store's own (leaf) certificate
    has_truststore: bool = False
    fingerprint: tuple = ()  # what the context was built from (see `ssl_fingerprint`)
    # as Kafka's SslFactory, the listener keeps the values it started with
    allow_dn_changes: bool = False
    allow_san_changes: bool = False

    @classmethod
    def for_listener(cls, config: Any, listener_name: str) -> ServerSsl:
        try:
            return cls._for_listener(config, listener_name)
        except ConfigError as exc:
            raise _naming_the_key(exc, listener_name, "listener") from None

    @classmethod
    def _for_listener(cls, config: Any, listener_name: str) -> ServerSsl:
        values = ListenerSslConfig(config, listener_name)
        _refuse_unserved(values)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        _apply_protocols_and_ciphers(context, values)
        keystore = _load_keystore(values)
        if keystore is None:
            raise ConfigError(
                values.key("ssl.keystore.location"),
                f"Listener {values.listener} uses SSL but has no key store: set ssl.keystore.location "
                "(or ssl.keystore.type=PEM with ssl.keystore.certificate.chain and ssl.keystore.key)",
            )
        _load_cert_chain(context, keystore, values)
        client_auth = values["ssl.client.auth"] or "none"
        if client_auth not in ("none", "requested", "required"):
            raise ConfigError(values.key("ssl.client.auth"), f"Invalid value {client_auth} for ssl.client.auth")
        if client_auth != "none":
            _load_truststore(context, values)
            context.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
        rules = values["ssl.principal.mapping.rules"]
        try:
            mapper = SslPrincipalMapper.from_rules(rules)
        except ValueError as exc:
            raise ConfigError(values.key("ssl.principal.mapping.rules"), str(exc)) from None
        return cls(
            values.listener,
            context,
            client_auth,
            mapper,
            keystore.chain[0] if keystore.chain else None,
            _has_truststore(values),
            ssl_fingerprint(config, listener_name),
            bool(values["ssl.allow.dn.changes"]),
            bool(values["ssl.allow.san.changes"]),
        )

    def principal(self, der_certificate: bytes | None) -> KafkaPrincipal:
        """`User:<mapped DN>` of the client's certificate, ANONYMOUS without one. Raises
        NoMatchingRule (or ValueError for a replacement Java would refuse) as Kafka fails."""
        return principal_of_certificate(der_certificate, self.mapper) or ANONYMOUS


def client_ssl_context(config: Any, listener_name: str) -> ssl.SSLContext:
    """The context this broker connects to other brokers' `listener_name` with (inter-broker):
    the same keys, the broker's key store as client certificate, hostname verification per
    `ssl.endpoint.identification.algorithm` (https: on, empty: off)."""
    try:
        return _client_ssl_context(config, listener_name)
    except ConfigError as exc:
        raise _naming_the_key(exc, listener_name, "inter-broker listener") from None


def _naming_the_key(exc: ConfigError, listener_name: str, role: str) -> ConfigError:
    """The error as one line that names its key and the listener."""
    message = str(exc)
    if exc.key not in message:
        message = f"{exc.key}: {message}"
    return ConfigError(exc.key, f"{message} ({role} {listener_name.upper()})")


def _client_ssl_context(config: Any, listener_name: str) -> ssl.SSLContext:
    values = ListenerSslConfig(config, listener_name)
    _refuse_unserved(values)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _apply_protocols_and_ciphers(context, values)
    keystore = _load_keystore(values)
    if keystore is not None:
        _load_cert_chain(context, keystore, values)
    _load_truststore(context, values)
    algorithm = values["ssl.endpoint.identification.algorithm"]
    if algorithm and algorithm.lower() != "https":
        raise ConfigError(
            values.key("ssl.endpoint.identification.algorithm"),
            f"ssl.endpoint.identification.algorithm={algorithm} is not served (only https, or empty for none)",
        )
    context.check_hostname = bool(algorithm)
    context.verify_mode = ssl.CERT_REQUIRED
    return context


# -- settings -----------------------------------------------------------------------------------


def _refuse_unserved(values: ListenerSslConfig) -> None:
    for key in ("ssl.provider", "ssl.engine.factory.class"):
        if values[key]:
            raise ConfigError(values.key(key), f"{key}={values[key]} is not served by this broker (Python's ssl)")
    if values["ssl.keymanager.algorithm"] not in (None, *_KEY_MANAGER_ALGORITHMS):
        key = "ssl.keymanager.algorithm"
        raise ConfigError(values.key(key), f"{key}={values[key]} is not served by this broker")
    if values["ssl.trustmanager.algorithm"] not in (None, *_TRUST_MANAGER_ALGORITHMS):
        key = "ssl.trustmanager.algorithm"
        raise ConfigError(values.key(key), f"{key}={values[key]} is not served by this broker")


def _apply_protocols_and_ciphers(context: ssl.SSLContext, values: ListenerSslConfig) -> None:
    protocol = values["ssl.protocol"] or "TLSv1.3"
    if protocol not in _CONTEXT_PROTOCOLS:
        raise ConfigError(values.key("ssl.protocol"), f"Unsupported ssl.protocol {protocol}")
    enabled = values["ssl.enabled.protocols"] or ["TLSv1.2", "TLSv1.3"]
    unknown = [name for name in enabled if name not in _PROTOCOLS]
    if unknown:
        raise ConfigError(
            values.key("ssl.enabled.protocols"),
            f"Unsupported protocol(s) {', '.join(unknown)} in ssl.enabled.protocols (known: {', '.join(_PROTOCOLS)})",
        )
    versions = sorted(_PROTOCOLS[name] for name in enabled)
    highest = min(versions[-1], _CONTEXT_PROTOCOLS[protocol])
    suites = values["ssl.cipher.suites"] or []
    if suites:
        unknown = [s for s in suites if s not in _TLS12_CIPHERS and s not in _TLS13_CIPHERS]
        if unknown:
            raise ConfigError(values.key("ssl.cipher.suites"), f"Unsupported cipher suite(s) {', '.join(unknown)}")
        tls13 = {s for s in suites if s in _TLS13_CIPHERS}
        if tls13 and tls13 != _TLS13_CIPHERS:
            raise ConfigError(
                values.key("ssl.cipher.suites"),
                "ssl.cipher.suites may list all of the TLS 1.3 suites or none of them, not "
                f"{', '.join(sorted(tls13))} alone (OpenSSL's TLS 1.3 suites are not configurable here)",
            )
        if not tls13:  # as Java: without a TLS 1.3 suite, TLS 1.3 cannot be negotiated
            highest = min(highest, ssl.TLSVersion.TLSv1_2)
        tls12 = [_TLS12_CIPHERS[s] for s in suites if s in _TLS12_CIPHERS]
        if tls12:
            context.set_ciphers(":".join(tls12))
        elif highest < ssl.TLSVersion.TLSv1_3:
            raise ConfigError(values.key("ssl.cipher.suites"), "No cipher suite enabled for TLS 1.2")
    if highest < versions[0]:
        raise ConfigError(
            values.key("ssl.enabled.protocols"), f"No protocol of ssl.enabled.protocols is possible with {protocol}"
        )
    try:
        context.minimum_version = versions[0]
        context.maximum_version = highest
    except (ValueError, ssl.SSLError) as exc:
        raise ConfigError(values.key("ssl.enabled.protocols"), f"ssl.enabled.protocols: {exc}") from None


# -- key and trust stores -----------------------------------------------------------------------


@dataclass
class _KeyStore:
    key: Any
    chain: list[x509.Certificate]


def _password(value: Any) -> bytes | None:
    return None if value is None else str(value).encode()


def _load_keystore(values: ListenerSslConfig) -> _KeyStore | None:
    """Kafka's `createKeystore` checks, then the store itself."""
    store_type = (values["ssl.keystore.type"] or "JKS").upper()
    location = values["ssl.keystore.location"]
    password = values["ssl.keystore.password"]
    key_password = values["ssl.key.password"]
    inline_key = values["ssl.keystore.key"]
    inline_chain = values["ssl.keystore.certificate.chain"]
    key_name = values.key("ssl.keystore.key")
    if inline_key is not None:
        if store_type != "PEM":
            raise ConfigError(
                key_name, f"SSL private key can be specified only for PEM, but key store type is {store_type}."
            )
        if inline_chain is None:
            raise ConfigError(key_name, "SSL private key is specified, but certificate chain is not specified.")
        if location is not None:
            raise ConfigError(key_name, "Both SSL key store location and separate private key are specified.")
        if password is not None:
            raise ConfigError(
                values.key("ssl.keystore.password"),
                "SSL key store password cannot be specified with PEM format, only key password may be specified.",
            )
        chain = _pem_certificates(inline_chain, values.key("ssl.keystore.certificate.chain"))
        return _KeyStore(_pem_private_key(inline_key, key_password, key_name, values), chain)
    if inline_chain is not None:
        raise ConfigError(
            values.key("ssl.keystore.certificate.chain"),
            "SSL certificate chain is specified, but private key is not specified",
        )
    location_key = values.key("ssl.keystore.location")
    if store_type == "PEM" and location is not None:
        if password is not None:
            raise ConfigError(
                values.key("ssl.keystore.password"),
                "SSL key store password cannot be specified with PEM format, only key password may be specified",
            )
        text = _read_text(location, location_key, "key store")
        return _KeyStore(
            _pem_private_key(text, key_password, location_key, values), _pem_certificates(text, location_key)
        )
    if location is None and password is not None:
        raise ConfigError(
            values.key("ssl.keystore.password"), "SSL key store is not specified, but key store password is specified."
        )
    if location is not None and password is None:
        raise ConfigError(location_key, "SSL key store is specified, but key store password is not specified.")
    if location is None:
        return None
    data = _read_bytes(location, location_key, "key store")
    _check_store_type(store_type, data, location, location_key, "ssl.keystore.type")
    try:
        key, certificate, extra = pkcs12.load_key_and_certificates(data, _password(password))
    except ValueError as exc:
        raise ConfigError(
            location_key,
            f"Failed to load SSL keystore {location} of type {store_type} ({location_key}): "
            f"wrong ssl.keystore.password or not a PKCS12 file ({exc})",
        ) from None
    if key is None or certificate is None:
        raise ConfigError(
            location_key, f"SSL key store {location} ({location_key}) holds no private key with its certificate"
        )
    return _KeyStore(key, [certificate, *extra])


def _check_store_type(store_type: str, data: bytes, location: str, key: str, type_key: str) -> None:
    if data[:4] in _JKS_MAGIC:
        raise ConfigError(
            key,
            f"{location} ({key}) is a Java key store (JKS/JCEKS), which this broker cannot read (no maintained "
            "Python library does): convert it with `keytool -importkeystore -deststoretype PKCS12` or use PEM",
        )
    if store_type not in ("JKS", "PKCS12"):
        raise ConfigError(type_key, f"Unsupported {type_key} {store_type} (PKCS12, PEM)")


def _load_truststore(context: ssl.SSLContext, values: ListenerSslConfig) -> None:
    """Kafka's `createTruststore` checks; without a trust store the system's CAs are trusted."""
    store_type = (values["ssl.truststore.type"] or "JKS").upper()
    location = values["ssl.truststore.location"]
    password = values["ssl.truststore.password"]
    inline = values["ssl.truststore.certificates"]
    location_key = values.key("ssl.truststore.location")
    certificates: list[x509.Certificate]
    if inline is not None:
        inline_key = values.key("ssl.truststore.certificates")
        if store_type != "PEM":
            raise ConfigError(
                inline_key,
                f"SSL trust store certs can be specified only for PEM, but trust store type is {store_type}.",
            )
        if location is not None:
            raise ConfigError(
                inline_key, "Both SSL trust store location and separate trust certificates are specified."
            )
        if password is not None:
            raise ConfigError(
                values.key("ssl.truststore.password"), "SSL trust store password cannot be specified for PEM format."
            )
        certificates = _pem_certificates(inline, inline_key)
    elif store_type == "PEM" and location is not None:
        if password is not None:
            raise ConfigError(
                values.key("ssl.truststore.password"), "SSL trust store password cannot be specified for PEM format."
            )
        certificates = _pem_certificates(_read_text(location, location_key, "trust store"), location_key)
    elif location is None and password is not None:
        raise ConfigError(
            values.key("ssl.truststore.password"),
            "SSL trust store is not specified, but trust store password is specified.",
        )
    elif location is not None:
        data = _read_bytes(location, location_key, "trust store")
        _check_store_type(store_type, data, location, location_key, "ssl.truststore.type")
        try:
            loaded = pkcs12.load_pkcs12(data, _password(password))
        except ValueError as exc:
            raise ConfigError(
                location_key,
                f"Failed to load SSL truststore {location} of type {store_type} ({location_key}): "
                f"wrong ssl.truststore.password or not a PKCS12 file ({exc})",
            ) from None
        certificates = [c.certificate for c in ([loaded.cert] if loaded.cert else []) + list(loaded.additional_certs)]
        if not certificates:
            raise ConfigError(location_key, f"SSL trust store {location} ({location_key}) holds no certificate")
    else:
        context.load_default_certs()
        return
    pem = "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certificates)
    context.load_verify_locations(cadata=pem)


def _load_cert_chain(context: ssl.SSLContext, keystore: _KeyStore, values: ListenerSslConfig) -> None:
    """Into the context through a private temporary file, the key encrypted with a one-time
    password (Python's ssl reads key stores from files only)."""
    one_time = secrets.token_hex(16)
    key_pem = keystore.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time.encode()),
    )
    chain_pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in keystore.chain)
    descriptor, path = tempfile.mkstemp(prefix="pykbroker-keystore-", suffix=".pem")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(chain_pem + key_pem)
        context.load_cert_chain(path, password=one_time)
    except ssl.SSLError as exc:
        key = values.key("ssl.keystore.location") if values["ssl.keystore.location"] else values.key("ssl.keystore.key")
        raise ConfigError(
            key, f"The private key of {key} does not belong to its certificate ({exc.reason or exc})"
        ) from None
    finally:
        os.unlink(path)


def _read_bytes(location: str, key: str, what: str) -> bytes:
    try:
        with open(location, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigError(key, f"Cannot read the SSL {what} {location} ({key}): {exc.strerror or exc}") from None


def _read_text(location: str, key: str, what: str) -> str:
    return _read_bytes(location, key, what).decode("utf-8", errors="replace")


def _pem_blocks(text: str, kinds: tuple[str, ...]) -> list[bytes]:
    """PEM blocks of these kinds, re-wrapped: a value from a properties file may have lost its
    line breaks (continuation lines), which Kafka's PEM reader tolerates too."""
    blocks = []
    for kind, body in _PEM_BLOCK.findall(str(text)):
        if kind in kinds:
            base64 = re.sub(r"\s+", "", body)
            if ":" in body:  # traditional encrypted PEM headers: keep the body's own lines
                blocks.append(f"-----BEGIN {kind}-----{body}-----END {kind}-----\n".encode())
                continue
            lines = "\n".join(base64[i : i + 64] for i in range(0, len(base64), 64))
            blocks.append(f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----\n".encode())
    return blocks


def _pem_certificates(text: Any, key: str) -> list[x509.Certificate]:
    blocks = _pem_blocks(str(text), ("CERTIFICATE",))
    if not blocks:
        raise ConfigError(key, f"No certificate found in {key} (PEM, -----BEGIN CERTIFICATE-----)")
    try:
        return [x509.load_pem_x509_certificate(block) for block in blocks]
    except ValueError as exc:
        raise ConfigError(key, f"Invalid certificate in {key}: {exc}") from None


def _pem_private_key(text: Any, key_password: Any, key: str, values: ListenerSslConfig) -> Any:
    kinds = ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY")
    blocks = _pem_blocks(str(text), kinds)
    if len(blocks) != 1:
        raise ConfigError(key, f"Expected one private key in {key} (PEM), found {len(blocks)}")
    try:
        return serialization.load_pem_private_key(blocks[0], _password(key_password))
    except TypeError as exc:  # a password for a key without one, or none for an encrypted key
        raise ConfigError(values.key("ssl.key.password"), f"Private key of {key}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(
            values.key("ssl.key.password"),
            f"Cannot decrypt or read the private key of {key}: wrong ssl.key.password? ({exc})",
        ) from None


# --------------------------------------------------------------------------------------------
# Reconfiguration (Kafka's SslFactory.validateReconfiguration), for dynamic broker configs

_STORE_FILES = ("ssl.keystore.location", "ssl.truststore.location")


def ssl_fingerprint(config: Any, listener_name: str) -> tuple:
    """The listener's effective `ssl.*` values and the modification times of its store files:
    a listener whose fingerprint changed needs a new context (Kafka's `shouldBeRebuilt`)."""
    values = ListenerSslConfig(config, listener_name)
    settings = tuple(str(values[key]) for key in _RECONFIGURATION_KEYS)
    return settings + tuple(_modified(values[key]) for key in _STORE_FILES)


def _modified(location: Any) -> float | None:
    try:
        return os.stat(str(location)).st_mtime_ns if location else None
    except OSError:
        return None


def _has_truststore(values: ListenerSslConfig) -> bool:
    return values["ssl.truststore.location"] is not None or values["ssl.truststore.certificates"] is not None


def reconfigured_server_ssl(current: ServerSsl, config: Any, listener_name: str) -> ServerSsl:
    """The listener's server side under `config`, checked as Kafka's SslFactory checks a new
    key store before it takes it: it must load, a listener without a trust store gets none, and
    the certificate keeps its distinguished name (unless `ssl.allow.dn.changes`) and every
    subject alternative name (unless `ssl.allow.san.changes`; both as the listener started, as
    Kafka's SslFactory reads them once). ConfigError otherwise."""
    new = ServerSsl.for_listener(config, listener_name)
    values = ListenerSslConfig(config, listener_name)
    if not current.has_truststore and new.has_truststore:
        raise ConfigError(
            values.key("ssl.truststore.location"),
            "Cannot add SSL truststore to an existing listener for which no truststore was configured.",
        )
    if current.certificate is not None and new.certificate is not None:
        _ensure_compatible(current, new.certificate, values)
    new.allow_dn_changes, new.allow_san_changes = current.allow_dn_changes, current.allow_san_changes
    return new


def _ensure_compatible(current: ServerSsl, new: x509.Certificate, values: ListenerSslConfig) -> None:
    old = current.certificate
    assert old is not None
    key = values.key("ssl.keystore.location")
    if not current.allow_dn_changes:
        old_dn, new_dn = old.subject.rfc4514_string(), new.subject.rfc4514_string()
        if old.subject != new.subject and old_dn.lower() != new_dn.lower():
            raise ConfigError(
                key,
                "Keystore DistinguishedName does not match:  "
                f"existing={{alias=kafka, DN={old_dn}}}, new={{alias=kafka, DN={new_dn}}}",
            )
    if not current.allow_san_changes:
        old_sans, new_sans = _subject_alt_names(old), _subject_alt_names(new)
        if not old_sans <= new_sans:
            raise ConfigError(
                key,
                "Keystore SubjectAltNames do not match:  "
                f"existing={{alias=kafka, SAN={sorted(old_sans)}}}, new={{alias=kafka, SAN={sorted(new_sans)}}}",
            )


def _subject_alt_names(certificate: x509.Certificate) -> set[str]:
    try:
        extension = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return set()
    return {f"{type(name).__name__}:{name.value}" for name in extension.value}
