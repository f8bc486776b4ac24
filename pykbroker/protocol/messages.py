"""Message types by name and by API key: their classes, and their per-version codecs.

    from pykbroker.protocol import messages
    Metadata = messages.response(ApiKey.METADATA)
    body = Metadata.cls(throttle_time_ms=0, brokers=[...])
    parts = Metadata.encode(body, version=12)          # list of bytes (and file regions)
    request, end = messages.request(ApiKey.METADATA).decode(frame, pos, version=12)

By API key or by name a message's classes are untyped (`MessageType[Any]`). Statically typed,
through the classes of `message_types`:

    from pykbroker.protocol.message_types import MetadataResponse
    body = MetadataResponse(throttle_time_ms=0, brokers=[MetadataResponse.MetadataResponseBroker(...)])
    parts = messages.of(MetadataResponse).encode(body, version=12)

Codecs are compiled on first use of a (message, version) and cached.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, cached_property
from typing import Any, Generic, TypeVar

from .api_keys import MESSAGE_NAMES
from .codegen import DecodeError, EncodedStructs, build_classes, compile_version
from .schema import MessageSpec, load_message

M = TypeVar("M")

# (decoder, encoder, source, the codec functions of each struct): see `codegen.compile_version`
Codec = tuple[Callable[..., Any], Callable[..., Any], str, dict[str, Callable[..., Any]]]


class MessageType(Generic[M]):
    """One message (e.g. MetadataResponse): its classes and its codec for each valid version.

    `M` is the message's class as `message_types` declares it (`Any` when looked up by name or
    API key)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._codecs: dict[int, Codec] = {}

    # The schema and the classes are built on first use, not when the type is looked up: a broker
    # registers a handler for every API, but most clients use a handful of them, and the classes
    # of all messages would cost megabytes and a large part of the start time. Building one
    # message's classes takes about a millisecond, once.
    @cached_property
    def spec(self) -> MessageSpec:
        return load_message(self.name)

    @cached_property
    def classes(self) -> dict[str, type[Any]]:
        return build_classes(self.spec)

    @cached_property
    def cls(self) -> type[M]:
        root: type[M] = self.classes[self.spec.root.name]
        return root

    @property
    def api_key(self) -> int | None:
        return self.spec.api_key

    @property
    def versions(self) -> range:
        v = self.spec.valid_versions
        return range(v.low, v.high + 1)

    def is_flexible(self, version: int) -> bool:
        return version in self.spec.flexible_versions

    def codec(self, version: int) -> Codec:
        codec = self._codecs.get(version)
        if codec is None:
            if version not in self.spec.valid_versions:
                raise ValueError(f"{self.name} has no version {version}")
            codec = self._codecs[version] = compile_version(self.spec, version, self.classes)
        return codec

    def decode(self, buf: bytes | bytearray, pos: int = 0, *, version: int) -> tuple[M, int]:
        """Decode one message at `pos`; returns (object, end position). Raises DecodeError."""
        decoder = self.codec(version)[0]
        try:
            obj, end = decoder(buf, pos)
        except DecodeError:
            raise
        except (IndexError, ValueError, TypeError, OverflowError, UnicodeDecodeError) as exc:
            raise DecodeError(f"malformed {self.name} v{version}: {exc}") from exc
        except Exception as exc:  # struct.error and friends
            raise DecodeError(f"malformed {self.name} v{version}: {exc}") from exc
        if end > len(buf):
            raise DecodeError(f"truncated {self.name} v{version}")
        return obj, end

    def encode(self, obj: M, *, version: int) -> list:
        """Encode into a list of pieces: bytes, or file regions carried by `records` fields."""
        return self.codec(version)[1](obj, [])

    def encode_bytes(self, obj: M, *, version: int) -> bytes:
        return b"".join(self.encode(obj, version=version))

    def encode_structs(self, struct_name: str, items: list, *, version: int) -> EncodedStructs:
        """`items` (instances of the struct `struct_name`, without record fields) encoded for
        `version`, to be given as the value of an array of that struct in a message of this
        version: the same bytes as if the message encoded them itself."""
        encoder = self.codec(version)[3]["e_" + struct_name]
        out: list = []
        for item in items:
            encoder(item, out)
        return EncodedStructs(len(items), b"".join(out))

    def decode_structs(self, struct_name: str, encoded: EncodedStructs, *, version: int) -> list:
        """The instances that `encode_structs` encoded (for whoever must change them after)."""
        decoder = self.codec(version)[3]["d_" + struct_name]
        items, pos = [], 0
        for _ in range(encoded.count):
            item, pos = decoder(encoded.data, pos)
            items.append(item)
        return items

    def source(self, version: int) -> str:
        """The generated Python source of this version's codec (for the curious and for tests)."""
        return self.codec(version)[2]

    def __repr__(self) -> str:
        return f"<MessageType {self.name}>"


@cache
def by_name(name: str) -> MessageType[Any]:
    return MessageType(name)


def of(cls: type[M]) -> MessageType[M]:
    """The message type of a class of `message_types`, typed by it:
    `messages.of(ListGroupsResponse).encode(response, version=4)`."""
    return by_name(cls.__name__)


def request(api_key: int) -> MessageType[Any]:
    return by_name(MESSAGE_NAMES[api_key] + "Request")


def response(api_key: int) -> MessageType[Any]:
    return by_name(MESSAGE_NAMES[api_key] + "Response")
