"""Ceiling of the open-model load generator (loadtests/generator.py) on one core, and where it
comes from.

A null target (benchmarks/null_target.py, pinned to core 0) answers everything at once, so the
only thing measured is the generator (one Locust process, pinned to core 1): the `soak` campaign
(every counter at once, raw records kept) is run at rising rates for a few seconds each, and a
rate counts as kept when the run is valid (99 % of requests at most 50 ms late, none more than
250 ms: the campaigns' own rule). With --profile the fastest rate is run once more under
cProfile and the functions that cost the most are printed.

    python -m benchmarks.generator [--rates 1000,2000,3000,4000] [--seconds 6] [--profile]

Then: workers needed per campaign at full scale = ceil(its peak rate / (kept rate x 0.7)).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loadtests.campaigns import CAMPAIGNS

from delivery_conformance.load.schedule import Plan
from delivery_conformance.load.verdict import Expectations

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
SERVER_CORE, CLIENT_CORE = 0, 1
SOAK_PER_SCALE = 416.0  # requests/s of the soak campaign at scale 1 (80 % of every limit)
HEADROOM = 0.7  # plan workers for 70 % of the kept rate (the machine is shared)
SPY_AFTER_S = 4.0
PY_SPY = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
EPISODE = "00000000-0000-4000-8000-000000000001"


def _pin(core: int) -> None:
    with contextlib.suppress(AttributeError, OSError):
        if core < (os.cpu_count() or 1):
            os.sched_setaffinity(0, {core})


def _profile(directory: Path, port: int) -> Path:
    keys = {role: "svc_live_" + f"{n:032d}" for n, role in enumerate(("limits", "limits_videos"))}
    url = f"http://127.0.0.1:{port}"
    text = [f'base_url = "{url}"', "test_organisation = true", "", "[keys]"]
    text += [f'{role} = "{key}"' for role, key in keys.items()]
    text += [
        "",
        "[fixtures]",
        f'episode_encrypted = "{EPISODE}"',
        "",
        "[admin]",
        f'url = "{url}/_sandbox"',
        'token = "null-target"',
    ]
    path = directory / "null.toml"
    path.write_text("\n".join(text) + "\n")
    path.chmod(0o600)
    return path


def _start_target(directory: Path, scale: float) -> tuple[subprocess.Popen[bytes], int]:
    port_file = directory / "port"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.null_target",
            "--scale",
            str(scale),
            "--port-file",
            str(port_file),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: _pin(SERVER_CORE),
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text():
            return process, int(port_file.read_text())
        if process.poll() is not None:
            raise RuntimeError("the null target exited")
        time.sleep(0.05)
    process.terminate()
    raise RuntimeError("the null target did not start")


CATEGORIES = (
    ("geventhttpclient", "geventhttpclient (HTTP request build and parse)"),
    ("gevent/", "gevent (hub, sockets, timeouts)"),
    ("locust/", "locust (FastHttpUser, statistics, events)"),
    ("loadtests/", "ours (schedule, answer reading, records)"),
    ("delivery_conformance/", "ours (schedule, answer reading, records)"),
)


def spy_summary(stacks: Path) -> list[tuple[float, str]]:
    """Share of on-CPU samples per library, by the frame that was running (py-spy raw)."""
    shares: dict[str, int] = {}
    total = 0
    for line in stacks.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        leaf = stack.split(";")[-1]
        name = next((label for key, label in CATEGORIES if key in leaf), "standard library")
        shares[name] = shares.get(name, 0) + int(count)
        total += int(count)
    return sorted(((100.0 * n / max(total, 1), k) for k, n in shares.items()), reverse=True)


def _spy(pid: int, seconds: float, out: Path) -> None:
    subprocess.run(
        [
            PY_SPY or "py-spy",
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(int(seconds)),
            "--rate",
            "200",
            "--format",
            "raw",
            "--output",
            str(out),
            "--nonblocking",
        ],
        capture_output=True,
        check=False,
        timeout=seconds + 30,
    )


def run_rate(
    rate: float, seconds: float, cprofile: Path | None = None, spy: Path | None = None
) -> dict[str, float]:
    """One soak run at `rate` requests/s against a fresh null target; its generator figures."""
    scale = rate / SOAK_PER_SCALE
    with tempfile.TemporaryDirectory(prefix="bench-gen-") as scratch:
        directory = Path(scratch)
        target, port = _start_target(directory, scale)
        try:
            report = directory / "report"
            users = min(800, math.ceil(rate * 0.05) + 20)
            command = [sys.executable]
            if cprofile is not None:
                command += ["-m", "cProfile", "-o", str(cprofile)]
            command += [
                "-m",
                "locust",
                "-f",
                str(ROOT / "loadtests" / "soak.py"),
                "--headless",
                "-u",
                str(users),
                "-r",
                str(users),
                "--run-time",
                f"{int(seconds) + 30}s",
                "--only-summary",
                "--loglevel",
                "ERROR",
                "--target-profile",
                str(_profile(directory, port)),
                "--report-dir",
                str(report),
                "--declared-scale",
                str(scale),
                "--campaign-duration",
                str(seconds),
            ]
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            locust = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=lambda: _pin(CLIENT_CORE),
            )
            if spy is not None:
                time.sleep(SPY_AFTER_S)  # imports and spawning done: the schedule is running
                _spy(locust.pid, max(2.0, seconds - 2), spy)
            locust.wait(timeout=seconds + 90)
            verdict = json.loads((report / "verdict.json").read_text())
            if "generator" not in verdict:
                raise RuntimeError(f"no run at {rate:g}/s: {verdict.get('target_failure')}")
        finally:
            target.terminate()
            target.wait(10)
    gen = verdict["generator"]
    return {
        "rate": rate,
        "requests": gen["requests"],
        "valid": gen["valid"],
        "p99_lateness_ms": gen["p99_lateness_s"] * 1000,
        "max_lateness_ms": gen["max_lateness_s"] * 1000,
    }


def _print_profile(path: Path, top: int = 18) -> None:
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.generator")
    parser.add_argument("--rates", default="1000,2000,3000,4000,5000")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--profile", action="store_true", help="cProfile the fastest kept rate")
    parser.add_argument(
        "--spy",
        type=float,
        default=0.0,
        metavar="RATE",
        help="py-spy (if installed) the generator at RATE req/s: CPU per library",
    )
    args = parser.parse_args(argv)
    try:
        rates = [float(r) for r in args.rates.split(",")]
    except ValueError:
        print("benchmarks.generator: --rates takes numbers separated by commas", file=sys.stderr)
        return 2
    if not 2 <= args.seconds <= 60 or not rates or min(rates) <= 0 or max(rates) > 20_000:
        print("benchmarks.generator: --seconds 2..60, rates 1..20000", file=sys.stderr)
        return 2
    kept = 0.0
    try:
        for rate in rates:
            row = run_rate(rate, args.seconds)
            mark = "kept " if row["valid"] else "late "
            print(
                f"{mark} {rate:>7,.0f} req/s offered: {row['requests']:>7,} requests, "
                f"lateness p99 {row['p99_lateness_ms']:7.1f} ms, max "
                f"{row['max_lateness_ms']:7.1f} ms",
                flush=True,
            )
            if row["valid"]:
                kept = max(kept, rate)
        if args.profile:
            prof = Path(tempfile.mkdtemp(prefix="bench-gen-prof-")) / "generator.prof"
            run_rate(kept or rates[0], args.seconds, cprofile=prof)
            print(f"cProfile of the generator at {kept or rates[0]:,.0f} req/s ({prof}):")
            _print_profile(prof)
    except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError, KeyError) as exc:
        print(f"benchmarks.generator: {exc}", file=sys.stderr)
        return 3
    if args.spy and PY_SPY:
        stacks = Path(tempfile.mkdtemp(prefix="bench-gen-spy-")) / "stacks.txt"
        row = run_rate(args.spy, args.seconds + 4, spy=stacks)
        print(
            f"py-spy of the generator at {args.spy:,.0f} req/s (valid {row['valid']}): where "
            "its CPU goes, by the running frame:"
        )
        for share, name in spy_summary(stacks):
            print(f"  {share:5.1f} %  {name}")
    print(f"open-model generator, one core: keeps its schedule up to {kept:,.0f} req/s")
    if kept:
        exp = Expectations(1.0, {})
        for name, campaign in sorted(CAMPAIGNS.items()):
            peak = Plan(campaign.stages(exp)).peak_rate()
            need = 1 if campaign.single_worker else max(1, math.ceil(peak / (kept * HEADROOM)))
            print(
                f"  {name:10} peak {peak:>6,.0f} req/s at full scale: --workers {need}"
                f"{' (one generator only)' if campaign.single_worker else ''}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
