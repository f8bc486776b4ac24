"""Byte-level mutations of a valid size-prefixed request frame (hypothesis strategies): bit flips,
truncations, inserted and deleted bytes, and size prefixes that lie (too short, too long,
negative, 2 GB)."""
from __future__ import annotations

import struct

from hypothesis import strategies as st

PREFIX_LIES = (-1, -(2**31), 0, 1, 7, 2**31 - 1, 2**30, 100 * 1024 * 1024, 100 * 1024 * 1024 + 1)


def _body(frame: bytes) -> bytes:
    return frame[4:]


def _prefixed(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


@st.composite
def flip_bits(draw, frame: bytes) -> bytes:
    body = bytearray(_body(frame))
    for _ in range(draw(st.integers(1, 8))):
        position = draw(st.integers(0, len(body) - 1))
        body[position] ^= 1 << draw(st.integers(0, 7))
    return _prefixed(bytes(body))


@st.composite
def truncate(draw, frame: bytes) -> bytes:
    """The body cut short, its size prefix either corrected or still the old one (a stall)."""
    body = _body(frame)
    cut = body[: draw(st.integers(0, len(body) - 1))]
    return _prefixed(cut) if draw(st.booleans()) else frame[:4] + cut


@st.composite
def insert_or_delete(draw, frame: bytes) -> bytes:
    body = _body(frame)
    position = draw(st.integers(0, len(body)))
    if draw(st.booleans()):
        return _prefixed(body[:position] + draw(st.binary(min_size=1, max_size=16)) + body[position:])
    return _prefixed(body[:position] + body[position + draw(st.integers(1, 16)) :])


@st.composite
def lie_about_size(draw, frame: bytes) -> bytes:
    """A size prefix that is not the body's: off by a little, or one of the absurd ones."""
    body = _body(frame)
    size = draw(st.sampled_from(PREFIX_LIES) | st.integers(max(0, len(body) - 8), len(body) + 8))
    return struct.pack(">i", size) + body


@st.composite
def repeat_or_splice(draw, frame: bytes) -> bytes:
    """The frame twice, or its header on the tail of its body (pipelined or half-garbage input)."""
    if draw(st.booleans()):
        return frame + frame
    body = _body(frame)
    return _prefixed(body[:8] + body[draw(st.integers(8, max(8, len(body)))) :])


MUTATIONS = (flip_bits, truncate, insert_or_delete, lie_about_size, repeat_or_splice)


@st.composite
def mutated(draw, frame: bytes) -> bytes:
    return draw(draw(st.sampled_from(MUTATIONS))(frame))
