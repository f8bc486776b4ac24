"""A client certificate's principal, as Kafka's `DefaultKafkaPrincipalBuilder` makes it: the
subject's distinguished name in the form Java's `X500Principal.getName()` gives (RFC 2253,
most specific first: "CN=alice,OU=eng,O=example"), mapped by `ssl.principal.mapping.rules`.

    mapper = SslPrincipalMapper.from_rules("RULE:^CN=(.*?),OU=eng.*$/$1/L,DEFAULT")
    mapper.name("CN=Alice,OU=eng,O=example")       # 'alice'
    principal_of_certificate(der_bytes, mapper)     # KafkaPrincipal('User', 'alice')

The rules have Kafka's syntax (`SslPrincipalMapper`): a comma separated list of `DEFAULT` (the
DN unchanged) and `RULE:pattern/replacement/[LU]`, where the pattern is a Java regular
expression that must match the whole DN and the replacement may use `$1`; the first rule that
matches wins, and a DN no rule matches fails the connection.
"""

from __future__ import annotations

import re

from cryptography import x509
from cryptography.x509.oid import NameOID

from .principal import KafkaPrincipal

_RULE_PATTERN = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE_PATTERN + r")\s*(,\s*|$)")
_RULE_PARSER = re.compile(_RULE_PATTERN)
_BACK_REFERENCE = re.compile(r"\$(\d+)")
_JAVA_NAMED_GROUP = re.compile(r"\(\?<([a-zA-Z][a-zA-Z0-9]*)>")


class NoMatchingRule(Exception):
    """No rule of `ssl.principal.mapping.rules` applies to a DN."""


class _Rule:
    def __init__(self, pattern: str | None = None, replacement: str = "", lower: bool = False, upper: bool = False):
        self.source = pattern
        self.pattern = None if pattern is None else re.compile(_JAVA_NAMED_GROUP.sub(r"(?P<\1>", pattern))
        self.replacement = replacement
        self.lower = lower
        self.upper = upper

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        template = _escape_literal_back_references(self.replacement, self.pattern.groups)
        result = self.pattern.sub(lambda match: _java_replacement(template, match), dn)
        if self.lower:
            return result.lower()
        if self.upper:
            return result.upper()
        return result

    def __repr__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        case = "/L" if self.lower else "/U" if self.upper else ""
        return f"RULE:{self.source}/{self.replacement}{case}"


class SslPrincipalMapper:
    def __init__(self, rules: list[_Rule]) -> None:
        self.rules = rules

    @classmethod
    def from_rules(cls, text: str | None) -> SslPrincipalMapper:
        """Parse `ssl.principal.mapping.rules`; ValueError("Invalid rule: ...") as Kafka's."""
        return cls(_parse_rules(_split_rules("DEFAULT" if text is None else text)))

    def name(self, dn: str) -> str:
        for rule in self.rules:
            name = rule.apply(dn)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {dn}, rules {self.rules}")

    def __repr__(self) -> str:
        return f"SslPrincipalMapper(rules = {self.rules})"


def _split_rules(text: str) -> list[str]:
    return [match.group(1) for match in _RULE_SPLITTER.finditer(text.strip())]


def _parse_rules(rules: list[str]) -> list[_Rule]:
    parsed = []
    for rule in rules:
        match = _RULE_PARSER.match(rule)
        if match is None:
            raise ValueError(f"Invalid rule: {rule}")
        if match.end() != len(rule):
            raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[match.end() :]}`")
        if match.group(1) is not None:
            parsed.append(_Rule())
        elif match.group(2) is not None:
            try:
                parsed.append(_Rule(match.group(2), match.group(4), match.group(6) == "L", match.group(6) == "U"))
            except re.error as exc:
                raise ValueError(f"Invalid rule: {rule}: {exc}") from None
    return parsed


def _escape_literal_back_references(replacement: str, groups: int) -> str:
    """Kafka's rule: `$n` beyond the pattern's groups is a literal (after trying fewer digits)."""
    if groups == 0:
        return replacement
    value = replacement
    for match in list(_BACK_REFERENCE.finditer(replacement)):
        digits = match.group(1)
        if digits.startswith("0"):
            continue
        index = int(digits)
        while index > groups and index >= 10:
            index //= 10
        if index > groups:
            # as Kafka (taken from NiFi): the offset is the original text's, even after an insertion
            start = match.start(1) - 1
            value = value[:start] + "\\" + value[start:]
    return value


def _java_replacement(template: str, match: re.Match) -> str:
    """Java's `Matcher.appendReplacement`: `$n`, `${name}` and backslash escapes."""
    out: list[str] = []
    index = 0
    groups = match.re.groups
    while index < len(template):
        char = template[index]
        if char == "\\":
            index += 1
            if index == len(template):
                raise ValueError("character to be escaped is missing")
            out.append(template[index])
            index += 1
        elif char == "$":
            index += 1
            if index == len(template):
                raise ValueError("Illegal group reference: group index is missing")
            if template[index] == "{":
                end = template.find("}", index)
                if end < 0:
                    raise ValueError("named capturing group is missing trailing '}'")
                out.append(match.group(template[index + 1 : end]) or "")
                index = end + 1
                continue
            if not template[index].isdigit():
                raise ValueError("Illegal group reference")
            number = int(template[index])
            if number > groups:
                raise ValueError(f"No group {number}")
            index += 1
            while index < len(template) and template[index].isdigit():
                candidate = number * 10 + int(template[index])
                if candidate > groups:
                    break
                number = candidate
                index += 1
            out.append(match.group(number) or "")
        else:
            out.append(char)
            index += 1
    return "".join(out)


# -- the distinguished name, as Java's X500Principal.getName() (RFC 2253) -------------------

_RFC2253_KEYWORDS = {
    NameOID.COMMON_NAME: "CN",
    NameOID.COUNTRY_NAME: "C",
    NameOID.LOCALITY_NAME: "L",
    NameOID.STATE_OR_PROVINCE_NAME: "ST",
    NameOID.ORGANIZATION_NAME: "O",
    NameOID.ORGANIZATIONAL_UNIT_NAME: "OU",
    NameOID.STREET_ADDRESS: "STREET",
    NameOID.DOMAIN_COMPONENT: "DC",
    NameOID.USER_ID: "UID",
}
# DER string tags Java prints as text (the others, and attributes without an RFC 2253 keyword,
# are printed as '#' and the hex of their DER encoding)
_TEXT_TAGS = {12: "utf-8", 19: "ascii", 20: "latin-1", 22: "ascii", 27: "latin-1", 30: "utf-16-be"}
_ENCODINGS = {**_TEXT_TAGS, 26: "ascii", 28: "utf-32-be"}
_ESCAPED = ',=+<>#;"\\'
_PRINTABLE_STRING_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 '()+,-./:=?")


def rfc2253_name(name: x509.Name) -> str:
    """The DN as Java's `X500Principal.getName()` prints it (RFC 2253, most specific first)."""
    return ",".join("+".join(_attribute(attribute) for attribute in rdn) for rdn in reversed(name.rdns))


def _attribute(attribute: x509.NameAttribute) -> str:
    keyword = _RFC2253_KEYWORDS.get(attribute.oid)
    tag = int(getattr(getattr(attribute, "_type", None), "value", 12))
    value = attribute.value
    text = value if isinstance(value, str) else value.decode("latin-1")
    if keyword is None or tag not in _TEXT_TAGS:
        return f"{attribute.oid.dotted_string}=#{_der(tag, text).hex()}"
    return f"{keyword}={_escape(text)}"


def _der(tag: int, text: str) -> bytes:
    content = text.encode(_ENCODINGS.get(tag, "utf-8"))
    length = len(content)
    if length < 0x80:
        head = bytes([length])
    else:
        size = length.to_bytes((length.bit_length() + 7) // 8, "big")
        head = bytes([0x80 | len(size)]) + size
    return bytes([tag]) + head + content


def _escape(text: str) -> str:
    chars: list[str] = []
    for char in text:
        if char in _ESCAPED:
            chars.append("\\" + char)
        elif char == "\0":
            chars.append("\\00")
        else:
            chars.append(char)
    joined = "".join(chars)
    lead = len(joined) - len(joined.lstrip(" \r"))
    trail = len(joined.rstrip(" \r"))
    return "".join("\\" + char if i < lead or i >= trail else char for i, char in enumerate(joined))


def principal_of_certificate(der: bytes | None, mapper: SslPrincipalMapper) -> KafkaPrincipal | None:
    """`User:<mapped DN>` of a peer certificate; None without one (the caller's ANONYMOUS).
    Raises NoMatchingRule when no mapping rule applies, as Kafka fails the connection."""
    if not der:
        return None
    certificate = x509.load_der_x509_certificate(der)
    return KafkaPrincipal("User", mapper.name(rfc2253_name(certificate.subject)))
