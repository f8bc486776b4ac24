"""The authorization of the share group APIs and of group configs, as Kafka 4.1's KafkaApis asks
for it: READ on the group and DESCRIBE on the subscribed topics to heartbeat, DESCRIBE on the
group to describe it or its offsets, READ (alter) or DELETE (delete) on the group for its offsets,
DESCRIBE_CONFIGS / ALTER_CONFIGS on the group for its configs. `User:alice` holds only what a
test grants."""

import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.security.acl import AclOperation, ResourceType

from .support import AUTHORIZER, PrincipalBroker, WireAs
from .test_authorization_wire import grant

TOPIC_DENIED = 29
GROUP_DENIED = 30
GROUP = 32  # the GROUP config resource type


def req(api_key, **fields):
    return messages.request(api_key).cls(**fields)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    settings = {
        **AUTHORIZER,
        "super.users": "User:admin",
        "num.partitions": "1",
        "group.coordinator.rebalance.protocols": "classic,consumer,share",
    }
    with PrincipalBroker(tmp_path_factory.mktemp("share-authz"), settings) as running:
        with WireAs(running, "admin") as admin:
            topics = [req(ApiKey.CREATE_TOPICS).CreatableTopic(name="shared", num_partitions=1, replication_factor=1)]
            admin.request(ApiKey.CREATE_TOPICS, 5, req(ApiKey.CREATE_TOPICS, topics=topics, timeout_ms=10000))
            admin.request(ApiKey.FIND_COORDINATOR, 1, req(ApiKey.FIND_COORDINATOR, key="g", key_type=0))
            grant(admin, ResourceType.GROUP, "readable-group", AclOperation.READ)
        yield running


@pytest.fixture
def alice(broker):
    with WireAs(broker, "alice") as client:
        yield client


def heartbeat(client, group):
    return client.request(
        ApiKey.SHARE_GROUP_HEARTBEAT,
        1,
        req(ApiKey.SHARE_GROUP_HEARTBEAT, group_id=group, member_id="m", member_epoch=0, subscribed_topic_names=["shared"]),
    )


def test_heartbeat_needs_read_on_the_group_then_describe_on_the_topics(alice):
    assert heartbeat(alice, "other-group").error_code == GROUP_DENIED
    denied = heartbeat(alice, "readable-group")
    assert (denied.error_code, denied.error_message) == (
        TOPIC_DENIED,
        "The group has subscribed to topics that are not authorized.",
    )


def test_describing_a_share_group_and_its_offsets_needs_describe_on_the_group(alice):
    described = alice.request(
        ApiKey.SHARE_GROUP_DESCRIBE, 1, req(ApiKey.SHARE_GROUP_DESCRIBE, group_ids=["other-group"])
    )
    assert [g.error_code for g in described.groups] == [GROUP_DENIED]
    Group = messages.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS).cls.DescribeShareGroupOffsetsRequestGroup
    offsets = alice.request(
        ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
        0,
        req(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, groups=[Group(group_id="other-group", topics=None)]),
    )
    assert [g.error_code for g in offsets.groups] == [GROUP_DENIED]


def test_altering_and_deleting_share_group_offsets_need_read_and_delete_on_the_group(alice):
    altered = alice.request(
        ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, req(ApiKey.ALTER_SHARE_GROUP_OFFSETS, group_id="other-group", topics=[])
    )
    assert altered.error_code == GROUP_DENIED
    deleted = alice.request(
        ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, req(ApiKey.DELETE_SHARE_GROUP_OFFSETS, group_id="readable-group", topics=[])
    )
    assert deleted.error_code == GROUP_DENIED


def test_group_configs_need_describe_configs_and_alter_configs_on_the_group(alice):
    Resource = messages.request(ApiKey.DESCRIBE_CONFIGS).cls.DescribeConfigsResource
    described = alice.request(
        ApiKey.DESCRIBE_CONFIGS,
        4,
        req(ApiKey.DESCRIBE_CONFIGS, resources=[Resource(resource_type=GROUP, resource_name="g", configuration_keys=None)]),
    )
    assert [r.error_code for r in described.results] == [GROUP_DENIED]
    Alter = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls.AlterConfigsResource
    Config = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls.AlterableConfig
    altered = alice.request(
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        1,
        req(
            ApiKey.INCREMENTAL_ALTER_CONFIGS,
            resources=[
                Alter(
                    resource_type=GROUP,
                    resource_name="g",
                    configs=[Config(name="share.auto.offset.reset", config_operation=0, value="earliest")],
                )
            ],
            validate_only=False,
        ),
    )
    assert [r.error_code for r in altered.responses] == [GROUP_DENIED]
