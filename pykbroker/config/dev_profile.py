"""The development profile: the settings of Kafka's example `config/server.properties` for one
node, as one table, and that example file as the package ships it.

Kafka's defaults are made for a cluster of three: `__consumer_offsets` and `__transaction_state`
want three replicas (a single broker cannot create them, so groups and transactions time out)
and a new group's first rebalance waits 3 s for more members. Kafka's example file, and this
profile, lower exactly those for a single node. `pykbroker --dev`, `make run`, the pytest plugin,
`EmbeddedBroker` and `BrokerProcess` start from `DEV_PROFILE`; what the user sets wins over it.

    settings = {**DEV_PROFILE, "log.dirs": str(directory), **user_settings}
    print(example_server_properties())       # `pykbroker --print-config`
"""

from __future__ import annotations

# Kafka's example config/server.properties for a single node, where it differs from the defaults
DEV_PROFILE: dict[str, str] = {
    "listeners": "PLAINTEXT://127.0.0.1:9092",
    "offsets.topic.replication.factor": "1",  # default 3
    "transaction.state.log.replication.factor": "1",  # default 3
    "transaction.state.log.min.isr": "1",  # default 2
    "share.coordinator.state.topic.replication.factor": "1",  # default 3
    "share.coordinator.state.topic.min.isr": "1",  # default 2
    "group.initial.rebalance.delay.ms": "0",  # default 3000
}

# Where `pykbroker --dev` keeps its data unless `--dir` or `log.dirs` says otherwise (relative to
# the working directory, as the example file's `log.dirs`)
DEV_DATA_DIRECTORY = "pykbroker-data"

EXAMPLE_FILE = "server.properties"


def example_server_properties() -> str:
    """The text of the example server.properties shipped in this package (`pykbroker/config/`)."""
    from importlib import resources  # imported here: it costs every start ~15 ms (tempfile, zipfile)

    return resources.files("pykbroker.config").joinpath(EXAMPLE_FILE).read_text(encoding="utf-8")
