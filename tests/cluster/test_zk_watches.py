"""The ZooKeeper watches of a broker's cluster view (no ZooKeeper needed: the client is a
stand-in that records the watches and fires them by hand)."""
import uuid

from pykbroker.cluster.zk_data import LeaderAndIsr, TopicAssignment
from pykbroker.cluster.zk_watches import ClusterWatches


class RecordingZkClient:
    """Records each watch's callback, as kazoo's DataWatch would hold it."""

    def __init__(self):
        self.topic_watches, self.state_watches = {}, {}

    def watch_topic(self, topic, callback):
        self.topic_watches[topic] = callback

    def watch_partition_state(self, topic, partition, callback):
        self.state_watches[(topic, partition)] = callback

    def get_entity_configs(self, entity_type, name):
        return {}


class ImmediateBridge:
    def post(self, fn, *args):
        fn(*args)


class RecordingStore:
    def __init__(self):
        self.heard = []

    def apply_topic(self, name, assignment, configs):
        self.heard.append(("topic", name))

    def apply_partition_state(self, name, partition, state):
        self.heard.append(("state", name, partition, None if state is None else state.leader))

    def apply_topic_deleted(self, name):
        self.heard.append(("deleted", name))


def watching_topic_t():
    client, store = RecordingZkClient(), RecordingStore()
    watches = ClusterWatches(client, ImmediateBridge(), store)
    watches._on_topics(["t"])
    client.topic_watches["t"](TopicAssignment(uuid.UUID(int=7), {0: [1, 2, 3]}))
    return client, store, client.state_watches[("t", 0)]


def test_a_state_znode_not_written_yet_is_waited_for():
    _, store, on_state = watching_topic_t()
    assert on_state(None) is None  # the controller has not written it yet: keep watching
    assert on_state(LeaderAndIsr(1, 0, [1, 2, 3], 1, zk_version=0, mzxid=10)) is None
    assert store.heard[-1] == ("state", "t", 0, 1)


def test_the_watch_of_a_deleted_partitions_state_ends():
    client, store, on_state = watching_topic_t()
    on_state(LeaderAndIsr(1, 0, [1, 2, 3], 1, zk_version=0, mzxid=10))
    assert on_state(None) is False  # the znode is gone (topic deletion): the watch ends
    assert store.heard[-1] == ("state", "t", 0, None)
    assert client.topic_watches["t"](None) is False
    assert store.heard[-1] == ("deleted", "t")
