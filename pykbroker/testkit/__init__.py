"""The test harness: brokers started for tests, applications and benchmarks, and a plain client.

It imports the broker; nothing of the broker imports it (`tests/test_layering.py`). Importing the
package loads nothing: each module loads what it needs when it is used.

| module | owns |
|---|---|
| `settings.py` | the one set of settings a harness broker starts from: `DEV_PROFILE` on a free port |
| `embedded.py` | `EmbeddedBroker`: a broker on a thread of the caller's process |
| `process.py` | `BrokerProcess`: a broker in a process of its own, the one way a broker is spawned |
| `zookeeper.py` | the system's ZooKeeper, found and run standalone (`ZooKeeperProcess`) |
| `cluster.py` | `BrokerCluster`: a ZooKeeper and N `BrokerProcess`es, started and stopped together |
| `cluster_command.py` | `pykbroker cluster`: a `BrokerCluster` on this machine until Ctrl-C |
| `wire.py` | `WireClient`, a blocking client on the project's codec; `create_topic`, `metadata` |
| `pytest_plugin.py` | the pytest fixtures (`pytest11` entry point `pykbroker`) |
| `ports.py`, `waiting.py` | `free_port()`, `wait_until()` |

`pykbroker.EmbeddedBroker`, `pykbroker.BrokerProcess` and `pykbroker.BrokerCluster` are these
classes, loaded on first use.
"""
