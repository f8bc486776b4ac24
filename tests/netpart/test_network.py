"""The partition harness's network (`network.py`) does what the scenarios rely on: a cut link drops
packets silently (a connection attempt times out, it is not refused) and leaves the other links
alone, loss drops some packets, a slow link passes a token bucket, a heal restores everything, and
nothing of a run is left behind.
(Cuts between two nodes are the scenarios' own business: they see leadership move.)"""

import socket
import subprocess
import sys
import time

import pytest

from ..ci import skip_or_fail_in_ci
from .network import CLIENT, Network, netns_supported, run

PORT = 7000
# A TCP server inside a namespace that answers each connection with its node's name
ECHO_SERVER = """
import socket, sys
server = socket.create_server((sys.argv[1], int(sys.argv[2])))
while True:
    connection, _ = server.accept()
    connection.sendall(sys.argv[3].encode())
    connection.close()
"""
@pytest.fixture(scope="module")
def network():
    reason = netns_supported()
    if reason:
        skip_or_fail_in_ci(reason)
    with Network(["a", "b"]) as running:
        servers = [subprocess.Popen(running.in_namespace(node, [sys.executable, "-c", ECHO_SERVER,
                                                                running.address(node), str(PORT), node]))
                   for node in ("a", "b")]
        try:
            wait_for(lambda: answer(running, "a") == "a" and answer(running, "b") == "b")
            yield running
        finally:
            for server in servers:
                server.kill()
                server.wait()
            running.heal()


def answer(network: Network, target: str, timeout: float = 0.5) -> str:
    """What the test process gets when it connects to `target`'s server: its name, or the error's."""
    try:
        with socket.create_connection((network.address(target), PORT), timeout=timeout) as sock:
            return sock.recv(16).decode()
    except OSError as error:
        return type(error).__name__


def wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.1)


def test_a_cut_drops_silently_and_a_heal_restores(network):
    network.cut(CLIENT, "a")
    assert answer(network, "a") == "TimeoutError"  # not refused: the packets vanish
    assert answer(network, "b") == "b"  # the other links are untouched
    network.heal()
    assert answer(network, "a") == "a"
    network.cut("a", CLIENT, both_ways=False)  # only a's answers vanish: no handshake either
    assert network.cuts() == {("a", CLIENT): 100}
    assert answer(network, "a") == "TimeoutError"
    network.heal()
    network.isolate("b", keep=(CLIENT,))
    assert answer(network, "b") == "b"
    assert network.cuts()[("a", "b")] == network.cuts()[("b", "a")] == 100
    network.heal()


def test_loss_drops_some_packets_at_random(network):
    network.lose(CLIENT, "a", 20)
    outcomes = [answer(network, "a", timeout=0.2) for _ in range(20)]
    network.heal()
    assert "a" in outcomes and "TimeoutError" in outcomes, outcomes


def test_a_slow_link_gets_a_token_bucket_until_fast(network):
    network.slow("a", rate="512kbit")
    assert "tbf" in run("tc", "-n", network.hub, "qdisc", "show", "dev", network.hub_port("a"))
    assert answer(network, "a") == "a"  # slow, not cut
    network.fast("a")
    assert "tbf" not in run("tc", "-n", network.hub, "qdisc", "show", "dev", network.hub_port("a"))


def test_nothing_is_left_after_destroy():
    reason = netns_supported()
    if reason:
        skip_or_fail_in_ci(reason)
    with Network(["a"]) as network:
        namespaces = [network.hub, network.namespace("a")]
        assert all(name in run("ip", "netns", "list") for name in namespaces)
    listed = run("ip", "netns", "list")
    assert not any(name in listed for name in namespaces)
    wait_for(lambda: subprocess.run(["ip", "link", "show", network.client_link],
                                    capture_output=True).returncode != 0)
