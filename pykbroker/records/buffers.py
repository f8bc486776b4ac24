"""The byte buffers the record codecs read: a request frame (bytearray), a segment's bytes, or a
view of either."""

from __future__ import annotations

from typing import TypeAlias

ReadableBuffer: TypeAlias = bytes | bytearray | memoryview
