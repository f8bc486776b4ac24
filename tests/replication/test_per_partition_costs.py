"""Work proportional to what changed, not to the number of partitions: one INFO line per topic
change, ISR checks only where there are followers, topic ids looked up without a walk."""
from __future__ import annotations

import logging

from pykbroker.replication.role_changes import RoleChanges, partition_ranges

from .helpers import BROKER, FOLLOWER, replica_manager

PARTITIONS = 200


def info_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.INFO and r.name.startswith("pykbroker")]


def test_creating_a_topic_of_many_partitions_logs_one_info_line(tmp_path, caplog):
    manager = replica_manager(tmp_path)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="pykbroker"):
        manager.metadata.create_topic("wide", PARTITIONS, 1)
    assert info_lines(caplog) == [f"Topic wide: leading partitions 0-{PARTITIONS - 1} at leader epoch 0"]
    assert len([tp for tp in manager.partitions if tp[0] == "wide"]) == PARTITIONS


def test_role_changes_name_each_role_once_per_topic():
    changes = RoleChanges()
    for index in (0, 1, 2, 5):
        changes.lead("orders", index, 3)
    changes.follow("orders", 3, 2, 3)
    changes.follow("orders", 4, 2, 3)
    changes.lead("__consumer_offsets", 7, 0)
    assert changes.lines() == [
        (logging.DEBUG, "Topic __consumer_offsets: leading partitions 7 at leader epoch 0"),
        (
            logging.INFO,
            "Topic orders: leading partitions 0-2,5 at leader epoch 3; "
            "following partitions 3-4 from broker 2 at leader epoch 3",
        ),
    ]
    assert partition_ranges([9, 8, 7, 1]) == "1,7-9"


def test_a_restart_logs_one_summary_line_for_all_topics(tmp_path, caplog):
    manager = replica_manager(tmp_path)
    for n in range(5):
        manager.metadata.create_topic(f"t{n}", 40, 1)
    restarted = type(manager)(BROKER, manager.config, manager.log_manager, manager.metadata, timer=manager.timer)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="pykbroker"):
        restarted.startup()
    assert info_lines(caplog) == ["Leading 201 and following 0 partition(s) of 6 topic(s)"]


def test_isr_shrink_looks_only_at_partitions_led_with_followers(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path)  # orders-0 is led here with FOLLOWER in its ISR
    manager.metadata.create_topic("single", PARTITIONS, 1)
    checked = []
    partition_class = type(manager.partitions[("orders", 0)])
    real = partition_class.maybe_shrink_isr

    def counting(self, now_ms, lag_ms):
        checked.append(self.key)
        return real(self, now_ms, lag_ms)

    monkeypatch.setattr(partition_class, "maybe_shrink_isr", counting)
    manager.shrink_isrs(manager.clock.now_ms(), 30000)
    assert checked == [("orders", 0)]
    assert FOLLOWER in manager.partitions[("orders", 0)].replicas


def test_topic_ids_are_looked_up_through_an_index_that_follows_changes(tmp_path):
    manager = replica_manager(tmp_path)
    store = manager.metadata
    first = store.create_topic("again", 1, 1)
    names = store.topic_names_by_id()
    assert names.get(first.topic_id) == "again"
    store.delete_topic("again")
    assert names.get(first.topic_id) is None
    second = store.create_topic("again", 1, 1)
    assert names.get(second.topic_id) == "again" and names.get(first.topic_id) is None
    assert store.topic_by_id(second.topic_id) is second
