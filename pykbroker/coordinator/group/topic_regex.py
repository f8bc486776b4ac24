"""Regular expressions of KIP-848 regex subscriptions (`SubscribedTopicRegex`), as Kafka 4's
group coordinator reads them: Google RE2/J syntax (`com.google.re2j.Pattern`), matched against
the whole topic name (`Pattern.matcher(name).matches()`).

`compile_topic_regex` compiles with RE2 (the `google-re2` package, whose syntax RE2/J follows)
and raises `InvalidTopicRegex` carrying Kafka's message for INVALID_REGULAR_EXPRESSION,
"SubscribedTopicRegex `<regex>` is not a valid regular expression: <description>.", where the
description is RE2/J's (`PatternSyntaxException.getDescription()`). Where RE2 and RE2/J differ,
RE2/J's answer wins:
- `\\C` (any byte) is accepted by RE2 and rejected by RE2/J ("invalid escape sequence");
- a capture group name used twice is accepted by RE2 and rejected by RE2/J ("duplicate capture
  group name");
- an unbalanced `)` is "regexp/syntax: internal error" in RE2/J, RE2's other descriptions are
  translated to RE2/J's wording;
- RE2's limit on a compiled program's size is raised far beyond any topic regex (RE2/J has none).
Lookaround, backreferences and possessive quantifiers are invalid in both.

Kafka matches a regex against every topic in the metadata, internal topics included (only a
DESCRIBE authorization filter applies, which the coordinator does); `resolve` does the same.

RE2 is imported when the first regex is compiled: groups without regex subscriptions never load it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

# RE2's descriptions and RE2/J's for the same errors (RE2/J's Parser constants).
_RE2J_DESCRIPTIONS = {
    "missing )": "missing closing )",
    "unexpected )": "regexp/syntax: internal error",
    "missing ]": "missing closing ]",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "trailing \\": "trailing backslash at end of expression",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "invalid named capture group": "invalid named capture",
    # the pattern reached RE2 as valid UTF-8: RE2 says this of an unfinished `\x{...` escape
    "invalid UTF-8": "invalid escape sequence",
    "expression nests too deeply": "nesting depth exceeded",
}
_MAX_PROGRAM_MEMORY = 256 << 20
_NAMED_GROUP = re.compile(r"\(\?P?<([^>]*)>")


# Kafka 4's INVALID_REGULAR_EXPRESSION error code, answered with InvalidTopicRegex's message.
INVALID_REGULAR_EXPRESSION = 128


class InvalidTopicRegex(ValueError):
    """A SubscribedTopicRegex RE2/J would not compile; str() is Kafka's error message and
    `error_code` Kafka's INVALID_REGULAR_EXPRESSION."""

    error_code = INVALID_REGULAR_EXPRESSION

    def __init__(self, pattern: str, description: str) -> None:
        super().__init__(f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: {description}.")
        self.pattern = pattern
        self.description = description


class TopicRegex:
    """A compiled SubscribedTopicRegex."""

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def matches(self, topic: str) -> bool:
        """True when the whole topic name matches, as RE2/J's `matcher(topic).matches()`."""
        return self._compiled.fullmatch(topic) is not None

    def resolve(self, topic_names: Iterable[str]) -> set[str]:
        """The topics the regex names, internal topics included as Kafka's coordinator does."""
        return {name for name in topic_names if self.matches(name)}

    def __repr__(self) -> str:
        return f"TopicRegex({self.pattern!r})"


def compile_topic_regex(pattern: str) -> TopicRegex:
    """The compiled regex, or `InvalidTopicRegex` with Kafka's message."""
    description = _re2j_only_error(pattern)
    if description is not None:
        raise InvalidTopicRegex(pattern, description)
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

    options = re2.Options()
    options.max_mem = _MAX_PROGRAM_MEMORY
    options.log_errors = False
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as error:
        raise InvalidTopicRegex(pattern, _re2j_description(error)) from None
    except UnicodeError:  # a lone surrogate: no UTF-8 for RE2 to read
        raise InvalidTopicRegex(pattern, "invalid UTF-8") from None
    return TopicRegex(pattern, compiled)


def _re2j_description(error: Exception) -> str:
    message = error.args[0] if error.args else b""
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
    code, _, fragment = (part.strip() for part in text.partition(":"))
    if code == "invalid perl operator" and fragment.startswith("(?<"):
        return "invalid named capture"  # RE2/J reads any "(?<" as a named group: lookbehind
    description = _RE2J_DESCRIPTIONS.get(code)
    if description is None:
        log.debug("RE2 error %r has no RE2/J wording", text)
        return code
    return description


def _re2j_only_error(pattern: str) -> str | None:
    """Errors RE2/J raises where RE2 compiles: `\\C` and duplicate group names."""
    if _has_any_byte_escape(pattern):
        return "invalid escape sequence"
    names = [m.group(1) for m in _NAMED_GROUP.finditer(_without_quoted(pattern))]
    if len(names) != len(set(names)):
        return "duplicate capture group name"
    return None


def _without_quoted(pattern: str) -> str:
    """The pattern without its escapes and `\\Q...\\E` literals, which hold no syntax."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and pattern.startswith("\\Q", index):
            end = pattern.find("\\E", index + 2)
            index = len(pattern) if end < 0 else end + 2
            continue
        if char == "\\":
            index += 2
            out.append("_")
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _has_any_byte_escape(pattern: str) -> bool:
    index = 0
    while index < len(pattern):
        if pattern.startswith("\\Q", index):
            end = pattern.find("\\E", index + 2)
            if end < 0:
                return False
            index = end + 2
            continue
        if pattern[index] == "\\":
            if pattern.startswith("\\C", index):
                return True
            index += 2
            continue
        index += 1
    return False
