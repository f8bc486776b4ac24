"""The connection IO of a TLS listener: Python's `ssl` on a non-blocking socket, driven on
anyio's event loop like the plaintext `SocketIO` (same frames, same size limit, same in-order
answers). File regions of fetch responses cannot go through `sendfile` (the kernel would send
them unencrypted): a response is assembled into buffers of up to 4 MiB, its header bytes copied
in and its file regions read straight into place (on a worker thread once a buffer's file bytes
are more than a small read), and each buffer goes out in one TLS write. TLS records are up to
16 KiB whatever the writes, so one write per buffer rather than one per piece saves the calls,
the thread hops and the short records at piece boundaries.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass

import anyio

from .socket_io import SocketIO

_BUFFER_BYTES = 4 * 1024 * 1024
# File bytes of a buffer read on the event loop itself: a read of recently written segment bytes
# is a copy from the page cache, cheaper than a hop to a worker thread (plaintext's sendfile reads
# the same pages on the event loop).
_INLINE_READ_BYTES = 128 * 1024


@dataclass(frozen=True, slots=True)
class _Region:
    """A file region as the log hands them out (fd, position, length)."""

    fd: int
    position: int
    length: int

    def __len__(self) -> int:  # the bytes it stands for, as a FileRegion's
        return self.length


class _Buffer:
    """One response buffer being filled: byte pieces copied in, file regions to read into it."""

    def __init__(self, size: int) -> None:
        self.data = bytearray(size)
        self.filled = 0
        self.regions: list[tuple[int, int, int, int]] = []  # (offset in data, fd, position, length)
        self.file_bytes = 0

    def room(self) -> int:
        return len(self.data) - self.filled

    def add_bytes(self, piece: bytes | bytearray | memoryview) -> None:
        self.data[self.filled : self.filled + len(piece)] = piece
        self.filled += len(piece)

    def add_region(self, fd: int, position: int, length: int) -> None:
        self.regions.append((self.filled, fd, position, length))
        self.filled += length
        self.file_bytes += length

    def read_regions(self) -> None:
        """Read every file region into its place (a worker thread may run this)."""
        with memoryview(self.data) as view:
            for offset, fd, position, length in self.regions:
                _read_exactly(fd, view[offset : offset + length], position)


def _read_exactly(fd: int, target: memoryview, position: int) -> None:
    done = 0
    while done < len(target):
        count = os.preadv(fd, [target[done:]], position + done)
        if count == 0:
            raise EOFError("file region ended before its length")
        done += count


def _response_buffers(pieces: list) -> list[_Buffer]:
    """The pieces (bytes, or file regions with fd, position, length) laid out in buffers of up to
    _BUFFER_BYTES; a file region larger than a buffer's room is split across buffers."""
    remaining = sum(len(piece) for piece in pieces)
    buffers = [_Buffer(min(remaining, _BUFFER_BYTES))]
    for piece in pieces:
        if isinstance(piece, (bytes, bytearray, memoryview)):
            view = memoryview(piece).cast("B")
            while view:
                if not buffers[-1].room():
                    remaining -= buffers[-1].filled
                    buffers.append(_Buffer(min(remaining, _BUFFER_BYTES)))
                taken = min(len(view), buffers[-1].room())
                buffers[-1].add_bytes(view[:taken])
                view = view[taken:]
            continue
        position, length = piece.position, piece.length
        while length:
            if not buffers[-1].room():
                remaining -= buffers[-1].filled
                buffers.append(_Buffer(min(remaining, _BUFFER_BYTES)))
            taken = min(length, buffers[-1].room())
            buffers[-1].add_region(piece.fd, position, taken)
            position, length = position + taken, length - taken
    return buffers


class TlsSocketIO(SocketIO):
    """SocketIO over an `ssl.SSLSocket` wrapped with `do_handshake_on_connect=False`."""

    sock: ssl.SSLSocket

    async def _wait(self, want: ssl.SSLError) -> None:
        if isinstance(want, ssl.SSLWantWriteError):
            await anyio.wait_writable(self.sock)
        else:
            await anyio.wait_readable(self.sock)

    async def handshake(self) -> None:
        while True:
            try:
                self.sock.do_handshake()
                return
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError) as want:
                await self._wait(want)

    def peer_certificate(self) -> bytes | None:
        """The client's certificate (DER), None when it sent none."""
        return self.sock.getpeercert(binary_form=True)

    async def _recv_into(self, view: memoryview) -> int:
        while True:
            try:
                return self.sock.recv_into(view)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError) as want:
                await self._wait(want)

    async def _send(self, view: memoryview) -> int:
        while True:
            try:
                return self.sock.send(view)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError) as want:
                await self._wait(want)  # OpenSSL retries with the same buffer (moving buffers allowed)

    async def send_pieces(self, pieces: list) -> None:
        """Write byte pieces and file regions in order, one TLS write per buffer of up to 4 MiB."""
        if all(isinstance(piece, (bytes, bytearray, memoryview)) for piece in pieces):
            await self.send_all(b"".join(pieces) if len(pieces) > 1 else pieces[0])
            return
        for buffer in _response_buffers(pieces):
            if buffer.file_bytes > _INLINE_READ_BYTES:
                await anyio.to_thread.run_sync(buffer.read_regions)
            else:
                buffer.read_regions()
            await self.send_all(buffer.data)

    async def send_file_region(self, fd: int, position: int, length: int) -> None:
        await self.send_pieces([_Region(fd, position, length)])
