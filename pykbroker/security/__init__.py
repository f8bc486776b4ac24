"""Security: principals, SASL authentication (`sasl/`), SCRAM credentials.

Nothing here imports `server/` or `handlers/`: the server drives the per-connection
authenticator, handlers reach credentials through the metadata store.
"""
