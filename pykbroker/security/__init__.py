"""Kafka's security model: principals, TLS contexts from Kafka's `ssl.*` keys and the mapping of
certificate names to principals, SASL authentication (`sasl/`) with SCRAM credentials, and the ACL
authorizer (`authorizer.py`) with its storage.

Nothing here imports `server/` or `handlers/`: the server drives the per-connection TLS handshake
and SASL authenticator, handlers reach credentials and ACLs through the metadata store.
"""
