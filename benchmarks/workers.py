"""Run time against the number of workers (`run --workers N`), behind added latency.

The whole suite (property tests included, paced) against a fresh embedded sandbox behind the
latency proxy, once per latency and worker count, as a user would run it. Beside each run's wall
time it prints two floors, from the run's own exchange counts (results.json `run.exchanges`):
- the sequential floor: every exchange one after another, one round trip each
  (exchanges × latency);
- the pacing floor: the time the budget (half of each limit per 60 s, spec: Limits) needs to let
  the most spent counter's requests through.
A run counts only with 0 failed requirements, 0 failed and 0 errored tests.

    python -m benchmarks.workers [--latencies 40ms,150ms] [--workers 1,4,8] [--jitter 15ms]
                                 [--runs 1] [--out reports/bench/workers.json]

Each run's results.json is kept beside the output (`workers-150ms-8-1.json`: latency, workers,
run), so the slowest scenarios of a run can be read afterwards.

Exit 0 when every run had 0 failures, 1 otherwise, 130 on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.latency_suite import clean, run_once
from delivery_conformance.target.latency import parse_duration
from delivery_conformance.target.pacing import DEFAULT_LIMITS
from delivery_conformance.target.profile_names import OWN_ORGANISATION_ROLES

__all__ = ["figure_name", "main", "pacing_floor", "sequential_floor"]

FRACTION = 0.5  # the pacing budget: half of each limit in any 60 s (target/pacing.py)


def sequential_floor(exchanges: int, latency: float) -> float:
    return exchanges * latency


def pacing_floor(exchanges: dict[str, Any]) -> float:
    """Seconds the budget needs for the most spent counter of one budget: full windows of 60 s
    before the last. A role of its own organisation has a budget of its own; the other roles
    share one (target/pacing.py); a run's figures without `per_role` count as one budget."""
    budgets: Counter[tuple[str, str]] = Counter()
    per_role = exchanges.get("per_role")
    if isinstance(per_role, dict):
        for role, counts in per_role.items():
            owner = role if role in OWN_ORGANISATION_ROLES else ""
            for counter, sent in counts.items():
                budgets[(owner, counter)] += sent
    else:
        budgets.update({("", c): sent for c, sent in exchanges.get("per_counter", {}).items()})
    floor = 0.0
    for (_, counter), sent in budgets.items():
        limit = DEFAULT_LIMITS.get(counter)
        if limit:
            budget = max(1, math.floor(limit * FRACTION))
            floor = max(floor, (math.ceil(sent / budget) - 1) * 60.0)
    return floor


def figure_name(latency: float, workers: int, run: int) -> str:
    return f"{round(latency * 1000)}ms-{workers}-{run + 1}"


def _list(kind: Any) -> Any:
    def parse(text: str) -> list[Any]:
        try:
            return [kind(part) for part in text.split(",") if part.strip()]
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _line(figure: dict[str, Any], latency: float) -> str:
    head = f"{figure['latency_ms']} ms, {figure['workers']} workers: {figure['wall_seconds']} s"
    if "error" in figure:
        return f"{head}, {figure['error']}: FAILED"
    exchanges = figure.get("exchanges", {})
    total = int(exchanges.get("total", 0))
    floors = (
        f"sequential floor {sequential_floor(total, latency):.0f} s ({total} exchanges), "
        f"pacing floor {pacing_floor(exchanges):.0f} s"
    )
    verdict = "0 failures" if clean(figure) else "FAILED " + ", ".join(figure["failed_tests"][:5])
    return f"{head}; {floors}; exit {figure['exit_code']}: {verdict}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workers")
    parser.add_argument("--latencies", type=_list(parse_duration), default=[0.040, 0.150])
    parser.add_argument("--workers", type=_list(int), default=[1, 4, 8])
    parser.add_argument("--jitter", type=parse_duration, default=0.015)
    parser.add_argument("--runs", type=int, default=1, choices=range(1, 11), metavar="1-10")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("reports/bench/workers.json"))
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    figures: list[dict[str, Any]] = []
    try:
        for latency in args.latencies:
            for workers in args.workers:
                for run in range(args.runs):
                    figure = run_once(
                        paced=True,
                        latency=latency,
                        jitter=args.jitter,
                        seed=args.seed + run,
                        workers=workers,
                        properties=True,
                        keep=args.out.parent / f"workers-{figure_name(latency, workers, run)}.json",
                    )
                    figures.append(figure)
                    print(_line(figure, latency), flush=True)
    except KeyboardInterrupt:
        print(f"workers benchmark: interrupted after {len(figures)} runs", file=sys.stderr)
        return 130
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    passed = sum(1 for f in figures if clean(f))
    print(f"workers benchmark: {passed}/{len(figures)} runs with 0 failures")
    return 0 if passed == len(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
