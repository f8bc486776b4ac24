"""Shared fixtures: brokers run as separate processes on free loopback ports, always stopped."""
import pytest

from pykbroker.testkit.process import BrokerProcess


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """One broker for a whole test module (tests use distinct topic names)."""
    with BrokerProcess(tmp_path_factory.mktemp("broker")) as running:
        yield running


@pytest.fixture
def fresh_broker(tmp_path):
    """A broker of the test's own, for tests that restart or configure it."""
    with BrokerProcess(tmp_path / "broker") as running:
        yield running


@pytest.fixture(scope="session")
def spark_session():
    """One local Spark (and its JVM) for the Spark test modules (`SPARK_MODULES`, one unit of
    work: they run on the same worker), stopped at the end of the session. A module asks for it
    through a `spark` fixture of its own, after its checks that Spark can run."""
    from tests.spark_support import shared_session, stop_spark

    session = shared_session()
    yield session
    stop_spark(session)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With pytest-xdist (`make test` runs two workers with `--dist loadscope`), a test module
    stays on one worker, so that its module-scoped brokers start once; the compatibility suite's
    modules that share one of its session pairs of brokers (pykbroker and Kafka 3.9.0: single,
    three-broker or secured) run as one unit, so that the pair starts once, on one worker. The
    slowest units start first (`SLOWEST_SCOPES`), the others follow, those with most tests first,
    so that both workers finish at about the same time. (The scopes are named here rather than by
    xdist_group marks, which pytest-xdist cannot attach to a test's id under every pytest
    version.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        _slowest_first = False

        def _split_scope(self, nodeid: str) -> str:
            return scheduling_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self._slowest_first:
                units = sorted(self.workqueue.items(), key=lambda unit: start_rank(*unit))
                self.workqueue.clear()
                self.workqueue.update(units)
                self._slowest_first = True
            super()._assign_work_unit(node)

    return ModuleScheduling(config, log)


# The compatibility suite's modules on each of its session pairs of brokers; its other modules
# start brokers of their own and are units of their own.
COMPAT_SCOPES = {
    "test_security_scenarios.py": "compat-security", "test_authorization_matrix.py": "compat-security",
    "test_assign_without_group_acl.py": "compat-security",
    "test_client_scenarios.py": "compat-single", "test_wire_differences.py": "compat-single",
    "test_cluster_scenarios.py": "compat-cluster",
}

# The modules that share one Spark session (`spark_session`): one unit, so that its JVM starts once.
SPARK_MODULES = ("tests/test_spark_kafka.py", "tests/cluster/test_spark_cluster.py", "tests/test_spark_example.py")
SPARK_SCOPE = "spark"

# The units that take most of a minute or more on two cores, slowest first (each measured alone):
# started before the others, so that no long unit is left for the end of the run.
SLOWEST_SCOPES = (
    SPARK_SCOPE,
    "compat-security",
    "tests/test_durability.py",
    "tests/fuzz/test_fuzz_requests.py",
    "tests/test_packaging.py",
    "tests/test_client_quotas.py",
    "compat-single",
    "tests/compat/test_tool_scenario.py",
    "tests/cluster/test_reassignment.py",
    "tests/netpart/test_partitions_kafka.py",
    "tests/cluster/test_exploratory_failures.py",
    "tests/test_connection_quotas.py",
    "tests/test_admin_topics.py",
    "tests/netpart/test_partitions_pykbroker.py",
    "tests/security/test_sasl_clients.py",
    "tests/tools/test_kafka_answers.py",
    "tests/test_alter_replica_log_dirs.py",
    "tests/test_java_clients.py",
    "tests/tools/test_kafka_tool_parity.py",
    "tests/test_startup.py",
    "tests/security/test_delegation_tokens.py",
    "compat-cluster",
)


def scheduling_scope(nodeid: str) -> str:
    """The unit of work a worker runs whole: the test's module, for the compatibility suite's
    modules on a session pair of brokers the pair's unit (`COMPAT_SCOPES`), for the Spark modules
    theirs (`SPARK_MODULES`)."""
    path = nodeid.split("::", 1)[0]
    if path in SPARK_MODULES:
        return SPARK_SCOPE
    if not path.startswith("tests/compat/"):
        return path
    return COMPAT_SCOPES.get(path.rsplit("/", 1)[-1], path)


def start_rank(scope: str, tests: dict) -> tuple[int, int]:
    """Where a unit comes in the order units are handed out: the slowest ones by
    `SLOWEST_SCOPES`, then the rest, those with the most tests first."""
    slow = SLOWEST_SCOPES.index(scope) if scope in SLOWEST_SCOPES else len(SLOWEST_SCOPES)
    return slow, -len(tests)


_LOG_TAIL_CHARACTERS = 20_000


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries the end of the log of each broker process it used, so
    that a failure seen only in CI can be read afterwards."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.when == "call":
        for name, value in getattr(item, "funcargs", {}).items():
            if isinstance(value, BrokerProcess):
                report.sections.append((f"log of broker fixture {name!r}", value.log_text()[-_LOG_TAIL_CHARACTERS:]))
