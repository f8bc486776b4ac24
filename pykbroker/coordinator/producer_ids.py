"""Producer ids for idempotent producers (InitProducerId without a transactional id).

Ids are handed out from blocks reserved durably before use, so that no id is ever given twice,
even after a crash: the next block's start is persisted first, then ids of the current block are
handed out from memory (Kafka reserves blocks of 1000 the same way, in ZooKeeper or the
controller). The block store is a small file in the first log dir for a single broker.
"""
from __future__ import annotations

import os
from pathlib import Path

BLOCK_SIZE = 1000
BLOCK_FILE = "pykbroker-producer-id-block"


class FileBlockStore:
    """Reserves producer id blocks by persisting the next free id in a file."""

    def __init__(self, directory: str) -> None:
        self.path = Path(directory) / BLOCK_FILE

    def reserve_block(self, size: int) -> int:
        start = int(self.path.read_text()) if self.path.exists() else 0
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w") as f:
            f.write(str(start + size))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        return start


class ProducerIdManager:
    def __init__(self, block_store, block_size: int = BLOCK_SIZE) -> None:
        self.block_store = block_store
        self.block_size = block_size
        self._next = 0
        self._end = 0

    def generate_producer_id(self) -> int:
        if self._next >= self._end:
            self._next = self.block_store.reserve_block(self.block_size)
            self._end = self._next + self.block_size
        producer_id = self._next
        self._next += 1
        return producer_id
