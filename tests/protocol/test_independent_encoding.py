"""Our encoding agrees byte for byte with kafka-python's hand-written protocol classes.

For every (API, version) that kafka-python's independent implementation covers, a message with
every field set is encoded by us, decoded by kafka-python and re-encoded by kafka-python: the bytes
must be identical (so both agree on every field, its type and its position). Then kafka-python's
encoding is decoded by us and must give back the original message.
"""
import pytest

from pykbroker.protocol import messages

from .independent import independent_classes
from .samples import SampleBuilder

# Where kafka-python's hand-written classes are themselves wrong (checked against Kafka's schemas).
KAFKA_PYTHON_DEVIATIONS = {
    (29, 2, "request"): "kafka-python marks DescribeAcls v2 flexible but keeps the v1 layout",
    (29, 2, "response"): "kafka-python marks DescribeAcls v2 flexible but keeps the v1 layout",
    (35, 0, "request"): "kafka-python declares DescribeLogDirs v0 partitions as int32, not []int32",
}


class CrossCheckSample(SampleBuilder):
    """Samples kafka-python can read: no tagged fields (it cannot re-encode known tags), and
    error code 0 in ApiVersions responses (it reads any error as a v0 body, as clients must)."""

    def _value(self, f):
        if f.name == "ErrorCode" and self.message.name == "ApiVersionsResponse":
            return 0
        return super()._value(f)

    def _struct(self, spec):
        obj = super()._struct(spec)
        if self.message.is_flexible(self.version):
            for f in spec.fields:
                if self.version in f.tagged_versions:
                    default = self.message.classes[spec.name]()
                    setattr(obj, f.attr, getattr(default, f.attr))
        return obj


def _cases():
    for (api_key, version, kind), cls in sorted(independent_classes().items()):
        message = messages.request(api_key) if kind == "request" else messages.response(api_key)
        if version not in message.versions:
            continue
        marks = ()
        if (api_key, version, kind) in KAFKA_PYTHON_DEVIATIONS:
            marks = pytest.mark.xfail(reason=KAFKA_PYTHON_DEVIATIONS[(api_key, version, kind)],
                                      strict=True)
        yield pytest.param(message, version, cls, id=f"{message.name}-v{version}", marks=marks)


@pytest.mark.parametrize("message,version,independent", list(_cases()))
def test_encoding_agrees_with_kafka_python(message, version, independent):
    original = CrossCheckSample(message, version).build()
    ours = message.encode_bytes(original, version=version)
    theirs = independent.decode(ours).encode()
    assert theirs == ours
    decoded, end = message.decode(theirs, version=version)
    assert end == len(theirs) and decoded == original
