"""Kafka's command-line tools as `pykbroker` subcommands (`pykbroker topics`, `pykbroker configs`, ...).

Client side only: the tools talk to any Kafka cluster through confluent-kafka and import nothing of
the broker. `client_config` holds what they share: the client's configuration, the common flags and
the errors.
"""
