"""A broker restarted soon after kill -9 refuses connections until it can answer them.

Its previous ZooKeeper session still holds `/brokers/ids/<id>` for up to
`zookeeper.session.timeout.ms`, and the broker waits for that registration to expire before it
serves. Kafka opens a configured port only once it serves ("so that systems which assume that
the socket being open indicates readiness are not confused", SocketServer's Acceptor). A port
that accepted connections during that wait left clients on a half-open connection: librdkafka
counted the restarted broker as up, sent its requests there instead of asking again who
coordinates the group, and an admin client's DescribeGroups waited out its 30 s timeout; the
OffsetFetch answered afterwards (NOT_COORDINATOR, the group having moved) then crashed
librdkafka 2.x's ListConsumerGroupOffsets.

The previous session is played by a ZooKeeper session of the test's own holding the
registration, released once the broker is seen waiting for it.
"""
from __future__ import annotations

import socket

from kazoo.client import KazooClient

from pykbroker.cluster.zk_data import BrokerRegistration, Endpoint, encode_broker
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.ports import free_port
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

CHROOT = "/restart_readiness"
BROKER_ID = 1
WAITING = f"Waiting for the previous registration of broker {BROKER_ID} to expire"
ApiVersionsRequest = messages.request(ApiKey.API_VERSIONS).cls


def connection_refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True


def test_a_broker_waiting_for_its_previous_registration_accepts_no_connection(zookeeper, tmp_path):
    port = free_port()
    previous_session = KazooClient(hosts=zookeeper.connect, timeout=10)
    previous_session.start(timeout=30)
    broker = BrokerProcess(tmp_path, {
        "zookeeper.connect": zookeeper.connect_string(CHROOT),
        "zookeeper.session.timeout.ms": "20000",  # the broker waits up to twice this: time to look
        "listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "offsets.topic.replication.factor": "1",
    }, broker_id=BROKER_ID, start_timeout=120)
    try:
        previous_session.create(
            f"{CHROOT}/brokers/ids/{BROKER_ID}",
            encode_broker(BrokerRegistration(BROKER_ID, (Endpoint("PLAINTEXT", "127.0.0.1", port),))),
            ephemeral=True, makepath=True)
        broker.spawn()
        wait_until(lambda: WAITING in broker.log_text(), "the broker waiting for its previous registration",
                   timeout=120)

        assert connection_refused(port), "the port accepted a connection before the broker could answer"

        previous_session.stop()  # the previous session expires: its registration goes
        broker.wait_until_listening()
        with WireClient(broker.bootstrap) as client:
            answer = client.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(
                client_software_name="test", client_software_version="1"))
        assert answer.error_code == 0
    finally:
        broker.stop()
        previous_session.stop()
        previous_session.close()
