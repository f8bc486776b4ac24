"""Three brokers whose only listener, and so the inter-broker one, is SASL_SSL: every connection a
broker opens to another is TLS first, then SCRAM-SHA-512 as the inter-broker JAAS `username`
(created in ZooKeeper before the brokers start, as with Kafka). The ACL authorizer is on, with
only that user (and the clients' admin) in `super.users`: followers' fetches and controlled
shutdown need CLUSTER_ACTION, so the ISR fills only if the brokers authenticate as that user.
Followers replicate, a killed leader's partition moves, clients read everything back, the
restarted broker rejoins the ISR, and a controlled shutdown (asked of the controller over
SASL_SSL) moves leadership before the broker stops."""
from __future__ import annotations

import json

import pytest

from pykbroker.security.sasl.scram import SCRAM_SHA_512, ScramCredential
from tests.security.certs import Pki
from tests.security.sasl_support import jaas_plain, jaas_scram
from tests.security.tls_support import listener_ports, ssl_overrides

from .harness import Cluster

BROKER_USER, BROKER_PASSWORD = "broker", "broker-secret"
CHROOT = "/sasl_ssl_cluster"


@pytest.fixture(scope="module")
def sasl_ssl_cluster(zookeeper, tmp_path_factory):
    from kazoo.client import KazooClient

    pki = Pki(tmp_path_factory.mktemp("pki"))
    broker_cert = pki.issue("broker", "CN=broker,OU=kafka,O=pykbroker")
    zk = KazooClient(hosts=zookeeper.connect_string(CHROOT))
    zk.start(timeout=30)
    try:  # Kafka's way: the inter-broker SCRAM user exists before the brokers start
        credential = ScramCredential.from_password(SCRAM_SHA_512, BROKER_PASSWORD, 4096).to_config()
        zk.create(f"/config/users/{BROKER_USER}",
                  json.dumps({"version": 1, "config": {"SCRAM-SHA-512": credential}}).encode(), makepath=True)
    finally:
        zk.stop()
    overrides = {
        "listeners": "SASL_SSL://127.0.0.1:0",
        "security.inter.broker.protocol": "SASL_SSL",
        **ssl_overrides(pki, broker_cert, "none"),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas_plain({"admin": "admin-secret"}),
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": jaas_scram(BROKER_USER, BROKER_PASSWORD),
        "connections.max.reauth.ms": "4000",  # inter-broker connections re-authenticate meanwhile
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": f"User:{BROKER_USER};User:admin",
    }
    cluster = Cluster(tmp_path_factory.mktemp("sasl-ssl-cluster"), zookeeper, chroot=CHROOT,
                      overrides=overrides).start()
    cluster.pki = pki
    try:
        yield cluster
    finally:
        cluster.stop()


def client_config(cluster) -> dict:
    bootstrap = ",".join(f"127.0.0.1:{listener_ports(b)['SASL_SSL']}" for b in cluster.brokers.values()
                         if b.is_running())
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
            "sasl.username": "admin", "sasl.password": "admin-secret", "ssl.ca.location": str(cluster.pki.ca_pem)}


def test_replication_and_failover_over_sasl_ssl(sasl_ssl_cluster):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    cluster, topic = sasl_ssl_cluster, "sasl-ssl-replicated"
    admin = AdminClient(client_config(cluster))
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(30)
    cluster.wait_until(lambda: sorted(cluster.isr(topic, 0)) == [1, 2, 3], what="full ISR (fetches over SASL_SSL)")
    producer = Producer({**client_config(cluster), "acks": "all"})
    for i in range(10):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0

    old_leader = cluster.leader(topic, 0)
    cluster.kill(old_leader)
    cluster.wait_until(lambda: cluster.leader(topic, 0) not in (-1, old_leader), what="a new leader")
    producer = Producer({**client_config(cluster), "acks": "all"})
    producer.produce(topic, b"after")
    assert producer.flush(30) == 0
    # assigned, not subscribed: __consumer_offsets wants three live replicas here
    consumer = Consumer({**client_config(cluster), "group.id": f"{topic}-g", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    values = []
    for _ in range(120):
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
        if len(values) == 11:
            break
    consumer.close()
    assert values == [f"v{i}".encode() for i in range(10)] + [b"after"]

    cluster.restart(old_leader)
    cluster.wait_until(lambda: sorted(cluster.isr(topic, 0)) == [1, 2, 3], what="the restarted broker in the ISR")


def test_controlled_shutdown_over_sasl_ssl(sasl_ssl_cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    cluster, topic = sasl_ssl_cluster, "sasl-ssl-shutdown"
    cluster.ensure_all_running()
    admin = AdminClient(client_config(cluster))
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(30)
    cluster.wait_until(lambda: sorted(cluster.isr(topic, 0)) == [1, 2, 3], what="full ISR")
    leader = cluster.leader(topic, 0)
    assert cluster.shut_down(leader) == 0
    assert "Controlled shutdown succeeded" in cluster.brokers[leader].log_text()
    assert cluster.leader(topic, 0) not in (-1, leader)  # moved before the broker stopped
    cluster.restart(leader)
