"""The embedded metadata store writes its state file on its writer thread: changes are visible at
once, `wait_durable()` returns once they are on disk, an ISR proposal is answered only then, and
`close()` leaves the last state on disk."""
import json
import os
import threading

import anyio

from pykbroker.cluster.embedded import STATE_FILE, EmbeddedMetadataStore
from pykbroker.cluster.model import BrokerInfo

LONG_ENOUGH = 10  # seconds: never reached when it works


def new_store(directory) -> EmbeddedMetadataStore:
    return EmbeddedMetadataStore([str(directory)], BrokerInfo(0, "127.0.0.1", 9092))


def stored_topics(directory) -> dict:
    state = json.loads((directory / STATE_FILE).read_text())
    return {topic["name"]: topic for topic in state["topics"]}


class BlockedWrites:
    """`os.fsync` that blocks on the store's writer thread until released."""

    def __init__(self, monkeypatch) -> None:
        self.started = threading.Event()
        self.released = threading.Event()
        real = os.fsync

        def fsync(fd):
            if threading.current_thread().name == "pykbroker-metadata-writer":
                self.started.set()
                self.released.wait(LONG_ENOUGH)
            real(fd)
        monkeypatch.setattr(os, "fsync", fsync)


def test_wait_durable_returns_once_the_change_is_on_disk(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    blocked = BlockedWrites(monkeypatch)
    seen = []

    async def main():
        store.create_topic("orders", 2, 1)
        assert store.topic("orders") is not None  # visible at once
        async with anyio.create_task_group() as tasks:
            async def waiter():
                await store.wait_durable()
                seen.append("durable")
            tasks.start_soon(waiter)
            await anyio.to_thread.run_sync(blocked.started.wait, LONG_ENOUGH)
            for _ in range(20):
                await anyio.sleep(0)
            seen.append("still writing")
            blocked.released.set()
    anyio.run(main)
    assert seen == ["still writing", "durable"]
    assert set(stored_topics(tmp_path)) == {"orders"}
    store.close()


def test_an_isr_proposal_is_answered_once_it_is_on_disk(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    store.create_topic("orders", 1, 2, assignments={0: [0, 1]})
    store.close()
    blocked = BlockedWrites(monkeypatch)
    answers = []

    async def main():
        store.propose_isr("orders", 0, 0, 0, [0], answers.append)
        await anyio.to_thread.run_sync(blocked.started.wait, LONG_ENOUGH)
        for _ in range(20):
            await anyio.sleep(0)
        assert answers == []
        blocked.released.set()
        with anyio.fail_after(LONG_ENOUGH):
            while not answers:
                await anyio.sleep(0.01)
    anyio.run(main)
    assert answers == [1]
    assert stored_topics(tmp_path)["orders"]["partitions"][0]["isr"] == [0]


def test_close_leaves_the_last_state_on_disk(tmp_path):
    store = new_store(tmp_path)
    for i in range(20):
        store.create_topic(f"t{i}", 1, 1)
    store.delete_topic("t0")
    store.set_topic_configs("t1", {"retention.ms": "1000"})
    store.close()
    assert set(stored_topics(tmp_path)) == {f"t{i}" for i in range(1, 20)}
    reopened = new_store(tmp_path)
    assert reopened.topic("t1").configs == {"retention.ms": "1000"}
    assert reopened.topic("t0") is None
