"""The network of one partition test run: a network namespace per node, joined through a bridge in
a hub namespace, and the nftables rules that cut, degrade and heal the links between them.

    with Network(["zk", "b1", "b2", "b3"]) as network:
        network.address("b1")                      # "10.23.N.11": where b1 listens
        network.in_namespace("b1", ["java", ...])  # the command line that runs inside b1
        network.cut("b1", "zk")                    # nothing passes between b1 and ZooKeeper
        network.cut("b1", "b2", both_ways=False)   # b1's packets to b2 vanish; b2's reach b1
        network.lose("b1", "b2", percent=30)       # 30 % of b1's packets to b2 vanish
        network.slow("b1", rate="256kbit")         # everything to b1 through a token bucket
        network.heal()                             # every rule gone, every link whole

The test process itself is the node `CLIENT`: its own veth (in the root namespace, address
10.23.N.1) reaches every node through the same bridge, so a client can be cut off like any node.
Each node answers at 10.23.N.(10 + its index). N is the first /24 of 10.23.0.0/16 that no run on
this machine uses (a lock file serialises the choice), and the namespaces are named after the
process id, so parallel test workers never meet. Rules live in one nftables table of the `bridge`
family in the hub namespace and are replaced as a whole, atomically, on every change: a dropped
packet is dropped in transit, as a broken switch would, so senders see silence, not an error.
There is no `tc netem` on this kernel: loss is nftables' `numgen random`, slowness a `tbf` qdisc,
and there is no added delay.

`destroy()` (also on leaving the `with` block, and for leftovers of dead runs at the next start)
removes the namespaces; the veth pairs go with them.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
from pathlib import Path

CLIENT = "client"
SUBNET_PREFIX = "10.23"
LOCK_FILE = Path("/run/lock/netpart-subnets.lock")
NAMESPACE_PREFIX = "netpart-"
NAMESPACE_PATTERN = re.compile(rf"^{NAMESPACE_PREFIX}(\d+)-(\d+)-")
TABLE = "netpart"
_runs_in_this_process = 0


class NetworkError(RuntimeError):
    """A command that sets up the network failed: the command and its output."""


def run(*command: str, stdin: str | None = None) -> str:
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise NetworkError(f"{' '.join(command)}: exit {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def netns_supported() -> str | None:
    """Why namespaces and nftables cannot be used here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth pairs, nftables)"
    for tool in ("ip", "nft", "tc"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode != 0:
            return f"`{tool}` is not installed (make system-deps)"
    probe = f"{NAMESPACE_PREFIX}{os.getpid()}-0-probe"
    try:
        run("ip", "netns", "add", probe)
        run("ip", "netns", "exec", probe, "nft", "list", "tables")
    except NetworkError as error:
        return f"network namespaces or nftables do not work here ({error})"
    finally:
        subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


class Network:
    """Namespaces for `nodes` (plus the test process as `CLIENT`), a bridge between them, and the
    fault rules on that bridge."""

    def __init__(self, nodes: list[str]) -> None:
        global _runs_in_this_process
        _runs_in_this_process += 1
        self.nodes = list(nodes)
        self.run_id = f"{os.getpid()}-{_runs_in_this_process}"
        self.subnet = -1
        self.client_link = f"np{os.getpid()}x{_runs_in_this_process}"[-15:]
        self._created: list[str] = []
        self._drops: dict[tuple[str, str], int] = {}

    # -- names -------------------------------------------------------------------------------
    @property
    def hub(self) -> str:
        return f"{NAMESPACE_PREFIX}{self.run_id}-hub"

    def namespace(self, node: str) -> str:
        return f"{NAMESPACE_PREFIX}{self.run_id}-{node}"

    def address(self, node: str) -> str:
        host = 1 if node == CLIENT else 10 + self.nodes.index(node)
        return f"{SUBNET_PREFIX}.{self.subnet}.{host}"

    def hub_port(self, node: str) -> str:
        """The hub's end of the node's veth pair, on the bridge (where `slow` puts its qdisc)."""
        return f"v{self.nodes.index(node)}"

    def in_namespace(self, node: str, command: list[str]) -> list[str]:
        """`command` as it runs inside the node's namespace."""
        return ["ip", "netns", "exec", self.namespace(node), *command]

    # -- building and removing ---------------------------------------------------------------
    def create(self) -> Network:
        remove_leftovers_of_dead_runs()
        try:
            self._add_namespace(self.hub)
            run("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
            run("ip", "-n", self.hub, "link", "set", "br0", "up")
            for node in self.nodes:
                self._add_node(node)
            self._add_client_link()
            self._apply_rules()
        except BaseException:
            self.destroy()
            raise
        return self

    def _add_namespace(self, name: str) -> None:
        run("ip", "netns", "add", name)
        self._created.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")

    def _add_node(self, node: str) -> None:
        namespace, port = self.namespace(node), self.hub_port(node)
        self._add_namespace(namespace)
        run("ip", "link", "add", "eth0", "netns", namespace, "type", "veth", "peer", "name", port, "netns", self.hub)
        run("ip", "-n", self.hub, "link", "set", port, "master", "br0", "up")
        run("ip", "-n", namespace, "link", "set", "eth0", "up")

    def _add_client_link(self) -> None:
        """The test process's veth, with the first free 10.23.N.0/24 (chosen under a lock), then
        the nodes' addresses in that subnet."""
        run("ip", "link", "add", self.client_link, "type", "veth", "peer", "name", "vc", "netns", self.hub)
        run("ip", "-n", self.hub, "link", "set", "vc", "master", "br0", "up")
        LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
        with open(LOCK_FILE, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = free_subnet()
            run("ip", "addr", "add", f"{self.address(CLIENT)}/24", "dev", self.client_link)
        run("ip", "link", "set", self.client_link, "up")
        for node in self.nodes:
            run("ip", "-n", self.namespace(node), "addr", "add", f"{self.address(node)}/24", "dev", "eth0")

    def destroy(self) -> None:
        """Remove every namespace of this run (processes inside must have been stopped)."""
        for name in reversed(self._created):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
        self._created.clear()
        subprocess.run(["ip", "link", "delete", self.client_link], capture_output=True)

    def __enter__(self) -> Network:
        return self.create()

    def __exit__(self, *exc_info: object) -> None:
        self.destroy()

    # -- faults ------------------------------------------------------------------------------
    def cut(self, a: str, b: str, *, both_ways: bool = True) -> None:
        """Drop every packet from `a` to `b` (and from `b` to `a`, unless `both_ways` is False)."""
        self.lose(a, b, 100, both_ways=both_ways)

    def lose(self, a: str, b: str, percent: int, *, both_ways: bool = True) -> None:
        """Drop `percent` % of the packets from `a` to `b` (and back), at random."""
        self._drops[(a, b)] = percent
        if both_ways:
            self._drops[(b, a)] = percent
        self._apply_rules()

    def isolate(self, node: str, *, keep: tuple[str, ...] = ()) -> None:
        """Cut `node` from every other node and the client, except those in `keep`."""
        for other in [*self.nodes, CLIENT]:
            if other != node and other not in keep:
                self._drops[(node, other)] = self._drops[(other, node)] = 100
        self._apply_rules()

    def heal(self) -> None:
        """Remove every cut and every loss (a slow link stays until `fast`)."""
        self._drops.clear()
        self._apply_rules()

    def slow(self, node: str, rate: str = "256kbit") -> None:
        """What the bridge sends to `node` passes a token bucket of `rate` (`tbf`)."""
        port = self.hub_port(node)
        run("tc", "-n", self.hub, "qdisc", "replace", "dev", port, "root", "tbf",
            "rate", rate, "burst", "32kbit", "latency", "400ms")

    def fast(self, node: str) -> None:
        port = self.hub_port(node)
        subprocess.run(["tc", "-n", self.hub, "qdisc", "del", "dev", port, "root"], capture_output=True)

    def cuts(self) -> dict[tuple[str, str], int]:
        """The rules in force: {(from, to): percent dropped}."""
        return dict(self._drops)

    def _apply_rules(self) -> None:
        rules = "\n".join(self._rule(a, b, percent) for (a, b), percent in sorted(self._drops.items()))
        ruleset = (
            f"table bridge {TABLE} {{}}\n"
            f"flush table bridge {TABLE}\n"
            f"table bridge {TABLE} {{\n"
            "  chain forward {\n"
            "    type filter hook forward priority 0; policy accept;\n"
            f"{rules}\n"
            "  }\n"
            "}\n"
        )
        run("ip", "netns", "exec", self.hub, "nft", "-f", "-", stdin=ruleset)

    def _rule(self, a: str, b: str, percent: int) -> str:
        match = f"ip saddr {self.address(a)} ip daddr {self.address(b)}"
        if percent >= 100:
            return f"    {match} drop"
        return f"    {match} numgen random mod 100 < {percent} drop"


def free_subnet() -> int:
    """The first N in 1..254 with no 10.23.N.x address in the root namespace."""
    used = set(re.findall(rf"inet {re.escape(SUBNET_PREFIX)}\.(\d+)\.", run("ip", "-o", "-4", "addr", "show")))
    for subnet in range(1, 255):
        if str(subnet) not in used:
            return subnet
    raise NetworkError(f"every {SUBNET_PREFIX}.N.0/24 is in use")


def remove_leftovers_of_dead_runs() -> None:
    """Namespaces of runs whose process has gone (a killed test run cannot clean up itself)."""
    for line in run("ip", "netns", "list").splitlines():
        name = line.split()[0] if line.strip() else ""
        match = NAMESPACE_PATTERN.match(name)
        if match and not Path(f"/proc/{match.group(1)}").exists():
            for pid in run("ip", "netns", "pids", name).split():
                subprocess.run(["kill", "-9", pid], capture_output=True)  # that run's brokers
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
