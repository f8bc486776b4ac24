"""Test certificates made with `cryptography`: a CA, a broker certificate for 127.0.0.1 and
localhost, client certificates, written as PEM (and PKCS12) files in a directory. The security
tests and the compatibility suite's security scenarios share them.

    pki = Pki(tmp_path)                        # the CA
    broker = pki.issue("broker", "CN=broker,OU=test,O=pykbroker")
    alice = pki.issue("alice", "CN=alice,OU=eng,O=example", hosts=())
    broker.cert_pem, broker.key_pem, pki.ca_pem  # paths
"""
from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

_OIDS = {"CN": NameOID.COMMON_NAME, "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "O": NameOID.ORGANIZATION_NAME,
         "L": NameOID.LOCALITY_NAME, "ST": NameOID.STATE_OR_PROVINCE_NAME, "C": NameOID.COUNTRY_NAME,
         "EMAILADDRESS": NameOID.EMAIL_ADDRESS, "DC": NameOID.DOMAIN_COMPONENT}


def name(dn: str) -> x509.Name:
    """'CN=alice,OU=eng,O=example' (most specific first, as RFC 2253) as an x509 Name."""
    parts = [part.split("=", 1) for part in dn.split(",")]
    return x509.Name([x509.NameAttribute(_OIDS[key.strip().upper()], value) for key, value in reversed(parts)])


@dataclass
class Issued:
    cert_pem: Path
    key_pem: Path
    chain_pem: Path  # the certificate and the CA
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    def pkcs12(self, path: Path, password: str) -> Path:
        path.write_bytes(pkcs12.serialize_key_and_certificates(
            b"key", self.key, self.certificate, None,
            serialization.BestAvailableEncryption(password.encode())))
        return path

    def encrypted_key(self, path: Path, password: str) -> Path:
        path.write_bytes(self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.BestAvailableEncryption(password.encode())))
        return path


class Pki:
    def __init__(self, directory: Path, ca_name: str = "CN=test-ca,O=pykbroker") -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.ca = (x509.CertificateBuilder().subject_name(name(ca_name)).issuer_name(name(ca_name))
                   .public_key(self.ca_key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                content_commitment=False, key_encipherment=False,
                                                data_encipherment=False, key_agreement=False,
                                                encipher_only=False, decipher_only=False), critical=True)
                   .sign(self.ca_key, hashes.SHA256()))
        self.ca_pem = self.directory / "ca.pem"
        self.ca_pem.write_bytes(self.ca.public_bytes(serialization.Encoding.PEM))

    def issue(self, label: str, dn: str, *, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (x509.CertificateBuilder().subject_name(name(dn)).issuer_name(self.ca.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
        if hosts:
            alt_names: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    alt_names.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        certificate = builder.sign(self.ca_key, hashes.SHA256())
        cert_pem = self.directory / f"{label}.pem"
        key_pem = self.directory / f"{label}.key"
        chain_pem = self.directory / f"{label}-chain.pem"
        cert_bytes = certificate.public_bytes(serialization.Encoding.PEM)
        cert_pem.write_bytes(cert_bytes)
        chain_pem.write_bytes(cert_bytes + self.ca.public_bytes(serialization.Encoding.PEM))
        key_pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
        return Issued(cert_pem, key_pem, chain_pem, certificate, key)
