"""Non-blocking socket reads and writes on anyio's event loop, with zero-copy file sends.

The broker drives its sockets itself (rather than through stream transports) so that a response
can be written as bytes followed by file regions handed to `os.sendfile`, and so that a large
request frame is received straight into one buffer without intermediate copies. That buffer grows
with the bytes that arrive past 2 MiB (doubling, never to more than twice what was received), so
that a size prefix that lies (100 MB announced, nothing sent) costs no more than that.

A response larger than the configured send buffer (`socket.send.buffer.bytes`, as Kafka sets it on
every accepted socket) is written through a send buffer as large as the response (up to 1 MiB, and
never beyond the system's `net.core.wmem_max`), and the configured size is restored once it is
written: a fetch response of megabytes then goes out in a few large `sendfile` calls, with a
wait for the client to read after each, instead of many small ones (each wake-up costs the broker
more CPU than its copy). A larger buffer (4 MiB) saved more broker CPU but slowed a consumer
fetching 48 MB at a time on a busy machine.
"""

from __future__ import annotations

import os
import socket
import struct
import threading

import anyio

_SIZE = struct.Struct(">i")
_READ_CHUNK = 256 * 1024
# A frame up to this size (every produce request under the default message.max.bytes) gets its whole
# buffer at once; a larger one grows by doubling as its bytes arrive, so that a size prefix that lies
# costs at most this much.
_WHOLE_FRAME_UP_TO = 2 * 1024 * 1024
# The send buffer of a connection while it writes a response larger than its configured buffer
_IN_FLIGHT_SEND_BUFFER = 1024 * 1024


def listening_socket(host: str, port: int, backlog: int) -> socket.socket:
    """A non-blocking TCP socket bound and listening on host:port (host "" means every interface);
    on failure the socket is closed and the OSError raised."""
    sock = bound_socket(host, port)
    try:
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def bound_socket(host: str, port: int) -> socket.socket:
    """A non-blocking TCP socket bound to host:port but not yet listening: its port is taken (and
    known, for port 0), while a client connecting to it is refused until `listen()`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _frame_room(received: int, size: int) -> int:
    """How large a frame of `size` bytes is made once `received` of them have arrived: all of it
    up to _WHOLE_FRAME_UP_TO, past that twice what has arrived (never more than `size`)."""
    return min(size, max(2 * received, _WHOLE_FRAME_UP_TO))


def shown_host(host: str) -> str:
    """The host as an address names it: an IPv6 host in brackets, "" as 0.0.0.0."""
    return f"[{host}]" if ":" in host else (host or "0.0.0.0")


class FrameTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(f"request size {size} exceeds socket.request.max.bytes")
        self.size = size


_per_thread = threading.local()


def shared_receive_buffer() -> bytearray:
    """The buffer small reads land in, one per thread (so one per event loop), shared by the
    loop's connections: a read copies its bytes out before the loop runs anything else, so no
    connection sees another's. A buffer per connection would hold 256 KiB for every idle client."""
    buffer: bytearray | None = getattr(_per_thread, "receive_buffer", None)
    if buffer is None:
        buffer = _per_thread.receive_buffer = bytearray(_READ_CHUNK)
    return buffer


class InvalidFrameSize(Exception):
    pass


class SocketIO:
    """Size-prefixed frames in, byte and file-region pieces out, on one connected socket."""

    def __init__(self, sock: socket.socket, send_buffer_bytes: int = -1) -> None:
        """`send_buffer_bytes`: the SO_SNDBUF the socket was given (-1: the system's, self-tuning)."""
        sock.setblocking(False)
        self.sock = sock
        self._send_buffer_bytes = send_buffer_bytes
        self._buffer = bytearray()  # bytes received but not yet consumed

    async def _recv_into(self, view: memoryview) -> int:
        """One receive into `view` (0 at end of stream), waiting until the socket has data."""
        while True:
            try:
                return self.sock.recv_into(view)
            except (BlockingIOError, InterruptedError):
                await anyio.wait_readable(self.sock)

    async def _send(self, view: memoryview) -> int:
        """One send of (a part of) `view`, waiting until the socket takes data."""
        while True:
            try:
                return self.sock.send(view)
            except (BlockingIOError, InterruptedError):
                await anyio.wait_writable(self.sock)

    async def _receive_some(self) -> bool:
        """Append what the socket has to the buffer; False at end of stream."""
        view = memoryview(shared_receive_buffer())
        count = await self._recv_into(view)
        if count == 0:
            return False
        self._buffer += view[:count]
        return True

    async def _receive_rest(self, frame: bytearray, filled: int, size: int) -> None:
        """Receive into `frame` (whose first `filled` bytes have arrived) until it holds `size`
        bytes, growing it as the bytes come once they pass _WHOLE_FRAME_UP_TO."""
        while filled < size:
            if filled == len(frame):
                frame += bytes(_frame_room(filled, size) - filled)
            with memoryview(frame) as whole, whole[filled:] as free:
                count = await self._recv_into(free)
            if count == 0:
                raise EOFError("connection closed in the middle of a request")
            filled += count

    async def read_frame(self, max_size: int) -> bytearray | None:
        """The next request frame (without its size prefix), or None at a clean end of stream."""
        while len(self._buffer) < 4:
            if not await self._receive_some():
                if self._buffer:
                    raise EOFError("connection closed in the middle of a size prefix")
                return None
        (size,) = _SIZE.unpack_from(self._buffer, 0)
        if size < 0:
            raise InvalidFrameSize(f"negative request size {size}")
        if size > max_size:
            raise FrameTooLarge(size)
        available = len(self._buffer) - 4
        if available >= size:
            frame = self._buffer[4 : 4 + size]
            del self._buffer[: 4 + size]
            return frame
        frame = bytearray(_frame_room(available, size))  # the bytes already received copied in
        with memoryview(self._buffer) as received:
            frame[:available] = received[4:]
        self._buffer.clear()
        await self._receive_rest(frame, available, size)
        return frame

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[await self._send(view) :]

    async def send_ahead_of_file(self, data: bytes) -> None:
        """Send all of `data`, a file region to follow: held back (MSG_MORE) to leave in the same
        packets as the region's first bytes rather than in a small packet of its own."""
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view, socket.MSG_MORE) :]
            except (BlockingIOError, InterruptedError):
                await anyio.wait_writable(self.sock)

    async def send_file_region(self, fd: int, position: int, length: int) -> None:
        out = self.sock.fileno()
        while length > 0:
            try:
                sent = os.sendfile(out, fd, position, length)
            except (BlockingIOError, InterruptedError):
                await anyio.wait_writable(self.sock)
                continue
            if sent == 0:
                raise EOFError("file region ended before its length")
            position += sent
            length -= sent

    async def send_pieces(self, pieces: list) -> None:
        """Write byte pieces and file regions (objects with fd, position, length) in order, through a
        send buffer as large as them when the configured one is smaller."""
        if self._send_buffer_bytes > 0:
            size = sum(len(piece) for piece in pieces)
            if size > self._send_buffer_bytes:
                await self._send_through_buffer(pieces, min(size, _IN_FLIGHT_SEND_BUFFER))
                return
        await self._send_in_order(pieces)

    async def _send_through_buffer(self, pieces: list, buffer_bytes: int) -> None:
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, buffer_bytes)
        try:
            await self._send_in_order(pieces)
        finally:
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._send_buffer_bytes)
            except OSError:  # the connection is gone
                pass

    async def _send_in_order(self, pieces: list) -> None:
        pending: list = []
        for piece in pieces:
            if isinstance(piece, (bytes, bytearray, memoryview)):
                pending.append(piece)
                continue
            if pending:
                await self.send_ahead_of_file(b"".join(pending))
                pending = []
            await self.send_file_region(piece.fd, piece.position, piece.length)
        if pending:
            await self.send_all(b"".join(pending) if len(pending) > 1 else pending[0])

    def peek(self, count: int) -> bytes:
        """The first bytes received and not yet consumed (e.g. to recognise a TLS handshake)."""
        return bytes(self._buffer[:count])

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def size_prefix(pieces: list) -> bytes:
    return _SIZE.pack(sum(len(p) for p in pieces))
