"""How many Produce requests and Fetch responses per second the generated codec handles.

    python bench/codec_bench.py            (or: make codec-bench)

Shapes are those of the throughput benchmark: 3 partitions, each carrying one record batch.
The records are opaque bytes to the codec, so the batch size barely matters; what is measured is
the per-message cost of headers, topic and partition structs.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from pykbroker.protocol import headers, messages  # noqa: E402
from pykbroker.protocol.api_keys import ApiKey  # noqa: E402

BATCH = os.urandom(16 * 1024)
PARTITIONS = 3


def produce_request(version: int) -> bytes:
    produce = messages.request(ApiKey.PRODUCE)
    cls = produce.cls
    body = cls(acks=1, timeout_ms=30000, topic_data=[cls.TopicProduceData(
        name="bench-topic", partition_data=[
            cls.PartitionProduceData(index=p, records=BATCH) for p in range(PARTITIONS)])])
    return (headers.encode_request_header(ApiKey.PRODUCE, version, 1, "bench")
            + produce.encode_bytes(body, version=version))


def fetch_response(version: int) -> object:
    fetch = messages.response(ApiKey.FETCH)
    cls = fetch.cls
    return cls(responses=[cls.FetchableTopicResponse(topic="bench-topic", partitions=[
        cls.PartitionData(partition_index=p, high_watermark=1000, last_stable_offset=1000,
                          log_start_offset=0, records=BATCH) for p in range(PARTITIONS)])])


def rate(fn, seconds: float = 1.0) -> float:
    count, start = 0, time.perf_counter()
    while True:
        for _ in range(200):
            fn()
        count += 200
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed


def main() -> None:
    produce = messages.request(ApiKey.PRODUCE)
    fetch = messages.response(ApiKey.FETCH)
    print(f"{'operation':<40}{'per second':>14}")
    for version in (3, 9, 11):
        frame = bytearray(produce_request(version))

        def decode_produce():
            _, pos = headers.decode_request_header(frame, ApiKey.PRODUCE, version)
            produce.decode(frame, pos, version=version)

        print(f"{f'decode Produce v{version} request':<40}{rate(decode_produce):>14,.0f}")
    for version in (4, 11, 16):
        body = fetch_response(version)

        def encode_fetch():
            headers.encode_response_header(ApiKey.FETCH, version, 1)
            fetch.encode(body, version=version)

        print(f"{f'encode Fetch v{version} response':<40}{rate(encode_fetch):>14,.0f}")


if __name__ == "__main__":
    main()
