"""Stopping a whole cluster broker by broker (SIGTERM, as an operator does): every controlled
shutdown completes on its first request, the last broker's too. With no other broker left to take
over its partitions, asking the controller again could change nothing, so the last broker does
not wait out `controlled.shutdown.max.retries` x `controlled.shutdown.retry.backoff.ms`."""

from confluent_kafka.admin import AdminClient, NewTopic

# Kafka's defaults: were the last broker to retry, it would wait two backoffs of 5 s.
CLUSTER_OPTIONS = {
    "overrides": {"controlled.shutdown.max.retries": "3", "controlled.shutdown.retry.backoff.ms": "5000"}
}


def test_every_broker_stopping_in_turn_completes_its_controlled_shutdown_at_once(cluster):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("replicated", 3, 3)])["replicated"].result(timeout=30)
    cluster.wait_for_leaders("replicated", 3)
    controller = cluster.controller_id()
    order = [b for b in cluster.running() if b != controller] + [controller]

    for broker_id in order:
        assert cluster.shut_down(broker_id) == 0  # a stop that hangs is killed: exit status -9
        log = cluster.brokers[broker_id].log_text()
        assert "Controlled shutdown succeeded" in log
        assert "Controlled shutdown attempt" not in log
        assert "Proceeding to do an unclean shutdown" not in log

    last = cluster.brokers[order[-1]].log_text()
    assert (
        f"No other live replica can lead replicated-0, replicated-1, replicated-2; "
        f"they go offline when broker {order[-1]} stops"
    ) in last
