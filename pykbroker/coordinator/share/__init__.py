"""KIP-932's share coordinator: the durable state of share-partitions in `__share_group_state`.

`persister` holds the interface the rest of the broker uses (`SharePersister`); `shard` the state
machine of one `__share_group_state` partition; `records` its ShareSnapshot/ShareUpdate records;
`combiner` the merging of state batches as Kafka's PersisterStateBatchCombiner.
"""
