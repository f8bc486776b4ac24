"""Acceptance: pykbroker answers the same raw requests as Kafka 3.9.0 does (ApiVersions ranges,
error codes of bad requests, Metadata fields, DescribeConfigs entries with their defaults and
sources, ListOffsets edge cases), but for the differences accepted in compat/differences.py,
each with its reason, which docs/compatibility.md gives too."""
from __future__ import annotations

import re
from pathlib import Path

from compat import differences
from compat.differences import ACCEPTED, Difference, accepted_reason

COMPATIBILITY = Path(__file__).resolve().parents[2] / "docs" / "compatibility.md"


def test_pykbroker_answers_as_kafka_does_but_for_accepted_differences(wire_differences):
    unaccepted = [str(d) for d in wire_differences if accepted_reason(d) is None]
    assert unaccepted == [], "differences from Kafka 3.9.0 not accepted in " \
        "compat/differences.py:\n" + "\n".join(unaccepted)


def test_every_accepted_difference_is_still_seen(wire_differences):
    stale = [entry.pattern for entry in ACCEPTED
             if not any(accepted_reason(d, [entry]) for d in wire_differences)]
    assert stale == [], "accepted differences no longer found (remove them): " + repr(stale)


def test_the_documentation_gives_the_reason_of_every_accepted_difference():
    documented = re.search(r"^\| reason \| differences \|.*?(?=\n\n|\Z)",
                           COMPATIBILITY.read_text(), re.M | re.S)
    assert documented, "docs/compatibility.md has no table of accepted differences"
    assert documented.group(0).strip() == differences.accepted_markdown()


# -- how differences are found and judged ---------------------------------------------------

def test_a_changed_error_code_is_a_difference_nobody_accepted():
    kafka = {"topic-errors": {"create existing": {"topics": {"t": {"error_code": 36}}}}}
    pykbroker = {"topic-errors": {"create existing": {"topics": {"t": {"error_code": 37}}}}}

    [found] = differences.differences(pykbroker, kafka)

    assert found == Difference("topic-errors / create existing / topics / t / error_code", 37, 36)
    assert accepted_reason(found) is None
    assert differences.report([found]) == (
        "NOT ACCEPTED  topic-errors / create existing / topics / t / error_code: "
        "pykbroker 37, Kafka 36")


def test_a_key_only_one_side_has_is_one_difference_with_its_whole_value():
    found = differences.differences({"configs": {}}, {"configs": {"ssl.protocol": {"value": "x"}}})

    assert found == [Difference("configs / ssl.protocol", differences.MISSING, {"value": "x"})]


def test_equal_answers_have_no_differences():
    answer = {"metadata": {"v12": {"brokers": [{"node_id": "broker"}], "topics": {}}}}

    assert differences.differences(answer, answer) == []
