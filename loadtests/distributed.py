"""`make load-distributed`: one campaign with its Locust master and workers on separate hosts,
here network namespaces of this machine (loadtests/namespaces.py), talking over virtual links.

    python -m loadtests.distributed [CAMPAIGN] [--workers N] [--limits-scale X] [--tenants N]
                                    [--fault NAME] [--duration D] [--report-dir DIR]
                                    [--subnet CIDR] [--timeout SECONDS]

As root: builds a namespace for the target (the embedded sandbox, listening on its own address),
one for the master and one per worker (default 2), joined by veth pairs on a bridge; starts the
sandbox, the master (`locust -f loadtests/<campaign>.py --master --expect-workers N ...`) and each
worker (`locust ... --worker --master-host <master address> ...`), the same command lines as on
real machines (docs/load.md); the workers reach the master's port 5557 and the target by address.
The master merges the workers' records and writes the report as for `loadtests.run`; beside it,
distributed.json says which namespace each process ran in, which addresses the target saw and what
each link carried. Everything is removed at the end, also after a failure, SIGINT or SIGTERM.

Exit codes: those of the campaign (0, 1, 2, 3; an interrupt or the overall --timeout is 3),
and 4 when this machine cannot do it (not root, no `ip`, namespaces refused): one line, no trace.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from delivery_conformance.load.records import read_records
from delivery_conformance.load.schedule import LatenessBound, assess_generator
from delivery_conformance.load.verdict import ExitCode
from delivery_conformance.target.embedded import sandbox_command
from loadtests.campaigns import CAMPAIGNS
from loadtests.namespaces import (
    DEFAULT_SUBNET,
    Hosts,
    Network,
    NetworkError,
    Topology,
    remove_stale,
)
from loadtests.run import (
    LOCUST_LOGLEVEL,
    ROOT,
    TENANTS,
    plan_campaign,
    stop_group,
    verdict_code,
)
from loadtests.target import CampaignError, Target

__all__ = ["NOT_HERE", "main", "master_arguments", "worker_arguments"]

NOT_HERE = 4  # this machine cannot build namespaces (not root, no `ip`, refused)
MASTER_PORT = 5557
DEFAULT_TIMEOUT_S = 600.0
EXPECT_WORKERS_WAIT_S = 60
SANDBOX_WAIT_S = 30.0
WORKER_EXIT_WAIT_S = 15.0
POLL_S = 0.25


def worker_arguments(locustfile: str, master_host: str, profile: str) -> list[str]:
    """A worker's `locust` arguments, here and on a real machine (docs/load.md, the manifest)."""
    return ["-f", locustfile, "--worker", "--master-host", master_host, "--target-profile", profile]


def master_arguments(
    locustfile: str, workers: int, users: int, seconds: int, profile: str, report_dir: str
) -> list[str]:
    """The master's `locust` arguments (docs/load.md > Distributed runs shows the same line)."""
    return [
        "-f", locustfile, "--master", "--expect-workers", str(workers), "--headless",
        "-u", str(users), "-r", str(users), "--run-time", f"{seconds}s",
        "--target-profile", profile, "--report-dir", report_dir,
    ]  # fmt: skip


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.USAGE, f"load-distributed: {message}\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m loadtests.distributed", description=__doc__.split("\n")[0])
    p.add_argument("campaign", nargs="?", default="tenants", choices=sorted(CAMPAIGNS))
    p.add_argument("--workers", type=int, default=2, help="worker hosts, 2 to 16 (2)")
    p.add_argument("--limits-scale", type=float, default=0.05, help="sandbox limits scale (0.05)")
    p.add_argument(
        "--tenants",
        type=int,
        default=None,
        help=f"sandbox organisations (default: {TENANTS} for the tenants campaign, else none)",
    )
    p.add_argument("--fault", action="append", default=[], help="sandbox fault (repeatable)")
    p.add_argument("--duration", type=float, default=None, help="timed campaigns: seconds")
    p.add_argument("--report-dir", type=Path, default=Path("reports"))
    p.add_argument("--subnet", default=DEFAULT_SUBNET, help=f"host addresses ({DEFAULT_SUBNET})")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help="bound of the whole run, namespaces built to removed (600 s)",
    )
    # inside the master's namespace: read /config and print the plan as JSON (internal)
    p.add_argument("--plan-only", type=Path, default=None, help=argparse.SUPPRESS)
    return p


def plan_summary(
    campaign_name: str, profile: Path, scale: float, duration: float | None
) -> dict[str, Any]:
    """Requests, length, users and Locust run time of the campaign against this target."""
    campaign = CAMPAIGNS[campaign_name]
    target = Target.from_file(profile)
    try:
        planned = plan_campaign(
            campaign, target, target.config(campaign.config_role), scale, duration
        )
    finally:
        target.close()
    return {
        "requests": planned.plan.total,
        "seconds": round(planned.plan.duration, 3),
        "peak_rate": round(planned.plan.peak_rate(), 1),
        "users": planned.users,
        "run_time": planned.run_time,
    }


def _interrupt(signum: int, frame: object) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the teardown runs to its end
    raise KeyboardInterrupt


def _refusal(args: argparse.Namespace) -> str | None:
    if os.geteuid() != 0:
        return "needs root to build network namespaces"
    if shutil.which("ip") is None or shutil.which("ss") is None:
        return "needs iproute2 (`ip`, `ss`)"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.plan_only is not None:
        try:
            print(
                json.dumps(
                    plan_summary(args.campaign, args.plan_only, args.limits_scale, args.duration)
                )
            )
        except CampaignError as error:
            print(f"load-distributed: {error}", file=sys.stderr)
            return error.exit_code
        return ExitCode.WITHIN_SPEC
    if not 2 <= args.workers <= 16:
        parser().error("--workers must be 2 to 16")
    if CAMPAIGNS[args.campaign].single_worker:
        parser().error(f"campaign {args.campaign} runs on one generator only")
    if not args.limits_scale > 0 or not args.timeout > 0:
        parser().error("--limits-scale and --timeout must be positive")
    refused = _refusal(args)
    if refused:
        print(
            f"load-distributed: {refused}; on one machine without root use "
            f"`python -m loadtests.run {args.campaign} --workers {args.workers}`",
            file=sys.stderr,
        )
        return NOT_HERE
    stale = remove_stale()
    if stale:
        print(f"load-distributed: removed namespaces of killed runs: {', '.join(stale)}")
    try:
        topology = Topology.build(str(os.getpid()), args.workers, args.subnet)
    except ValueError as error:
        parser().error(str(error))
    previous = {
        sig: signal.signal(sig, _interrupt)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    }
    run = _Run(args, topology)
    try:
        return run.execute()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Run:
    def __init__(self, args: argparse.Namespace, topology: Topology) -> None:
        self.args = args
        self.topology = topology
        self.deadline = time.monotonic() + args.timeout
        run_id = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
        self.directory: Path = args.report_dir / "load" / f"{args.campaign}-{run_id}"
        self.locustfile = str(ROOT / "loadtests" / f"{args.campaign}.py")
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        self.facts: dict[str, Any] = {"campaign": args.campaign, "timed_out": False}

    def execute(self) -> int:
        scratch = Path(tempfile.mkdtemp(prefix="load-distributed-"))  # profiles hold keys
        network = Network(self.topology)
        code: int = ExitCode.INVALID
        try:
            with network, Hosts(self.topology) as hosts:
                code = self._campaign(network, hosts, scratch)
        except NetworkError as error:
            print(f"load-distributed: cannot build the namespaces: {error}", file=sys.stderr)
            code = NOT_HERE
        except CampaignError as error:
            print(f"load-distributed: {error}", file=sys.stderr)
            code = error.exit_code
        except KeyboardInterrupt:
            print("load-distributed: interrupted; everything removed", file=sys.stderr)
            code = ExitCode.INVALID
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if network.leftovers:
            print(
                f"load-distributed: namespaces left behind: {', '.join(network.leftovers)}",
                file=sys.stderr,
            )
            code = ExitCode.INVALID
        if self.directory.is_dir():
            self.facts.update(exit_code=int(code), leftovers=network.leftovers)
            (self.directory / "distributed.json").write_text(
                json.dumps(self.facts, indent=2) + "\n", "utf-8"
            )
            print(
                f"load-distributed: {self.args.campaign} on {self.args.workers} worker hosts: "
                f"exit {code}; report: {self.directory}"
            )
        return code

    def _campaign(self, network: Network, hosts: Hosts, scratch: Path) -> int:
        topo, args = self.topology, self.args
        target, master = topo.host("target"), topo.host("master")
        self.facts["hosts"] = [
            {"role": h.role, "netns": h.netns, "address": h.address} for h in topo.hosts
        ]
        profile = self._sandbox(hosts, target, scratch)
        port = urlsplit(_base_url(profile)).port or 80
        plan = self._plan(hosts, master, profile, scratch)
        self.facts["plan"] = plan
        self.directory.mkdir(parents=True, exist_ok=True)
        directory = str(self.directory.resolve())
        seconds = int(plan["run_time"])
        command = [
            sys.executable,
            "-m",
            "locust",
            *master_arguments(
                self.locustfile, args.workers, int(plan["users"]), seconds, str(profile), directory
            ),
        ]
        command += [
            "--master-bind-host",
            master.address,
            "--expect-workers-max-wait",
            str(EXPECT_WORKERS_WAIT_S),
            "--stop-timeout",
            "5",
            "--loglevel",
            LOCUST_LOGLEVEL,
            "--only-summary",
            "--declared-scale",
            str(args.limits_scale),
            "--html",
            f"{directory}/locust.html",
            "--csv",
            f"{directory}/locust",
        ]
        if args.duration is not None:
            command += ["--campaign-duration", str(args.duration)]
        started = hosts.start(master, command, self.directory / "locust.log", self.env)
        workers = [
            hosts.start(
                w,
                [
                    sys.executable,
                    "-m",
                    "locust",
                    *worker_arguments(self.locustfile, master.address, str(profile)),
                    "--report-dir",
                    directory,
                    "--loglevel",
                    LOCUST_LOGLEVEL,
                ],
                self.directory / f"locust-{w.role}.log",
                self.env,
            )
            for w in topo.workers
        ]
        try:
            locust_code = self._watch(network, started, workers, target, port)
        except KeyboardInterrupt:
            # the master first (SIGTERM: it collects the workers' records and writes a partial
            # report), while the workers and the target still run; then the rest goes
            stop_group(started)
            verdict_code(self.directory, -1, interrupted=True)
            raise
        for w in workers:
            try:
                w.wait(WORKER_EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                break  # stopped with the others on the way out
        self.facts["links"] = {h.role: network.link_counters(h) for h in topo.hosts}
        bound = CAMPAIGNS[args.campaign].lateness
        self.facts["by_worker"] = _by_worker(self.directory / "records.jsonl", bound)
        return verdict_code(self.directory, locust_code, interrupted=self.facts["timed_out"])

    def _sandbox(self, hosts: Hosts, target: Any, scratch: Path) -> Path:
        written = scratch / "sandbox.toml"
        options = ["--limits-scale", str(self.args.limits_scale)]
        tenants = self.args.tenants
        if tenants is None and self.args.campaign == "tenants":
            tenants = TENANTS
        if tenants:
            options += ["--tenants", str(tenants)]
        command = sandbox_command(written, self.args.fault, options, versions=None)
        command[command.index("--host") + 1] = target.address  # its own address, not loopback
        process = hosts.start(target, command, scratch / "sandbox.log", self.env)
        bound = min(self.deadline, time.monotonic() + SANDBOX_WAIT_S)
        while not (written.exists() and written.stat().st_size > 0):
            if process.poll() is not None:
                log = (scratch / "sandbox.log").read_text("utf-8", "replace").strip().splitlines()
                raise CampaignError(
                    f"the sandbox exited with {process.returncode}: {log[-1] if log else ''}"
                )
            if time.monotonic() > bound:
                raise CampaignError("the sandbox did not write its profile in time")
            time.sleep(0.1)
        # it listens on the target's address, so its profile names that address: the master and
        # the workers read it as is (the admin URL too)
        if urlsplit(_base_url(written)).hostname != target.address:
            raise CampaignError(f"the sandbox's profile does not name {target.address}")
        return written

    def _plan(self, hosts: Hosts, master: Any, profile: Path, scratch: Path) -> dict[str, Any]:
        command = [
            sys.executable,
            "-m",
            "loadtests.distributed",
            self.args.campaign,
            "--plan-only",
            str(profile),
            "--limits-scale",
            str(self.args.limits_scale),
        ]
        if self.args.duration is not None:
            command += ["--duration", str(self.args.duration)]
        log = scratch / "plan.log"
        process = hosts.start(master, command, log, self.env)
        try:
            code = process.wait(max(1.0, min(90.0, self.deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            raise CampaignError("reading the plan from the master's host timed out") from None
        lines = log.read_text("utf-8", "replace").strip().splitlines()
        if code != 0 or not lines:
            raise CampaignError(
                lines[-1] if lines else f"plan exited {code}", code or ExitCode.INVALID
            )
        return dict(json.loads(lines[-1]))

    def _watch(
        self, network: Network, master: Any, workers: list[Any], target: Any, port: int
    ) -> int:
        """Until the master exits (or the overall bound): the target's peers, where workers run."""
        peers: set[str] = set()
        seen: dict[str, str] = {}
        peers_list: list[str] = []
        self.facts["target_peers"] = peers_list
        self.facts["worker_netns"] = seen
        while master.poll() is None:
            if time.monotonic() > self.deadline:
                self.facts["timed_out"] = True
                print(f"load-distributed: past --timeout {self.args.timeout:g} s", file=sys.stderr)
                stop_group(master)
                break
            peers |= network.peers(target, port)
            peers_list[:] = sorted(peers)
            for host, process in zip(self.topology.workers, workers, strict=True):
                if host.role not in seen and process.poll() is None:
                    found = network.netns_of(process.pid)
                    if found:
                        seen[host.role] = found
            time.sleep(POLL_S)
        return master.returncode if master.returncode is not None else -1


def _base_url(profile: Path) -> str:
    with profile.open("rb") as handle:
        return str(tomllib.load(handle)["base_url"])


def _by_worker(path: Path, bound: LatenessBound) -> dict[str, dict[str, Any]]:
    """Per worker label: requests it sent, its own lateness (p99, worst) and whether it kept up."""
    if not path.exists():
        return {}
    lateness: dict[str, list[float]] = defaultdict(list)
    for record in read_records(path):
        lateness[record.worker].append(record.lateness)
    summary = {}
    for worker, values in sorted(lateness.items()):
        validity = assess_generator(values, bound)
        summary[worker] = {
            "requests": validity.count,
            "p99_lateness_s": round(validity.p99_lateness, 6),
            "max_lateness_s": round(validity.max_lateness, 6),
            "valid": validity.valid,
        }
    return summary


if __name__ == "__main__":
    sys.exit(main())
