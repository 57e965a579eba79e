"""The same findings whatever the number of workers: sandbox faults, sequential and concurrent.

For each chosen fault (by default 20, taken round-robin across the fault registry's areas, so
every area of the spec is met), a fresh sandbox with the fault on is judged twice by the whole
suite as a user runs it: `run --workers 1` and `run --workers N`. The two runs must fail the same
requirements and charge the findings to the same requirements (the blame: the requirement IDs
the violations are charged to). Printed beside it, the stricter comparison of the sets of
(test, requirement charged) of every violation: a fault that spoils every answer is also seen
in the requests of a session fixture (the catalog read once, say), which each worker makes for
the first of its tests that uses it, so on N workers more tests can carry the same finding.

    python -m benchmarks.workers_blame [--count 20] [--workers 4] [--fault NAME ...]
                                       [--out reports/bench/workers_blame.json]

Exit 0 when every fault was caught (a requirement it declares failed) and gave the same failed
requirements and the same blame both ways, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from delivery_sandbox.faults.registry import FAULTS

__all__ = ["chosen_faults", "findings", "main"]

RUN_TIMEOUT = 1800.0


def chosen_faults(count: int) -> list[str]:
    """`count` faults, one area after another (areas and names in sorted order): deterministic."""
    by_area: dict[str, list[str]] = defaultdict(list)
    for name, fault in sorted(FAULTS.items()):
        if not fault.load_only and not fault.slow:
            by_area[fault.area].append(name)
    rounds = itertools.zip_longest(*(by_area[a] for a in sorted(by_area)))
    return [name for row in rounds for name in row if name is not None][:count]


def findings(results: dict[str, Any]) -> tuple[set[tuple[str, str]], set[str]]:
    """(test, requirement charged) of every violation, and the IDs failed or warned."""
    charged = {
        (t["nodeid"], v.get("requirement_id", ""))
        for t in results["tests"]
        for v in t["violations"]
    }
    failed = {r["id"] for r in results["requirements"] if r["status"] in ("failed", "warning")}
    return charged, failed


def _judged(fault: str, workers: int, folder: Path) -> dict[str, Any]:
    profile = folder / f"{workers}.toml"
    sandbox = subprocess.Popen(
        [sys.executable, "-m", "delivery_sandbox", "--port", "0", "--versions", "extended",
         "--fault", fault, "--profile-out", str(profile)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(300):
            if profile.exists():
                break
            subprocess.run(["sleep", "0.1"], check=False)
        reports = folder / f"r{workers}"
        subprocess.run(
            [sys.executable, "-m", "delivery_conformance.cli", "run", "--target", str(profile),
             "--workers", str(workers), "--report-dir", str(reports)],
            capture_output=True, timeout=RUN_TIMEOUT, check=False,
        )  # fmt: skip
        found = sorted(reports.glob("2*/results.json"))
        return dict(json.loads(found[0].read_text())) if found else {}
    finally:
        sandbox.terminate()
        sandbox.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workers_blame")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--fault", action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("reports/bench/workers_blame.json"))
    args = parser.parse_args(argv)
    faults = args.fault or chosen_faults(args.count)
    rows = []
    for fault in faults:
        with tempfile.TemporaryDirectory(prefix="workers-blame-") as tmp:
            runs = [_judged(fault, n, Path(tmp)) for n in (1, args.workers)]
        if not all(runs):
            rows.append({"fault": fault, "same": False, "error": "a run wrote no results.json"})
            print(f"{fault}: a run wrote no results.json: FAILED", flush=True)
            continue
        (seq_charged, seq_failed), (con_charged, con_failed) = (findings(r) for r in runs)
        blamed = [
            {requirement for _, requirement in charged} for charged in (seq_charged, con_charged)
        ]
        same = blamed[0] == blamed[1] and seq_failed == con_failed
        same_tests = seq_charged == con_charged
        # Caught at all; whether the blame is exact is the kill rate's to judge (`make killrate`
        # runs each fault's own scenarios): here the whole suite runs, so a fault may also fail
        # the rules of scenarios the kill rate does not select for it.
        caught = bool(set(FAULTS[fault].requirements) & seq_failed)
        rows.append(
            {
                "fault": fault,
                "area": FAULTS[fault].area,
                "same": same,
                "same_tests": same_tests,
                "caught": caught,
                "failed_sequential": sorted(seq_failed),
                "failed_concurrent": sorted(con_failed),
                "only_sequential": sorted(map(list, seq_charged - con_charged)),
                "only_concurrent": sorted(map(list, con_charged - seq_charged)),
                "seconds": [r["run"]["duration_seconds"] for r in runs],
            }
        )
        pairs = (
            "" if same_tests else f"; {len(con_charged ^ seq_charged)} (test, requirement) differ"
        )
        print(
            f"{fault} ({FAULTS[fault].area}): sequential {sorted(seq_failed)}, "
            f"{args.workers} workers {sorted(con_failed)}: "
            f"{'same' if same else 'DIFFERENT'}{'' if caught else ', NOT CAUGHT'}{pairs}",
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n")
    good = sum(1 for r in rows if r["same"] and r.get("caught"))
    tests = sum(1 for r in rows if r.get("same_tests"))
    print(
        f"workers blame: {good}/{len(rows)} faults caught, with the same failed requirements and "
        f"blame both ways; every (test, requirement) pair the same for {tests}/{len(rows)}"
    )
    return 0 if good == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
