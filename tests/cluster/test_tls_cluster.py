"""Three brokers whose inter-broker listener is SSL (`security.inter.broker.protocol=SSL`, client
certificates required): followers fetch over TLS, so the ISR fills; a killed leader's partition
moves to a follower and clients over SSL read everything back."""
from __future__ import annotations

import pytest

from tests.security.certs import Pki
from tests.security.tls_support import listener_ports, ssl_overrides

from .harness import Cluster


@pytest.fixture(scope="module")
def tls_cluster(zookeeper, tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("pki"))
    broker_cert = pki.issue("broker", "CN=broker,OU=kafka,O=pykbroker")
    client = pki.issue("client", "CN=client,O=example", hosts=())
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                 "security.inter.broker.protocol": "SSL",
                 **ssl_overrides(pki, broker_cert, "required")}
    cluster = Cluster(tmp_path_factory.mktemp("tls-cluster"), zookeeper, chroot="/tls_cluster",
                      overrides=overrides).start()
    cluster.pki, cluster.client = pki, client
    try:
        yield cluster
    finally:
        cluster.stop()


def ssl_bootstrap(cluster) -> str:
    return ",".join(f"127.0.0.1:{listener_ports(b)['SSL']}" for b in cluster.brokers.values() if b.is_running())


def client_config(cluster) -> dict:
    return {"bootstrap.servers": ssl_bootstrap(cluster), "security.protocol": "SSL",
            "ssl.ca.location": str(cluster.pki.ca_pem), "ssl.certificate.location": str(cluster.client.cert_pem),
            "ssl.key.location": str(cluster.client.key_pem)}


def test_replication_and_failover_over_tls(tls_cluster):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    cluster = tls_cluster
    admin = AdminClient(client_config(cluster))
    admin.create_topics([NewTopic("tls-replicated", 1, 3)])["tls-replicated"].result(30)
    cluster.wait_until(lambda: sorted(cluster.isr("tls-replicated", 0)) == [1, 2, 3], what="full ISR")
    producer = Producer({**client_config(cluster), "acks": "all"})
    for i in range(10):
        producer.produce("tls-replicated", f"v{i}".encode())
    assert producer.flush(30) == 0
    leader = cluster.leader("tls-replicated", 0)
    cluster.kill(leader)
    cluster.wait_for_leaders("tls-replicated", 1, exclude={leader})
    producer = Producer({**client_config(cluster), "acks": "all"})
    producer.produce("tls-replicated", b"after")
    assert producer.flush(30) == 0
    # assigned, not subscribed: __consumer_offsets wants three live replicas here
    consumer = Consumer({**client_config(cluster), "group.id": "tls-replicated-g", "enable.auto.commit": False})
    consumer.assign([TopicPartition("tls-replicated", 0, OFFSET_BEGINNING)])
    values = []
    for _ in range(120):
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
        if len(values) == 11:
            break
    consumer.close()
    assert values == [f"v{i}".encode() for i in range(10)] + [b"after"]
