"""Kafka's JAAS config syntax (the `sasl.jaas.config` values), parsed as Kafka's `JaasConfig` does:

    <loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;

    entry = parse_single_entry('org.apache.kafka.common.security.plain.PlainLoginModule required '
                               'user_alice="alice-secret";')
    entry.options["user_alice"]         # 'alice-secret'

Kafka tokenizes with Java's `StreamTokenizer`, configured so that every character but white space
(0-32), `;`, `=`, `/` (a comment: `//`, `/* */`, or a lone `/` to the end of the line) and the
quotes `"` and `'` belongs to a word. Quoted values keep everything up to the closing quote (or the
end of the line), with Java's escapes (`\\n`, `\\t`, octal `\\123`, `\\"`, ...). The errors are
Kafka's own messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONTROL_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")

_EOF = "EOF"
_WORD = "WORD"
_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}


class JaasConfigError(ValueError):
    """A JAAS config Kafka would refuse, with Kafka's message."""


@dataclass(frozen=True)
class JaasEntry:
    login_module: str
    control_flag: str  # upper case: REQUIRED, REQUISITE, SUFFICIENT or OPTIONAL
    options: dict[str, str] = field(default_factory=dict)


@dataclass
class _Token:
    ttype: str  # _EOF, _WORD, a quote character, or the ordinary character itself
    sval: str | None = None


def _is_word_char(c: str) -> bool:
    code = ord(c)
    if code > 255:
        return True
    if c in ";=\"'/":
        return False
    return 33 <= code <= 128 or 160 <= code <= 255


class _Tokenizer:
    """java.io.StreamTokenizer with the syntax Kafka's JaasConfig sets up."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def _skip_to_end_of_line(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] not in "\r\n":
            self.pos += 1

    def next(self) -> _Token:
        while True:
            c = self._peek()
            if c is None:
                return _Token(_EOF)
            if ord(c) <= 32:
                self.pos += 1
                continue
            if c == "/":
                self.pos += 1
                following = self._peek()
                if following == "*":
                    end = self.text.find("*/", self.pos + 1)
                    if end < 0:
                        self.pos = len(self.text)
                        return _Token(_EOF)
                    self.pos = end + 2
                    continue
                self._skip_to_end_of_line()  # `//`, or `/` itself as a comment character
                continue
            if c in "\"'":
                self.pos += 1
                return _Token(c, self._quoted(c))
            if _is_word_char(c):
                start = self.pos
                while self.pos < len(self.text) and _is_word_char(self.text[self.pos]):
                    self.pos += 1
                return _Token(_WORD, self.text[start : self.pos])
            self.pos += 1
            return _Token(c)

    def _quoted(self, quote: str) -> str:
        out: list[str] = []
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c == quote:
                self.pos += 1
                return "".join(out)
            if c in "\r\n":
                return "".join(out)  # an unterminated quote ends at the end of its line
            self.pos += 1
            if c == "\\" and self.pos < len(text):
                c = text[self.pos]
                self.pos += 1
                if "0" <= c <= "7":
                    value = ord(c) - ord("0")
                    limit = 3 if c <= "3" else 2
                    digits = 1
                    while digits < limit and self.pos < len(text) and "0" <= text[self.pos] <= "7":
                        value = value * 8 + ord(text[self.pos]) - ord("0")
                        self.pos += 1
                        digits += 1
                    out.append(chr(value))
                    continue
                out.append(_ESCAPES.get(c, c))
                continue
            out.append(c)
        return "".join(out)


def parse_jaas_config(text: str) -> list[JaasEntry]:
    """Every login module entry of a JAAS config value; JaasConfigError with Kafka's message."""
    tokenizer = _Tokenizer(text)
    entries = []
    token = tokenizer.next()
    while token.ttype != _EOF:
        entries.append(_parse_entry(tokenizer, token))
        token = tokenizer.next()
    if not entries:
        raise JaasConfigError("Login module not specified in JAAS config")
    return entries


def _parse_entry(tokenizer: _Tokenizer, first: _Token) -> JaasEntry:
    login_module = first.sval
    token = tokenizer.next()
    if token.ttype == _EOF:
        raise JaasConfigError("Login module control flag not specified in JAAS config")
    if token.sval is None:
        raise JaasConfigError("Login module control flag is not available in the JAAS config")
    flag = token.sval.upper()
    if flag not in CONTROL_FLAGS:
        raise JaasConfigError(f"Invalid login module control flag '{token.sval}' in JAAS config")
    options: dict[str, str] = {}
    token = tokenizer.next()
    while token.ttype not in (_EOF, ";"):
        key = token.sval
        equals = tokenizer.next()
        value = tokenizer.next() if equals.ttype == "=" else None
        if value is None or value.ttype == _EOF or value.sval is None or key is None:
            raise JaasConfigError(f"Value not specified for key '{key}' in JAAS config")
        options[key] = value.sval
        token = tokenizer.next()
    if token.ttype != ";":
        raise JaasConfigError("JAAS config entry not terminated by semi-colon")
    return JaasEntry(login_module or "null", flag, options)


def parse_single_entry(text: str) -> JaasEntry:
    """A `sasl.jaas.config` value, which must hold exactly one login module (Kafka's rule)."""
    entries = parse_jaas_config(text)
    if len(entries) != 1:
        raise JaasConfigError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]
