"""The Kafka wire protocol: schemas, generated codecs, headers, API keys and error codes.

This package imports nothing else of pykbroker; it is a library the broker and the tests share.
"""
