"""Wall time and requests of a full `delivery-conformance run` against the embedded sandbox.

Target (issue: the conformance suite): under 2 minutes on this machine, pacing off (the embedded
sandbox only). The run is a subprocess, exactly as a user starts it; the figures come from its
results.json (tests, exchanges recorded per test) and the wall clock. Results go to
reports/bench/conformance_run.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]

TARGET_SECONDS = 120


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.conformance_run")
    parser.add_argument("--no-properties", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("reports/bench/conformance_run.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "delivery_conformance.cli", "run", "--report-dir", tmp]
        if args.no_properties:
            command.append("--no-properties")
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
        wall = time.monotonic() - started
        found = sorted(Path(tmp).glob("*/results.json"))
        if not found:
            print(f"conformance run: no results.json (exit {done.returncode})")
            return 3
        results = json.loads(found[0].read_text())
    tests = results["tests"]
    figure = {
        "wall_seconds": round(wall, 1),
        "target_seconds": TARGET_SECONDS,
        "exit_code": done.returncode,
        "tests": len(tests),
        "requests": sum(t.get("exchanges", 0) for t in tests),
        "properties": not args.no_properties,
        "verdict": results["run"].get("verdict"),
    }
    met = done.returncode == 0 and wall < TARGET_SECONDS
    print(
        f"full conformance run: {figure['wall_seconds']} s wall (target < {TARGET_SECONDS} s), "
        f"{figure['tests']} tests, {figure['requests']} requests, exit {done.returncode}: "
        + ("met" if met else "MISSED")
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figure, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
