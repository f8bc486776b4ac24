"""Appends made as durable as the configuration promises before they count, without stalling
the event loop.

With `pykbroker.fsync.before.ack` (or a topic's `flush.messages` reached) a log owes an fsync
before its appends are acknowledged (`Log.sync_owed`). The fsync runs on a worker thread while
the appender awaits it, so every other connection is served meanwhile; a leader answers the
producer, and a follower fetches again (which acknowledges to the leader), only after it.
"""

from __future__ import annotations

import anyio.to_thread

from ..log.log import Log


async def sync_before_ack(log: Log, end_offset: int) -> None:
    """Return once the appends below `end_offset` are as durable as `log` promises."""
    if log.sync_owed():
        await anyio.to_thread.run_sync(log.sync_appended, end_offset)
