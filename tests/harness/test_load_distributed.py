"""`make load-distributed` (loadtests/distributed.py): a campaign whose Locust master and workers
run on separate hosts, network namespaces of this machine joined by veth pairs on a bridge.

As root, a short campaign (burst at 5 %, seconds) runs over the namespaces: each worker ran in its
own namespace, the target saw the workers' own addresses (never 127.0.0.1), the master merged
every worker's records and judged them, and the machine's namespaces and interfaces are the same
afterwards. An interrupt tears everything down too. Without root (or iproute2) the run is refused
with one line and exit 4. The deployment files for real machines (loadtests/deploy/) and the
command lines docs/load.md shows are the ones the code builds.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from loadtests import distributed  # found on the path above (the checkout)
from loadtests.distributed import NOT_HERE, master_arguments, worker_arguments
from loadtests.namespaces import PREFIX, Topology, remove_stale

ROOT = Path(__file__).resolve().parents[2]
AS_ROOT = os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("ss") is not None
needs_root = pytest.mark.skipif(not AS_ROOT, reason="network namespaces need root and iproute2")
RUN_BOUND_S = 120.0


def _ip(*args: str) -> str:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=True).stdout


def _machine_network() -> tuple[set[str], set[str]]:
    """This machine's interfaces (its own namespace) and the namespaces of this module's runs."""
    links = {entry["ifname"] for entry in json.loads(_ip("-j", "link", "show"))}
    ours = {line.split()[0] for line in _ip("netns", "list").splitlines() if PREFIX in line}
    return links, ours


@pytest.fixture
def unchanged_network() -> Iterator[None]:
    before = _machine_network()
    yield
    assert _machine_network() == before, "the run left interfaces or namespaces behind"


def _distributed(reports: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "loadtests.distributed", *extra, "--report-dir", str(reports)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _processes_naming(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", re.escape(marker)], capture_output=True, text=True)
    return found.stdout.split()


def _finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    """Its output once it ended by itself within the bound (killed past it)."""
    try:
        return process.communicate(timeout=RUN_BOUND_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def _report(reports: Path, campaign: str) -> tuple[dict[str, Any], dict[str, Any]]:
    directory = next(reports.glob(f"load/{campaign}-*"))
    facts = json.loads((directory / "distributed.json").read_text("utf-8"))
    verdict = json.loads((directory / "verdict.json").read_text("utf-8"))
    return facts, verdict


# -- the topology, without root ---------------------------------------------------------------


def test_each_host_gets_its_own_namespace_and_address_on_one_subnet() -> None:
    topology = Topology.build("77", workers=3, subnet="10.9.8.0/29")
    roles = [(h.role, h.netns, h.address) for h in topology.hosts]
    assert roles == [
        ("target", "loadnet-77-target", "10.9.8.1"),
        ("master", "loadnet-77-master", "10.9.8.2"),
        ("w0", "loadnet-77-w0", "10.9.8.3"),
        ("w1", "loadnet-77-w1", "10.9.8.4"),
        ("w2", "loadnet-77-w2", "10.9.8.5"),
    ]
    assert [h.role for h in topology.workers] == ["w0", "w1", "w2"]
    assert all(len(h.switch_port) <= 15 for h in topology.hosts)  # an interface name's limit


def test_the_machines_own_namespace_gains_no_interface() -> None:
    """Every link and address command names one of the run's namespaces (`ip -n NAME`)."""
    topology = Topology.build("77", workers=2)
    for command in topology.setup_commands():
        if command[1] == "netns":
            assert command[2:] == ["add", command[3]] and command[3].startswith("loadnet-77-")
        else:
            assert command[1] == "-n" and command[2] in topology.namespaces, command
    deleted = [c[-1] for c in topology.teardown_commands()]
    assert sorted(deleted) == sorted(topology.namespaces)


def test_a_subnet_too_small_for_the_hosts_is_refused() -> None:
    with pytest.raises(ValueError, match="room for 2 hosts"):
        Topology.build("77", workers=2, subnet="10.9.8.0/30")


# -- refused where namespaces cannot be built --------------------------------------------------


@pytest.mark.parametrize("missing", ["root", "iproute2"])
def test_without_root_or_iproute2_one_line_and_exit_4(
    missing: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if missing == "root":
        monkeypatch.setattr(distributed.os, "geteuid", lambda: 1000)
    else:
        monkeypatch.setattr(distributed.shutil, "which", lambda name: None)
    assert distributed.main(["burst"]) == NOT_HERE == 4
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("load-distributed: needs ") and "loadtests.run burst --workers 2" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="runs as root here: the in-process form covers it")
def test_not_root_the_command_refuses_without_a_traceback(tmp_path: Path) -> None:
    process = _distributed(tmp_path, "burst")
    _, err = process.communicate(timeout=60)
    assert process.returncode == NOT_HERE and "Traceback" not in err
    assert err.strip().splitlines() == [err.strip()] and "needs root" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["hold"], "runs on one generator only"), (["burst", "--workers", "1"], "2 to 16")],
)
def test_bad_input_is_a_usage_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        distributed.main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


# -- over the namespaces, as root ----------------------------------------------------------------


def _run_and_check(tmp_path: Path, campaign: str, workers: int, *extra: str) -> None:
    reports = tmp_path / "reports"
    process = _distributed(reports, campaign, "--workers", str(workers), *extra)
    out, err = _finish(process)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    facts, verdict = _report(reports, campaign)
    hosts = {h["role"]: h for h in facts["hosts"]}
    worker_roles = [f"w{i}" for i in range(workers)]
    # each worker ran in its own namespace, none in the master's or the machine's
    assert facts["worker_netns"] == {r: hosts[r]["netns"] for r in worker_roles}
    # the target saw the workers (and the master) by their own addresses, never loopback
    peers = set(facts["target_peers"])
    assert {hosts[r]["address"] for r in [*worker_roles, "master"]} <= peers, peers
    assert not any(p.startswith("127.") for p in peers)
    # every worker's records reached the master, which merged and judged them
    by_worker = facts["by_worker"]
    assert sorted(by_worker) == worker_roles
    assert all(w["requests"] > 0 and w["valid"] for w in by_worker.values()), by_worker
    assert sum(w["requests"] for w in by_worker.values()) == verdict["details"]["requests"]
    assert verdict["details"]["progress"]["share"] == 1.0
    assert verdict["outcome"] == "pass" and verdict["exit_code"] == 0
    # each worker's own link carried its requests
    assert all(facts["links"][r]["tx_packets"] >= by_worker[r]["requests"] for r in worker_roles)
    assert facts["leftovers"] == [] and facts["exit_code"] == 0
    assert "exit 0; report:" in out


@needs_root
@pytest.mark.usefixtures("unchanged_network")
def test_a_campaign_over_namespaces_runs_its_workers_on_their_own_hosts(tmp_path: Path) -> None:
    _run_and_check(tmp_path, "burst", 2)


@needs_root
@pytest.mark.load_full
@pytest.mark.usefixtures("unchanged_network")
def test_refill_over_three_worker_namespaces(tmp_path: Path) -> None:
    _run_and_check(tmp_path, "refill", 3)


@needs_root
@pytest.mark.load_full
@pytest.mark.usefixtures("unchanged_network")
def test_tenants_at_5_percent_with_20_organisations_passes_over_namespaces(tmp_path: Path) -> None:
    _run_and_check(tmp_path, "tenants", 2, "--tenants", "20")


@needs_root
@pytest.mark.load_full
@pytest.mark.usefixtures("unchanged_network")
@pytest.mark.parametrize("fault", ["tenant_buckets_pooled", "tenant_refusals_drain_others"])
def test_a_tenants_fault_is_caught_over_namespaces(tmp_path: Path, fault: str) -> None:
    reports = tmp_path / "reports"
    process = _distributed(reports, "tenants", "--tenants", "20", "--fault", fault)
    _, err = _finish(process)
    assert process.returncode == 1, err
    facts, verdict = _report(reports, "tenants")
    assert verdict["outcome"] == "fail" and verdict["generator"]["valid"]
    assert sorted(facts["by_worker"]) == ["w0", "w1"] and facts["leftovers"] == []


def _wait_for_workers_sending(pid: int, process: subprocess.Popen[str]) -> None:
    """Until the target's namespace has a connection from a worker's address (bounded)."""
    target = f"{PREFIX}{pid}-target"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        shown = subprocess.run(
            ["ss", "-N", target, "-Htn", "state", "established"], capture_output=True, text=True
        ).stdout
        if re.search(r"\s10\.229\.0\.[3-9]:\d+\s*$", shown, re.MULTILINE):
            return
        time.sleep(0.1)
    pytest.fail("the workers never reached the target")


@needs_root
@pytest.mark.usefixtures("unchanged_network")
@pytest.mark.parametrize(
    "sig",
    [pytest.param(signal.SIGINT, marks=pytest.mark.load_full), signal.SIGTERM],
    ids=["SIGINT", "SIGTERM"],
)
def test_an_interrupt_tears_everything_down(tmp_path: Path, sig: signal.Signals) -> None:
    reports = tmp_path / "reports"
    process = _distributed(reports, "refill")
    try:
        _wait_for_workers_sending(process.pid, process)
    finally:
        process.send_signal(sig)  # nothing if it has ended already
        _, err = _finish(process)
    assert process.returncode == 3, err
    assert "interrupted; everything removed" in err and "Traceback" not in err
    facts, verdict = _report(reports, "refill")
    assert verdict["outcome"] == "invalid"
    progress = verdict["details"]["progress"]  # the partial report: some records, not all
    assert 0 < progress["answered"] < progress["planned"], progress
    assert facts["leftovers"] == [] and facts["exit_code"] == 3
    assert _processes_naming(str(reports)) == [], "a process outlived the run"


@needs_root
@pytest.mark.usefixtures("unchanged_network")
def test_namespaces_of_a_killed_run_are_removed_with_their_processes() -> None:
    gone = _dead_pid()
    name = f"{PREFIX}{gone}-w0"
    subprocess.run(["ip", "netns", "add", name], check=True)
    left = subprocess.Popen(["ip", "netns", "exec", name, "sleep", "300"])
    try:
        deadline = time.monotonic() + 10
        while _ip("netns", "pids", name).split() != [str(left.pid)]:
            assert time.monotonic() < deadline, "the process never entered the namespace"
            time.sleep(0.05)
        assert remove_stale() == [name]
        assert left.wait(10) == -signal.SIGKILL
    finally:
        if left.poll() is None:
            left.kill()
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    assert name not in _ip("netns", "list")


def _dead_pid() -> int:
    """A process id no process has now (a child that has exited and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    assert not Path(f"/proc/{child.pid}").exists()
    return child.pid


@needs_root
@pytest.mark.load_full
@pytest.mark.usefixtures("unchanged_network")
def test_the_overall_timeout_stops_the_run_and_removes_everything(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    started = time.monotonic()
    process = _distributed(reports, "refill", "--timeout", "8")
    _, err = _finish(process)
    assert process.returncode == 3 and "Traceback" not in err, err
    # the bound, plus the master's time to write its partial report and the teardown
    assert time.monotonic() - started < 8 + 45
    assert _processes_naming(str(reports)) == []


# -- the same command lines on real machines ---------------------------------------------------


def _doc_commands(text: str, marker: str) -> list[list[str]]:
    """`locust ...` lines of docs/load.md containing `marker` (continuations joined)."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [
        shlex.split(line.split("#")[0].strip())
        for line in joined.splitlines()
        if line.strip().startswith("locust ") and marker in line
    ]


def _master_as_built(line: list[str]) -> list[str]:
    """The master's arguments as master_arguments builds them from the values of `line`."""
    values = dict(itertools.pairwise(line))
    return master_arguments(
        line[2],
        int(values["--expect-workers"]),
        int(values["-u"]),
        int(values["--run-time"].rstrip("s")),
        values["--target-profile"],
        values["--report-dir"],
    )


def test_the_docs_show_the_command_lines_the_namespaces_run() -> None:
    text = (ROOT / "docs" / "load.md").read_text("utf-8")
    workers = _doc_commands(text, "--worker ")
    masters = _doc_commands(text, "--master ")
    assert workers and masters
    for line in workers:
        profile = line[line.index("--target-profile") + 1]
        master = line[line.index("--master-host") + 1]
        assert line[1:] == worker_arguments(line[2], master, profile), line
    for line in masters:
        expected = _master_as_built(line)
        assert line[1 : 1 + len(expected)] == expected, line


def test_the_kubernetes_workers_run_the_documented_worker_command() -> None:
    text = (ROOT / "loadtests" / "deploy" / "kubernetes.yaml").read_text("utf-8")
    documents = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(text) if d}
    assert {("Service", "load-master"), ("Job", "load-master"), ("Job", "load-workers")} <= set(
        documents
    )
    service = documents[("Service", "load-master")]
    assert [p["port"] for p in service["spec"]["ports"]] == [5557]
    master_job, workers_job = documents[("Job", "load-master")], documents[("Job", "load-workers")]
    labels = master_job["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()  # the Service reaches the master
    worker = workers_job["spec"]["template"]["spec"]["containers"][0]
    line = [*worker["command"], *worker["args"]]
    assert line[0] == "locust"
    profile = line[line.index("--target-profile") + 1]
    assert line[1:] == worker_arguments(line[2], "load-master", profile)
    master = master_job["spec"]["template"]["spec"]["containers"][0]
    line = [*master["command"], *master["args"]]
    expected = _master_as_built(line)
    assert line[0] == "locust" and line[1 : 1 + len(expected)] == expected
    values = dict(itertools.pairwise(line))
    assert values["--target-profile"] == profile and values["-f"] == worker["args"][1]
    # as many worker pods as the master waits for
    spec = workers_job["spec"]
    assert spec["parallelism"] == spec["completions"] == int(values["--expect-workers"])
