"""The bottom of the house: the vocabulary every room shares (time, topic-partitions, ids).

Nothing here imports anything else of pykbroker, so every room, `protocol/` and `records/`
included, may import it.
"""
