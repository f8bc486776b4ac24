"""The zero UUID: the wire's "no topic id" (Kafka's `Uuid.ZERO_UUID`), also the id of a topic
that has none yet (a ZooKeeper topic written by an old broker)."""

from __future__ import annotations

import uuid

ZERO_UUID = uuid.UUID(int=0)
