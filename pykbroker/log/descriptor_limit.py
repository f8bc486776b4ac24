"""The process's open file limit (RLIMIT_NOFILE): what it allows, and room kept free under it.

A partition keeps one descriptor open (its active segment's `.log`); older segments' files
are open only while the `HandleCache` holds them, and indexes keep none. Every client or
broker connection takes one more, and metadata, checkpoint and index writes need one for a
moment. As the JVM does for Kafka, the broker first raises its soft limit to the hard limit,
then says at start what the limit allows, so that an operator sizes `ulimit -n` before the
broker runs out.

Running out fails requests, it damages nothing. So that it does not fail everything at once,
a new partition is refused (EMFILE, which the log turns into KAFKA_STORAGE_ERROR) while fewer
than a reserve of descriptors would stay free: connections, metadata writes and reads of
older segments keep working when a CreateTopics asks for more partitions than fit.
"""

from __future__ import annotations

import errno
import logging
import os
import threading

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

MAX_SEGMENT_CACHE = 256  # the default capacity of the HandleCache
MIN_RESERVE = 32
RECOUNT_EVERY = 256  # new partitions between two exact counts of the descriptors in use


def open_file_limit() -> int | None:
    """The soft RLIMIT_NOFILE; None when there is none."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_open_file_limit() -> int | None:
    """Raise the soft limit to the hard one (the JVM's MaxFDLimit); the limit now."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard and hard != resource.RLIM_INFINITY:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError) as exc:
            log.warning("Could not raise the open file limit from %d to %d: %s", soft, hard, exc)
    return open_file_limit()


def descriptors_in_use() -> int:
    """How many descriptors the process holds now (0 where /proc is not there)."""
    try:
        return len(os.listdir("/proc/self/fd")) - 1  # listdir's own
    except OSError:
        return 0


def segment_cache_capacity(limit: int | None) -> int:
    """How many older segments may keep their `.log` open: 256, less under a small limit."""
    return MAX_SEGMENT_CACHE if limit is None else max(1, min(MAX_SEGMENT_CACHE, limit // 8))


def kept_free(limit: int) -> int:
    """Descriptors a new partition may not take: for connections and short-lived files, and
    for the segment cache."""
    return max(MIN_RESERVE, limit // 20) + segment_cache_capacity(limit)


class DescriptorBudget:
    """Refuses a new partition while fewer than `kept_free(limit)` descriptors would stay free.

    Counting the descriptors in use lists /proc/self/fd, so it is done every RECOUNT_EVERY new
    partitions, and at each one once the estimate comes near the limit.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._estimate: int | None = None
        self._since_count = 0

    def check_room_for_new_partition(self) -> None:
        limit = open_file_limit()
        if limit is None:
            return
        ceiling = limit - kept_free(limit)
        with self._lock:
            self._since_count += 1
            estimate = None if self._estimate is None else self._estimate + 1
            if estimate is None or self._since_count >= RECOUNT_EVERY or estimate >= ceiling - limit // 10:
                estimate = descriptors_in_use() + 1
                self._since_count = 0
            if estimate > ceiling:
                self._estimate = estimate - 1
                raise OSError(
                    errno.EMFILE,
                    f"Too many open files ({estimate - 1} open under the limit of {limit}, "
                    f"{kept_free(limit)} kept free for connections, metadata and older segments)",
                )
            self._estimate = estimate


BUDGET = DescriptorBudget()


def report_open_file_limit() -> int | None:
    """Raise the limit and log, once at start, what it allows; the limit."""
    limit = raise_open_file_limit()
    if limit is None:
        log.info("No open file limit: partitions cost one descriptor each")
        return None
    log.info(
        "Open file limit %d allows about %d partitions at one descriptor each plus connections "
        "(%d descriptors kept free for short-lived files and reading older segments)",
        limit,
        max(0, limit - descriptors_in_use() - kept_free(limit)),
        kept_free(limit),
    )
    return limit
