"""Rows come out in the order Kafka's tools print them: a Java HashMap's iteration order."""

from pykbroker.common.java_order import hash_map_order, hash_set_order, partitions_in_java_order, string_hash


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


def test_a_hash_set_made_from_a_collection_iterates_as_java_17():
    # jshell: new ArrayList<>(new HashSet<>(List.of("SCRAM-SHA-256", "PLAIN", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")))
    mechanisms = ["SCRAM-SHA-256", "PLAIN", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER"]
    assert hash_set_order(mechanisms) == ["PLAIN", "SCRAM-SHA-512", "GSSAPI", "SCRAM-SHA-256", "OAUTHBEARER"]
