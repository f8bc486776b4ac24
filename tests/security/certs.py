"""The test PKI: `compat/certs.py`, which the compatibility suite's security scenarios share."""

from compat.certs import Issued, Pki, name

__all__ = ["Issued", "Pki", "name"]
