"""ACLs in a cluster are stored in ZooKeeper exactly as Kafka 3.9's AclAuthorizer stores them (the
znodes below were compared with a real Kafka 3.9.0 broker's), and every broker follows the change
notifications: an ACL made through one broker is enforced by the others.

The brokers run as processes, so every client is `User:ANONYMOUS`; with
`allow.everyone.if.no.acl.found=true` it may administer ACLs (the cluster resource has none) and
the brokers replicate to each other, while a DENY on a topic takes effect for it. Once the
cluster resource has an ACL, ANONYMOUS needs one of its own there (as the brokers' principal).
"""
import json

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode

CLUSTER_OPTIONS = {"overrides": {
    "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
    "allow.everyone.if.no.acl.found": "true",
}}
TYPES = ["Cluster", "DelegationToken", "Group", "Topic", "TransactionalId", "User"]


def req(api_key, **fields):
    return messages.request(api_key).cls(**fields)


def creation(name, *, resource_type=2, pattern=3, principal="User:alice", operation=3, permission=3, host="*"):
    return req(ApiKey.CREATE_ACLS).AclCreation(
        resource_type=resource_type, resource_name=name, resource_pattern_type=pattern, principal=principal,
        host=host, operation=operation, permission_type=permission)


def create(cluster, broker_id, *creations):
    with cluster.wire(broker_id) as client:
        answer = client.request(ApiKey.CREATE_ACLS, 3, req(ApiKey.CREATE_ACLS, creations=list(creations)))
    assert [r.error_code for r in answer.results] == [0] * len(creations), answer


def describe(cluster, broker_id, name):
    with cluster.wire(broker_id) as client:
        answer = client.request(ApiKey.DESCRIBE_ACLS, 3, req(
            ApiKey.DESCRIBE_ACLS, resource_type_filter=1, resource_name_filter=name, pattern_type_filter=1,
            principal_filter=None, host_filter=None, operation=1, permission_type=1))
    return {(r.resource_type, r.pattern_type, a.principal, a.operation, a.permission_type)
            for r in answer.resources for a in r.acls}


def test_the_authorizer_creates_kafkas_paths(all_running):
    zk = all_running.zk
    assert sorted(zk.get_children("/kafka-acl")) == TYPES
    assert sorted(zk.get_children("/kafka-acl-extended/prefixed")) == TYPES
    assert zk.exists("/kafka-acl-changes") and zk.exists("/kafka-acl-extended-changes")


def test_acls_are_stored_in_kafkas_layout(all_running):
    cluster, zk = all_running, all_running.zk
    literal_before = set(zk.get_children("/kafka-acl-changes"))
    extended_before = set(zk.get_children("/kafka-acl-extended-changes"))
    create(cluster, 1,
           creation("t1"),
           creation("t1", principal="User:bob", host="10.0.0.1", operation=2, permission=2),
           creation("kafka-cluster", resource_type=4, operation=12),
           # once the cluster has an ACL, the brokers (ANONYMOUS here) need their own
           creation("kafka-cluster", resource_type=4, principal="User:ANONYMOUS", operation=2),
           creation("pre-", pattern=4, operation=4),
           creation("tx", resource_type=5, pattern=4, principal="User:*", operation=4))
    topic = json.loads(zk.get("/kafka-acl/Topic/t1")[0])
    assert topic["version"] == 1
    assert sorted(topic["acls"], key=lambda a: a["principal"]) == [
        {"principal": "User:alice", "permissionType": "Allow", "host": "*", "operation": "Read"},
        {"principal": "User:bob", "permissionType": "Deny", "host": "10.0.0.1", "operation": "All"}]
    assert zk.get("/kafka-acl/Cluster/kafka-cluster")[0] == (
        b'{"acls":[{"principal":"User:ANONYMOUS","permissionType":"Allow","host":"*","operation":"All"},'
        b'{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"IdempotentWrite"}],'
        b'"version":1}')
    assert json.loads(zk.get("/kafka-acl-extended/prefixed/Topic/pre-")[0])["acls"] == [
        {"principal": "User:alice", "permissionType": "Allow", "host": "*", "operation": "Write"}]
    assert zk.exists("/kafka-acl-extended/prefixed/TransactionalId/tx")
    new_literal = set(zk.get_children("/kafka-acl-changes")) - literal_before
    literal = {zk.get(f"/kafka-acl-changes/{c}")[0] for c in new_literal}
    assert literal == {b"TOPIC:t1", b"CLUSTER:kafka-cluster"}
    new_extended = set(zk.get_children("/kafka-acl-extended-changes")) - extended_before
    assert all(c.startswith("acl_changes_") and len(c) == len("acl_changes_0000000000") for c in new_extended)
    extended = {zk.get(f"/kafka-acl-extended-changes/{c}")[0] for c in new_extended}
    assert extended == {b'{"version":1,"resourceType":"TOPIC","name":"pre-","patternType":"PREFIXED"}',
                        b'{"version":1,"resourceType":"TRANSACTIONAL_ID","name":"tx","patternType":"PREFIXED"}'}
    # the other brokers read them through the notifications
    for broker_id in (2, 3):
        cluster.wait_until(lambda b=broker_id: (2, 3, "User:bob", 2, 2) in describe(cluster, b, "t1"),
                           what=f"broker {broker_id} sees the new ACL")
    # deleting the last ACL of a resource deletes its znode
    with cluster.wire(2) as client:
        answer = client.request(ApiKey.DELETE_ACLS, 3, req(ApiKey.DELETE_ACLS, filters=[
            req(ApiKey.DELETE_ACLS).DeleteAclsFilter(resource_type_filter=2, resource_name_filter="t1",
                                                     pattern_type_filter=3, principal_filter=None, host_filter=None,
                                                     operation=1, permission_type=1)]))
    assert len(answer.filter_results[0].matching_acls) == 2
    assert zk.exists("/kafka-acl/Topic/t1") is None
    cluster.wait_until(lambda: describe(cluster, 1, "t1") == set(), what="broker 1 forgets the deleted ACLs")


def test_an_acl_made_on_one_broker_is_enforced_by_another(all_running):
    cluster = all_running
    with cluster.wire(1) as client:
        topics = [req(ApiKey.CREATE_TOPICS).CreatableTopic(name="hidden", num_partitions=1, replication_factor=3)]
        answer = client.request(ApiKey.CREATE_TOPICS, 5, req(ApiKey.CREATE_TOPICS, topics=topics, timeout_ms=10000))
        assert answer.topics[0].error_code == 0
    cluster.wait_until(lambda: cluster.metadata(3, ["hidden"]).topics[0].error_code == ErrorCode.NONE,
                       what="broker 3 knows the new topic and its leader")
    create(cluster, 1, creation("hidden", principal="User:ANONYMOUS", operation=8, permission=2))
    cluster.wait_until(
        lambda: cluster.metadata(3, ["hidden"]).topics[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        what="broker 3 applies the DENY made on broker 1")
    cluster.wait_until(lambda: "hidden" not in {t.name for t in cluster.metadata(2, None).topics},
                       what="broker 2 applies it too (each broker follows the ACL change notifications itself)")
