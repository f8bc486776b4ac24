"""Request and response headers: which header version an (API, version) uses, and their codecs.

Request header v0 has no client id (only ControlledShutdown v0 uses it), v1 adds the client id,
v2 adds tagged fields (flexible APIs). Response header v0 is the correlation id alone, v1 adds
tagged fields; ApiVersions responses always use v0 so that any client can read them.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from . import message_types, messages
from .api_keys import ApiKey
from .codegen import DecodeError

_REQUEST_PREFIX = struct.Struct(">hhi")
_RESPONSE_HEADER_V0 = struct.Struct(">i")

RequestHeader = messages.of(message_types.RequestHeader)
ResponseHeader = messages.of(message_types.ResponseHeader)


class RequestPrefix(NamedTuple):
    """The first eight bytes of every request, readable before the API is known."""

    api_key: int
    api_version: int
    correlation_id: int


def read_request_prefix(frame: bytes | bytearray) -> RequestPrefix:
    if len(frame) < _REQUEST_PREFIX.size:
        raise DecodeError("request is shorter than its header")
    return RequestPrefix._make(_REQUEST_PREFIX.unpack_from(frame, 0))


def request_header_version(api_key: int, api_version: int) -> int:
    if api_key == ApiKey.CONTROLLED_SHUTDOWN and api_version == 0:
        return 0
    return 2 if messages.request(api_key).is_flexible(api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if messages.response(api_key).is_flexible(api_version) else 0


def decode_request_header(
    frame: bytes | bytearray, api_key: int, api_version: int
) -> tuple[message_types.RequestHeader, int]:
    """(header object, position where the body starts)."""
    return RequestHeader.decode(frame, 0, version=request_header_version(api_key, api_version))


def encode_request_header(api_key: int, api_version: int, correlation_id: int, client_id: str | None) -> bytes:
    header = RequestHeader.cls(
        request_api_key=api_key, request_api_version=api_version, correlation_id=correlation_id, client_id=client_id
    )
    return RequestHeader.encode_bytes(header, version=request_header_version(api_key, api_version))


def encode_response_header(api_key: int, api_version: int, correlation_id: int) -> bytes:
    if response_header_version(api_key, api_version) == 0:
        return _RESPONSE_HEADER_V0.pack(correlation_id)
    return _RESPONSE_HEADER_V0.pack(correlation_id) + b"\x00"


def decode_response_header(
    frame: bytes | bytearray, api_key: int, api_version: int
) -> tuple[message_types.ResponseHeader, int]:
    return ResponseHeader.decode(frame, 0, version=response_header_version(api_key, api_version))
