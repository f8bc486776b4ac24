"""Client quotas in ZooKeeper mode: stored in the znodes Kafka 3.9 stores them in (`/config/users/
<user>[/clients/<client>]`, `/config/clients/<client>`, `<default>` for defaults), announced under
`/config/changes`, so that a quota set through one broker is described and enforced by every one."""
import time

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient

AlterQuotas = messages.request(ApiKey.ALTER_CLIENT_QUOTAS).cls
DescribeQuotas = messages.request(ApiKey.DESCRIBE_CLIENT_QUOTAS).cls
Metadata = messages.request(ApiKey.METADATA).cls


def alter(broker, entity: dict, key: str, value: float) -> None:
    entry = AlterQuotas.EntryData(
        entity=[AlterQuotas.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
        ops=[AlterQuotas.OpData(key=key, value=value, remove=False)],
    )
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.ALTER_CLIENT_QUOTAS, 1, AlterQuotas(entries=[entry], validate_only=False))
    assert [e.error_code for e in response.entries] == [0], response


def quotas_described(broker) -> set:
    request = DescribeQuotas(components=[], strict=False)
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, request)
    return {
        (tuple((e.entity_type, e.entity_name) for e in entry.entity), tuple((v.key, v.value) for v in entry.values))
        for entry in response.entries
    }


def throttled_metadata(broker_id: int, broker, client_id: str) -> int:
    """The throttle time of the first throttled Metadata response this client gets from the broker."""
    deadline = time.monotonic() + 60
    with WireClient(broker.bootstrap, client_id=client_id) as client:
        while True:
            response = client.request(ApiKey.METADATA, 9, Metadata(topics=None, allow_auto_topic_creation=False))
            if response.throttle_time_ms > 0:
                return response.throttle_time_ms
            assert time.monotonic() < deadline, f"broker {broker_id} never throttled {client_id}"


def test_quotas_set_through_one_broker_are_stored_as_kafka_stores_them_and_reach_every_broker(cluster):
    first = cluster.brokers[1]
    alter(first, {"user": "zk-user"}, "producer_byte_rate", 1048576)
    alter(first, {"user": "zk-user", "client-id": None}, "consumer_byte_rate", 2048)
    alter(first, {"client-id": "zk-busy"}, "request_percentage", 0.01)
    assert cluster.json_at("/config/users/zk-user") == {"version": 1, "config": {"producer_byte_rate": "1048576"}}
    assert cluster.json_at("/config/users/zk-user/clients/<default>") == {
        "version": 1, "config": {"consumer_byte_rate": "2048"}}
    assert cluster.json_at("/config/clients/zk-busy") == {"version": 1, "config": {"request_percentage": "0.01"}}
    announced = [cluster.json_at(f"/config/changes/{child}") for child in cluster.zk.get_children("/config/changes")]
    assert {"version": 2, "entity_path": "users/zk-user/clients/<default>"} in announced
    assert {"version": 2, "entity_path": "clients/zk-busy"} in announced

    expected = {
        ((("user", "zk-user"),), (("producer_byte_rate", 1048576.0),)),
        ((("user", "zk-user"), ("client-id", None)), (("consumer_byte_rate", 2048.0),)),
        ((("client-id", "zk-busy"),), (("request_percentage", 0.01),)),
    }
    for broker_id, broker in cluster.brokers.items():
        deadline = time.monotonic() + 30
        while not expected <= quotas_described(broker):
            assert time.monotonic() < deadline, f"broker {broker_id} never described the quotas"
            time.sleep(0.1)
        assert 0 < throttled_metadata(broker_id, broker, "zk-busy") <= 1000
