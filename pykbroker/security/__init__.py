"""Kafka's security model: principals, and the ACL authorizer (`authorizer.py`) with its storage."""
