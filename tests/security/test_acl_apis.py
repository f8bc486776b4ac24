"""CreateAcls, DescribeAcls and DeleteAcls, every version, with Kafka's errors; ACLs of a single
broker survive its restart."""
import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.security.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from pykbroker.security.acl_store import ACL_FILE

from .support import AUTHORIZER, PrincipalBroker, WireAs

CLUSTER_DENIED, SECURITY_DISABLED, INVALID_REQUEST, UNKNOWN_SERVER_ERROR = 31, 54, 42, -1
VERSIONS = [0, 1, 2, 3]


def req(api_key, **fields):
    return messages.request(api_key).cls(**fields)


def creation(name="orders", resource_type=ResourceType.TOPIC, pattern=PatternType.LITERAL, principal="User:alice",
             host="*", operation=AclOperation.READ, permission=AclPermissionType.ALLOW):
    return req(ApiKey.CREATE_ACLS).AclCreation(
        resource_type=resource_type, resource_name=name, resource_pattern_type=pattern, principal=principal,
        host=host, operation=operation, permission_type=permission)


def describe_filter(name=None, resource_type=ResourceType.ANY, pattern=PatternType.ANY, principal=None):
    return req(ApiKey.DESCRIBE_ACLS, resource_type_filter=resource_type, resource_name_filter=name,
               pattern_type_filter=pattern, principal_filter=principal, host_filter=None,
               operation=AclOperation.ANY, permission_type=AclPermissionType.ANY)


def delete_filter(name=None, resource_type=ResourceType.ANY, pattern=PatternType.ANY, principal=None,
                  operation=AclOperation.ANY):
    return req(ApiKey.DELETE_ACLS).DeleteAclsFilter(
        resource_type_filter=resource_type, resource_name_filter=name, pattern_type_filter=pattern,
        principal_filter=principal, host_filter=None, operation=operation, permission_type=AclPermissionType.ANY)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with PrincipalBroker(tmp_path_factory.mktemp("acls"), {**AUTHORIZER, "super.users": "User:admin"}) as running:
        yield running


@pytest.fixture
def admin(broker):
    with WireAs(broker, "admin") as client:
        yield client


def described(client, version, **filters):
    answer = client.request(ApiKey.DESCRIBE_ACLS, version, describe_filter(**filters))
    assert answer.error_code == 0, answer
    return {(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation, a.permission_type)
            for r in answer.resources for a in r.acls}


@pytest.mark.parametrize("version", VERSIONS)
def test_create_describe_delete_every_version(admin, version):
    name = f"topic-v{version}"
    creations = [creation(name), creation(name, operation=AclOperation.WRITE, permission=AclPermissionType.DENY,
                                          host="10.0.0.1")]
    if version >= 1:
        creations.append(creation(f"prefix-v{version}-", pattern=PatternType.PREFIXED))
    answer = admin.request(ApiKey.CREATE_ACLS, version, req(ApiKey.CREATE_ACLS, creations=creations))
    assert [r.error_code for r in answer.results] == [0] * len(creations)
    pattern_filter = PatternType.LITERAL if version == 0 else PatternType.ANY
    found = described(admin, version, name=name, resource_type=ResourceType.TOPIC, pattern=pattern_filter)
    assert found == {(2, name, 3, "User:alice", "*", 3, 3), (2, name, 3, "User:alice", "10.0.0.1", 4, 2)}
    if version >= 1:
        matched = described(admin, version, name=f"prefix-v{version}-x", pattern=PatternType.MATCH)
        assert matched == {(2, f"prefix-v{version}-", 4, "User:alice", "*", 3, 3)}
    filters = [delete_filter(name, ResourceType.TOPIC, pattern_filter, operation=AclOperation.WRITE),
               delete_filter(name, ResourceType.TOPIC, pattern_filter)]
    deleted = admin.request(ApiKey.DELETE_ACLS, version, req(ApiKey.DELETE_ACLS, filters=filters))
    assert [[(m.operation, m.permission_type) for m in f.matching_acls] for f in deleted.filter_results] == [
        [(4, 2)], [(3, 3)]]
    assert described(admin, version, name=name, resource_type=ResourceType.TOPIC, pattern=pattern_filter) == set()


def test_bad_bindings_get_kafkas_errors(admin):
    creations = [creation("kafka", resource_type=ResourceType.CLUSTER), creation(""), creation("a/b"),
                 creation("fine"), creation("weird-op", operation=99)]
    answer = admin.request(ApiKey.CREATE_ACLS, 2, req(ApiKey.CREATE_ACLS, creations=creations))
    assert [(r.error_code, r.error_message) for r in answer.results] == [
        (INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (INVALID_REQUEST, "Invalid empty resource name"),
        (INVALID_REQUEST, "Failed to create ACL"),
        (0, ""),
        (INVALID_REQUEST, "Failed to create ACL")]
    no_type = admin.request(ApiKey.CREATE_ACLS, 2, req(ApiKey.CREATE_ACLS, creations=[
        creation("p", principal="alice"), creation("q")]))
    assert [r.error_code for r in no_type.results] == [UNKNOWN_SERVER_ERROR, 0]
    pattern_any = admin.request(ApiKey.CREATE_ACLS, 2, req(ApiKey.CREATE_ACLS, creations=[
        creation("r", pattern=PatternType.ANY)]))
    assert [r.error_code for r in pattern_any.results] == [UNKNOWN_SERVER_ERROR]


@pytest.mark.parametrize("api_key, body", [
    (ApiKey.CREATE_ACLS, req(ApiKey.CREATE_ACLS, creations=[creation(operation=AclOperation.UNKNOWN)])),
    (ApiKey.DESCRIBE_ACLS, describe_filter(resource_type=ResourceType.UNKNOWN)),
    (ApiKey.DELETE_ACLS, req(ApiKey.DELETE_ACLS, filters=[delete_filter(operation=AclOperation.UNKNOWN)])),
])
def test_unknown_elements_close_the_connection(broker, api_key, body):
    with WireAs(broker, "admin") as client:
        client.send(api_key, 2, body)
        assert client.is_closed_by_peer()


def test_administering_acls_needs_the_cluster(broker):
    with WireAs(broker, "alice") as alice:
        created = alice.request(ApiKey.CREATE_ACLS, 3, req(ApiKey.CREATE_ACLS, creations=[creation(), creation()]))
        assert [r.error_code for r in created.results] == [CLUSTER_DENIED, CLUSTER_DENIED]
        assert alice.request(ApiKey.DESCRIBE_ACLS, 3, describe_filter()).error_code == CLUSTER_DENIED
        deleted = alice.request(ApiKey.DELETE_ACLS, 3, req(ApiKey.DELETE_ACLS, filters=[delete_filter()]))
        assert [f.error_code for f in deleted.filter_results] == [CLUSTER_DENIED]


@pytest.mark.parametrize("version", VERSIONS)
def test_security_disabled_without_an_authorizer(tmp_path_factory, version):
    with PrincipalBroker(tmp_path_factory.mktemp("no-authorizer")) as running, WireAs(running) as client:
        created = client.request(ApiKey.CREATE_ACLS, version, req(ApiKey.CREATE_ACLS, creations=[creation()]))
        assert [(r.error_code, r.error_message) for r in created.results] == [
            (SECURITY_DISABLED, "No Authorizer is configured.")]
        filters = {} if version else {"pattern": PatternType.LITERAL}
        answer = client.request(ApiKey.DESCRIBE_ACLS, version, describe_filter(**filters))
        assert (answer.error_code, answer.error_message) == (
            SECURITY_DISABLED, "No Authorizer is configured on the broker")
        deleted = client.request(ApiKey.DELETE_ACLS, version, req(ApiKey.DELETE_ACLS, filters=[
            delete_filter(**filters)]))
        assert [f.error_code for f in deleted.filter_results] == [SECURITY_DISABLED]


def test_acls_of_a_single_broker_survive_a_restart(tmp_path):
    settings = {**AUTHORIZER, "super.users": "User:admin"}
    with PrincipalBroker(tmp_path, settings) as running, WireAs(running, "admin") as admin:
        answer = admin.request(ApiKey.CREATE_ACLS, 3, req(ApiKey.CREATE_ACLS, creations=[
            creation("kept", pattern=PatternType.PREFIXED)]))
        assert answer.results[0].error_code == 0
    assert (tmp_path / "kafka-logs" / ACL_FILE).exists()
    with PrincipalBroker(tmp_path, settings) as running, WireAs(running, "admin") as admin:
        assert described(admin, 3) == {(2, "kept", 4, "User:alice", "*", 3, 3)}
