"""pykbroker installs like any Python package and runs from anywhere.

The sdist and the wheel carry the protocol schemas (copied from the top-level `protocol/` at
build time) and Kafka's example server.properties (`pykbroker --print-config`); a broker installed with `pip install <checkout>` into a fresh virtual environment
outside the checkout serves real clients, and its pytest plugin serves a test file that has no
setup code of its own (docs/testing.md's kafka-python example) with only pytest and the client
beside it.
"""
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from pykbroker.testkit.process import BrokerProcess

from .docs_examples import documented_test_files

CHECKOUT = Path(__file__).resolve().parents[1]
EXAMPLE_CONFIG = CHECKOUT / "config" / "server.properties"
SCHEMA_COUNT = len(list((CHECKOUT / "protocol" / "messages").glob("*.json")))


@pytest.fixture(autouse=True)
def without_the_checkout_on_the_path(monkeypatch):
    """The installed package must be found on its own, not through a PYTHONPATH to a checkout."""
    monkeypatch.delenv("PYTHONPATH", raising=False)


def run(*args, cwd):
    subprocess.run([str(arg) for arg in args], cwd=cwd, check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`python -m build`: an sdist, and a wheel built from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, CHECKOUT, cwd=out)
    return next(out.glob("*.tar.gz")), next(out.glob("*.whl"))


@pytest.fixture(scope="module")
def installed_venv(tmp_path_factory):
    """A new virtual environment outside the checkout with `pip install <checkout>` done."""
    home = tmp_path_factory.mktemp("elsewhere")
    venv.create(home / "venv", with_pip=True)
    run(home / "venv" / "bin" / "pip", "install", "-q", CHECKOUT, cwd=home)
    return home / "venv"


def test_the_sdist_carries_the_protocol_schemas(built):
    sdist, _ = built
    with tarfile.open(sdist) as archive:
        schemas = [name for name in archive.getnames()
                   if "/protocol/messages/" in name and name.endswith(".json")]
    assert len(schemas) == SCHEMA_COUNT


def test_the_wheel_built_from_the_sdist_carries_the_protocol_schemas(built):
    _, wheel = built
    with zipfile.ZipFile(wheel) as archive:
        schemas = [name for name in archive.namelist()
                   if name.startswith("pykbroker/protocol/schemas/") and name.endswith(".json")]
    assert len(schemas) == SCHEMA_COUNT


def test_the_wheel_built_from_the_sdist_carries_the_example_server_properties(built):
    _, wheel = built
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("pykbroker/config/server.properties").decode()
    assert shipped == EXAMPLE_CONFIG.read_text()


def test_the_installed_command_prints_the_example_server_properties(installed_venv, tmp_path):
    printed = subprocess.run([installed_venv / "bin" / "pykbroker", "--print-config"], cwd=tmp_path,
                             check=True, capture_output=True, text=True).stdout
    assert printed == EXAMPLE_CONFIG.read_text()


def test_the_installed_package_reads_its_own_schemas_not_the_checkouts(installed_venv, tmp_path):
    python = installed_venv / "bin" / "python"
    found = subprocess.run(
        [python, "-c", "from pykbroker.protocol.schema import SCHEMA_DIR; print(SCHEMA_DIR)"],
        cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()
    assert Path(found).is_relative_to(installed_venv)


def test_a_broker_installed_outside_the_checkout_serves_metadata_produce_and_fetch(
        installed_venv, tmp_path):
    command = [str(installed_venv / "bin" / "pykbroker")]
    with BrokerProcess(tmp_path / "broker", command=command) as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
        sent = producer.send("installed", key=b"k", value=b"from a wheel").get(timeout=30)
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, consumer_timeout_ms=10000)
        partition = TopicPartition("installed", sent.partition)
        assert consumer.partitions_for_topic("installed") == {0}
        consumer.assign([partition])
        consumer.seek(partition, sent.offset)
        record = next(iter(consumer))
        consumer.close()
    assert (record.key, record.value, record.offset) == (b"k", b"from a wheel", sent.offset)


def test_the_docker_image_installs_the_package_as_a_wheel_would():
    dockerfile = (CHECKOUT / "docker" / "Dockerfile").read_text()
    installs = [line for line in dockerfile.splitlines() if "pip install" in line]
    assert installs and all(" -e " not in line for line in installs)


@pytest.fixture(scope="module")
def with_pytest_and_kafka_python(installed_venv):
    """The fresh environment with what a user's tests add to pykbroker: pytest and their client."""
    run(installed_venv / "bin" / "pip", "install", "-q", "pytest", "kafka-python", cwd=installed_venv)
    return installed_venv


def test_in_a_fresh_venv_the_plugins_fixtures_serve_a_test_file_without_setup_code(
        with_pytest_and_kafka_python, tmp_path):
    test_file = tmp_path / "test_kafka_python.py"
    test_file.write_text(documented_test_files()["test_kafka_python.py"])
    assert list(tmp_path.iterdir()) == [test_file]  # no conftest.py, no pytest.ini: the plugin alone
    result = subprocess.run(
        [with_pytest_and_kafka_python / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
         test_file.name], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
