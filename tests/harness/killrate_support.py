"""One targeted kill-rate run of the embedded sandbox, shared by the self-tests that judge it.

`make test` pays for it once: conftest.py starts it when the session is collected and the
`targeted_killrate` fixture reads it; test_sandbox_kill_rate.py judges the fault catalogue and
the proof of every requirement the suite claims with it.

The run is two processes started together, both with `--advance-clock`: a scenario that waits
for a change to show (spec: Limits > Freshness, bounds of 5 s to 5 minutes) moves the sandbox's
clock instead of sleeping (suite/waits.py), so no fault costs its bound in real time here;
`make killrate` keeps the real-time waits. The main process has the clean run and every fault
but the slow ones (`slow` in the fault table: proven only by a scenario that waits out a
freshness bound); the second has the slow ones, beside it on the other core. Their
killrate.json files are judged as one (`union`). In `make test` both start as soon as the
session is collected, and the tests that read the run go last, so the kill rate runs beside
the other self-tests instead of after them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from delivery_conformance.target.admin import AdminClient
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
KILLRATE_TIMEOUT = 900  # seconds a run may take
# One clean run: `make killrate` runs three; the wheel, the CI example, the variant and the latency
# self-tests run the clean suite again.
CLEAN_RUNS = 1
FIGURE = "figure"  # a test's `record_property` name for a line the session summary prints
POLL_EVERY = 1.0  # seconds between two looks for a run's exit code
START_TIMEOUT = 120  # seconds a test waits for the kill rate to be started (by the controller)


@dataclass(frozen=True)
class KillRateRun:
    """`killrate --mode targeted --no-properties --clean-runs 1` and its killrate.json."""

    done: subprocess.CompletedProcess[str]
    data: dict[str, Any] | None  # None when the run wrote no report

    def output(self) -> str:
        return self.done.stdout[-2000:] + self.done.stderr[-2000:]


def catalogue() -> list[dict[str, Any]]:
    """The fault catalogue as the kill rate learns it: `GET /_sandbox/faults` of a sandbox
    started as a process."""
    with EmbeddedSandbox() as path:
        profile = load_profile(path, environ={})
        assert profile.admin is not None, "the embedded sandbox's profile has no [admin] table"
        origin = urlsplit(profile.admin.url)
        host = replace(profile, base_url=f"{origin.scheme}://{origin.netloc}")
        admin = AdminClient(profile.admin, DeliveryClient(host))
        try:
            return list(admin.faults())
        finally:
            admin.close()


def fault_split(rows: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(main, slow): the names of the faults the conformance kill rate measures (load-only ones
    are the load campaigns'), the slow ones apart."""
    measured = [row for row in rows if not row.get("load_only")]
    return (
        [r["name"] for r in measured if not r.get("slow")],
        [r["name"] for r in measured if r.get("slow")],
    )


def _start(where: Path, clean_runs: int, faults: list[str]) -> subprocess.Popen[str]:
    """A kill-rate process beside the other self-tests, at their priority. It gets a process
    group of its own (so it can be stopped whole) but stays in the session: a new session would
    be a scheduling group of its own under Linux's autogroups, where the `nice` values of
    `make test` (the timed session first, docs/suite.md) would not reach it. Its output goes to
    files in `where` (a pipe nobody reads until the end would fill and stall it), its exit code
    to `where/rc` when it ends, so any test process of the session (a pytest-xdist worker too)
    can read it."""
    command = [sys.executable, "-m", "delivery_conformance.cli", "killrate", "--mode", "targeted"]
    command += ["--no-properties", "--clean-runs", str(clean_runs), "--report-dir", str(where)]
    command += ["--advance-clock"]
    command += [arg for name in faults for arg in ("--fault", name)]
    where.mkdir(parents=True, exist_ok=True)
    # sh runs the command, then writes its exit code beside its output
    shell = ["sh", "-c", '"$@"; echo $? > "$0.tmp" && mv "$0.tmp" "$0"', str(where / "rc")]
    with (where / "stdout.txt").open("w") as out, (where / "stderr.txt").open("w") as err:
        return subprocess.Popen(
            [*shell, *command], cwd=ROOT, stdout=out, stderr=err, text=True, process_group=0
        )


def _finish(where: Path, deadline: float) -> KillRateRun:
    """The run whose files are in `where`, once its exit code is written (at `deadline` at the
    latest: then it counts as failed, exit code None)."""
    rc = where / "rc"
    while not rc.exists() and time.monotonic() < deadline:
        time.sleep(POLL_EVERY)
    code = int(rc.read_text().strip() or "1") if rc.exists() else None
    stdout = (where / "stdout.txt").read_text(errors="replace")
    stderr = (where / "stderr.txt").read_text(errors="replace")
    if code is None:
        stderr += f"\nthe kill-rate run in {where} did not end within {KILLRATE_TIMEOUT} s"
    done = subprocess.CompletedProcess(["killrate", str(where)], code, stdout, stderr)
    reports = list(where.glob("killrate/*/killrate.json"))
    data = json.loads(reports[0].read_text()) if code is not None and len(reports) == 1 else None
    return KillRateRun(done, data)


def union(main: KillRateRun, slow: KillRateRun) -> KillRateRun:
    """Two runs as one: the main run's clean runs, the faults of both, the worse exit code,
    both outputs (the main run's last, so its kill-rate line ends the output)."""
    code = main.done.returncode or slow.done.returncode
    done = subprocess.CompletedProcess(
        main.done.args,
        code,
        slow.done.stdout + main.done.stdout,
        slow.done.stderr + main.done.stderr,
    )
    if main.data is None or slow.data is None:
        return KillRateRun(done, None)
    data = dict(main.data)
    for key in ("faults_total", "faults_caught", "exact_blame"):
        data[key] = main.data[key] + slow.data[key]
    for key in ("not_exact", "uncaught", "faults"):
        data[key] = main.data[key] + slow.data[key]
    data["kill_rate"] = round(data["faults_caught"] / data["faults_total"], 4)
    data["duration"] = max(main.data["duration"], slow.data["duration"])
    return KillRateRun(done, data)


@dataclass
class KillRateProcesses:
    """The kill-rate processes, started together (conftest.py starts them when the session is
    collected, so they run while the other self-tests run): the main one and the one of the
    slow faults. `where/runs.json` names their folders, so a test process that did not start
    them can read them."""

    where: Path
    processes: list[subprocess.Popen[str]]

    @classmethod
    def start(cls, where: Path) -> KillRateProcesses:
        main_faults, slow_faults = fault_split(catalogue())
        folders = ["main", "slow"] if slow_faults else ["main"]
        processes = [_start(where / "main", CLEAN_RUNS, main_faults)]
        if slow_faults:
            processes.append(_start(where / "slow", 0, slow_faults))
        (where / "runs.json.tmp").write_text(json.dumps(folders))
        (where / "runs.json.tmp").rename(where / "runs.json")
        return cls(where, processes)

    def stop(self) -> None:
        """Ends what is still running (a session that never reached the kill rate)."""
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def run_targeted_killrate(where: Path) -> KillRateRun:
    """The kill rate whose processes were started in `where` (by this test process or another
    one of the session), once every one of them has ended."""
    runs = where / "runs.json"
    started_by = time.monotonic() + START_TIMEOUT
    while not runs.exists() and time.monotonic() < started_by:
        time.sleep(POLL_EVERY)
    assert runs.exists(), f"no kill-rate run was started in {where} within {START_TIMEOUT} s"
    deadline = time.monotonic() + KILLRATE_TIMEOUT
    main, *slow = json.loads(runs.read_text())
    run = _finish(where / main, deadline)
    for folder in slow:
        run = union(run, _finish(where / folder, deadline))
    return run
