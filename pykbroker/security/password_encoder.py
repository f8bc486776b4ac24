"""Kafka's PasswordEncoder: how a ZooKeeper-mode broker keeps sensitive dynamic configs
(`ssl.keystore.password`, `sasl.jaas.config`, ...) in `/config/brokers/<id>`, encrypted with
`password.encoder.secret`.

    encoder = PasswordEncoder("secret")
    stored = encoder.encode("keystore-password")
    # 'keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/CBC/PKCS5Padding,keyLength:128,...'
    encoder.decode(stored)  # 'keystore-password'

PBKDF2 (HMAC-SHA512, `password.encoder.iterations`, `password.encoder.key.length` bits, a random
256-byte salt) derives an AES key; the password's UTF-8 bytes are encrypted with
AES/CBC/PKCS5Padding under a random IV. The stored string lists Kafka's fields as `name:value`
pairs separated by commas, with standard base64 (padded) for the binary ones, in the order Kafka
3.9's EncryptingPasswordEncoder writes them (its HashMap's iteration order), checked against a real
Kafka 3.9.0 broker:

    initializationVector:<b64>,keyLength:128,salt:<b64>,keyFactoryAlgorithm:PBKDF2WithHmacSHA512,
    cipherAlgorithm:AES/CBC/PKCS5Padding,iterations:4096,passwordLength:<n>,encryptedPassword:<b64>

(one line). `passwordLength` is Java's `String.length()`: UTF-16 code units, so a character
outside the Basic Multilingual Plane counts twice.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

DEFAULT_KEY_FACTORY = "PBKDF2WithHmacSHA512"
DEFAULT_CIPHER = "AES/CBC/PKCS5Padding"
_HASHES: dict[str, Callable[[], hashes.HashAlgorithm]] = {
    "PBKDF2WithHmacSHA512": hashes.SHA512,
    "PBKDF2WithHmacSHA256": hashes.SHA256,
    "PBKDF2WithHmacSHA1": hashes.SHA1,
}
_SALT_BYTES = 256
# Kafka's fields in the order its HashMap of them iterates (Java String hashes, 16 buckets).
FIELD_ORDER = (
    "initializationVector",
    "keyLength",
    "salt",
    "keyFactoryAlgorithm",
    "cipherAlgorithm",
    "iterations",
    "passwordLength",
    "encryptedPassword",
)


class PasswordEncoderError(ValueError):
    """A value that cannot be encoded or decoded with these settings (Kafka's ConfigException)."""


class PasswordEncoder:
    def __init__(
        self,
        secret: str,
        key_factory_algorithm: str | None = None,
        cipher_algorithm: str = DEFAULT_CIPHER,
        key_length: int = 128,
        iterations: int = 4096,
    ) -> None:
        self.secret = secret
        self.key_factory_algorithm = key_factory_algorithm or DEFAULT_KEY_FACTORY
        self.cipher_algorithm = cipher_algorithm
        self.key_length = key_length
        self.iterations = iterations
        if self.key_factory_algorithm not in _HASHES:
            raise PasswordEncoderError(f"Unsupported key factory algorithm {self.key_factory_algorithm}")
        if cipher_algorithm != DEFAULT_CIPHER:
            raise PasswordEncoderError(f"Unsupported cipher algorithm {cipher_algorithm}")

    def _key(self, key_factory: str, key_length: int, salt: bytes, iterations: int) -> bytes:
        if key_factory not in _HASHES:
            raise PasswordEncoderError(f"Unsupported key factory algorithm {key_factory}")
        kdf = PBKDF2HMAC(_HASHES[key_factory](), key_length // 8, salt, iterations)
        return kdf.derive(self.secret.encode())

    def encode(self, password: str) -> str:
        salt = os.urandom(_SALT_BYTES)
        iv = os.urandom(16)
        key = self._key(self.key_factory_algorithm, self.key_length, salt, self.iterations)
        padder = padding.PKCS7(128).padder()
        data = padder.update(password.encode()) + padder.finalize()
        encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        encrypted = encryptor.update(data) + encryptor.finalize()
        fields = {
            "keyFactoryAlgorithm": self.key_factory_algorithm,
            "cipherAlgorithm": self.cipher_algorithm,
            "keyLength": str(self.key_length),
            "salt": _b64(salt),
            "iterations": str(self.iterations),
            "encryptedPassword": _b64(encrypted),
            "passwordLength": str(java_length(password)),
            "initializationVector": _b64(iv),
        }
        return ",".join(f"{name}:{fields[name]}" for name in FIELD_ORDER)

    def decode(self, encoded: str) -> str:
        try:
            fields = parse_csv_map(encoded)
            if fields["cipherAlgorithm"] != DEFAULT_CIPHER:
                raise PasswordEncoderError(f"Unsupported cipher algorithm {fields['cipherAlgorithm']}")
            key = self._key(
                fields["keyFactoryAlgorithm"],
                int(fields["keyLength"]),
                base64.b64decode(fields["salt"]),
                int(fields["iterations"]),
            )
            decryptor = Cipher(
                algorithms.AES(key), modes.CBC(base64.b64decode(fields["initializationVector"]))
            ).decryptor()
            data = decryptor.update(base64.b64decode(fields["encryptedPassword"])) + decryptor.finalize()
            unpadder = padding.PKCS7(128).unpadder()
            password = (unpadder.update(data) + unpadder.finalize()).decode()
        except (KeyError, ValueError, TypeError) as exc:
            raise PasswordEncoderError(f"Password could not be decoded: {exc}") from None
        if java_length(password) != int(fields["passwordLength"]):
            raise PasswordEncoderError("Password could not be decoded")
        return password


def parse_csv_map(text: str) -> dict[str, str]:
    """Kafka's Csv.parseCsvMap: `k:v` pairs split at commas (whitespace around them ignored), each
    at its last colon, key and value trimmed."""
    fields = {}
    for part in re.split(r"\s*,\s*", text):
        name, colon, value = part.rpartition(":")
        if not colon:
            raise ValueError(f"no ':' in {part!r}")
        fields[name.strip()] = value.strip()
    return fields


def java_length(text: str) -> int:
    """Java's String.length(): UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
