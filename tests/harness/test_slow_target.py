"""A valid but slow target (about 1 s per answer) is bounded: the preflight measures the round
trip and says the run will not finish, `--max-duration` stops it, the report is written, the
tests not run are not exercised and the run is TIMED OUT (exit 5), never a pass or a hang.

The slow target is the embedded sandbox behind the latency proxy (1 s per round trip). Bounds:
3 preflight probes (~3 s) + the 6 s the run may last + start-up and report writing. Two workers,
not the eight this round trip would choose: the bound is the same, and eight start-ups cost this
2-core machine about 15 s of processor.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from harness_support import run_results

from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.latency import LatencyProxy, write_proxied_profile
from delivery_conformance.target.profile import load_profile

WALL_BOUND = 60.0


def test_a_slow_target_times_out_with_a_partial_report(tmp_path: Path) -> None:
    with EmbeddedSandbox() as profile_path:
        upstream = load_profile(profile_path).base_url
        with LatencyProxy(upstream=upstream, latency=1.0, jitter=0.0, seed=1) as url:
            slow = write_proxied_profile(profile_path, tmp_path / "slow.toml", url)
            start = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "delivery_conformance.cli", "run", "--target", str(slow),
                 "--no-properties", "--no-pacing", "--max-duration", "6", "--workers", "2",
                 "--report-dir", str(tmp_path / "r")],
                capture_output=True, text=True, timeout=WALL_BOUND * 2, check=False,
            )  # fmt: skip
            took = time.monotonic() - start
    assert done.returncode == 5, done.stdout[-1500:] + done.stderr[-1500:]
    assert took < WALL_BOUND
    assert "this run will stop there with a partial report: TIMED OUT" in done.stdout
    assert "TIMED OUT:" in done.stdout and "Traceback" not in done.stderr
    data = run_results(tmp_path / "r")
    assert data["run"]["stopped"] == "timed out" and data["run"]["exit_code"] == 5
    assert data["run"]["tests"]["not exercised"] > 900
    assert data["run"]["tests"]["error"] == 0
