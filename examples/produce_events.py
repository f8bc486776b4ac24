"""Feeds the windowed-counts example (`spark_windowed_counts.py`): click-stream events, one JSON
object per record, keyed by user, to a Kafka topic.

    .venv/bin/python examples/produce_events.py --bootstrap 127.0.0.1:9092 --topic events

    {"user": "user-3", "action": "click", "ts": 1714564803250}

`ts` is the event time in milliseconds since the epoch: now, or for a share of the events
(`--late-share`) some seconds in the past (`--lateness`), as events that arrive late do. With
`--start-ms` the event times are fixed instead: `start-ms`, `start-ms + step-ms`, ... so that a
run can be checked. Runs until `--count` events were sent (0: until interrupted).
"""
from __future__ import annotations

import argparse
import json
import random
import time

ACTIONS = ("view", "click", "purchase")


def event(rng: random.Random, users: int, ts: int) -> dict:
    return {"user": f"user-{rng.randrange(users)}",
            "action": rng.choices(ACTIONS, weights=(6, 3, 1))[0],
            "ts": ts}


def send(producer, topic: str, item: dict) -> None:
    producer.send(topic, key=item["user"].encode(), value=json.dumps(item).encode())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--count", type=int, default=0, help="events to send (0: no end)")
    parser.add_argument("--rate", type=float, default=20.0, help="events per second (0: no pause)")
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--late-share", type=float, default=0.05,
                        help="share of events whose time lies --lateness seconds in the past")
    parser.add_argument("--lateness", type=float, default=90.0)
    parser.add_argument("--start-ms", type=int, help="fixed event times from this one on")
    parser.add_argument("--step-ms", type=int, default=1000, help="between fixed event times")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    from kafka import KafkaProducer

    rng = random.Random(args.seed)
    producer = KafkaProducer(bootstrap_servers=args.bootstrap, acks="all", linger_ms=10)
    sent = 0
    try:
        while args.count == 0 or sent < args.count:
            if args.start_ms is not None:
                ts = args.start_ms + sent * args.step_ms
            else:
                ts = int(time.time() * 1000)
                if rng.random() < args.late_share:
                    ts -= int(args.lateness * 1000)
            send(producer, args.topic, event(rng, args.users, ts))
            sent += 1
            if args.rate > 0:
                time.sleep(1 / args.rate)
    except KeyboardInterrupt:
        pass
    finally:
        producer.flush(30)
        producer.close(timeout=10)
    print(f"sent {sent} events to {args.topic}")


if __name__ == "__main__":
    main()
