"""Throughput of the load generator (Locust FastHttpUser) per core, next to the limits it must
drive: can one generator core send a campaign on time?

The sandbox runs pinned to core 0 with `--limits-scale 100` (so it issues rather than refuses);
one Locust process, pinned to core 1, sends closed-loop POST /playback for a few seconds.
Figures: the generator's requests per second, the sandbox's own playback limit at scale 1
(180 tickets/s refill, 10,800 from idle) and the peak rate the burst campaign schedules.

    python -m benchmarks.load [--seconds 5] [--users 64]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from delivery_conformance.target.embedded import sandbox_command

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
SERVER_CORE, CLIENT_CORE = 0, 1
PLAYBACK_REFILL_PER_S = 180  # spec: Limits, playback row
BURST_PEAK_PER_S = 800  # loadtests/campaigns.py: batches of 3 per second at scale 1


def _pin(core: int) -> None:
    with contextlib.suppress(AttributeError, OSError):
        if core < (os.cpu_count() or 1):
            os.sched_setaffinity(0, {core})


def _start_sandbox(directory: Path) -> tuple[subprocess.Popen[bytes], Path]:
    profile = directory / "sandbox.toml"
    process = subprocess.Popen(
        sandbox_command(profile, options=("--limits-scale", "100"), versions=None),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: _pin(SERVER_CORE),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the sandbox exited")
        if profile.exists() and profile.stat().st_size:
            time.sleep(0.3)
            return process, profile
        time.sleep(0.1)
    process.terminate()
    raise RuntimeError("the sandbox wrote no profile in time")


def _aggregated(stats: Path) -> tuple[int, int, float]:
    with stats.open() as source:
        for row in csv.DictReader(source):
            if row["Name"] == "Aggregated":
                return (
                    int(row["Request Count"]),
                    int(row["Failure Count"]),
                    float(row["Requests/s"]),
                )
    raise RuntimeError("no aggregated row in Locust's stats")


def run(seconds: float, users: int) -> tuple[int, int, float]:
    with tempfile.TemporaryDirectory(prefix="bench-load-") as scratch:
        directory = Path(scratch)
        sandbox, profile = _start_sandbox(directory)
        try:
            env = {**os.environ, "LOAD_BENCH_PROFILE": str(profile), "PYTHONPATH": str(ROOT)}
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "locust",
                    "-f",
                    str(ROOT / "loadtests" / "bench.py"),
                    "--headless",
                    "-u",
                    str(users),
                    "-r",
                    str(users),
                    "--run-time",
                    f"{int(seconds)}s",
                    "--only-summary",
                    "--loglevel",
                    "ERROR",
                    "--csv",
                    str(directory / "bench"),
                ],
                cwd=ROOT,
                env=env,
                timeout=seconds + 60,
                check=False,
                capture_output=True,
                preexec_fn=lambda: _pin(CLIENT_CORE),
            )
            return _aggregated(directory / "bench_stats.csv")
        finally:
            sandbox.terminate()
            sandbox.wait(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.load")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--users", type=int, default=64)
    args = parser.parse_args(argv)
    if not 1 <= args.seconds <= 60 or not 1 <= args.users <= 1000:
        print("benchmarks.load: --seconds 1..60, --users 1..1000", file=sys.stderr)
        return 2
    try:
        count, failures, rps = run(args.seconds, args.users)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"benchmarks.load: {exc}", file=sys.stderr)
        return 3
    verdict = "can drive" if rps >= BURST_PEAK_PER_S else "cannot alone drive (use --workers N)"
    print(
        f"load generator (FastHttpUser, 1 core) {rps:>9,.0f} req/s  ({count} requests, "
        f"{failures} failures, {args.users} users)"
    )
    print(
        f"  sandbox playback limit at scale 1: refill {PLAYBACK_REFILL_PER_S} tickets/s, "
        f"10,800 from idle; burst campaign peak {BURST_PEAK_PER_S} batches/s: one core "
        f"{verdict} it in a closed loop"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
