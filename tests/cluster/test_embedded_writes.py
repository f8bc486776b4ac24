"""What the embedded metadata store's persistence costs: the changes made while a write is in
flight go out together in the next write (group commit), each write serializes on the loop only
the topics changed since the last one, and the state files written by earlier versions load."""
import json

import anyio

from pykbroker.cluster import embedded
from pykbroker.cluster.embedded import STATE_FILE, EmbeddedMetadataStore
from pykbroker.cluster.model import BrokerInfo

from .test_embedded_durability import LONG_ENOUGH, BlockedWrites, new_store, stored_topics

TOPICS_ARRIVING_TOGETHER = 50


class CountedWrites:
    """Counts the state files the store writes."""

    def __init__(self, monkeypatch) -> None:
        self.count = 0
        real = embedded.write_atomically

        def write(path, text):
            self.count += 1
            real(path, text)
        monkeypatch.setattr(embedded, "write_atomically", write)


class CountedSerializations:
    """Counts the topics the store serializes."""

    def __init__(self, monkeypatch) -> None:
        self.topics: list[str] = []
        real = embedded._topic_record

        def record(info):
            self.topics.append(info.name)
            return real(info)
        monkeypatch.setattr(embedded, "_topic_record", record)


def test_create_topics_arriving_during_a_write_go_out_together_in_the_next_write(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    blocked = BlockedWrites(monkeypatch)
    writes = CountedWrites(monkeypatch)
    acknowledged = []

    async def create_and_wait(name):
        store.create_topic(name, 10, 1)
        await store.wait_durable()
        acknowledged.append(name)

    async def main():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(create_and_wait, "first")
            await anyio.to_thread.run_sync(blocked.started.wait, LONG_ENOUGH)  # its write is in flight
            for i in range(TOPICS_ARRIVING_TOGETHER):
                tasks.start_soon(create_and_wait, f"t{i}")
            while len(store.topics()) <= TOPICS_ARRIVING_TOGETHER:
                await anyio.sleep(0)
            for _ in range(20):
                await anyio.sleep(0)
            assert acknowledged == []  # nobody is answered before the write covering its change
            blocked.released.set()
    anyio.run(main)
    assert len(acknowledged) == TOPICS_ARRIVING_TOGETHER + 1
    assert writes.count == 2  # the one in flight, then one for all the others
    assert set(stored_topics(tmp_path)) == {"first"} | {f"t{i}" for i in range(TOPICS_ARRIVING_TOGETHER)}
    store.close()


def test_each_write_serializes_only_the_topics_changed_since_the_last(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    serialized = CountedSerializations(monkeypatch)

    async def main():
        for i in range(30):
            store.create_topic(f"t{i}", 10, 1)
            await store.wait_durable()
        store.set_topic_configs("t7", {"retention.ms": "1000"})
        store.add_partitions("t8", 12)
        store.delete_topic("t9")
        await store.wait_durable()
    anyio.run(main)
    store.close()
    assert serialized.topics == [f"t{i}" for i in range(30)] + ["t7", "t8"]
    stored = stored_topics(tmp_path)
    assert len(stored) == 29 and "t9" not in stored
    assert stored["t7"]["configs"] == {"retention.ms": "1000"}
    assert len(stored["t8"]["partitions"]) == 12


def test_a_topic_deleted_and_created_again_in_one_turn_is_stored_as_new(tmp_path):
    store = new_store(tmp_path)

    async def main():
        store.create_topic("orders", 1, 1)
        await store.wait_durable()
        store.delete_topic("orders")
        store.create_topic("orders", 3, 1)
        await store.wait_durable()
        return store.topic("orders").topic_id
    topic_id = anyio.run(main)
    store.close()
    stored = stored_topics(tmp_path)["orders"]
    assert (stored["topic_id"], len(stored["partitions"])) == (str(topic_id), 3)


def test_the_state_file_lists_one_topic_a_line(tmp_path):
    store = new_store(tmp_path)
    for i in range(3):
        store.create_topic(f"t{i}", 2, 1)
    store.close()
    lines = (tmp_path / STATE_FILE).read_text().splitlines()
    assert [json.loads(line.rstrip(","))["name"] for line in lines[1:4]] == ["t0", "t1", "t2"]


def test_a_state_file_written_by_an_earlier_version_loads(tmp_path):
    earlier = {
        "version": 1,
        "topics": [{
            "name": "orders",
            "topic_id": "6d3b1f1e-5d35-4a5d-9d1e-3c3f4a0b7c11",
            "configs": {"cleanup.policy": "compact"},
            "partitions": [{"partition": 0, "replicas": [0], "leader": 0, "leader_epoch": 3, "isr": [0],
                            "partition_epoch": 4}],
        }],
        "broker_configs": {"<default>": {"log.retention.ms": "5000"}},
        "user_configs": {"alice": {"SCRAM-SHA-256": "x"}},
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(earlier, indent=1))
    store = EmbeddedMetadataStore([str(tmp_path)], BrokerInfo(0, "127.0.0.1", 9092))
    orders = store.topic("orders")
    assert (orders.configs, orders.partitions[0].leader_epoch, orders.partitions[0].partition_epoch) == (
        {"cleanup.policy": "compact"}, 3, 4)
    assert store.broker_configs(None) == {"log.retention.ms": "5000"}
    store.create_topic("more", 1, 1)
    store.close()
    rewritten = json.loads((tmp_path / STATE_FILE).read_text())
    assert {k: v for k, v in rewritten.items() if k in earlier and k != "topics"} == {
        k: v for k, v in earlier.items() if k != "topics"}
    assert rewritten["topics"][0] == earlier["topics"][0]
    assert rewritten["group_configs"] == {}  # what this version adds: Kafka 4's group configs, none yet


def test_a_change_left_unwritten_by_a_loop_that_ended_is_written_with_the_next_loops_change(tmp_path):
    store = new_store(tmp_path)

    async def change(name):
        store.create_topic(name, 1, 1)

    async def change_and_wait(name):
        store.create_topic(name, 1, 1)
        with anyio.fail_after(LONG_ENOUGH):
            await store.wait_durable()
    anyio.run(change, "first")
    anyio.run(change_and_wait, "second")
    assert set(stored_topics(tmp_path)) == {"first", "second"}
    store.close()
