"""Producer ids for idempotent producers (InitProducerId without a transactional id).

Ids are handed out from blocks reserved durably before use, so that no id is ever given twice,
even after a crash: the next block's start is persisted first, then ids of the current block are
handed out from memory (Kafka reserves blocks of 1000 the same way, in ZooKeeper or the
controller). The block store is a small file in the first log dir for a single broker
(`FileBlockStore`), and `/latest_producer_id_block` in ZooKeeper for a cluster (`ZkBlockStore`).
On the event loop (`generate_producer_id_async`, InitProducerId) a reservation runs on a worker
thread: the file's fsync, or the ZooKeeper round trip, never stalls other connections, and no id
of a block is handed out before the block is durably reserved.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio
import anyio.to_thread

from ..common.files import write_atomically
from ..protocol.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from ..cluster.zk_client import KafkaZkClient

BLOCK_SIZE = 1000
BLOCK_FILE = "pykbroker-producer-id-block"


class BlockStore(Protocol):
    def reserve_block(self, size: int) -> int:
        """The first id of a new block of `size` ids, durably reserved (blocking)."""
        ...


class FileBlockStore:
    """Reserves producer id blocks by persisting the next free id in a file."""

    def __init__(self, directory: str) -> None:
        self.path = Path(directory) / BLOCK_FILE

    def reserve_block(self, size: int) -> int:
        start = int(self.path.read_text()) if self.path.exists() else 0
        write_atomically(self.path, str(start + size))
        return start


class ProducerIdManager:
    def __init__(self, block_store: BlockStore, block_size: int = BLOCK_SIZE) -> None:
        self.block_store = block_store
        self.block_size = block_size
        self._next = 0
        self._end = 0
        self._reserving = anyio.Lock()  # one reservation at a time (async callers)

    def generate_producer_id(self) -> int:
        if self._next >= self._end:
            self._next = self.block_store.reserve_block(self.block_size)
            self._end = self._next + self.block_size
        producer_id = self._next
        self._next += 1
        return producer_id

    async def generate_producer_id_async(self) -> int:
        """`generate_producer_id` for the event loop: a block is reserved on a worker thread."""
        async with self._reserving:
            if self._next >= self._end:
                start = await anyio.to_thread.run_sync(self.block_store.reserve_block, self.block_size)
                self._next, self._end = start, start + self.block_size
        producer_id = self._next  # no await since the check: the block still has this id
        self._next += 1
        return producer_id


class ZkBlockStore:
    """Reserves producer id blocks in ZooKeeper's `/latest_producer_id_block`, as Kafka's
    ZooKeeper-mode brokers do: read the latest block, write the next one with a compare-and-set
    on the znode version, retry if another broker was quicker."""

    MAX_ATTEMPTS = 10

    def __init__(self, zk_client: KafkaZkClient, broker_id: int, timeout_s: float) -> None:
        self.zk_client = zk_client
        self.broker_id = broker_id
        self.timeout_s = timeout_s

    def reserve_block(self, size: int) -> int:
        """The first id of a new block; COORDINATOR_NOT_AVAILABLE (retriable) without ZooKeeper."""
        from ..cluster.zk_client import ZooKeeperError  # loaded with the store's client already

        if not self.zk_client.connected:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "Not connected to ZooKeeper")
        try:
            start = self.zk_client.allocate_producer_id_block(
                self.broker_id, size, timeout_s=self.timeout_s, max_attempts=self.MAX_ATTEMPTS
            )
        except ZooKeeperError as exc:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"Could not reserve producer ids: {exc}") from exc
        if start is None:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "Producer id blocks kept changing")
        return start
