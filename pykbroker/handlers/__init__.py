"""Request handlers: one module per Kafka API, named after it (`produce.py` serves Produce), each
translating a decoded request into calls on the typed services of `support/services.py`
(`ctx.services`). What the handlers share (the request context, the services, the authorization
table, the registry that lists the API modules) lives in `support/`."""
