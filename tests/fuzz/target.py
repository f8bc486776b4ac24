"""The broker under fuzzing and the properties checked after every fuzzed exchange.

`FuzzTarget` wraps a running broker process (PLAINTEXT and SASL_SSL listeners) and offers:

- `channels`: how to open a connection of each kind the fuzzer sends over (PLAINTEXT; SASL_SSL
  before authentication; SASL_SSL logged in with SASL PLAIN);
- `exchange(channel, frames)`: one fresh connection, the frames sent one after the other, each
  answered, closed or left waiting (`Outcome`); an answer must carry the request's correlation
  id and decode as that API's response;
- `check_health()`: the broker process is alive, a separate healthy connection still gets
  ApiVersions and Metadata answers, and its log holds no traceback at ERROR: neither one that
  does not name its request (API key and client id) nor a handler's unexpected error (a bug);
- `resident_memory()`: the broker's VmRSS, for the bound checked after a run.

The first failure is kept (`first_failure`) so that a crash is reported with the frames that
caused it, even after hypothesis has gone on to shrink against a dead broker.
"""
from __future__ import annotations

import enum
import re
import ssl
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pykbroker.protocol import headers, messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.process import BrokerProcess
from tests.security.support import log_in_plain
from pykbroker.testkit.wire import WireClient

ANSWER_WAIT_S = 2.0  # how long a fuzzed request may go unanswered before its connection is dropped
STALL_WAIT_S = 0.1  # the same for a frame shorter than its size prefix (the broker waits for the rest)
UNANSWERED_WAIT_S = 0.3  # the same for a Produce with acks=0, which is never answered
HEALTH_TIMEOUT_S = 30.0  # a healthy request unanswered this long means the broker hangs
USER, PASSWORD = "alice", "alice-secret"  # a PLAIN user of tests/security/sasl_support.py

RECORD_START = re.compile(r"^\[\d{4}-\d\d-\d\d [^\]]*\] (\w+) ", re.MULTILINE)


class Outcome(enum.Enum):
    ANSWERED = "answered"
    CLOSED = "closed"
    WAITING = "still waiting"


class BrokerFailure(AssertionError):
    """A property of the broker does not hold."""


class TlsWireClient(WireClient):
    """A raw wire client over TLS, trusting the test CA."""

    def __init__(self, bootstrap: str, ca: Path, timeout: float = 10.0) -> None:
        super().__init__(bootstrap, timeout)
        context = ssl.create_default_context(cafile=str(ca))
        self.sock = context.wrap_socket(self.sock, server_hostname=bootstrap.rsplit(":", 1)[0])


@dataclass(frozen=True)
class Channel:
    name: str
    connect: Callable[[], WireClient]


def channels_of(broker) -> dict[str, Channel]:
    """The connections the fuzzer uses on a `sasl_broker(..., pki=...)`."""

    def plaintext() -> WireClient:
        return WireClient(broker.bootstrap_of("PLAINTEXT"))

    def sasl_ssl() -> WireClient:
        return TlsWireClient(broker.bootstrap_of("SASL_SSL"), broker.ca)

    def sasl_ssl_logged_in() -> WireClient:
        client = sasl_ssl()
        log_in_plain(client, USER, PASSWORD)
        return client

    return {
        "PLAINTEXT": Channel("PLAINTEXT", plaintext),
        "SASL_SSL before authentication": Channel("SASL_SSL before authentication", sasl_ssl),
        "SASL_SSL authenticated": Channel("SASL_SSL authenticated", sasl_ssl_logged_in),
    }


def check_answer(frame: bytes, answer: bytes, api_versions_served: range) -> None:
    """An answer to `frame` carries its correlation id and decodes as the response of its API
    (an ApiVersions request of a version not served is answered UNSUPPORTED_VERSION in v0)."""
    _, api_key, version, correlation_id = struct.unpack_from(">ihhi", frame)
    (answered_id,) = struct.unpack_from(">i", answer)
    if answered_id != correlation_id:
        raise BrokerFailure(f"answer with correlation id {answered_id} to request {correlation_id}")
    response = messages.response(api_key)
    if api_key == ApiKey.API_VERSIONS and version not in api_versions_served:
        version = 0
    try:
        _, pos = headers.decode_response_header(answer, api_key, version)
        response.decode(answer, pos, version=version)
    except Exception as exc:
        raise BrokerFailure(f"undecodable answer to {ApiKey(api_key).name} v{version}: {answer[:200]!r}") from exc


def announces_more_than_it_holds(frame: bytes) -> bool:
    return len(frame) < 4 or struct.unpack_from(">i", frame)[0] > len(frame) - 4


def is_produce_without_acks(frame: bytes) -> bool:
    """A Produce request that decodes and has acks=0: Kafka never answers it (the broker may
    close the connection instead)."""
    if len(frame) < 8 or struct.unpack_from(">h", frame, 4)[0] != ApiKey.PRODUCE:
        return False
    version = struct.unpack_from(">h", frame, 6)[0]
    try:
        _, pos = headers.decode_request_header(frame[4:], ApiKey.PRODUCE, version)
        body, _ = messages.request(ApiKey.PRODUCE).decode(frame[4:], pos, version=version)
    except Exception:  # noqa: BLE001 - a hostile frame that does not decode is waited for in full
        return False
    return body.acks == 0


def answer_wait_s(frame: bytes) -> float:
    """How long `frame` may go unanswered before its connection is dropped."""
    if announces_more_than_it_holds(frame):
        return STALL_WAIT_S
    return UNANSWERED_WAIT_S if is_produce_without_acks(frame) else ANSWER_WAIT_S


def api_versions_request():
    return messages.request(ApiKey.API_VERSIONS).cls(client_software_name="fuzz", client_software_version="1.0")


class LogWatch:
    """Reads the broker's log as it grows and finds the records that break the logging rule."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size

    def new_text(self) -> str:
        with open(self.path, "rb") as log:
            log.seek(self.offset)
            data = log.read()
        complete = data[: data.rfind(b"\n") + 1]  # a record still being written waits for next time
        self.offset += len(complete)
        return complete.decode(errors="replace")

    def new_tracebacks_at_error(self) -> list[str]:
        """The ERROR records with a traceback written since the last call."""
        return [record for record in log_records(self.new_text()) if is_error_with_traceback(record)]


def log_records(text: str) -> list[str]:
    starts = [m.start() for m in RECORD_START.finditer(text)]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def is_error_with_traceback(record: str) -> bool:
    match = RECORD_START.match(record)
    return match is not None and match.group(1) == "ERROR" and "Traceback (most recent call last)" in record


def names_its_request(record: str) -> bool:
    """The record's message names an API (as ApiKey does) and a client id."""
    first_line = record.splitlines()[0]
    return "client id" in first_line and any(key.name in first_line for key in ApiKey)


def resident_memory_kb(pid: int) -> int:
    """VmRSS of a process, from /proc/<pid>/status."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE).group(1))


class FuzzTarget:
    def __init__(self, broker: BrokerProcess) -> None:
        self.broker = broker
        self.channels = channels_of(broker)
        self.log = LogWatch(broker.log_path)
        self.healthy = WireClient(broker.bootstrap_of("PLAINTEXT"), timeout=HEALTH_TIMEOUT_S)
        self.first_failure: str | None = None
        self.advertised = self._advertised_versions()
        self.answered_apis: set[int] = set()  # APIs whose hostile requests got an answer, not a closed connection

    def _advertised_versions(self) -> dict[int, range]:
        response = self.healthy.request(ApiKey.API_VERSIONS, 3, api_versions_request())
        assert response.error_code == 0, response
        return {entry.api_key: range(entry.min_version, entry.max_version + 1) for entry in response.api_keys}

    # -- one exchange ----------------------------------------------------------------------

    def exchange(self, channel: str, frames: list[bytes]) -> list[Outcome]:
        """Send `frames` on one new connection, each after the previous was answered; stop at
        the first that closes the connection or goes unanswered."""
        client = self.channels[channel].connect()
        outcomes: list[Outcome] = []
        try:
            for frame in frames:
                outcomes.append(self._send_one(client, frame))
                if outcomes[-1] is not Outcome.ANSWERED:
                    break
        finally:
            client.close()
        return outcomes

    def _send_one(self, client: WireClient, frame: bytes) -> Outcome:
        try:
            client.send_raw(frame)
        except OSError:
            return Outcome.CLOSED
        client.sock.settimeout(answer_wait_s(frame))
        try:
            answer = client.receive_frame()
        except (TimeoutError, ssl.SSLWantReadError):
            return Outcome.WAITING
        except (EOFError, OSError, struct.error):
            return Outcome.CLOSED
        check_answer(frame, answer, self.advertised[ApiKey.API_VERSIONS])
        self.answered_apis.add(struct.unpack_from(">h", frame, 4)[0])
        return Outcome.ANSWERED

    # -- the broker's health ---------------------------------------------------------------

    def check_health(self, cause: str) -> None:
        """Raise BrokerFailure (and remember the first one, with its `cause`) when the broker
        died, hangs, or logged a traceback that does not name its request."""
        problem = self._health_problem()
        if problem is None:
            return
        if self.first_failure is None:
            self.first_failure = f"{problem}\nafter: {cause}"
        raise BrokerFailure(f"{problem}\nafter: {cause}")

    def _health_problem(self) -> str | None:
        if not self.broker.is_running():
            return f"the broker exited with {self.broker.process.returncode}:\n{self.broker.log_text()[-5000:]}"
        try:
            self.healthy.request(ApiKey.API_VERSIONS, 3, api_versions_request())
            self.healthy.request(ApiKey.METADATA, 12, messages.request(ApiKey.METADATA).cls(topics=[]))
        except (OSError, EOFError) as exc:
            return f"a healthy connection got no answer: {exc!r}"
        for record in self.log.new_tracebacks_at_error():
            if not names_its_request(record):
                return "a traceback logged without the request's API key and client id:\n" + record
            return "a request failed with an unexpected error (a bug to fix):\n" + record
        return None

    def resident_memory_kb(self) -> int:
        return resident_memory_kb(self.broker.process.pid)

    def close(self) -> None:
        self.healthy.close()
