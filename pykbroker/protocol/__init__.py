"""The Kafka wire protocol: schemas, generated codecs and their static types (`message_types`),
headers, API keys and error codes.

This package imports nothing else of pykbroker; it is a library the broker and the tests share.
"""
