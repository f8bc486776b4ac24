"""Fuzzing every API the broker advertises, in every version, over PLAINTEXT and SASL_SSL, before
and after authentication.

Whatever a client sends, the broker answers it (usually with an error) or closes that one
connection; it never dies, never stops answering a separate healthy connection, never logs a
traceback at ERROR that does not name the request's API and client id, and its memory stays
bounded. `make fuzz FUZZ_MINUTES=30` runs the same tests for longer (tests/fuzz/runner.py).
"""
from __future__ import annotations

import struct

import pytest
from hypothesis import event
from hypothesis import strategies as st

from pykbroker.protocol import headers, messages
from pykbroker.protocol.api_keys import MESSAGE_NAMES, ApiKey
from tests.security.certs import Pki
from tests.security.sasl_support import sasl_broker

from . import runner
from .hostile_requests import request_frame
from .mutations import mutated
from .target import FuzzTarget, Outcome

MEMORY_GROWTH_LIMIT_KB = 256 * 1024  # 10 MB requests come and go; the broker may keep what it has used


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fuzz")
    with sasl_broker(directory, pki=Pki(directory / "pki")) as broker:
        broker.create_topic("fuzz", partitions=2)
        fuzz_target = FuzzTarget(broker)
        fuzz_target.baseline_memory_kb = fuzz_target.resident_memory_kb()
        yield fuzz_target
        fuzz_target.close()


# -- what is sent ---------------------------------------------------------------------------


def advertised_pairs(target: FuzzTarget) -> list[tuple[int, int]]:
    return [(key, version) for key, versions in sorted(target.advertised.items()) for version in versions]


@st.composite
def hostile_request(draw, target: FuzzTarget) -> bytes:
    """An API drawn evenly (an API served in one version is hit as often as one served in
    eighteen), then one of its versions."""
    api_key = draw(st.sampled_from(sorted(target.advertised)))
    version = draw(st.sampled_from(target.advertised[api_key]))
    return draw(request_frame(api_key, version, correlation_id=draw(st.integers(-(2**31), 2**31 - 1))))


@st.composite
def unserved_request(draw, target: FuzzTarget) -> bytes:
    """An API key nobody serves, or a served API in a version above or below its range."""
    api_key = draw(st.sampled_from(sorted(MESSAGE_NAMES)) | st.integers(-(2**15), 2**15 - 1))
    served = target.advertised.get(api_key, range(0))
    version = draw(st.integers(-3, 20).filter(lambda v: v not in served) | st.sampled_from((-1, 2**15 - 1)))
    if api_key in MESSAGE_NAMES and version in messages.request(api_key).versions:
        return draw(request_frame(api_key, version))
    payload = struct.pack(">hhi", api_key, version, 7) + draw(st.binary(max_size=64))
    return struct.pack(">i", len(payload)) + payload


@st.composite
def mutated_request(draw, target: FuzzTarget) -> bytes:
    api_key, version = draw(st.sampled_from(advertised_pairs(target)))
    return draw(mutated(draw(request_frame(api_key, version, hostile=False))))


def sasl_handshake() -> bytes:
    return request_frame_of(ApiKey.SASL_HANDSHAKE, 1, messages.request(ApiKey.SASL_HANDSHAKE).cls(mechanism="PLAIN"))


def request_frame_of(api_key: int, version: int, body) -> bytes:
    """A well-formed request, encoded by the broker's own codec."""
    payload = headers.encode_request_header(api_key, version, 1, "fuzz") + messages.request(api_key).encode_bytes(
        body, version=version
    )
    return struct.pack(">i", len(payload)) + payload


AUTHENTICATION_APIS = (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE, ApiKey.API_VERSIONS)


@st.composite
def authentication_request(draw, target: FuzzTarget) -> bytes:
    """A hostile request of one of the APIs a client may send before it is authenticated."""
    api_key = draw(st.sampled_from(AUTHENTICATION_APIS))
    version = draw(st.sampled_from(target.advertised[api_key]))
    return draw(request_frame(api_key, version, correlation_id=draw(st.integers(0, 2**31 - 1))))


@st.composite
def before_authentication(draw, target: FuzzTarget) -> list[bytes]:
    """A hostile frame as the first of a connection, or after a valid SaslHandshake (where the
    broker expects SaslAuthenticate); a third of them of the authentication APIs."""
    frame = draw(authentication_request(target) | hostile_request(target) | mutated_request(target))
    return [sasl_handshake(), frame] if draw(st.booleans()) else [frame]


# -- the properties -------------------------------------------------------------------------


def exchange_and_check(target: FuzzTarget, channel: str, frames: list[bytes]) -> None:
    outcomes = target.exchange(channel, frames)
    for outcome in outcomes:
        event(outcome.value)
    waiting = frames[len(outcomes) - 1] if outcomes and outcomes[-1] is Outcome.WAITING else b""
    if len(waiting) >= 6:
        event(f"waiting: API key {struct.unpack_from('>h', waiting, 4)[0]}")
    target.check_health(f"{channel}: {[frame[:300] for frame in frames]!r}")


def fuzz(target: FuzzTarget, channel: str, strategy, *, examples: int, share: float) -> None:
    try:
        runner.run(strategy, lambda frames: exchange_and_check(target, channel, frames), examples=examples,
                   share=share)
    except Exception as failure:
        if target.first_failure is not None:
            raise AssertionError(f"first failure: {target.first_failure}") from failure
        raise
    assert_memory_bounded(target)


def assert_memory_bounded(target: FuzzTarget) -> None:
    grown_kb = target.resident_memory_kb() - target.baseline_memory_kb
    assert grown_kb < MEMORY_GROWTH_LIMIT_KB, f"the broker's resident memory grew by {grown_kb} kB"


def test_hostile_requests_of_every_api_on_plaintext(target):
    fuzz(target, "PLAINTEXT", hostile_request(target).map(lambda frame: [frame]), examples=650, share=0.3)
    # most hostile requests are well-formed enough to reach their handler: a fuzzer whose requests
    # were all refused at the door would test nothing (about ten requests an API: by chance a few
    # APIs see only requests malformed enough to close the connection)
    assert len(target.answered_apis) >= 2 / 3 * len(target.advertised), sorted(target.answered_apis)


def test_unserved_apis_and_versions_on_plaintext(target):
    fuzz(target, "PLAINTEXT", unserved_request(target).map(lambda frame: [frame]), examples=100, share=0.05)


def test_mutated_frames_on_plaintext(target):
    fuzz(target, "PLAINTEXT", mutated_request(target).map(lambda frame: [frame]), examples=300, share=0.2)


def test_hostile_requests_before_authentication_on_sasl_ssl(target):
    fuzz(target, "SASL_SSL before authentication", before_authentication(target), examples=100, share=0.15)


def test_hostile_requests_after_authentication_on_sasl_ssl(target):
    frames = (hostile_request(target) | mutated_request(target)).map(lambda frame: [frame])
    fuzz(target, "SASL_SSL authenticated", frames, examples=350, share=0.3)
