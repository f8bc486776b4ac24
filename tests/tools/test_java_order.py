"""Rows come out in the order Kafka's tools print them: a Java HashMap's iteration order."""

from pykbroker.tools.java_order import hash_map_order, partitions_in_java_order, string_hash


def test_string_hash_is_javas():
    assert string_hash("") == 0
    assert string_hash("hello") == 99162322
    assert string_hash("é") == 233
    assert string_hash("polygenelubricants") == 0x80000000  # Java's Integer.MIN_VALUE, unsigned here


def test_a_hash_map_iterates_by_bucket_then_insertion():
    assert hash_map_order(["cg", "g1", "live2"], string_hash) == ["cg", "live2", "g1"]
    # more than 12 keys: the table doubles to 32 buckets
    keys = [f"group-{n}" for n in range(13)]
    assert sorted(hash_map_order(keys, string_hash)) == sorted(keys)


def test_partitions_of_one_topic_in_kafkas_describe_order():
    assert partitions_in_java_order([("t1", 0), ("t1", 1), ("t1", 2)]) == [("t1", 2), ("t1", 1), ("t1", 0)]


# What Kafka 3.9.0's TopicCommand printed for `--describe --topic PATTERN` on a cluster of these
# topics (measured against it): the order of its rows.
MEASURED_CLUSTER = (
    "__consumer_offsets cc dr nosuchtopic2 nosuchtopic3 pk1 pk2 ra.k t1 t2 xa xb xc xd xe xf xg xh xi xj xk xl xm"
).split()
MEASURED_DESCRIBE_ORDERS = [
    "dr t2",
    "xa t1 dr t2",
    "xa dr t2",
    "xa xb t1 dr t2",
    "t1 xe",
    "t1 xe dr",
    "cc xm t1 xe pk2 pk1",
    "xa xb xc xd t1 xe dr t2",
    "xa xb xc xd xe xf xg xh xi xj xk xl xm",
    "cc nosuchtopic2 xa xb xc xd xe dr nosuchtopic3 xf xg xh xi xj xk xl xm pk2 pk1 ra.k t1 __consumer_offsets t2",
]


def test_topics_are_described_in_the_order_kafkas_topic_command_printed():
    from pykbroker.tools.topics import describe_order

    for measured in MEASURED_DESCRIBE_ORDERS:
        chosen = measured.split()
        assert describe_order(MEASURED_CLUSTER, sorted(chosen)) == chosen
    three = ["__consumer_offsets", "parity-6b1d3ad8", "parity-data-3d5cd30b"]
    assert describe_order(three, three) == ["parity-data-3d5cd30b", "__consumer_offsets", "parity-6b1d3ad8"]
