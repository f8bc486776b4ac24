"""Running out of file descriptors is an error, not damage.

A broker started with a low RLIMIT_NOFILE: CreateTopics beyond what the limit allows answers
KAFKA_STORAGE_ERROR for the topics that do not fit, on a connection that stays usable; other
clients are still served; no topic is left with only some of its partitions, and after a
restart every topic in the metadata has all its partitions on disk and no other partition
directory remains. A partition costs one descriptor, and the broker says at start what its
limit allows.
"""
import os
import sys

import pytest

from pykbroker.log.files import parse_partition_dir
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.wire import WireClient

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")

LIMIT = 200
PARTITIONS_PER_TOPIC = 10
TOPICS = 20  # 200 partitions: more than the limit allows

CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls
Metadata = messages.request(ApiKey.METADATA).cls


def limited_broker(directory) -> BrokerProcess:
    """A broker whose soft and hard RLIMIT_NOFILE are LIMIT."""
    wrapper = (
        "import resource, runpy\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({LIMIT}, {LIMIT}))\n"
        "runpy.run_module('pykbroker', run_name='__main__', alter_sys=True)\n"
    )
    return BrokerProcess(directory, {"auto.create.topics.enable": "false"}, command=[sys.executable, "-c", wrapper])


def create_topics(client: WireClient, names: list[str]) -> dict[str, tuple[int, str | None]]:
    topics = [
        CreateTopics.CreatableTopic(name=name, num_partitions=PARTITIONS_PER_TOPIC, replication_factor=1,
                                    assignments=[], configs=[])
        for name in names
    ]
    response = client.request(ApiKey.CREATE_TOPICS, 7, CreateTopics(topics=topics, timeout_ms=30000))
    return {result.name: (result.error_code, result.error_message) for result in response.topics}


def metadata(client: WireClient) -> dict[str, int]:
    """{topic: partition count} of every topic the broker knows."""
    response = client.request(ApiKey.METADATA, 12, Metadata(topics=None, allow_auto_topic_creation=False))
    return {topic.name: len(topic.partitions) for topic in response.topics if topic.error_code == 0}


def partitions_on_disk(broker: BrokerProcess) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for name in os.listdir(broker.directory / "kafka-logs"):
        parsed = parse_partition_dir(name)
        if parsed is not None and (broker.directory / "kafka-logs" / name).is_dir():
            found.setdefault(parsed[0], set()).add(parsed[1])
    return found


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_create_topics_beyond_the_descriptor_limit_fails_per_topic_and_leaves_no_partial_topic(tmp_path):
    names = [f"t{i:02d}" for i in range(TOPICS)]
    broker = limited_broker(tmp_path)
    with broker:
        assert f"Open file limit {LIMIT} allows about" in broker.log_text()
        with WireClient(broker.bootstrap) as client:
            results = {}
            for first in range(0, TOPICS, 5):  # a few requests, as an admin tool would send them
                results.update(create_topics(client, names[first:first + 5]))
            created = [name for name in names if results[name][0] == ErrorCode.NONE]
            failed = [name for name in names if results[name][0] != ErrorCode.NONE]
            assert created and failed
            assert {results[name][0] for name in failed} == {ErrorCode.KAFKA_STORAGE_ERROR}
            assert "Too many open files" in results[failed[0]][1]

            assert metadata(client) == {name: PARTITIONS_PER_TOPIC for name in created}  # the same connection
            with WireClient(broker.bootstrap) as other:
                assert set(metadata(other)) == set(created)
            assert partitions_on_disk(broker) == {name: set(range(PARTITIONS_PER_TOPIC)) for name in created}
            per_partition = open_descriptors(broker.process.pid) / (len(created) * PARTITIONS_PER_TOPIC)
            assert per_partition < 1.5  # one each, and the broker's own few

    with broker:  # restarted with the same limit
        with WireClient(broker.bootstrap) as client:
            known = metadata(client)
        assert known == {name: PARTITIONS_PER_TOPIC for name in created}
        assert partitions_on_disk(broker) == {name: set(range(PARTITIONS_PER_TOPIC)) for name in known}
