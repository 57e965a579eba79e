"""Wall time of `delivery-conformance contract-diff` of spec/openapi.yaml against itself.

A release gate runs the comparison on every pull request, so it must stay cheap. Judged: the
command in process (both documents read and checked, compared, the summary printed) under 1 s.
Reported beside it, not judged: the comparison alone (documents already loaded) and the command
as a new process (interpreter start-up and imports included). Each is the median of `--rounds`
runs. Results go to reports/bench/contract_diff.json.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from delivery_conformance import cli
from delivery_conformance.resources import spec_path
from delivery_conformance.spec.contract_diff import contract_diff

__all__ = ["main"]

GOAL_S = 1.0  # the command in process


def _median_of(rounds: int, step: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.contract_diff")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("reports/bench/contract_diff.json"))
    args = parser.parse_args(argv)
    spec = spec_path("openapi.yaml")
    document = yaml.safe_load(spec.read_text("utf-8"))
    command = [
        sys.executable,
        "-m",
        "delivery_conformance.cli",
        "contract-diff",
        str(spec),
        str(spec),
    ]

    def in_process() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["contract-diff", str(spec), str(spec)])
        if code != 0:
            raise SystemExit(f"contract-diff of the spec against itself: exit {code}")

    def new_process() -> None:
        subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)

    compare = _median_of(args.rounds, lambda: contract_diff(document, document))
    command_s = _median_of(args.rounds, in_process)
    process_s = _median_of(args.rounds, new_process)
    met = command_s < GOAL_S
    print(
        f"contract-diff of spec/openapi.yaml against itself: {command_s:.3f} s in process "
        f"(goal < {GOAL_S} s): "
        + ("met" if met else "MISSED")
        + f"; comparison alone {compare:.4f} s, as a new process {process_s:.3f} s (not judged)"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figures = {"goal_s": GOAL_S, "met": met, "command_s": round(command_s, 4),
               "process_s": round(process_s, 4),
               "comparison_s": round(compare, 5), "rounds": args.rounds}  # fmt: skip
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
