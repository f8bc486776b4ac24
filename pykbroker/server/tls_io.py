"""The connection IO of a TLS listener: Python's `ssl` (an `SSLObject` between memory BIOs) over
a non-blocking socket, driven on anyio's event loop like the plaintext `SocketIO` (same frames,
same size limit, same in-order answers); one socket read brings in many TLS records.

File regions of fetch responses cannot go through `sendfile` (the kernel would send them
unencrypted): a response is laid out in slices of up to 1 MiB, each assembled in the
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
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import anyio

from .socket_io import SocketIO, shared_receive_buffer

_SLICE_BYTES = 1024 * 1024
# Plaintext encrypted into the outgoing BIO at a time (it holds the records until they are sent)
_WRITE_CHUNK = 256 * 1024
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
    """SocketIO over TLS: an `ssl.SSLObject` between two memory BIOs, the socket read and written
    here. Clients write requests as many small TLS records (librdkafka: one per buffer segment,
    about 2 KB each); OpenSSL reading the socket itself would make two reads per record (its
    header, then its body), a million system calls per GB produced. Here one read takes all the
    socket holds (up to 256 KiB) into the incoming BIO and the records are decrypted from memory,
    as Kafka's SSLEngine unwraps records from its network buffer."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, send_buffer_bytes: int = -1) -> None:
        super().__init__(sock, send_buffer_bytes)
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self.tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._sending: anyio.Event | None = None  # set while a task sends the outgoing records
        self._write_buffer = bytearray()  # grown up to _SLICE_BYTES by the first fetch responses

    async def _receive_records(self) -> None:
        """Move what the socket holds into the incoming BIO (its end, at the end of the stream)."""
        view = memoryview(shared_receive_buffer())
        count = await SocketIO._recv_into(self, view)
        if count == 0:
            self._incoming.write_eof()
        else:
            self._incoming.write(view[:count])  # copied before anything else runs on the loop

    async def _flush(self) -> None:
        """Send the TLS records OpenSSL has written (handshake, responses, tickets, alerts).
        The reading and the writing task may both flush (a read can make OpenSSL answer, e.g. a
        key update): one sends at a time, so that the records leave in the order written."""
        while self._sending is not None:
            await self._sending.wait()
        if not self._outgoing.pending:
            return
        self._sending = anyio.Event()
        try:
            while self._outgoing.pending:
                records = memoryview(self._outgoing.read())
                while records:
                    records = records[await SocketIO._send(self, records) :]
        finally:
            sent, self._sending = self._sending, None
            sent.set()

    async def handshake(self) -> None:
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                await self._flush()
                await self._receive_records()
            except ssl.SSLError:
                await self._send_alert()
                raise
        await self._flush()

    async def _send_alert(self) -> None:
        """Send the alert a failed handshake left in the outgoing BIO, if the peer still listens."""
        try:
            await self._flush()
        except OSError:
            pass

    def peer_certificate(self) -> bytes | None:
        """The client's certificate (DER), None when it sent none."""
        return self.tls.getpeercert(binary_form=True)

    def cipher(self) -> tuple[str, str, int] | None:
        return self.tls.cipher()

    def version(self) -> str | None:
        return self.tls.version()

    async def _recv_into(self, view: memoryview) -> int:
        """Decrypt into `view` the records the incoming BIO holds (a produce request comes as
        hundreds of records of about 2 KB: all of them in one go, as far as `view` reaches),
        reading the socket first when it holds none; 0 at the end of the stream."""
        while True:
            count, ended = self._decrypt_into(view)
            if count or ended:
                # `view` may be the loop's shared receive buffer, which the caller copies from
                # before anything else runs: no waiting here. What the reads made OpenSSL write (a
                # reply to a key update) leaves with the next flush, before the next socket wait.
                return count
            await self._flush()
            await self._receive_records()

    def _decrypt_into(self, view: memoryview) -> tuple[int, bool]:
        """(bytes decrypted into `view` from the records the incoming BIO holds, whether the
        stream ended: close_notify, or the peer gone without one, as SSLSocket reads it)."""
        read = cast(Callable[[int, memoryview], int], self.tls.read)  # with a buffer: the bytes read
        filled, end = 0, len(view)
        try:
            while filled < end:
                count = read(end - filled, view[filled:])
                if count == 0:  # close_notify
                    return filled, True
                filled += count
        except ssl.SSLWantReadError:
            pass
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            return filled, True
        return filled, False

    async def _send(self, view: memoryview) -> int:
        count = self.tls.write(view[:_WRITE_CHUNK])
        await self._flush()
        return count

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
