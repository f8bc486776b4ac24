"""The JSON in each znode, as Kafka's ZooKeeper mode writes and reads it."""
import json
import uuid

from pykbroker.cluster import zk_data
from pykbroker.cluster.zk_data import BrokerRegistration, Endpoint, LeaderAndIsr, TopicAssignment


def test_broker_registration_is_version_5_with_endpoints_and_listener_map():
    registration = BrokerRegistration(1, (Endpoint("PLAINTEXT", "10.0.0.1", 9092),), rack="r1")
    value = json.loads(zk_data.encode_broker(registration))
    assert value["version"] == 5
    assert value["endpoints"] == ["PLAINTEXT://10.0.0.1:9092"]
    assert value["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    assert (value["host"], value["port"], value["jmx_port"], value["rack"]) == (
        "10.0.0.1", 9092, -1, "r1")
    assert value["timestamp"].isdigit()


def test_broker_registration_reads_back_with_its_epoch():
    registration = BrokerRegistration(2, (Endpoint("INTERNAL", "h", 1, "PLAINTEXT"),))
    read = zk_data.decode_broker(2, zk_data.encode_broker(registration), epoch=77)
    assert read.endpoint("INTERNAL").port == 1 and read.epoch == 77 and read.rack is None


def test_a_kafka_broker_registration_is_understood():
    data = (b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
            b'"endpoints":["PLAINTEXT://kafka-1:9092"],"jmx_port":-1,"port":9092,'
            b'"host":"kafka-1","version":5,"timestamp":"1700000000000"}')
    assert zk_data.decode_broker(1, data).endpoint(None) == Endpoint("PLAINTEXT", "kafka-1", 9092)


def test_topic_znode_is_version_3_with_its_id_in_kafkas_base64():
    topic_id = uuid.UUID("00ece06f-14df-462d-9fad-626289ce445b")
    data = zk_data.encode_topic(TopicAssignment(topic_id, {0: [1, 2], 1: [2, 3]}))
    value = json.loads(data)
    assert value == {"version": 3, "partitions": {"0": [1, 2], "1": [2, 3]},
                     "adding_replicas": {}, "removing_replicas": {},
                     "topic_id": "AOzgbxTfRi2frWJiic5EWw"}
    assert zk_data.decode_topic(data) == TopicAssignment(topic_id, {0: [1, 2], 1: [2, 3]})


def test_partition_state_carries_leader_epoch_isr_and_controller_epoch():
    data = zk_data.encode_state(LeaderAndIsr(2, 7, [2, 3], controller_epoch=4))
    assert json.loads(data) == {"controller_epoch": 4, "leader": 2, "version": 1,
                                "leader_epoch": 7, "isr": [2, 3]}
    assert zk_data.decode_state(data, zk_version=9, mzxid=5) == LeaderAndIsr(2, 7, [2, 3], 4, 9, 5)


def test_controller_cluster_id_and_epoch():
    assert json.loads(zk_data.encode_controller(3))["brokerid"] == 3
    assert zk_data.decode_controller(zk_data.encode_controller(3)) == 3
    assert json.loads(zk_data.encode_cluster_id("abc")) == {"version": "1", "id": "abc"}
    assert zk_data.encode_controller_epoch(12) == b"12"


def test_config_and_change_notifications():
    assert json.loads(zk_data.encode_config({"retention.ms": "1"})) == {
        "version": 1, "config": {"retention.ms": "1"}}
    change = zk_data.encode_config_change("topics", "orders")
    assert json.loads(change) == {"version": 2, "entity_path": "topics/orders"}
    assert zk_data.decode_config_change(change) == ("topics", "orders")


def test_producer_id_blocks_are_strings_of_offsets():
    data = zk_data.encode_producer_id_block(1, 1000, 1999)
    assert json.loads(data) == {"version": 1, "broker": 1, "block_start": "1000",
                                "block_end": "1999"}
    assert zk_data.decode_producer_id_block_end(data) == 1999
