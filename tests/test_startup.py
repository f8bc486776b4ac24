"""Starting a broker: what it refuses, loudly and before it touches data or opens a port, and
what it tells the person who started it.

Each refusal is one line on stderr naming the setting, never a traceback; the exit status is 2
for a usage or configuration error and 1 when the broker cannot start.
"""
from __future__ import annotations

import fcntl
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from kafka import KafkaConsumer

from pykbroker import broker as broker_module
from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig, ConfigError
from pykbroker.log.dir_lock import LogDirInUse, LogDirLocks
from pykbroker.testkit.ports import free_port
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until

from .client_helpers import as_tuples, create_topic, produce_all, read_partition, restart_on_same_port

CHECKOUT_CONFIG = Path(__file__).resolve().parents[1] / "config" / "server.properties"


def start_pykbroker(*args: str, cwd, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the `pykbroker` command to its exit (for starts that must fail)."""
    return subprocess.run([sys.executable, "-m", "pykbroker", *args], cwd=cwd, timeout=timeout,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)


def overrides(**settings: str) -> list[str]:
    args = []
    for key, value in settings.items():
        args += ["--override", f"{key.replace('_', '.')}={value}"]
    return args


def assert_one_line_without_traceback(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# -- one broker per log directory ----------------------------------------------------------------

def test_a_second_broker_on_the_same_log_dirs_exits_naming_the_directory_and_the_first_loses_nothing(tmp_path):
    with BrokerProcess(tmp_path / "first") as first:
        create_topic(first.bootstrap, "kept", partitions=1)
        produce_all(first.bootstrap, "kept", [(0, b"k%d" % i, b"v%d" % i) for i in range(20)])
        log_dir = first.overrides["log.dirs"]

        second = start_pykbroker(*overrides(listeners=f"PLAINTEXT://127.0.0.1:{free_port()}",
                                            log_dirs=log_dir), cwd=tmp_path)

        assert second.returncode == 1
        line = assert_one_line_without_traceback(second.stderr)
        assert f"Failed to acquire the lock on {log_dir} (log.dirs)" in line
        assert f"process {first.process.pid}" in line
        assert first.is_running()
        produce_all(first.bootstrap, "kept", [(0, b"k20", b"v20")])
        restart_on_same_port(first)
        records = as_tuples(read_partition(first.bootstrap, "kept", 0))
    assert records == [(i, b"k%d" % i, b"v%d" % i) for i in range(21)]


def test_a_log_dir_held_by_a_kafka_style_posix_lock_is_refused(tmp_path):
    """Kafka's FileChannel.tryLock takes a POSIX record lock: pykbroker honours it."""
    (tmp_path / "logs").mkdir()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"f = open({str(tmp_path / 'logs' / '.lock')!r}, 'w')\n"
        "fcntl.lockf(f, fcntl.LOCK_EX)\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LogDirInUse) as refused:
            LogDirLocks.acquire([str(tmp_path / "logs")])
        assert refused.value.directory == str(tmp_path / "logs")
    finally:
        holder.kill()
        holder.wait()


def test_log_dir_locks_exclude_a_second_broker_in_the_same_process_until_released(tmp_path):
    first = LogDirLocks.acquire([str(tmp_path / "a"), str(tmp_path / "b")])
    with pytest.raises(LogDirInUse):
        LogDirLocks.acquire([str(tmp_path / "c"), str(tmp_path / "b")])
    assert not (tmp_path / "c" / ".lock").exists() or _is_unlocked(tmp_path / "c" / ".lock")
    first.release()
    LogDirLocks.acquire([str(tmp_path / "a"), str(tmp_path / "b")]).release()


def _is_unlocked(path) -> bool:
    with open(path, "r+") as lock_file:
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
    return True


def test_an_unusable_log_dir_is_refused_naming_the_key_and_the_path(tmp_path):
    not_a_directory = tmp_path / "a-file"
    not_a_directory.write_text("")
    result = start_pykbroker(*overrides(listeners=f"PLAINTEXT://127.0.0.1:{free_port()}",
                                        log_dirs=str(not_a_directory)), cwd=tmp_path)
    assert result.returncode == 2
    line = assert_one_line_without_traceback(result.stderr)
    assert f"Cannot use {not_a_directory} (log.dirs)" in line


# -- refuse what is not served ------------------------------------------------------------------

@pytest.mark.parametrize("listeners, protocol_map, extra, refused", [
    # SSL, SASL_PLAINTEXT and SASL_SSL are served, but not without what they need: a key store
    # (SSL), or with the default mechanism, GSSAPI (Kerberos), or OAUTHBEARER
    ("SSL://127.0.0.1:{port}", None, {}, "ssl.keystore.location"),
    ("SASL_PLAINTEXT://127.0.0.1:{port}", None, {}, "Listener SASL_PLAINTEXT enables SASL mechanism GSSAPI"),
    ("SASL_SSL://127.0.0.1:{port}", None, {}, "Listener SASL_SSL enables SASL mechanism GSSAPI"),
    ("SASL_SSL://127.0.0.1:{port}", None, {"sasl.enabled.mechanisms": "OAUTHBEARER"},
     "Listener SASL_SSL enables SASL mechanism OAUTHBEARER"),
    ("PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:{port}",
     "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL", {}, "Listener INTERNAL enables SASL mechanism GSSAPI"),
    ("PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:{port}", "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
     {"listener.name.internal.sasl.enabled.mechanisms": "GSSAPI,PLAIN"},
     "Listener INTERNAL enables SASL mechanism GSSAPI"),
])
def test_a_listener_that_cannot_be_served_as_configured_stops_the_broker_before_any_port_opens(
        tmp_path, listeners, protocol_map, extra, refused):
    port = free_port()
    settings = {"listeners": listeners.format(port=port), "log.dirs": str(tmp_path / "logs"), **extra}
    if protocol_map:
        settings["listener.security.protocol.map"] = protocol_map
    result = start_pykbroker(*[arg for key, value in settings.items()
                               for arg in ("--override", f"{key}={value}")], cwd=tmp_path)
    assert result.returncode == 2
    line = assert_one_line_without_traceback(result.stderr)
    assert refused.format(port=port) in line
    assert not (tmp_path / "logs").exists()  # refused before the log directories


def test_the_refusal_comes_before_any_listener_is_bound(tmp_path, monkeypatch):
    bound = []
    monkeypatch.setattr(broker_module, "bind_listener", lambda *args: bound.append(args))
    config = BrokerConfig({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
                           "log.dirs": str(tmp_path / "logs")})
    with pytest.raises(ConfigError, match="Listener SASL_SSL enables SASL mechanism GSSAPI"):
        Broker(config).open()
    assert bound == []


def test_an_ssl_listener_without_a_key_store_is_refused_naming_the_key(tmp_path):
    config = BrokerConfig({"listeners": "SSL://127.0.0.1:0", "log.dirs": str(tmp_path / "logs")})
    with pytest.raises(ConfigError, match="ssl.keystore.location"):
        Broker(config).open()
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("protocol", ["SSL", "SASL_PLAINTEXT", "SASL_SSL"])
def test_a_secured_inter_broker_protocol_without_its_listener_is_refused(tmp_path, protocol):
    config = BrokerConfig({"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path / "logs"),
                           "security.inter.broker.protocol": protocol})
    with pytest.raises(ConfigError, match="inter.broker.listener.name must be a listener name defined in "
                                          "advertised.listeners. The valid options based on currently "
                                          "configured listeners are PLAINTEXT"):
        Broker(config).open()
    assert not (tmp_path / "logs").exists()


# -- errors a person can act on -------------------------------------------------------------------

def test_an_override_without_equals_is_a_one_line_usage_error(tmp_path):
    result = start_pykbroker("--override", "foo", cwd=tmp_path)
    assert result.returncode == 2
    assert assert_one_line_without_traceback(result.stderr) == \
        "pykbroker: error: --override expects key=value, got 'foo'"


def test_a_missing_properties_file_is_a_one_line_usage_error(tmp_path):
    result = start_pykbroker("no-such.properties", cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot read no-such.properties" in assert_one_line_without_traceback(result.stderr)


def test_a_port_in_use_names_the_address_and_port(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = start_pykbroker(*overrides(listeners=f"PLAINTEXT://127.0.0.1:{port}",
                                            log_dirs=str(tmp_path / "logs")), cwd=tmp_path)
    assert result.returncode == 1
    line = assert_one_line_without_traceback(result.stderr)
    assert f"failed to bind listener PLAINTEXT to 127.0.0.1:{port}: Address already in use" in line


@pytest.mark.parametrize("level", ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "warn"])
def test_log_level_takes_kafkas_level_names(level):
    from pykbroker.cli import LOG_LEVELS, parse_args
    assert parse_args(["--log-level", level]).log_level in LOG_LEVELS


@pytest.mark.parametrize("level, name", [(logging.CRITICAL, "FATAL"), (logging.ERROR, "ERROR"),
                                         (logging.WARNING, "WARN"), (logging.INFO, "INFO"),
                                         (logging.DEBUG, "DEBUG"), (5, "TRACE")])
def test_log_lines_name_their_level_as_log4j_does(level, name):
    from pykbroker.cli import Log4jLevelFormatter
    record = logging.LogRecord("kafka.test", level, __file__, 1, "hello %s", ("there",), None)
    line = Log4jLevelFormatter("%(levelname)s %(message)s (%(name)s)").format(record)
    assert line == f"{name} hello there (kafka.test)"
    assert record.levelname == logging.getLevelName(level)  # other handlers still see Python's name


@pytest.fixture(scope="module")
def started_with_a_misspelt_key(tmp_path_factory):
    """A broker started with `num.partition` (sic) set, stopped again: its log."""
    directory = tmp_path_factory.mktemp("misspelt") / "broker"
    with BrokerProcess(directory, {"num.partition": "3"}) as broker:
        return directory, broker.log_text()


def test_an_unknown_key_is_warned_once_with_the_closest_known_key(started_with_a_misspelt_key):
    _, log = started_with_a_misspelt_key
    warnings = [line for line in log.splitlines() if "num.partition'" in line]
    assert len(warnings) == 1
    assert "did you mean 'num.partitions'?" in warnings[0]
    assert "] WARN " in warnings[0]  # log4j's name, as in Kafka's log lines


def test_the_start_line_says_where_data_lives(started_with_a_misspelt_key):
    directory, log = started_with_a_misspelt_key
    started = next(line for line in log.splitlines() if "pykbroker started" in line)
    assert f"data in {directory / 'kafka-logs'}" in started


def test_after_kill_9_one_line_per_log_dir_says_what_recovery_did(tmp_path):
    dirs = f"{tmp_path / 'a'},{tmp_path / 'b'}"
    with BrokerProcess(tmp_path / "broker", {"log.dirs": dirs}, keep_port_on_restart=True) as broker:
        create_topic(broker.bootstrap, "spread", partitions=4)
        produce_all(broker.bootstrap, "spread", [(p, b"k", b"v") for p in range(4)])
        broker.kill()
        broker.start()
        broker.wait_until_logs_loaded()
        recovery = [line for line in broker.log_text().splitlines() if "Recovered" in line]
    assert len(recovery) == 2
    assert any(f"in {tmp_path / 'a'} after an unclean shutdown" in line for line in recovery)
    assert all("segments scanned" in line and "bytes truncated" in line for line in recovery)


def test_a_restart_does_not_log_a_line_per_internal_partition(tmp_path):
    with BrokerProcess(tmp_path / "broker", keep_port_on_restart=True) as broker:
        consumer = KafkaConsumer("grouped", bootstrap_servers=broker.bootstrap, group_id="g",
                                 consumer_timeout_ms=2000)
        list(consumer)  # joins the group: __consumer_offsets is created
        consumer.close()
        broker.stop()
        restart_offset = len(broker.log_text())
        broker.start()
        restart_log = wait_until(lambda: _loaded_groups_line_after(broker, restart_offset),
                                 "the summary of the groups loaded after the restart")
    assert restart_log.count("__consumer_offsets-") <= 1


def _loaded_groups_line_after(broker: BrokerProcess, offset: int) -> str | None:
    """The broker's log from `offset` on, once it holds the one summary of loaded groups."""
    text = broker.log_text()[offset:]
    return text if "Loaded the groups and offsets of" in text else None


# -- Kafka's defaults, and the dev-friendly example file -------------------------------------------

def test_without_a_file_groups_need_three_brokers_and_the_log_says_which_setting_to_lower(tmp_path):
    broker = BrokerProcess(tmp_path / "broker")
    del broker.overrides["offsets.topic.replication.factor"]  # Kafka's default: 3
    with broker:
        consumer = KafkaConsumer("any", bootstrap_servers=broker.bootstrap, group_id="g",
                                 consumer_timeout_ms=1500)
        list(consumer)  # looks for its coordinator again and again
        consumer.close(autocommit=False)
        wait_until(lambda: "Could not create __consumer_offsets" in broker.log_text(),
                   "the broker to explain why groups do not work")
        log = broker.log_text()
    warnings = [line for line in log.splitlines() if " WARN " in line and "__consumer_offsets" in line]
    assert len(warnings) == 1
    assert "Set offsets.topic.replication.factor (now 3)" in warnings[0]
    assert "offsets.topic.replication.factor=1 for a single broker" in warnings[0]


def test_the_example_server_properties_is_kafkas_single_node_development_setup(caplog):
    config = BrokerConfig.from_file(CHECKOUT_CONFIG)
    assert config.unknown_keys == []
    assert config["offsets.topic.replication.factor"] == 1
    assert config["transaction.state.log.replication.factor"] == 1
    assert config["group.initial.rebalance.delay.ms"] == 0
    assert config.listeners[0].port == 9092 and config.listeners[0].host == "127.0.0.1"
    with caplog.at_level(logging.WARNING):
        config.warn_unknown_keys()
    assert caplog.records == []
