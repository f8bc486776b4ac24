"""The matching rules of the ACL authorizer, as Kafka's AclAuthorizer applies them."""
import anyio
import pytest

from pykbroker.config import BrokerConfig
from pykbroker.protocol.errors import ErrorCode
from pykbroker.security.acl import CLUSTER_NAME, AclOperation, AclPermissionType, PatternType, ResourceType
from pykbroker.security.acl_bindings import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
    ResourcePatternFilter,
)
from pykbroker.security.acl_store import FileAclStore, decode_acls, encode_acls
from pykbroker.security.authorizer import AclAuthorizer, AuthorizerConfigError, create_authorizer
from pykbroker.security.principal import ANONYMOUS, KafkaPrincipal

Op, Perm, RT, PT = AclOperation, AclPermissionType, ResourceType, PatternType
ALICE = KafkaPrincipal("User", "alice")
BOB = KafkaPrincipal("User", "bob")
HOST = "10.0.0.1"


class MemoryStore:
    def __init__(self) -> None:
        self.acls: dict = {}

    def load_all(self):
        return dict(self.acls)

    def update(self, resource, change):
        new = frozenset(change(self.acls.get(resource, frozenset())))
        if new:
            self.acls[resource] = new
        else:
            self.acls.pop(resource, None)
        return new

    def watch(self, on_change):
        pass

    def close(self):
        pass


def acl(principal="User:alice", op=Op.READ, perm=Perm.ALLOW, host="*"):
    return AccessControlEntry(principal, host, op, perm)


def authorizer_with(*bindings, **options) -> AclAuthorizer:
    store = MemoryStore()
    for (rt, name, pt), entry in bindings:
        store.acls.setdefault(ResourcePattern(rt, name, pt), frozenset())
        store.acls[ResourcePattern(rt, name, pt)] |= {entry}
    authorizer = AclAuthorizer(store, **options)
    authorizer.open()
    return authorizer


def topic(name, pt=PT.LITERAL):
    return (RT.TOPIC, name, pt)


def allowed(authorizer, op, name="orders", principal=ALICE, host=HOST, rt=RT.TOPIC) -> bool:
    return authorizer.authorize(principal, host, op, rt, name)


def test_no_acl_denies_unless_allow_everyone_if_no_acl_found():
    assert not allowed(authorizer_with(), Op.READ)
    assert allowed(authorizer_with(allow_everyone_if_no_acl_found=True), Op.READ)
    # an ACL on the resource, even for someone else, takes the default away
    only_bob = authorizer_with((topic("orders"), acl("User:bob")), allow_everyone_if_no_acl_found=True)
    assert not allowed(only_bob, Op.READ)
    assert allowed(only_bob, Op.READ, name="other")


def test_literal_acl_allows_its_operation_on_its_resource_only():
    authorizer = authorizer_with((topic("orders"), acl(op=Op.READ)))
    assert allowed(authorizer, Op.READ)
    assert not allowed(authorizer, Op.WRITE)
    assert not allowed(authorizer, Op.READ, name="orders2")
    assert not allowed(authorizer, Op.READ, principal=BOB)
    assert not allowed(authorizer, Op.READ, rt=RT.GROUP)


def test_deny_wins_over_allow():
    authorizer = authorizer_with((topic("orders"), acl(op=Op.ALL)), (topic("orders"), acl(op=Op.WRITE, perm=Perm.DENY)))
    assert allowed(authorizer, Op.READ)
    assert not allowed(authorizer, Op.WRITE)
    # a DENY on the wildcard or a prefix beats a literal ALLOW too
    wildcard = authorizer_with((topic("orders"), acl()), (topic("*"), acl(perm=Perm.DENY)))
    assert not allowed(wildcard, Op.READ)
    prefix = authorizer_with((topic("orders"), acl()), (topic("ord", PT.PREFIXED), acl(perm=Perm.DENY)))
    assert not allowed(prefix, Op.READ)


def test_deny_of_an_operation_does_not_deny_what_it_implies():
    authorizer = authorizer_with((topic("orders"), acl(op=Op.DESCRIBE)), (topic("orders"), acl(perm=Perm.DENY)))
    assert allowed(authorizer, Op.DESCRIBE)
    assert not allowed(authorizer, Op.READ)


@pytest.mark.parametrize("granted", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE])
def test_read_write_delete_alter_imply_describe(granted):
    authorizer = authorizer_with((topic("orders"), acl(op=granted)))
    assert allowed(authorizer, Op.DESCRIBE)


@pytest.mark.parametrize("granted", [Op.CREATE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS, Op.IDEMPOTENT_WRITE])
def test_other_operations_do_not_imply_describe(granted):
    authorizer = authorizer_with((topic("orders"), acl(op=granted)))
    assert allowed(authorizer, Op.DESCRIBE) == (granted == Op.DESCRIBE)


def test_alter_configs_implies_describe_configs_not_the_reverse():
    authorizer = authorizer_with((topic("orders"), acl(op=Op.ALTER_CONFIGS)))
    assert allowed(authorizer, Op.DESCRIBE_CONFIGS)
    reverse = authorizer_with((topic("orders"), acl(op=Op.DESCRIBE_CONFIGS)))
    assert not allowed(reverse, Op.ALTER_CONFIGS)


def test_all_allows_every_operation():
    authorizer = authorizer_with((topic("orders"), acl(op=Op.ALL)))
    for op in (Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS):
        assert allowed(authorizer, op)


def test_wildcard_resource_and_wildcard_principal():
    authorizer = authorizer_with((topic("*"), acl(principal="User:*")))
    assert allowed(authorizer, Op.READ, name="anything", principal=BOB)
    assert allowed(authorizer, Op.READ, name="orders", principal=ANONYMOUS)
    # "*" is a wildcard only as a literal pattern
    prefixed_star = authorizer_with((topic("*", PT.PREFIXED), acl()))
    assert not allowed(prefixed_star, Op.READ)
    assert allowed(prefixed_star, Op.READ, name="*-topic")


def test_prefixed_patterns_match_names_that_start_with_them():
    authorizer = authorizer_with((topic("sales-", PT.PREFIXED), acl(op=Op.WRITE)))
    assert allowed(authorizer, Op.WRITE, name="sales-eu")
    assert allowed(authorizer, Op.WRITE, name="sales-")
    assert not allowed(authorizer, Op.WRITE, name="sale")
    assert not allowed(authorizer, Op.WRITE, name="presales-eu")


def test_host_must_match_unless_the_acl_says_any_host():
    authorizer = authorizer_with((topic("orders"), acl(host="10.0.0.1")))
    assert allowed(authorizer, Op.READ, host="10.0.0.1")
    assert not allowed(authorizer, Op.READ, host="10.0.0.2")
    deny_one_host = authorizer_with((topic("orders"), acl()), (topic("orders"), acl(perm=Perm.DENY, host="10.0.0.2")))
    assert allowed(deny_one_host, Op.READ, host="10.0.0.1")
    assert not allowed(deny_one_host, Op.READ, host="10.0.0.2")


def test_super_users_may_do_everything_even_when_denied():
    authorizer = authorizer_with((topic("orders"), acl(principal="User:root", op=Op.ALL, perm=Perm.DENY)),
                                 super_users=frozenset({KafkaPrincipal("User", "root")}))
    root = KafkaPrincipal("User", "root")
    assert allowed(authorizer, Op.WRITE, principal=root)
    assert allowed(authorizer, Op.CLUSTER_ACTION, name=CLUSTER_NAME, principal=root, rt=RT.CLUSTER)
    assert authorizer.authorize_by_resource_type(root, HOST, Op.WRITE, RT.TOPIC)


def test_authorized_operations_bit_field():
    authorizer = authorizer_with((topic("orders"), acl(op=Op.READ)), (topic("orders"), acl(op=Op.ALTER_CONFIGS)))
    bits = authorizer.authorized_operations(ALICE, HOST, RT.TOPIC, "orders")
    expected = {Op.READ, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS}
    assert bits == sum(1 << op for op in expected)
    assert authorizer.authorized_operations(BOB, HOST, RT.TOPIC, "orders") == 0


def test_authorize_by_resource_type():
    none = authorizer_with()
    assert not none.authorize_by_resource_type(ALICE, HOST, Op.WRITE, RT.TOPIC)
    some = authorizer_with((topic("orders"), acl(op=Op.WRITE)))
    assert some.authorize_by_resource_type(ALICE, HOST, Op.WRITE, RT.TOPIC)
    assert not some.authorize_by_resource_type(BOB, HOST, Op.WRITE, RT.TOPIC)
    # a literal ALLOW denied by a dominating prefixed DENY does not count
    dominated = authorizer_with((topic("orders"), acl(op=Op.WRITE)),
                                (topic("ord", PT.PREFIXED), acl(op=Op.WRITE, perm=Perm.DENY)))
    assert not dominated.authorize_by_resource_type(ALICE, HOST, Op.WRITE, RT.TOPIC)
    # a DENY on the literal wildcard denies the type, even with allow.everyone.if.no.acl.found
    deny_all = authorizer_with((topic("*"), acl(op=Op.WRITE, perm=Perm.DENY)), allow_everyone_if_no_acl_found=True)
    assert not deny_all.authorize_by_resource_type(ALICE, HOST, Op.WRITE, RT.TOPIC)


def binding(rt, name, pt, entry) -> AclBinding:
    return AclBinding(ResourcePattern(rt, name, pt), entry)


def any_filter(rt=RT.ANY, name=None, pt=PT.ANY, principal=None, op=Op.ANY, perm=Perm.ANY) -> AclBindingFilter:
    return AclBindingFilter(ResourcePatternFilter(rt, name, pt), AccessControlEntryFilter(principal, None, op, perm))


def test_create_describe_delete():
    authorizer = authorizer_with()
    bindings = [
        binding(RT.TOPIC, "orders", PT.LITERAL, acl()),
        binding(RT.TOPIC, "ord", PT.PREFIXED, acl(op=Op.WRITE)),
        binding(RT.TOPIC, "*", PT.LITERAL, acl(principal="User:bob")),
        binding(RT.CLUSTER, "wrong", PT.LITERAL, acl()),
        binding(RT.TOPIC, "", PT.LITERAL, acl()),
        binding(RT.TOPIC, "a/b", PT.LITERAL, acl()),
        binding(RT.GROUP, "g", PT.LITERAL, acl(principal="alice")),  # no type: its resource fails
    ]
    results = anyio.run(authorizer.create_acls, bindings)
    assert [error for error, _ in results] == [ErrorCode.NONE] * 3 + [ErrorCode.INVALID_REQUEST] * 3 + [
        ErrorCode.UNKNOWN_SERVER_ERROR]
    assert results[3][1] == "The only valid name for the CLUSTER resource is kafka-cluster"
    assert len(authorizer.acls(any_filter())) == 3
    # MATCH: every pattern that applies to the name
    matched = authorizer.acls(any_filter(RT.TOPIC, "orders", PT.MATCH))
    assert {b.pattern.name for b in matched} == {"orders", "ord", "*"}
    assert {b.pattern.name for b in authorizer.acls(any_filter(RT.TOPIC, "orders", PT.LITERAL))} == {"orders"}
    assert {b.pattern.name for b in authorizer.acls(any_filter(pt=PT.PREFIXED))} == {"ord"}
    deleted = anyio.run(authorizer.delete_acls, [any_filter(principal="User:alice"), any_filter()])
    assert sorted(b.pattern.name for b, _, _ in deleted[0]) == ["ord", "orders"]
    assert [b.pattern.name for b, _, _ in deleted[1]] == ["*"]
    assert authorizer.acls(any_filter()) == []


def test_file_store_persists_in_kafkas_json(tmp_path):
    store = FileAclStore(tmp_path)
    resource = ResourcePattern(RT.TOPIC, "orders", PT.PREFIXED)
    store.update(resource, lambda current: current | {acl(), acl(op=Op.WRITE, perm=Perm.DENY, host="1.2.3.4")})
    reloaded = FileAclStore(tmp_path).load_all()
    assert reloaded == {resource: frozenset({acl(), acl(op=Op.WRITE, perm=Perm.DENY, host="1.2.3.4")})}
    store.update(resource, lambda current: frozenset())
    assert FileAclStore(tmp_path).load_all() == {}


def test_file_store_is_not_written_when_a_change_changes_nothing(tmp_path):
    store = FileAclStore(tmp_path)
    orders = ResourcePattern(RT.TOPIC, "orders", PT.LITERAL)
    store.update(orders, lambda current: current | {acl()})
    written = (tmp_path / "pykbroker-acls.json").stat()
    assert store.update(orders, lambda current: current - {acl(principal="User:bob")}) == {acl()}
    assert store.update(ResourcePattern(RT.GROUP, "g", PT.LITERAL), lambda current: current) == frozenset()
    unchanged = (tmp_path / "pykbroker-acls.json").stat()
    assert (unchanged.st_ino, unchanged.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    assert FileAclStore(tmp_path).load_all() == {orders: frozenset({acl()})}


def test_kafkas_znode_json():
    data = encode_acls(frozenset({acl(op=Op.IDEMPOTENT_WRITE)}))
    assert data == (b'{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*",'
                    b'"operation":"IdempotentWrite"}],"version":1}')
    assert decode_acls(data) == frozenset({acl(op=Op.IDEMPOTENT_WRITE)})


def test_config():
    def make(**settings):
        return create_authorizer(BrokerConfig({"log.dirs": "/tmp/x", **settings}), MemoryStore)

    assert make() is None
    authorizer = make(**{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                         "super.users": "User:a; User:b;", "allow.everyone.if.no.acl.found": "TRUE"})
    assert authorizer.super_users == {KafkaPrincipal("User", "a"), KafkaPrincipal("User", "b")}
    assert authorizer.allow_everyone_if_no_acl_found
    for bad in ({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
                {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "alice"},
                {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                 "allow.everyone.if.no.acl.found": "yes"}):
        with pytest.raises(AuthorizerConfigError):
            make(**bad)
