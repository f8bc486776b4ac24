"""TLS and SASL_SSL beside Kafka 3.9.0: produce and consume throughput, produce latency, broker CPU.

    python -m bench.secure [--quick]          # writes bench/results/secure.md

One pykbroker and one Kafka 3.9.0 (`../shared/realkafka`, ZooKeeper mode) run side by side, each
with three listeners: PLAINTEXT (topic creation, user creation, Kafka's inter-broker traffic), SSL
and SASL_SSL with SCRAM-SHA-512. Both get THE SAME certificates, made once per run (a CA and a
broker certificate for 127.0.0.1, EC P-256, as PEM files: Kafka 3.9 reads `ssl.keystore.type=PEM`
as pykbroker does), the same settings (those kafka.sh writes for one node) and the default TLS
protocols and cipher suites of each (Kafka's defaults: TLSv1.3 and TLSv1.2). The SCRAM user is
created on both through AlterUserScramCredentials.

After a warm-up of every listener that is not counted, for each round, protocol (SSL, SASL_SSL)
and record size (1 KB, 100 B), each broker in turn (the order alternates between rounds) gets a
fresh 3-partition topic, written by one producer (linger.ms=5, batch.size=1 MiB, acks=1, no
compression) and read back by the tuned consumer of bench/clients.py (assign, 64 MiB fetches) and
by a consumer with librdkafka's default settings (group subscribe). Then 1 KB records are written
at a fixed rate (acks=1) and the time from each produce() to its delivery report gives the
latency percentiles. The brokers' CPU time (utime +
stime of the broker process; ZooKeeper not counted) over the throughput phases, divided by the
bytes moved, gives CPU seconds per GB.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import proc  # noqa: E402
from bench.figure import Figure, measured, not_available, ratio_text  # noqa: E402
from bench.plan import FULL, MIB, QUICK, Plan, size_label  # noqa: E402
from bench.sections import HIGHER, LOWER, Comparison, Section  # noqa: E402
from bench.throughput import client_args, run_client, run_clients  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "secure.md"
PROTOCOLS = ("SSL", "SASL_SSL")
LISTENERS = ("PLAINTEXT", "SSL", "SASL_SSL")
BROKERS = ("pykbroker", "kafka")
MECHANISM = "SCRAM-SHA-512"
USER, PASSWORD = "bench", "bench-secret"
PARTITIONS = 3
LATENCY_SIZE = 1024
WARM_UP_RECORDS = 50_000
GB = 1024**3


@dataclass(frozen=True)
class LatencyPlan:
    rate: int        # records a second
    seconds: float   # how long


FULL_LATENCY = LatencyPlan(rate=5000, seconds=10.0)
QUICK_LATENCY = LatencyPlan(rate=5000, seconds=5.0)


def certificates(directory: Path) -> tuple[Path, Path]:
    """(PEM keystore: chain and key, CA certificate), made once for both brokers."""
    from compat.certs import Pki

    pki = Pki(directory)
    issued = pki.issue("broker", "CN=broker,OU=bench,O=pykbroker")
    keystore = directory / "broker-store.pem"
    keystore.write_bytes(issued.chain_pem.read_bytes() + issued.key_pem.read_bytes())
    return keystore, pki.ca_pem


def listener_settings(ports: dict[str, int], keystore: Path, ca: Path) -> dict[str, str]:
    """What both brokers get besides the single broker's usual settings."""
    listeners = ",".join(f"{name}://127.0.0.1:{ports[name]}" for name in LISTENERS)
    return {
        "listeners": listeners,
        "advertised.listeners": listeners,
        "num.partitions": str(PARTITIONS),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca),
        "sasl.enabled.mechanisms": MECHANISM,
        f"listener.name.sasl_ssl.{MECHANISM.lower()}.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    }


def client_settings(protocol: str, ca: Path) -> dict[str, str]:
    settings = {"security.protocol": protocol, "ssl.ca.location": str(ca)}
    if protocol == "SASL_SSL":
        settings.update({"sasl.mechanism": MECHANISM, "sasl.username": USER, "sasl.password": PASSWORD})
    return settings


class SecurePykbroker:
    name = "pykbroker"

    def __init__(self, workdir: Path, keystore: Path, ca: Path) -> None:
        from compat.realkafka import SINGLE_BROKER_SETTINGS, free_port_block
        from pykbroker.testkit.process import BrokerProcess

        base = free_port_block(len(LISTENERS))
        self.ports = {name: base + index for index, name in enumerate(LISTENERS)}
        settings = {**SINGLE_BROKER_SETTINGS, **listener_settings(self.ports, keystore, ca)}
        self.broker = BrokerProcess(workdir, settings, start_timeout=60.0)

    @property
    def pid(self) -> int:
        return self.broker.process.pid

    def start(self) -> None:
        self.broker.start()

    def stop(self) -> None:
        self.broker.stop()


class SecureKafka:
    name = "kafka"

    def __init__(self, workdir: Path, keystore: Path, ca: Path) -> None:
        from compat.realkafka import KafkaBroker

        self.ports: dict[str, int] = {}
        outer = self

        class Kafka(KafkaBroker):
            ports_needed = 4  # PLAINTEXT, ZooKeeper, SSL, SASL_SSL

            def extra_settings(self, port: int) -> dict[str, str]:
                outer.ports = {"PLAINTEXT": port, "SSL": port + 2, "SASL_SSL": port + 3}
                return listener_settings(outer.ports, keystore, ca)

        self.kafka = Kafka(workdir)

    @property
    def pid(self) -> int:
        state = (self.kafka.runs / str(self.kafka.port) / "state").read_text()
        return int(dict(line.split("=", 1) for line in state.split())["KAFKA_PID"])

    def start(self) -> None:
        self.kafka.start()

    def stop(self) -> None:
        self.kafka.stop()


def bootstrap(broker, listener: str) -> str:
    return f"127.0.0.1:{broker.ports[listener]}"


def create_scram_user(broker, time_limit: float) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    admin = AdminClient({"bootstrap.servers": bootstrap(broker, "PLAINTEXT"), "log_level": 0})
    upsertion = UserScramCredentialUpsertion(USER, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                             PASSWORD.encode())
    deadline = time.monotonic() + time_limit
    while True:
        try:
            for future in admin.alter_user_scram_credentials([upsertion]).values():
                future.result(10)
            return
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@dataclass
class Phase:
    broker: str
    protocol: str
    phase: str
    records: int = 0
    data_bytes: int = 0
    seconds: float = 0.0
    broker_cpu_seconds: float | None = None
    reason: str = ""
    latency: dict[str, float] = field(default_factory=dict)


def broker_cpu(pid: int) -> float | None:
    try:
        return proc.cpu_seconds(pid)
    except OSError:
        return None


def measured_phase(broker, protocol: str, phase: str, run: Callable[[], dict]) -> Phase:
    before = broker_cpu(broker.pid)
    result = run()
    after = broker_cpu(broker.pid)
    record = Phase(broker.name, protocol, phase, result.get("records", 0), result.get("bytes", 0),
                   result.get("seconds", 0.0), reason=result.get("reason", ""))
    if not result.get("ok"):
        record.records = record.data_bytes = 0
        record.reason = result.get("reason", "failed")
    if before is not None and after is not None:
        record.broker_cpu_seconds = after - before
    record.latency = {key: result[key] for key in ("p50_ms", "p99_ms", "max_ms") if key in result}
    return record


def throughput_phases(broker, protocol: str, size: int, count: int, time_limit: float, ca: Path) -> list[Phase]:
    """Write `count` records of `size` to a fresh topic, read them back tuned, then with defaults."""
    config = json.dumps(client_settings(protocol, ca))
    topic = f"bench-secure-{protocol.lower()}-{size}-{uuid.uuid4().hex[:8]}"
    created = run_client("create-topic", bootstrap(broker, "PLAINTEXT"), topic, time_limit, partitions=PARTITIONS)
    label = size_label(size)
    if not created.get("ok"):
        return [Phase(broker.name, protocol, f"produce {label}", reason=created.get("reason", "no topic"))]
    where = bootstrap(broker, protocol)
    phases = [
        measured_phase(broker, protocol, f"produce {label}", lambda: run_client(
            "produce", where, topic, time_limit, count=count, size=size, config=config)),
        measured_phase(broker, protocol, f"consume {label}", lambda: run_client(
            "consume", where, topic, time_limit, count=count, partitions=PARTITIONS, config=config)),
        measured_phase(broker, protocol, f"default consume {label}", lambda: run_clients(
            [client_args("consume", where, topic, time_limit, count=count, config=config) + ["--default"]],
            time_limit)[0]),
    ]
    return phases


def latency_phase(broker, protocol: str, latency: LatencyPlan, ca: Path) -> Phase:
    topic = f"bench-secure-latency-{protocol.lower()}-{uuid.uuid4().hex[:8]}"
    time_limit = latency.seconds + 30.0
    created = run_client("create-topic", bootstrap(broker, "PLAINTEXT"), topic, time_limit, partitions=PARTITIONS)
    if not created.get("ok"):
        return Phase(broker.name, protocol, "latency", reason=created.get("reason", "no topic"))
    config = json.dumps(client_settings(protocol, ca))
    return measured_phase(broker, protocol, "latency", lambda: run_client(
        "latency", bootstrap(broker, protocol), topic, time_limit, size=LATENCY_SIZE, rate=latency.rate,
        seconds=latency.seconds, config=config))


def warm_up(brokers: dict, ca: Path, time_limit: float, say: Callable[[str], None]) -> None:
    """Some records through every listener of every broker before measuring, not counted: the
    JVM compiles its hot paths, both brokers have their first TLS sessions behind them."""
    for protocol in PROTOCOLS:
        for name in brokers:
            say(f"warming up {name} over {protocol}")
            throughput_phases(brokers[name], protocol, 1024, WARM_UP_RECORDS, time_limit, ca)


def rounds(plan: Plan) -> int:
    return max(2, plan.repetitions) if plan.name == "full" else plan.repetitions


def measure(brokers: dict, plan: Plan, latency: LatencyPlan, ca: Path, say: Callable[[str], None]) -> list[Phase]:
    warm_up(brokers, ca, plan.phase_time_limit, say)
    phases: list[Phase] = []
    for round_index in range(rounds(plan)):
        order = [name for name in BROKERS if name in brokers]
        order = order if round_index % 2 == 0 else order[::-1]
        for protocol in PROTOCOLS:
            for size, count in plan.record_counts.items():
                for name in order:
                    say(f"round {round_index + 1}: {name} {protocol} {size_label(size)}")
                    phases += throughput_phases(brokers[name], protocol, size, count, plan.phase_time_limit, ca)
            for name in order:
                say(f"round {round_index + 1}: {name} {protocol} latency")
                phases.append(latency_phase(brokers[name], protocol, latency, ca))
    return phases


def rate_figure(phases: list[Phase]) -> Figure:
    good = [p for p in phases if p.records and p.seconds]
    if not good:
        return not_available(phases[0].reason if phases else "not run")
    note = f"median of {len(good)}" if len(good) > 1 else ""
    return measured(statistics.median(p.data_bytes / MIB / p.seconds for p in good), note)


def latency_figure(phases: list[Phase], key: str) -> Figure:
    values = [p.latency[key] for p in phases if key in p.latency]
    if not values:
        return not_available(phases[0].reason if phases else "not run")
    return measured(statistics.median(values), f"median of {len(values)}" if len(values) > 1 else "")


def cpu_per_gb(phases: list[Phase]) -> Figure:
    moved = [p for p in phases if p.phase != "latency" and p.records and p.broker_cpu_seconds is not None]
    data = sum(p.data_bytes for p in moved)
    if not data:
        return not_available("nothing moved")
    return measured(sum(p.broker_cpu_seconds or 0.0 for p in moved) / (data / GB))


def comparisons(phases: list[Phase], plan: Plan) -> list[Comparison]:
    def of(broker: str, protocol: str, phase: str | None = None) -> list[Phase]:
        return [p for p in phases if p.broker == broker and p.protocol == protocol
                and (phase is None or p.phase == phase)]

    result = []
    for protocol in PROTOCOLS:
        for size in plan.record_counts:
            for kind in ("produce", "consume", "default consume"):
                phase = f"{kind} {size_label(size)}"
                result.append(Comparison(f"{phase} over {protocol}, MB/s", HIGHER,
                                         {b: rate_figure(of(b, protocol, phase)) for b in BROKERS}))
        for key, label in (("p50_ms", "p50"), ("p99_ms", "p99"), ("max_ms", "max")):
            result.append(Comparison(f"produce latency {label} over {protocol} (1 KB, acks=1), ms", LOWER,
                                     {b: latency_figure(of(b, protocol, "latency"), key) for b in BROKERS}, 2))
        result.append(Comparison(f"broker CPU over {protocol}, s/GB", LOWER,
                                 {b: cpu_per_gb(of(b, protocol)) for b in BROKERS}, 2))
    return result


def phase_table(phases: list[Phase]) -> str:
    lines = ["| broker | protocol | phase | records | MB | s | MB/s | broker CPU s | note |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for p in phases:
        rate = f"{p.data_bytes / MIB / p.seconds:,.1f}" if p.records and p.seconds else "—"
        cpu = f"{p.broker_cpu_seconds:.2f}" if p.broker_cpu_seconds is not None else "—"
        note = ", ".join(f"{k.removesuffix('_ms')} {v:.2f} ms" for k, v in p.latency.items()) or p.reason
        lines.append(f"| {p.broker} | {p.protocol} | {p.phase} | {p.records:,} | {p.data_bytes / MIB:,.1f} | "
                     f"{p.seconds:.2f} | {rate} | {cpu} | {note.replace('|', '/')[:160]} |")
    return "\n".join(lines)


def make_brokers(workdir: Path) -> tuple[dict, Path]:
    """Both brokers, not yet started, with the certificates made for them; and the CA."""
    keystore, ca = certificates(workdir / "pki")
    brokers = {"pykbroker": SecurePykbroker(workdir / "pykbroker", keystore, ca),
               "kafka": SecureKafka(workdir / "kafka", keystore, ca)}
    return brokers, ca


def start(broker, say: Callable[[str], None]) -> str:
    """'' once the broker runs with its SCRAM user, else why not (the broker is stopped then)."""
    say(f"starting {broker.name} with SSL and SASL_SSL listeners")
    try:
        broker.start()
    except Exception as error:  # a broker that does not start costs its figures, not the run
        return f"did not start: {str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}"
    try:
        create_scram_user(broker, 60.0)
    except Exception as error:
        broker.stop()
        return f"SCRAM user not created: {error}"
    return ""


def unmeasured(name: str, reason: str, plan: Plan) -> list[Phase]:
    """The phases of a broker that could not be measured, each with the reason."""
    return [Phase(name, protocol, phase, reason=reason) for protocol in PROTOCOLS
            for phase in [f"{kind} {size_label(size)}" for size in plan.record_counts
                          for kind in ("produce", "consume", "default consume")] + ["latency"]]


def run(workdir: Path, plan: Plan, say: Callable[[str], None], latency: LatencyPlan | None = None) -> Section:
    """Measure both brokers over SSL and SASL_SSL; the brokers are stopped whatever happens."""
    latency = latency or (FULL_LATENCY if plan.name == "full" else QUICK_LATENCY)
    workdir.mkdir(parents=True, exist_ok=True)
    brokers, ca = make_brokers(workdir)
    failures = {}
    try:
        for name in BROKERS:
            failure = start(brokers[name], say)
            if failure:
                failures[name] = failure
                say(f"{name} {failure}")
        running = {name: broker for name, broker in brokers.items() if name not in failures}
        phases = measure(running, plan, latency, ca, say) if running else []
    finally:
        for name, broker in brokers.items():
            if name not in failures:
                broker.stop()
    for name, failure in failures.items():
        phases += unmeasured(name, failure, plan)
    notes = [f"latency: {latency.rate:,} records of 1 KB a second for {latency.seconds:.0f} s, acks=1, "
             "time from produce() to the delivery report",
             "same certificates (EC P-256, PEM) and default TLS protocols and ciphers on both brokers"]
    return Section("TLS and SASL_SSL (SCRAM-SHA-512), one broker", comparisons(phases, plan),
                   phase_table(phases), notes)


def markdown(section: Section, plan: Plan) -> str:
    lines = [f"# {section.title}", "", f"Plan: {plan.name}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "| metric | pykbroker | Kafka 3.9.0 | ratio | pykbroker at least Kafka |", "|---|---:|---:|---:|---|"]
    for comparison in section.comparisons:
        ours, theirs = comparison.figures["pykbroker"], comparison.figures["kafka"]
        verdict = {True: "yes", False: "NO", None: "—"}[comparison.against()]
        lines.append(f"| {comparison.metric} | {ours.text(comparison.digits)} | {theirs.text(comparison.digits)} | "
                     f"{ratio_text(ours, theirs)} | {verdict} |")
    lines += ["", *[f"- {note}" for note in section.notes], "", "## Phases", "", section.phases_markdown, ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workdir", default="")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-secure-", dir=args.workdir or None) as directory:
        section = run(Path(directory), plan, lambda message: print(message, file=sys.stderr, flush=True))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(markdown(section, plan))
    print(RESULTS.read_text())


if __name__ == "__main__":
    main()
