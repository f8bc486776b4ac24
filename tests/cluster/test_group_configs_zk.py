"""Group configs in ZooKeeper mode: kept under `/config/groups/<group>` as topics' configs are, and
announced under `/config/changes`, so that every broker describes what one of them altered."""
import time

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient

CLUSTER_OPTIONS = {"size": 2, "overrides": {"group.coordinator.rebalance.protocols": "classic,consumer,share"}}
GROUP = 32
Alter = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls
Describe = messages.request(ApiKey.DESCRIBE_CONFIGS).cls


def described_value(broker, group, key):
    request = Describe(resources=[Describe.DescribeConfigsResource(
        resource_type=GROUP, resource_name=group, configuration_keys=[key])])
    with WireClient(broker.bootstrap) as client:
        [result] = client.request(ApiKey.DESCRIBE_CONFIGS, 4, request).results
    assert result.error_code == 0, result
    return result.configs[0].value


def test_a_group_config_altered_on_one_broker_is_described_by_every_broker(cluster):
    change = Alter(resources=[Alter.AlterConfigsResource(
        resource_type=GROUP, resource_name="zk-group",
        configs=[Alter.AlterableConfig(name="share.auto.offset.reset", config_operation=0, value="earliest")])],
        validate_only=False)
    with WireClient(cluster.brokers[1].bootstrap) as client:
        [result] = client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, change).responses
    assert result.error_code == 0, result
    assert cluster.json_at("/config/groups/zk-group") == {
        "version": 1, "config": {"share.auto.offset.reset": "earliest"}}
    deadline = time.monotonic() + 30
    while described_value(cluster.brokers[2], "zk-group", "share.auto.offset.reset") != "earliest":
        assert time.monotonic() < deadline, "broker 2 never saw the change"
        time.sleep(0.1)
