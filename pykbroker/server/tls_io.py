"""The connection IO of a TLS listener: Python's `ssl` on a non-blocking socket, driven on
anyio's event loop like the plaintext `SocketIO` (same frames, same size limit, same in-order
answers). File regions of fetch responses cannot go through `sendfile` (the kernel would send
them unencrypted): a response is laid out in slices of up to 1 MiB, each assembled in the
connection's write buffer (header bytes copied in, file regions read straight into place) and
sent in one TLS write. What the page cache holds is read on the event loop (`preadv2` with
RWF_NOWAIT never waits for the disk, as Kafka's network threads read the page cache for TLS and
plaintext's `sendfile` does here); the rest, on a worker thread. TLS records
are up to 16 KiB whatever the writes, so one write per slice rather than one per piece saves
calls, thread hops and short records; reusing one buffer (a connection's responses go out one
after another) saves allocating and zeroing a fresh one for every response.
"""

from __future__ import annotations

import errno
import os
import ssl
from dataclasses import dataclass

import anyio

from .socket_io import SocketIO

_SLICE_BYTES = 1024 * 1024
_NOWAIT_UNSUPPORTED = {errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS}

_BYTES_TYPES = (bytes, bytearray, memoryview)


@dataclass(frozen=True, slots=True)
class _Region:
    """(A part of) a file region: `length` bytes at `position` of the open file `fd`."""

    fd: int
    position: int
    length: int

    def __len__(self) -> int:
        return self.length


_Piece = bytes | bytearray | memoryview | _Region


def _response_slices(pieces: list) -> list[list[_Piece]]:
    """The pieces (bytes, or file regions with fd, position and length) cut into consecutive
    slices of at most _SLICE_BYTES each; a piece that crosses a slice's end is split."""
    slices: list[list[_Piece]] = [[]]
    room = _SLICE_BYTES
    for piece in pieces:
        if isinstance(piece, _BYTES_TYPES):
            rest: _Piece = memoryview(piece).cast("B")
        else:
            rest = _Region(piece.fd, piece.position, piece.length)
        while len(rest):
            if not room:
                slices.append([])
                room = _SLICE_BYTES
            taken = min(len(rest), room)
            head, rest = _split(rest, taken)
            slices[-1].append(head)
            room -= taken
    return slices


def _split(piece: _Piece, at: int) -> tuple[_Piece, _Piece]:
    if isinstance(piece, _Region):
        return (_Region(piece.fd, piece.position, at), _Region(piece.fd, piece.position + at, piece.length - at))
    return piece[:at], piece[at:]


def _fill(target: memoryview, pieces: list[_Piece]) -> list[tuple[memoryview, _Region]]:
    """Copy the byte pieces into `target` in order; the places left for the file regions."""
    regions = []
    offset = 0
    for piece in pieces:
        end = offset + len(piece)
        if isinstance(piece, _Region):
            regions.append((target[offset:end], piece))
        else:
            target[offset:end] = piece
        offset = end
    return regions


def _read_regions(regions: list[tuple[memoryview, _Region]]) -> None:
    """Read every file region into its place (a worker thread may run this)."""
    for place, region in regions:
        done = 0
        while done < region.length:
            count = os.preadv(region.fd, [place[done:]], region.position + done)
            if count == 0:
                raise EOFError("file region ended before its length")
            done += count


def _read_cached(regions: list[tuple[memoryview, _Region]]) -> list[tuple[memoryview, _Region]]:
    """Read what the page cache holds of every region into its place, never waiting for the disk;
    the parts still to read (all of them where the file system cannot read without waiting)."""
    rest = []
    for place, region in regions:
        done = 0
        while done < region.length:
            try:
                count = os.preadv(region.fd, [place[done:]], region.position + done, os.RWF_NOWAIT)
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno not in _NOWAIT_UNSUPPORTED:
                    raise
                break
            if count == 0:
                raise EOFError("file region ended before its length")
            done += count
        if done < region.length:
            rest.append((place[done:], _Region(region.fd, region.position + done, region.length - done)))
    return rest


class TlsSocketIO(SocketIO):
    """SocketIO over an `ssl.SSLSocket` wrapped with `do_handshake_on_connect=False`."""

    sock: ssl.SSLSocket

    def __init__(self, sock: ssl.SSLSocket, send_buffer_bytes: int = -1) -> None:
        super().__init__(sock, send_buffer_bytes)
        self._write_buffer = bytearray()  # grown up to _SLICE_BYTES by the first fetch responses

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
        """Write byte pieces and file regions in order, one TLS write per slice of up to 1 MiB."""
        if all(isinstance(piece, _BYTES_TYPES) for piece in pieces):
            await self.send_all(b"".join(pieces) if len(pieces) > 1 else pieces[0])
            return
        for pieces_of_slice in _response_slices(pieces):
            size = sum(len(piece) for piece in pieces_of_slice)
            if len(self._write_buffer) < size:
                self._write_buffer = bytearray(size)
            with memoryview(self._write_buffer) as whole, whole[:size] as target:
                uncached = _read_cached(_fill(target, pieces_of_slice))
                if uncached:
                    await anyio.to_thread.run_sync(_read_regions, uncached)
                del uncached  # views into the buffer, released before it may be replaced
                await self.send_all(target)

    async def send_ahead_of_file(self, data: bytes) -> None:
        await self.send_all(data)

    async def send_file_region(self, fd: int, position: int, length: int) -> None:
        await self.send_pieces([_Region(fd, position, length)])
