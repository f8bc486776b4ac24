"""Request handlers: one module per Kafka API, each translating a request into service calls."""
