"""The connection IO of a TLS listener: Python's `ssl` on a non-blocking socket, driven on
anyio's event loop like the plaintext `SocketIO` (same frames, same size limit, same in-order
answers). File regions of fetch responses cannot go through `sendfile` (the kernel would send
them unencrypted): they are read on a worker thread and written through TLS.
"""

from __future__ import annotations

import os
import ssl

import anyio

from .socket_io import SocketIO

_FILE_CHUNK = 1024 * 1024


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

    async def send_ahead_of_file(self, data: bytes) -> None:
        await self.send_all(data)

    async def send_file_region(self, fd: int, position: int, length: int) -> None:
        while length > 0:
            chunk = await anyio.to_thread.run_sync(os.pread, fd, min(length, _FILE_CHUNK), position)
            if not chunk:
                raise EOFError("file region ended before its length")
            await self.send_all(chunk)
            position += len(chunk)
            length -= len(chunk)
