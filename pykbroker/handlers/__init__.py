"""Request handlers: one module per Kafka API, each translating a request into calls on the
typed services of `services.py` (`ctx.services`)."""
