"""Pre-encoded struct arrays (`MessageType.encode_structs`): given as an array's value, they
encode to the same bytes as the structs themselves, in every version, and decode back."""
import uuid

import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.codegen import EncodedStructs

METADATA = messages.response(ApiKey.METADATA)
Response = METADATA.cls


def partition(index: int):
    return Response.MetadataResponsePartition(
        error_code=0, partition_index=index, leader_id=1, leader_epoch=4, replica_nodes=[1, 2, 3],
        isr_nodes=[1, 2], offline_replicas=[3])


def topic(name: str, partitions: int):
    return Response.MetadataResponseTopic(
        error_code=0, name=name, topic_id=uuid.UUID(int=7), is_internal=False,
        partitions=[partition(p) for p in range(partitions)])


def response(topics):
    return Response(brokers=[Response.MetadataResponseBroker(node_id=1, host="h", port=9092, rack=None)],
                    cluster_id="c", controller_id=1, topics=topics)


@pytest.mark.parametrize("version", METADATA.versions)
def test_pre_encoded_topics_encode_as_the_topics_themselves(version):
    topics = [topic("a", 3), topic("b", 0), topic("c", 200)]
    encoded = METADATA.encode_structs("MetadataResponseTopic", topics, version=version)
    assert METADATA.encode_bytes(response(encoded), version=version) == \
        METADATA.encode_bytes(response(topics), version=version)


@pytest.mark.parametrize("version", METADATA.versions)
def test_pre_encoded_partitions_inside_a_topic_encode_as_the_partitions_themselves(version):
    plain = topic("a", 5)
    nested = topic("a", 0)
    nested.partitions = METADATA.encode_structs("MetadataResponsePartition", plain.partitions, version=version)
    assert METADATA.encode_bytes(response([nested]), version=version) == \
        METADATA.encode_bytes(response([plain]), version=version)


def test_joined_pre_encoded_arrays_are_one_array_of_all_their_elements():
    version = 12
    first, second = [topic("a", 1)], [topic("b", 2), topic("c", 0)]
    joined = EncodedStructs.joined([METADATA.encode_structs("MetadataResponseTopic", part, version=version)
                                    for part in (first, second)])
    assert len(joined) == 3
    assert METADATA.encode_bytes(response(joined), version=version) == \
        METADATA.encode_bytes(response(first + second), version=version)


def test_pre_encoded_structs_decode_back_to_equal_structs():
    topics = [topic("a", 2), topic("b", 1)]
    encoded = METADATA.encode_structs("MetadataResponseTopic", topics, version=12)
    assert METADATA.decode_structs("MetadataResponseTopic", encoded, version=12) == topics
