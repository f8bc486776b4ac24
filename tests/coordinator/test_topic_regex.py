"""SubscribedTopicRegex as Kafka 4's group coordinator reads it: RE2/J syntax, whole-name matches,
and INVALID_REGULAR_EXPRESSION with Kafka's message for what RE2/J would not compile."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pykbroker.coordinator.group.topic_regex import (
    INVALID_REGULAR_EXPRESSION,
    InvalidTopicRegex,
    compile_topic_regex,
)


@pytest.mark.parametrize(
    ("pattern", "topic", "matches"),
    [
        ("orders-.*", "orders-eu", True),
        ("orders-.*", "reorders-eu", False),  # the whole name must match
        ("orders", "orders-eu", False),
        ("orders|payments", "payments", True),
        ("(?i)ORDERS", "orders", True),
        ("[a-z]+\\d{2}", "topic42", True),
        ("\\Qa.b\\E", "a.b", True),
        ("\\Qa.b\\E", "axb", False),
        ("t\\.v[0-9]+", "t.v12", True),
        ("\\pL+", "topic", True),
        ("[[:alpha:]]+", "topic", True),
        ("x*?", "xxx", True),
        ("", "", True),
        ("", "orders", False),
    ],
)
def test_a_topic_matches_when_the_whole_name_does(pattern: str, topic: str, matches: bool) -> None:
    assert compile_topic_regex(pattern).matches(topic) is matches


@pytest.mark.parametrize(
    ("pattern", "description"),
    [
        ("(", "missing closing )"),
        ("a)", "regexp/syntax: internal error"),
        ("[a", "missing closing ]"),
        ("*", "missing argument to repetition operator"),
        ("a**", "invalid nested repetition operator"),
        ("a++", "invalid nested repetition operator"),  # no possessive quantifiers
        ("a{1001}", "invalid repeat count"),
        ("a{2,1}", "invalid repeat count"),
        ("(?=a)", "invalid or unsupported Perl syntax"),  # no lookahead
        ("(?<=a)b", "invalid named capture"),  # no lookbehind; RE2/J reads "(?<" as a name
        ("(?<!a)b", "invalid named capture"),
        ("(?z)", "invalid or unsupported Perl syntax"),
        ("a\\", "trailing backslash at end of expression"),
        ("(a)\\1", "invalid escape sequence"),  # no backreferences
        ("\\Z", "invalid escape sequence"),
        ("\\C", "invalid escape sequence"),  # RE2 takes it, RE2/J does not
        ("[z-a]", "invalid character class range"),
        ("[[:foo:]]", "invalid character class range"),
        ("(?P<>a)", "invalid named capture"),
        ("(?P<n>a)(?<n>b)", "duplicate capture group name"),  # RE2 takes it, RE2/J does not
        ("a\ud800", "invalid UTF-8"),  # a lone surrogate is an error, not a crash
        ("a\\x{", "invalid escape sequence"),
        ("a\\x{zz}", "invalid escape sequence"),
    ],
)
def test_an_invalid_regex_is_kafkas_invalid_regular_expression(pattern: str, description: str) -> None:
    with pytest.raises(InvalidTopicRegex) as raised:
        compile_topic_regex(pattern)
    assert raised.value.error_code == INVALID_REGULAR_EXPRESSION == 128
    assert str(raised.value) == f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: {description}."


def test_quoted_text_and_named_groups_are_valid() -> None:
    assert compile_topic_regex("\\Q\\C(?P<n>\\E").matches("\\C(?P<n>")
    assert compile_topic_regex("(?P<a>x)(?<b>y)").matches("xy")


def test_internal_topics_match_as_any_other_as_in_kafka() -> None:
    regex = compile_topic_regex(".*")
    topics = {"__consumer_offsets", "__transaction_state", "__share_group_state", "orders"}
    assert regex.resolve(topics) == topics
    assert compile_topic_regex("orders.*").resolve(topics) == {"orders"}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab.*+?|()[]{}^$\\-:,0123456789PQECzZ<>=!iU")), max_size=12))
def test_any_text_compiles_or_is_invalid_never_a_crash(pattern: str) -> None:
    try:
        regex = compile_topic_regex(pattern)
    except InvalidTopicRegex as error:
        assert str(error).startswith(f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: ")
    else:
        assert isinstance(regex.matches("ab-01"), bool)
