"""The console consumer's group as Kafka 3.9's console consumer uses it (tools/console_group.py):
when a refused group is reported, and the auto-commit of a consumer that only assigns. The runs
against both brokers, beside Kafka's own tool, are in tests/compat/test_assign_without_group_acl.py."""

from __future__ import annotations

from confluent_kafka import KafkaError

from pykbroker.tools.console_group import ConsoleGroup, Position

REFUSED = KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.")
TERMINATED = (
    "ERROR Error processing message, terminating consumer process:  "
    "org.apache.kafka.common.errors.GroupAuthorizationException: Not authorized to access group: g\n"
)


class FakeConsumer:
    """Records the commits asked of it."""

    def __init__(self):
        self.commits = []

    def commit(self, asynchronous=True):
        self.commits.append(asynchronous)


def group(assigned: bool, **properties: str) -> ConsoleGroup:
    return ConsoleGroup.of({"group.id": "g", "client.id": "console-consumer", **properties}, assigned=assigned)


def test_a_subscribed_consumer_stops_at_the_refusal_with_kafkas_error_line(capsys):
    subscribed = group(assigned=False)
    assert subscribed.note(REFUSED)
    assert subscribed.ends_consuming(FakeConsumer()) and subscribed.ends_consuming(FakeConsumer())
    assert capsys.readouterr().err == TERMINATED  # printed once


def test_an_assigned_consumer_without_auto_commit_never_reports_the_refusal(capsys):
    assigned = group(assigned=True, **{"enable.auto.commit": "false"})
    consumer = FakeConsumer()
    assert assigned.note(REFUSED)
    assert not assigned.ends_consuming(consumer)
    assigned.close(consumer, lambda: [Position("t", 0, 3, 0)])
    assert (capsys.readouterr().err, consumer.commits) == ("", [])


def test_an_assigned_consumer_with_auto_commit_warns_at_close_that_its_commit_was_refused(capsys):
    assigned = group(assigned=True, **{"enable.auto.commit": "true", "auto.commit.interval.ms": "60000"})
    consumer = FakeConsumer()
    assert assigned.note(REFUSED)
    assert not assigned.ends_consuming(consumer)  # the first auto-commit is not due yet
    assigned.close(consumer, lambda: [Position("t", 0, 3, 0), Position("t", 1, 5)])
    assert consumer.commits == []
    assert capsys.readouterr().err == (
        "WARN [Consumer clientId=console-consumer, groupId=g] Synchronous auto-commit of offsets "
        "{t-0=OffsetAndMetadata{offset=3, leaderEpoch=0, metadata=''}, "
        "t-1=OffsetAndMetadata{offset=5, leaderEpoch=null, metadata=''}} "
        "failed: Not authorized to access group: g\n"
    )


def test_the_first_due_auto_commit_ends_a_refused_assigned_consumer(capsys):
    assigned = group(assigned=True, **{"enable.auto.commit": "true", "auto.commit.interval.ms": "0"})
    assert assigned.note(REFUSED)
    assert assigned.ends_consuming(FakeConsumer())
    assert capsys.readouterr().err == TERMINATED


def test_an_assigned_consumer_allowed_its_group_commits_itself_when_due_and_at_close():
    assigned = group(assigned=True, **{"enable.auto.commit": "true", "auto.commit.interval.ms": "0"})
    consumer = FakeConsumer()
    assert assigned.commits_itself()
    assert not assigned.ends_consuming(consumer)
    assigned.close(consumer, lambda: [])
    assert consumer.commits == [True, False]  # asynchronous when due, synchronous at close


def test_other_errors_are_not_the_groups_refusal():
    assert not group(assigned=True).note(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
