"""The compatibility suite: the same scenarios (metadata, produce/consume, compression codecs,
headers and nulls, offsets by timestamp, consumer groups, admin) run with every client
(kafka-python, confluent-kafka, aiokafka, kcat, Java) against a broker, reported as a table by
client and scenario. `python -m compat --help` tells how to run it; `compat/scenarios.py` what
each scenario checks."""
