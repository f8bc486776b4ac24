"""Security: principals, TLS contexts from Kafka's `ssl.*` keys, the mapping of certificate
names to principals. Imports nothing of `server/` or `handlers/`."""
