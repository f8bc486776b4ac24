"""KIP-932's share coordinator: the durable state of share-partitions in `__share_group_state`,
and in `partitions/` the in-flight records of each share partition this broker leads.

- `persister`: `SharePersister`, what the rest of the broker uses (group coordinator: initialize,
  delete, read summaries; share-partition leaders: read and write), with `ShareState`,
  `PersisterStateBatch` and `InMemorySharePersister`;
- `default_persister`: `DefaultStatePersister`, the broker's persister, calling the share
  coordinator of each key here or over the inter-broker listener;
- `coordinator`: `ShareCoordinator`, the share coordinator of the partitions this broker leads;
- `shard`: the state machine of one `__share_group_state` partition; `records`: its
  ShareSnapshot/ShareUpdate records; `combiner`: Kafka's PersisterStateBatchCombiner;
- `state_topic`: the topic, its creation and the partition of a key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...common.lazy_names import names_from_modules

if TYPE_CHECKING:
    from .combiner import PersisterStateBatch
    from .coordinator import ShareCoordinator, ShareCoordinatorConfig
    from .default_persister import DefaultStatePersister
    from .persister import InMemorySharePersister, SharePersister, ShareState
    from .shard import SharePartitionKey

# The names above, each imported from its module on first use: a broker without share groups
# loads none of this package but `state_topic`.
_MODULE_OF = {
    "DefaultStatePersister": "default_persister",
    "InMemorySharePersister": "persister",
    "PersisterStateBatch": "combiner",
    "ShareCoordinator": "coordinator",
    "ShareCoordinatorConfig": "coordinator",
    "SharePartitionKey": "shard",
    "SharePersister": "persister",
    "ShareState": "persister",
}


__getattr__ = names_from_modules(__name__, _MODULE_OF)


__all__ = [
    "DefaultStatePersister",
    "InMemorySharePersister",
    "PersisterStateBatch",
    "ShareCoordinator",
    "ShareCoordinatorConfig",
    "SharePartitionKey",
    "SharePersister",
    "ShareState",
]
