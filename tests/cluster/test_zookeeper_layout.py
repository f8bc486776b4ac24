"""The cluster's state in ZooKeeper is laid out as Kafka's ZooKeeper mode lays it out, so that
Kafka's tools recognise it; clients see the same cluster from every broker."""
import time
import uuid

from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

from pykbroker.cluster.zk_data import uuid_from_text
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.wire import WireClient

CLUSTER_OPTIONS = {"racks": {1: "rack-a", 2: "rack-b", 3: "rack-c"}}
InitProducerIdRequest = messages.request(ApiKey.INIT_PRODUCER_ID).cls
ProduceRequest = messages.request(ApiKey.PRODUCE).cls


def admin(cluster, broker_id):
    return KafkaAdminClient(bootstrap_servers=cluster.brokers[broker_id].bootstrap,
                            request_timeout_ms=20000)


def test_brokers_register_with_kafkas_json(cluster):
    assert cluster.live_broker_ids() == [1, 2, 3]
    registration = cluster.json_at("/brokers/ids/2")
    broker = cluster.brokers[2]
    assert registration["version"] == 5
    assert registration["endpoints"] == [f"PLAINTEXT://127.0.0.1:{broker.port}"]
    assert registration["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    assert (registration["host"], registration["port"]) == ("127.0.0.1", broker.port)
    assert registration["rack"] == "rack-b" and registration["jmx_port"] == -1
    assert cluster.zk.exists("/brokers/ids/2").ephemeralOwner != 0


def test_one_controller_is_elected_and_every_broker_names_it(cluster):
    controller = cluster.json_at("/controller")
    assert controller["brokerid"] in (1, 2, 3) and controller["version"] == 2
    assert int(cluster.zk.get("/controller_epoch")[0]) >= 1
    for broker_id in (1, 2, 3):
        assert cluster.metadata(broker_id, None).controller_id == controller["brokerid"]


def test_the_controller_enables_feature_versioning_with_nothing_finalized_as_kafka(cluster):
    """Kafka 3.9's ZooKeeper-mode controller writes `/feature` once; its znode version is the
    finalized features' epoch in ApiVersions. UpdateFeatures is the controller's alone."""
    assert cluster.zk.get("/feature")[0] == b'{"features":{},"version":2,"status":1}'
    assert cluster.zk.exists("/feature").version == 0
    controller = cluster.json_at("/controller")["brokerid"]
    request = messages.request(ApiKey.UPDATE_FEATURES)
    update = request.classes["FeatureUpdateKey"](feature="foo", max_version_level=1, upgrade_type=1)
    for broker_id in (1, 2, 3):
        with WireClient(cluster.brokers[broker_id].bootstrap) as client:
            answer = client.request(ApiKey.UPDATE_FEATURES, 1, request.cls(feature_updates=[update]))
        if broker_id == controller:
            assert (answer.error_code, [r.error_code for r in answer.results]) == (0, [ErrorCode.INVALID_REQUEST])
        else:
            assert (answer.error_code, answer.results) == (ErrorCode.NOT_CONTROLLER, [])


def test_the_cluster_id_is_kept_in_zookeeper_and_reported_by_every_broker(cluster):
    cluster_id = cluster.json_at("/cluster/id")["id"]
    assert {cluster.metadata(b, None).cluster_id for b in (1, 2, 3)} == {cluster_id}


def test_every_broker_lists_the_live_brokers_with_their_racks(cluster):
    brokers = cluster.metadata(3, None).brokers
    assert sorted((b.node_id, b.port, b.rack) for b in brokers) == [
        (i, cluster.brokers[i].port, f"rack-{c}") for i, c in ((1, "a"), (2, "b"), (3, "c"))]


def test_a_topic_created_on_any_broker_gets_its_znodes_and_leaders(cluster):
    non_controller = next(b for b in (1, 2, 3) if b != cluster.controller_id())
    client = admin(cluster, non_controller)
    client.create_topics([NewTopic("layout", 6, 3, topic_configs={"retention.ms": "3600000"})])
    client.close()
    topic = cluster.json_at("/brokers/topics/layout")
    assert topic["version"] == 3 and len(topic["partitions"]) == 6
    topic_id = uuid_from_text(topic["topic_id"])
    assert cluster.json_at("/config/topics/layout") == {"version": 1,
                                                        "config": {"retention.ms": "3600000"}}
    leaders = cluster.wait_for_leaders("layout", 6)
    assert sorted(leaders.values()) == [1, 1, 2, 2, 3, 3]  # spread evenly
    state = cluster.state("layout", 0)
    assert state["version"] == 1 and state["leader_epoch"] == 0
    assert sorted(state["isr"]) == [1, 2, 3] and state["controller_epoch"] >= 1
    seen = cluster.metadata(non_controller, ["layout"]).topics[0]
    assert seen.topic_id == topic_id and seen.topic_id != uuid.UUID(int=0)


def test_replicas_are_placed_on_every_rack(cluster):
    racks = {1: "a", 2: "b", 3: "c"}
    for replicas in cluster.replicas("layout").values():
        assert sorted(racks[r] for r in replicas) == ["a", "b", "c"]


def test_topic_config_changes_reach_every_broker_through_change_notifications(cluster):
    client = admin(cluster, 1)
    client.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "layout",
                                         configs={"retention.ms": "7200000"})])
    client.close()
    changes = cluster.zk.get_children("/config/changes")
    assert any(cluster.json_at(f"/config/changes/{c}") == {"version": 2,
                                                           "entity_path": "topics/layout"}
               for c in changes)

    def seen_by_broker_3():
        client = admin(cluster, 3)
        try:
            resource = ConfigResource(ConfigResourceType.TOPIC, "layout")
            described = client.describe_configs([resource])
            topics = next(iter(described.values()))
            return topics["layout"]["retention.ms"]["value"] == "7200000"
        finally:
            client.close()
    cluster.wait_until(seen_by_broker_3, what="broker 3 to see the new config")


def test_partitions_added_on_a_broker_get_leaders(cluster):
    client = admin(cluster, 2)
    client.create_partitions({"layout": NewPartitions(8)})
    client.close()
    assert len(cluster.json_at("/brokers/topics/layout")["partitions"]) == 8
    cluster.wait_for_leaders("layout", 8)


def test_deleting_a_topic_goes_through_admin_delete_topics(cluster):
    client = admin(cluster, 1)
    client.create_topics([NewTopic("doomed", 2, 2)])
    cluster.wait_for_leaders("doomed", 2)
    client.delete_topics(["doomed"])
    client.close()
    # the controller removes the topic, then its configs, then the request, one znode after another
    cluster.wait_until(lambda: not any(cluster.zk.exists(path) for path in (
        "/brokers/topics/doomed", "/config/topics/doomed", "/admin/delete_topics/doomed")),
        what="the topic's, its configs' and the request's znodes to go")
    cluster.wait_until(lambda: all(cluster.metadata(b, ["doomed"]).topics[0].error_code
                                   == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for b in (1, 2, 3)),
                       what="every broker to forget it")


def test_producer_ids_come_from_blocks_in_zookeeper(cluster):
    ids = []
    for broker_id in (1, 2):
        with cluster.wire(broker_id) as client:
            response = client.request(ApiKey.INIT_PRODUCER_ID, 4, InitProducerIdRequest(
                transactional_id=None, transaction_timeout_ms=60000, producer_id=-1,
                producer_epoch=-1))
            ids.append(response.producer_id)
    block = cluster.json_at("/latest_producer_id_block")
    assert block["version"] == 1 and int(block["block_end"]) - int(block["block_start"]) == 999
    assert ids[0] != ids[1] and all(i >= 0 for i in ids)


def test_a_produce_sent_to_a_follower_names_the_leader(cluster):
    leader = cluster.wait_for_leaders("layout", 8)[0]
    follower = next(b for b in (1, 2, 3) if b != leader)
    batch = bytes(build_batch([(None, b"v", [], int(time.time() * 1000))]))
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name="layout", partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    with cluster.wire(follower) as client:
        response = client.request(ApiKey.PRODUCE, 10, request)
    answer = response.responses[0].partition_responses[0]
    assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert answer.current_leader.leader_id == leader
    assert [(n.node_id, n.port) for n in response.node_endpoints] == [
        (leader, cluster.brokers[leader].port)]


def test_a_broker_away_while_its_topic_was_deleted_drops_its_copy_when_it_returns(all_running):
    cluster = all_running
    client = admin(cluster, 1)
    client.create_topics([NewTopic("left-behind", 1, 3)])
    cluster.wait_for_leaders("left-behind", 1)
    away = 3
    copy = cluster.brokers[away].directory / "kafka-logs" / "left-behind-0"
    assert copy.exists()
    cluster.shut_down(away)
    client.delete_topics(["left-behind"])
    client.close()
    cluster.wait_until(lambda: not cluster.zk.exists("/brokers/topics/left-behind"),
                       what="the deletion")
    cluster.restart(away)
    # the returning broker loads its logs while it serves, and drops the stray copy as it finds it
    cluster.wait_until(lambda: not copy.exists(), what="the returning broker to drop its copy")
