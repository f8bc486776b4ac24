#!/usr/bin/env python3
"""Extract the structural facts of Kafka's message definitions into protocol/messages/.

Usage: python protocol/extract.py [SOURCE_DIR]   (default: ../shared/kafka-protocol/messages)

The upstream definitions are JSON with `//` comments and prose ("about"). The codec needs only
structure: names, types, versions, nullable and tagged versions, tags, defaults. This script keeps
exactly those keys, drops comments and prose, and writes one compact JSON file per message.
"""
import json
import sys
from pathlib import Path

MESSAGE_KEYS = ("apiKey", "type", "name", "validVersions", "flexibleVersions",
                "latestVersionUnstable", "fields", "commonStructs")
FIELD_KEYS = ("name", "type", "versions", "nullableVersions", "taggedVersions", "tag",
              "default", "ignorable", "flexibleVersions", "fields")
KEPT_TYPES = ("request", "response", "header", "data")


def strip_comments(text: str) -> str:
    """Remove // comments that are outside JSON strings."""
    out, i, in_string = [], 0, False
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\":
                out.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def extract_field(field: dict) -> dict:
    kept = {key: field[key] for key in FIELD_KEYS if key in field}
    if "fields" in kept:
        kept["fields"] = [extract_field(f) for f in kept["fields"]]
    return kept


def extract_message(message: dict) -> dict:
    kept = {key: message[key] for key in MESSAGE_KEYS if key in message}
    kept["fields"] = [extract_field(f) for f in kept.get("fields", [])]
    if "commonStructs" in kept:
        kept["commonStructs"] = [
            {"name": s["name"], "versions": s["versions"],
             "fields": [extract_field(f) for f in s["fields"]]}
            for s in kept["commonStructs"]
        ]
    return kept


def main() -> None:
    here = Path(__file__).resolve().parent
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else here.parent.parent / "shared/kafka-protocol/messages"
    target = here / "messages"
    target.mkdir(exist_ok=True)
    count = 0
    for path in sorted(source.glob("*.json")):
        message = json.loads(strip_comments(path.read_text()))
        if message.get("type") not in KEPT_TYPES:
            continue
        extracted = extract_message(message)
        (target / path.name).write_text(json.dumps(extracted, indent=1) + "\n")
        count += 1
    print(f"extracted {count} message schemas into {target}")


if __name__ == "__main__":
    main()
