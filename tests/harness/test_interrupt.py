"""SIGTERM (as CI sends on cancel) and SIGINT end a run INTERRUPTED (exit 130) with the partial
report written and no process of the run left behind (the embedded sandbox included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from harness_support import run_results

STOP_BOUND = 30.0


def processes_marked(mark: str) -> list[int]:
    """PIDs whose environment carries `mark` (children inherit it, orphans keep it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if mark.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_writes_an_interrupted_report_and_leaves_no_process(
    tmp_path: Path, signum: signal.Signals
) -> None:
    mark = f"DELIVERY_TEST_MARK={uuid.uuid4().hex}"
    env = {**os.environ, mark.split("=")[0]: mark.split("=")[1]}
    with subprocess.Popen(
        [sys.executable, "-m", "delivery_conformance.cli", "run", "--no-properties",
         "--report-dir", str(tmp_path)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as run:  # fmt: skip
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(run.stdout.readline, "")))
        reader.start()
        try:
            deadline = time.monotonic() + 90
            while not any(line.startswith(".") for line in lines) and time.monotonic() < deadline:
                time.sleep(0.2)  # wait for pytest's first progress dots: tests are running
            run.send_signal(signum)
            run.wait(timeout=STOP_BOUND)
            err = run.stderr.read()
        finally:
            if run.poll() is None:
                run.kill()
            reader.join(timeout=5)
    out = "".join(lines)
    assert run.returncode == 130, out[-1500:] + err[-1500:]
    assert "Traceback" not in err
    data = run_results(tmp_path)
    assert data["run"]["stopped"] == "interrupted" and data["run"]["exit_code"] == 130
    time.sleep(0.5)
    assert processes_marked(mark) == []


def test_a_time_bound_inside_a_stateful_exploration_is_timed_out_not_a_harness_error(
    tmp_path: Path,
) -> None:
    """Cut mid-sequence, Hypothesis replays the sequence and calls it flaky: that error is the
    stop's doing, so the exploration is not exercised and the run TIMED OUT (exit 5)."""
    done = subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", "run", "--no-properties",
         "-k", "test_random_sequences_of_film_changes", "--state-sequences", "500",
         "--max-duration", "3", "--report-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 5, done.stdout[-1500:] + done.stderr[-1500:]
    (test,) = run_results(tmp_path)["tests"]
    assert test["outcome"] == "not exercised"
    assert test["reason"] == "the run reached --max-duration before this test"
