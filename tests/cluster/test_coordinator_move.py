"""FindCoordinator while a group's coordinator moves: between the moment a broker learns that
the coordinator's broker is gone and the moment the controller elects the next leader of the
group's `__consumer_offsets` partition, the lookup waits for the election rather than answer
COORDINATOR_NOT_AVAILABLE.

Kafka's brokers learn of a dead leader and of its successor in one UpdateMetadata from the
controller, so Kafka never answers COORDINATOR_NOT_AVAILABLE in that moment. librdkafka 2.x
stops looking up a coordinator after two retried COORDINATOR_NOT_AVAILABLE answers until some
broker's connection changes state: an admin client's DescribeGroups then waited out its 30 s
timeout, and the abandoned lookup aborted the client (`rd_kafka_enq_once_del_source_return:
Assertion eonce->refcnt > 0`) once the killed broker came back.

The moment is held open on purpose: the controller is paused (SIGSTOP) before the coordinator is
killed, and the coordinator's registration is removed from ZooKeeper by the test, as its session's
expiry would.
"""
from __future__ import annotations

import threading

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.wire import WireClient

CLUSTER_OPTIONS = {"overrides": {
    # the paused controller must keep its session; the coordinator's registration goes by hand
    "zookeeper.session.timeout.ms": "20000",
}}
FindCoordinator = messages.request(ApiKey.FIND_COORDINATOR).cls


def find_coordinator(cluster, broker_id: int, group: str):
    with WireClient(cluster.brokers[broker_id].bootstrap, timeout=60) as client:
        return client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(key=group, key_type=0))


def a_group_coordinated_away_from(cluster, controller: int) -> tuple[str, int] | None:
    for index in range(20):
        group = f"moving-{index}"
        answer = find_coordinator(cluster, controller, group)
        if answer.error_code == ErrorCode.NONE and answer.node_id != controller:
            return group, answer.node_id
    return None  # not yet: the offsets topic has just been created


def test_a_lookup_during_the_move_waits_for_the_next_coordinator(cluster):
    controller = cluster.controller_id()
    group, coordinator = cluster.wait_until(lambda: a_group_coordinated_away_from(cluster, controller),
                                            what="a group whose coordinator is not the controller")
    [asked] = [b for b in cluster.running() if b not in (controller, coordinator)]
    cluster.brokers[controller].pause()
    try:
        cluster.kill(coordinator)
        cluster.zk.delete(f"/brokers/ids/{coordinator}")
        cluster.wait_until(lambda: coordinator not in [b.node_id for b in cluster.metadata(asked, []).brokers],
                           what=f"broker {asked} seeing broker {coordinator} gone")
        answers = []
        lookup = threading.Thread(target=lambda: answers.append(find_coordinator(cluster, asked, group)))
        lookup.start()
        lookup.join(1.0)  # while nobody elects, the lookup waits (or, unfixed, has answered already)
    finally:
        cluster.brokers[controller].resume()
    lookup.join(60)
    [answer] = answers
    assert (answer.error_code, answer.node_id in (controller, asked)) == (ErrorCode.NONE, True), answer
    cluster.ensure_all_running()
