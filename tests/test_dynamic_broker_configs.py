"""Dynamic broker configs (AlterConfigs on a BROKER resource) take effect without a restart."""
from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig


def open_broker(tmp_path) -> Broker:
    broker = Broker(BrokerConfig({"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0"}))
    broker.open()
    return broker


def test_a_dynamic_log_default_reaches_existing_and_new_logs(tmp_path):
    broker = open_broker(tmp_path)
    try:
        broker.topic_creator.create("existing", 1, 1)
        broker.metadata.set_broker_configs(broker.broker_id, {"log.retention.ms": "3600000"})
        assert broker.config["log.retention.ms"] == 3600000
        assert broker.replica_manager.partitions[("existing", 0)].log.config.retention_ms == 3600000
        broker.topic_creator.create("created-later", 1, 1)
        assert broker.replica_manager.partitions[("created-later", 0)].log.config.retention_ms == 3600000
    finally:
        broker.close()


def test_a_topic_override_still_wins_over_a_dynamic_broker_default(tmp_path):
    broker = open_broker(tmp_path)
    try:
        broker.topic_creator.create("overridden", 1, 1, {"retention.ms": "1000"})
        broker.metadata.set_broker_configs(None, {"log.retention.ms": "3600000"})
        assert broker.replica_manager.partitions[("overridden", 0)].log.config.retention_ms == 1000
    finally:
        broker.close()


def test_dynamic_configs_are_applied_again_after_a_restart(tmp_path):
    broker = open_broker(tmp_path)
    broker.metadata.set_broker_configs(broker.broker_id, {"log.retention.ms": "3600000"})
    broker.close()
    restarted = open_broker(tmp_path)
    try:
        assert restarted.config["log.retention.ms"] == 3600000
        assert restarted.static_config["log.retention.ms"] is None
    finally:
        restarted.close()
