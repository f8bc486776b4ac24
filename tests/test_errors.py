"""The error code table: Kafka 3.9's codes, names, retriability; KafkaError."""
import inspect

import pytest

from pykbroker.protocol.errors import ErrorCode, ErrorInfo, KafkaError, all_errors, error_info

# kafka-python names a few errors differently from Kafka's enum; everything else must match.
KAFKA_PYTHON_NAME_DIFFERENCES = {
    -1: "UNKNOWN",                         # Kafka: UNKNOWN_SERVER_ERROR
    0: "NO_ERROR",                         # Kafka: NONE
    6: "NOT_LEADER_FOR_PARTITION",         # Kafka: NOT_LEADER_OR_FOLLOWER (renamed in Kafka 2.6)
    10: "MESSAGE_SIZE_TOO_LARGE",          # Kafka: MESSAGE_TOO_LARGE
    17: "INVALID_TOPIC",                   # Kafka: INVALID_TOPIC_EXCEPTION
    39: "INVALID_REPLICATION_ASSIGNMENT",  # Kafka: INVALID_REPLICA_ASSIGNMENT
}


def test_codes_are_unique_and_cover_minus_one_to_127():
    codes = [info.code for info in all_errors()]
    assert len(codes) == len(set(codes))
    assert codes[:129] == list(range(-1, 128))
    assert set(codes[129:]) <= KAFKA_4_CODES


KAFKA_4_CODES = set(range(128, 134))  # Kafka 4.x's codes, added as the APIs that answer them are served


def test_names_are_unique():
    names = [info.name for info in all_errors()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("code, name", [
    (-1, "UNKNOWN_SERVER_ERROR"),
    (0, "NONE"),
    (1, "OFFSET_OUT_OF_RANGE"),
    (2, "CORRUPT_MESSAGE"),
    (3, "UNKNOWN_TOPIC_OR_PARTITION"),
    (6, "NOT_LEADER_OR_FOLLOWER"),
    (16, "NOT_COORDINATOR"),
    (17, "INVALID_TOPIC_EXCEPTION"),
    (25, "UNKNOWN_MEMBER_ID"),
    (27, "REBALANCE_IN_PROGRESS"),
    (35, "UNSUPPORTED_VERSION"),
    (36, "TOPIC_ALREADY_EXISTS"),
    (40, "INVALID_CONFIG"),
    (42, "INVALID_REQUEST"),
    (47, "INVALID_PRODUCER_EPOCH"),
    (58, "SASL_AUTHENTICATION_FAILED"),
    (79, "MEMBER_ID_REQUIRED"),
    (87, "INVALID_RECORD"),
    (90, "PRODUCER_FENCED"),
    (100, "UNKNOWN_TOPIC_ID"),
    (120, "TRANSACTION_ABORTABLE"),
    (127, "VOTER_NOT_FOUND"),
])
def test_well_known_codes_and_names(code, name):
    assert ErrorCode[name] == code
    assert error_info(code).name == name


@pytest.mark.parametrize("error, retriable", [
    (ErrorCode.UNKNOWN_SERVER_ERROR, False),
    (ErrorCode.NONE, False),
    (ErrorCode.OFFSET_OUT_OF_RANGE, False),
    (ErrorCode.CORRUPT_MESSAGE, True),
    (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, True),
    (ErrorCode.LEADER_NOT_AVAILABLE, True),
    (ErrorCode.NOT_LEADER_OR_FOLLOWER, True),
    (ErrorCode.REQUEST_TIMED_OUT, True),
    (ErrorCode.MESSAGE_TOO_LARGE, False),
    (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, True),
    (ErrorCode.NOT_COORDINATOR, True),
    (ErrorCode.NOT_ENOUGH_REPLICAS, True),
    (ErrorCode.REBALANCE_IN_PROGRESS, False),
    (ErrorCode.UNSUPPORTED_VERSION, False),
    (ErrorCode.TOPIC_ALREADY_EXISTS, False),
    (ErrorCode.NOT_CONTROLLER, True),
    (ErrorCode.CONCURRENT_TRANSACTIONS, True),
    (ErrorCode.KAFKA_STORAGE_ERROR, True),
    (ErrorCode.FENCED_LEADER_EPOCH, True),
    (ErrorCode.MEMBER_ID_REQUIRED, False),
    (ErrorCode.INVALID_RECORD, False),
    (ErrorCode.UNSTABLE_OFFSET_COMMIT, True),
    (ErrorCode.THROTTLING_QUOTA_EXCEEDED, True),
    (ErrorCode.UNKNOWN_TOPIC_ID, True),
    (ErrorCode.SHARE_SESSION_NOT_FOUND, True),
    (ErrorCode.TRANSACTION_ABORTABLE, False),
])
def test_retriable_flags(error, retriable):
    assert error.retriable is retriable
    assert error_info(error).retriable is retriable


def test_default_messages():
    assert ErrorCode.NONE.message is None
    assert error_info(3) == ErrorInfo(3, "UNKNOWN_TOPIC_OR_PARTITION", True,
                                      "This server does not host this topic-partition.")
    assert ErrorCode.UNSUPPORTED_VERSION.message == "The version of API is not supported."
    assert all(info.message for info in all_errors() if info.code != 0)


def test_error_code_behaves_as_int():
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER == 6
    assert ErrorCode(36) is ErrorCode.TOPIC_ALREADY_EXISTS
    assert int(ErrorCode.UNKNOWN_SERVER_ERROR) == -1
    assert ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.to_bytes(2, "big", signed=True) == b"\x00\x03"


def test_unknown_code_is_rejected():
    with pytest.raises(ValueError):
        error_info(1000)


def test_kafka_error_carries_code_and_message():
    error = KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal")
    assert error.code is ErrorCode.INVALID_TOPIC_EXCEPTION
    assert error.message == "Topic name is illegal"
    assert str(error) == "Topic name is illegal"
    assert not error.retriable


def test_kafka_error_without_message_falls_back_to_default():
    error = KafkaError(6)
    assert error.code is ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert error.message is None
    assert error.message_or_default == ErrorCode.NOT_LEADER_OR_FOLLOWER.message
    assert error.retriable


def test_kafka_error_refuses_none():
    with pytest.raises(ValueError):
        KafkaError(ErrorCode.NONE)


def test_handler_translates_error_to_code():
    def handle_partition():
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

    try:
        handle_partition()
    except KafkaError as error:
        code = error.code
    assert code == 3


def kafka_python_errors():
    kafka_errors = pytest.importorskip("kafka.errors")
    by_code = {}
    for _, cls in inspect.getmembers(kafka_errors, inspect.isclass):
        if issubclass(cls, kafka_errors.BrokerResponseError) and getattr(cls, "errno", None) is not None:
            by_code[cls.errno] = cls.message
    return by_code


def test_names_match_kafka_python():
    theirs = kafka_python_errors()
    assert theirs, "kafka-python defines no broker errors?"
    for code, their_name in theirs.items():
        if -1 <= code <= 127:
            expected = KAFKA_PYTHON_NAME_DIFFERENCES.get(code, error_info(code).name)
            assert their_name == expected, f"code {code}: kafka-python {their_name}, Kafka {error_info(code).name}"


def test_kafka_python_covers_no_code_missing_here():
    for code in kafka_python_errors():
        if code <= 127:
            error_info(code)


def test_an_error_message_echoing_a_long_request_value_still_fits_a_string_field():
    from pykbroker.protocol.errors import MAX_STRING_BYTES, ErrorCode, KafkaError

    error = KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: " + "é" * 20000)
    assert len(error.message.encode()) <= MAX_STRING_BYTES
    assert error.message.startswith("Broker id must be an integer, but it is: é")
