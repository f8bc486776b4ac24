"""kcat (librdkafka's command line client): `-L` metadata, `-P` produce, `-C` consume, `-G` group
consumer, `-Q` offsets by timestamp. It has no admin interface, and its producer cannot set
record timestamps: the timestamp scenario looks up the time at which kcat wrote a record."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

from ..scenarios import (WAIT_SECONDS, Got, NotApplicable, check_round_trip, expect,
                         expect_equal, keyed)
from . import Driver


class KcatDriver(Driver):
    name = "kcat"

    def unavailable(self):
        if shutil.which("kcat") is None:
            return "kcat is not installed (Debian package kcat)"
        about = subprocess.run(["kcat", "-V"], capture_output=True, text=True).stdout
        match = re.search(r"^Version (\S+) .*(librdkafka \S+)", about, re.M)
        self.version = f"{match[1]} ({match[2]})" if match else ""
        return None

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def kcat(bootstrap, *args, stdin: bytes | None = None) -> str:
        result = subprocess.run(["kcat", "-b", bootstrap, *args], input=stdin,
                                capture_output=True, timeout=2 * WAIT_SECONDS)
        expect(result.returncode == 0,
               f"kcat {' '.join(args)} exited {result.returncode}: "
               f"{result.stderr.decode(errors='replace').strip()}")
        return result.stdout.decode()

    def produce(self, bootstrap, topic, records, *args, headers=()):
        """records: (key, value) pairs of text without ':' or newlines; empty means null."""
        lines = b"".join((k or b"") + b":" + (v or b"") + b"\n" for k, v in records)
        header_args = [a for name, value in headers for a in ("-H", f"{name}={value.decode()}")]
        self.kcat(bootstrap, "-P", "-t", topic, "-K:", "-Z", "-X", "acks=all", *header_args,
                  *args, stdin=lines)

    @staticmethod
    def parse(output: str) -> list[Got]:
        got = []
        for line in output.splitlines():
            if line.strip():
                data = json.loads(line)
                raw = data.get("headers") or []
                headers = tuple((raw[i], None if raw[i + 1] is None else raw[i + 1].encode())
                                for i in range(0, len(raw), 2))
                encode = lambda text: None if text is None else text.encode()  # noqa: E731
                got.append(Got(data["partition"], data["offset"], encode(data["key"]),
                               encode(data["payload"]), headers, data["ts"]))
        return got

    def read(self, bootstrap, topic, offset="beginning") -> list[Got]:
        """Every record from `offset` (kcat's -o) to the end of the partitions."""
        return self.parse(self.kcat(bootstrap, "-C", "-t", topic, "-o", offset, "-e", "-J"))

    # -- scenarios ----------------------------------------------------------------------------

    def metadata(self, bootstrap, topic):
        data = json.loads(self.kcat(bootstrap, "-L", "-J", "-t", topic))
        [described] = data["topics"]
        expect_equal([0, 1, 2], sorted(p["partition"] for p in described["partitions"]),
                     "partitions")
        brokers = {b["id"] for b in data["brokers"]}
        expect(all(p["leader"] in brokers for p in described["partitions"]),
               f"leaders among the brokers {brokers}")

    def produce_consume(self, bootstrap, topic):
        sent = keyed(30)
        self.produce(bootstrap, topic, sent)
        check_round_trip(sent, self.read(bootstrap, topic))

    def compression(self, bootstrap, topic, codec):
        sent = [(f"key-{i}".encode(), f"{codec} value {i} ".encode() * 20) for i in range(50)]
        self.produce(bootstrap, topic, sent, "-z", codec)
        check_round_trip(sent, self.read(bootstrap, topic))

    def headers_nulls(self, bootstrap, topic):
        headers = (("trace", b"1"), ("trace", b"2"), ("empty", b""))
        sent = [(b"key", b"value"), (None, b"null key"), (b"tombstone", None)]
        self.produce(bootstrap, topic, sent, headers=headers)  # -H: every record's headers
        got = self.read(bootstrap, topic)
        expect_equal([(k, v, headers) for k, v in sent], [(r.key, r.value, r.headers) for r in got],
                     "records")

    def offsets_by_timestamp(self, bootstrap, topic):
        self.produce(bootstrap, topic, [(b"k", b"early-%d" % i) for i in range(3)], "-p", "0")
        self.produce(bootstrap, topic, [(b"k", b"late-%d" % i) for i in range(3)], "-p", "0")
        written = self.read(bootstrap, topic)
        expect_equal(6, len(written), "records")
        query = written[3].timestamp  # the time of the first record of the second run
        expected = min(r.offset for r in written if r.timestamp >= query)
        answer = self.kcat(bootstrap, "-Q", "-t", f"{topic}:0:{query}")
        expect_equal(f"{topic} [0] offset {expected}", answer.strip(), "kcat -Q")
        from_time = self.read(bootstrap, topic, f"s@{query}")
        expect_equal(written[expected:], from_time, "records from that time (-o s@)")
        after = self.kcat(bootstrap, "-Q", "-t", f"{topic}:0:{written[-1].timestamp + 1000}")
        expect_equal(f"{topic} [0] offset -1", after.strip(), "after the last record")

    def consumer_group(self, bootstrap, topic):
        group = f"{topic}-group"
        member = ["-G", group, "-X", "auto.offset.reset=earliest", "-e", "-J", topic]
        self.produce(bootstrap, topic, keyed(10, "first"))
        expect_equal(10, len(self.parse(self.kcat(bootstrap, *member))),
                     "records read by the first member (which commits as it leaves)")
        self.produce(bootstrap, topic, keyed(5, "second"))
        got = self.parse(self.kcat(bootstrap, *member))
        expect_equal(sorted(keyed(5, "second")), sorted((r.key, r.value) for r in got),
                     "records read after the commit")

    def admin_topics(self, bootstrap, topic):
        raise NotApplicable("kcat has no admin commands")

    def admin_configs(self, bootstrap, topic):
        raise NotApplicable("kcat has no admin commands")
