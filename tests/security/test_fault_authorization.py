"""With the ACL authorizer, the fault requests need what every broker config change needs:
ALTER_CONFIGS on the cluster to add or remove faults and to move leadership, DESCRIBE_CONFIGS on
the cluster to list them. `User:admin` is a super user; `User:alice` has no ACL.
"""

import json

import pytest

from pykbroker.protocol.api_keys import ApiKey

from .support import AUTHORIZER, PrincipalBroker, WireAs, request_of

CLUSTER_DENIED = 31
BROKER, APPEND, SET = 4, 2, 0
RULE = json.dumps({"api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS"})


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    settings = {**AUTHORIZER, "super.users": "User:admin"}
    with PrincipalBroker(tmp_path_factory.mktemp("fault-authz"), settings) as running:
        yield running


def alter(client: WireAs, key: str, operation: int, value: str) -> int:
    entry = request_of(ApiKey.INCREMENTAL_ALTER_CONFIGS).AlterableConfig(
        name=key, config_operation=operation, value=value
    )
    resource = request_of(ApiKey.INCREMENTAL_ALTER_CONFIGS).AlterConfigsResource(
        resource_type=BROKER, resource_name="0", configs=[entry]
    )
    body = request_of(ApiKey.INCREMENTAL_ALTER_CONFIGS, resources=[resource], validate_only=False)
    return client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).responses[0].error_code


def describe(client: WireAs) -> tuple[int, list]:
    resource = request_of(ApiKey.DESCRIBE_CONFIGS).DescribeConfigsResource(
        resource_type=BROKER, resource_name="0", configuration_keys=["pykbroker.fault.injection"]
    )
    body = request_of(ApiKey.DESCRIBE_CONFIGS, resources=[resource], include_synonyms=False)
    result = client.request(ApiKey.DESCRIBE_CONFIGS, 4, body).results[0]
    return result.error_code, [json.loads(entry.value) for entry in result.configs]


def test_adding_faults_needs_alter_configs_on_the_cluster(broker):
    with WireAs(broker, "alice") as alice, WireAs(broker, "admin") as admin:
        assert alter(alice, "pykbroker.fault.injection", APPEND, RULE) == CLUSTER_DENIED
        assert describe(admin) == (0, [[]])

        assert alter(admin, "pykbroker.fault.injection", APPEND, RULE) == 0
        code, [listed] = describe(admin)
        assert [fault["rule"]["api"] for fault in listed] == ["Heartbeat"]


def test_listing_faults_needs_describe_configs_on_the_cluster(broker):
    with WireAs(broker, "alice") as alice:
        assert describe(alice) == (CLUSTER_DENIED, [])


def test_moving_leadership_needs_alter_configs_on_the_cluster(broker):
    move = json.dumps({"topic": "t", "partition": 0, "leader": 0})
    with WireAs(broker, "alice") as alice:
        assert alter(alice, "pykbroker.partition.leader.move", SET, move) == CLUSTER_DENIED
