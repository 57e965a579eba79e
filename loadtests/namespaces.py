"""Separate hosts on one machine: Linux network namespaces joined by veth pairs and a bridge.

Each host (the target, the Locust master, every worker) is a network namespace with one
interface, `eth0`, and its own address on one subnet. The bridge lives in a namespace of its
own (the switch), so the machine's own namespace never gains or loses an interface: deleting the
namespaces removes every veth pair and the bridge with them. Names carry the run id, so two runs
never touch each other's namespaces.

`Topology` is pure data (the hosts, their addresses, the `ip` commands that build and remove
them); `Network` runs those commands (root only) and always removes what it created; `Hosts`
starts processes inside the namespaces and always stops them.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = [
    "PREFIX",
    "Host",
    "Hosts",
    "Network",
    "NetworkError",
    "Topology",
    "namespaces",
    "remove_stale",
]

PREFIX = "loadnet-"  # every namespace this module creates starts with it
DEFAULT_SUBNET = "10.229.0.0/24"
IP_TIMEOUT_S = 10.0
STOP_GRACE_S = 10.0

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


class NetworkError(Exception):
    """The namespaces could not be built (one line, the failing `ip` command and its error)."""


@dataclass(frozen=True)
class Host:
    role: str  # "target", "master", "w0", "w1", ...
    netns: str
    address: str
    switch_port: str  # the bridge's end of this host's veth pair


@dataclass(frozen=True)
class Topology:
    run_id: str
    switch: str
    bridge: str
    prefix_len: int
    hosts: tuple[Host, ...]

    @classmethod
    def build(cls, run_id: str, workers: int, subnet: str = DEFAULT_SUBNET) -> Topology:
        """The target, the master and `workers` workers on `subnet`, in that order of address."""
        network = ipaddress.ip_network(subnet)
        roles = ["target", "master", *(f"w{i}" for i in range(workers))]
        addresses = list(network.hosts())
        if len(addresses) < len(roles):
            raise ValueError(f"subnet {subnet} has room for {len(addresses)} hosts only")
        hosts = tuple(
            Host(role, f"{PREFIX}{run_id}-{role}", str(address), f"p-{role}")
            for role, address in zip(roles, addresses, strict=False)
        )
        return cls(run_id, f"{PREFIX}{run_id}-switch", "br0", network.prefixlen, hosts)

    def host(self, role: str) -> Host:
        return next(h for h in self.hosts if h.role == role)

    @property
    def workers(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if h.role.startswith("w"))

    @property
    def namespaces(self) -> tuple[str, ...]:
        return (self.switch, *(h.netns for h in self.hosts))

    def setup_commands(self) -> list[list[str]]:
        sw = self.switch
        commands = [["ip", "netns", "add", name] for name in self.namespaces]
        commands += [
            ["ip", "-n", sw, "link", "add", "name", self.bridge, "type", "bridge"],
            ["ip", "-n", sw, "link", "set", self.bridge, "up"],
        ]
        for h in self.hosts:
            commands += [
                ["ip", "-n", sw, "link", "add", "name", h.switch_port, "type", "veth",
                 "peer", "name", "eth0", "netns", h.netns],
                ["ip", "-n", sw, "link", "set", h.switch_port, "master", self.bridge],
                ["ip", "-n", sw, "link", "set", h.switch_port, "up"],
                ["ip", "-n", h.netns, "addr", "add", f"{h.address}/{self.prefix_len}",
                 "dev", "eth0"],
                ["ip", "-n", h.netns, "link", "set", "eth0", "up"],
                ["ip", "-n", h.netns, "link", "set", "lo", "up"],
            ]  # fmt: skip
        return commands

    def teardown_commands(self) -> list[list[str]]:
        """Deleting a namespace deletes its interfaces, and a veth pair goes with either end."""
        return [["ip", "netns", "delete", name] for name in reversed(self.namespaces)]

    def exec_prefix(self, host: Host) -> list[str]:
        return ["ip", "netns", "exec", host.netns]


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=False
    )


def namespaces(runner: Runner = _run) -> set[str]:
    """The names `ip netns list` shows now."""
    listed = runner(["ip", "netns", "list"])
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


def remove_stale(runner: Runner = _run) -> list[str]:
    """Namespaces of earlier runs whose process is gone (killed with SIGKILL, say): the processes
    still inside them are killed and the namespaces deleted. Returns their names."""
    removed = []
    for name in sorted(namespaces(runner)):
        owner = name.removeprefix(PREFIX).split("-")[0]
        if not name.startswith(PREFIX) or not owner.isdigit() or Path(f"/proc/{owner}").exists():
            continue
        for pid in runner(["ip", "netns", "pids", name]).stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        runner(["ip", "netns", "delete", name])
        removed.append(name)
    return removed


class Network:
    """Builds the topology on enter; on exit (whatever happened) deletes every namespace of it.
    `leftovers` lists the namespaces still present after the teardown (none, normally)."""

    def __init__(self, topology: Topology, runner: Runner = _run) -> None:
        self.topology = topology
        self.run = runner
        self.leftovers: list[str] = []

    def __enter__(self) -> Network:
        try:
            for command in self.topology.setup_commands():
                done = self.run(command)
                if done.returncode != 0:
                    error = (done.stderr or done.stdout).strip().splitlines()
                    raise NetworkError(f"`{' '.join(command)}`: {error[-1] if error else 'failed'}")
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.teardown()

    def teardown(self) -> None:
        present = namespaces(self.run)
        for command in self.topology.teardown_commands():
            if command[-1] in present:
                self.run(command)
        left = namespaces(self.run)
        self.leftovers = [name for name in self.topology.namespaces if name in left]

    def link_counters(self, host: Host) -> dict[str, int]:
        """Bytes and packets `eth0` of `host` sent and received (its own link's counters)."""
        shown = self.run(["ip", "-n", host.netns, "-s", "-j", "link", "show", "eth0"])
        try:
            stats = json.loads(shown.stdout)[0]["stats64"]
        except (ValueError, LookupError, TypeError):
            return {}
        return {
            "tx_bytes": int(stats["tx"]["bytes"]),
            "tx_packets": int(stats["tx"]["packets"]),
            "rx_bytes": int(stats["rx"]["bytes"]),
            "rx_packets": int(stats["rx"]["packets"]),
        }

    def peers(self, host: Host, port: int) -> set[str]:
        """Addresses of the established TCP connections to `port` on `host`, as it sees them."""
        shown = self.run(["ss", "-N", host.netns, "-Htn", "state", "established"])
        found = set()
        for line in shown.stdout.splitlines():
            fields = line.split()
            if len(fields) < 4:
                continue
            local, peer = fields[-2], fields[-1]
            if local.rsplit(":", 1)[-1] == str(port):
                found.add(peer.rsplit(":", 1)[0].strip("[]"))
        return found

    def netns_of(self, pid: int) -> str:
        """The namespace name `ip netns identify` gives for a process ("" if none)."""
        return self.run(["ip", "netns", "identify", str(pid)]).stdout.strip()


class Hosts:
    """Processes started inside the namespaces, each in its own session; on exit every one still
    running gets SIGTERM, then SIGKILL after a grace period, to its whole process group."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.started: list[tuple[subprocess.Popen[bytes], IO[Any]]] = []

    def start(
        self, host: Host, command: Sequence[str], log: Path, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        handle = log.open("w")
        process = subprocess.Popen(
            [*self.topology.exec_prefix(host), *command],
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        self.started.append((process, handle))
        return process

    def __enter__(self) -> Hosts:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop_all()

    def stop_all(self) -> None:
        for process, _ in reversed(self.started):
            if process.poll() is None:
                _signal_group(process, signal.SIGTERM)
        for process, handle in reversed(self.started):
            try:
                process.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait(5)
            _signal_group(process, signal.SIGKILL)  # children that outlived their leader
            handle.close()


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)
