"""mypy sees the fields of the messages through `message_types`: a handler-like snippet that uses
them right passes, one that reads a field its request lacks (or builds a response wrong) fails."""

import textwrap
from pathlib import Path

import pytest

import pykbroker

mypy_api = pytest.importorskip("mypy.api")

REPO_ROOT = Path(pykbroker.__file__).resolve().parents[1]

GOOD = """
    from pykbroker.protocol import messages
    from pykbroker.protocol.message_types import ListGroupsRequest, ListGroupsResponse


    def handle(request: ListGroupsRequest) -> ListGroupsResponse:
        states: list[str] = request.states_filter
        group = ListGroupsResponse.ListedGroup(group_id="g", protocol_type="consumer", group_state=states[0])
        return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=[group])


    def round_trip(frame: bytes) -> bytes:
        request, _ = messages.of(ListGroupsRequest).decode(frame, 0, version=5)
        response = handle(request)
        names: list[str] = [group.group_id for group in response.groups]
        response.groups[0].group_type = names[0]
        return messages.of(ListGroupsResponse).encode_bytes(response, version=5)
"""

# (line, what mypy must say about it)
BAD = [
    ("def handle(request: ListGroupsRequest) -> ListGroupsResponse:", None),
    ("    group_id: str = request.group_id", '"ListGroupsRequest" has no attribute "group_id"'),
    (
        "    group = ListGroupsResponse.ListedGroup(group_id=1)",
        'Argument "group_id" to "ListedGroup" has incompatible type',
    ),
    ("    return ListGroupsResponse(error=0, groups=[group])", 'Unexpected keyword argument "error"'),
    ("def encode(request: ListGroupsRequest) -> bytes:", None),
    (
        "    return messages.of(ListGroupsResponse).encode_bytes(request, version=5)",
        'Argument 1 to "encode_bytes" of "MessageType" has incompatible type "ListGroupsRequest"',
    ),
]
BAD_IMPORTS = [
    "from pykbroker.protocol import messages",
    "from pykbroker.protocol.message_types import ListGroupsRequest, ListGroupsResponse",
]


def test_mypy_checks_the_fields_of_requests_and_responses(tmp_path, monkeypatch):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent(GOOD))
    bad = tmp_path / "bad.py"
    bad.write_text("\n".join(BAD_IMPORTS + [line for line, _ in BAD]) + "\n")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n")
    monkeypatch.setenv("MYPYPATH", str(REPO_ROOT))  # this checkout's pykbroker, not an installed one
    stdout, stderr, _ = mypy_api.run(
        [
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            "--no-site-packages",
            "--follow-imports=silent",
            "--python-version=3.10",
            "--no-error-summary",
            str(good),
            str(bad),
        ]
    )
    assert stderr == ""
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert not [e for e in errors if e.startswith(str(good))], stdout
    for number, (_, expected) in enumerate(BAD, start=len(BAD_IMPORTS) + 1):
        reported = [e for e in errors if e.startswith(f"{bad}:{number}: error:")]
        if expected is None:
            assert not reported, stdout
        else:
            assert any(expected in e for e in reported), f"line {number}: expected {expected!r} in:\n{stdout}"
    assert len(errors) == sum(1 for _, expected in BAD if expected), stdout
