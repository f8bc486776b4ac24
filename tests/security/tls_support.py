"""What the TLS tests share: a PKI, a broker's ssl.* overrides, the ports of its listeners."""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from pykbroker.testkit.process import BrokerProcess

from .certs import Issued, Pki

DEBUG_COMMAND = [sys.executable, "-m", "pykbroker", "--log-level", "DEBUG"]
PRINCIPAL = re.compile(r"TLS connection from \S+ on listener (\S+) \(([^,]+), [^)]+\): principal (.+?) \(pykbroker")


def pem_keystore(issued: Issued, path: Path) -> Path:
    """One PEM file with the certificate chain and the (unencrypted PKCS#8) key, as
    `ssl.keystore.type=PEM` reads `ssl.keystore.location`."""
    path.write_bytes(issued.chain_pem.read_bytes() + issued.key_pem.read_bytes())
    return path


def ssl_overrides(pki: Pki, broker_cert: Issued, client_auth: str = "none", *, prefix: str = "") -> dict[str, str]:
    store = pem_keystore(broker_cert, pki.directory / f"{broker_cert.cert_pem.stem}-store.pem")
    return {
        f"{prefix}ssl.keystore.type": "PEM",
        f"{prefix}ssl.keystore.location": str(store),
        f"{prefix}ssl.truststore.type": "PEM",
        f"{prefix}ssl.truststore.location": str(pki.ca_pem),
        f"{prefix}ssl.client.auth": client_auth,
    }


def listener_ports(broker: BrokerProcess, timeout: float = 30.0) -> dict[str, int]:
    """{listener name: port} from the broker's 'pykbroker started: listening on' lines, once there
    is one for every listener it was given (the broker writes them one after another)."""
    expected = set(re.findall(r"(\w+)://", str(broker.overrides.get("listeners", ""))))
    deadline = time.monotonic() + timeout
    while True:
        ports = {name: int(port) for name, port in
                 re.findall(r"pykbroker started: listening on (\w+)://[\d.]+:(\d+)", broker.run_log_text())}
        if expected <= set(ports) or time.monotonic() > deadline:
            return ports
        time.sleep(0.02)


def principals(broker: BrokerProcess, listener: str = "SSL") -> list[str]:
    """The principals of the TLS connections the broker accepted on `listener` (DEBUG log)."""
    return [m.group(3) for m in PRINCIPAL.finditer(broker.log_text()) if m.group(1) == listener]


def wait_for_log(broker: BrokerProcess, text: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in broker.log_text().splitlines():
            if text in line:
                return line
        time.sleep(0.05)
    raise AssertionError(f"no log line with {text!r}:\n" + "\n".join(broker.log_text().splitlines()[-20:]))
