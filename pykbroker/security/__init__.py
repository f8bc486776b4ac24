"""Kafka's security model: principals, TLS contexts from Kafka's `ssl.*` keys and the mapping of
certificate names to principals, and the ACL authorizer (`authorizer.py`) with its storage. Imports
nothing of `server/` or `handlers/`."""
