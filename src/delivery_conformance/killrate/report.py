"""Consumers of kill-rate events: the report files and the progress lines.

    <run dir>/killrate.json   mode, kill rate, clean runs, then per fault: name, IDs, caught,
                              failing IDs, tests that caught it, caught elsewhere, duration
    <run dir>/killrate.md     the same as a short table, uncaught faults first

Both only consume events (`KillRunStarted`, `CleanRun`, `FaultVerdict`, `KillRunFinished`);
nothing here runs a test. Test node ids and requirement IDs are all they hold: no exchange,
so no key, token or signed link can reach them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from delivery_conformance.killrate.judge import (
    CleanRun,
    FaultVerdict,
    KillRate,
    KillRateEvent,
    KillRunFinished,
    KillRunStarted,
)

__all__ = ["KillRateWriter", "ProgressPrinter", "markdown"]

PRINTED_IDS = 8  # failing IDs printed per fault (the JSON has them all)


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _blamed(verdict: FaultVerdict) -> str:
    return ", ".join(i or "(unattributed)" for i in verdict.blamed_elsewhere) or "-"


def markdown(report: KillRate) -> str:
    lines = [
        f"# Kill rate ({report.mode.value})",
        "",
        f"{report.caught}/{len(report.faults)} faults caught ({100 * report.rate:.1f} %), "
        f"in {report.duration:.0f} s; exact blame {report.exact}/{len(report.faults)} (nothing "
        "failed but the fault's own requirements and its declared collateral).",
        "",
        "| Clean run | Tests | Passed | Failed tests |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {run.index} | {run.tests} | {_yes_no(run.passed)} | "
        f"{', '.join(f'`{t}`' for t in run.failed[:5]) or '-'} |"
        for run in report.clean_runs
    ]
    lines += [
        "",
        "| Fault | Breaks | Caught | Exact blame | Blamed elsewhere | Tests | Failing IDs "
        "| By property tests | Errors | Seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ordered = sorted(report.faults, key=lambda verdict: verdict.caught)  # uncaught first
    lines += [
        f"| `{v.fault.name}` | {', '.join(v.fault.requirement_ids)} | {_yes_no(v.caught)} | "
        f"{_yes_no(v.exact)} | {_blamed(v)} | "
        f"{v.tests} | {', '.join(v.failing_ids) or '-'} | {_yes_no(v.caught_by_properties)} | "
        f"{v.errors} | {v.duration:.1f} |"
        for v in ordered
    ]
    return "\n".join(lines) + "\n"


class KillRateWriter:
    """Writes killrate.json and killrate.md when the run finishes."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def __call__(self, event: KillRateEvent) -> None:
        if not isinstance(event, KillRunFinished):
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        data = event.report.to_dict()
        (self.run_dir / "killrate.json").write_text(json.dumps(data, indent=2) + "\n")
        (self.run_dir / "killrate.md").write_text(markdown(event.report))


class ProgressPrinter:
    """One line per clean run and per fault, then the kill rate."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.total = 0
        self.done = 0

    def __call__(self, event: KillRateEvent) -> None:
        if isinstance(event, KillRunStarted):
            self.total = len(event.faults)
            self._print(
                f"kill rate ({event.mode.value}): {self.total} faults, "
                f"{event.clean_runs} clean runs, target {event.base_url}"
            )
        elif isinstance(event, CleanRun):
            failed = f", failed: {', '.join(event.failed[:5])}" if event.failed else ""
            passed = "passed" if event.passed else "FAILED"
            self._print(
                f"clean run {event.index}: {passed} ({event.tests} tests, "
                f"{event.duration:.1f} s){failed}"
            )
        elif isinstance(event, FaultVerdict):
            self.done += 1
            caught = "caught" if event.caught else "NOT CAUGHT"
            if event.caught and not event.exact:
                caught += f" (also blamed: {', '.join(i or '?' for i in event.blamed_elsewhere)})"
            ids = ", ".join(event.failing_ids[:PRINTED_IDS]) or "no failure"
            if len(event.failing_ids) > PRINTED_IDS:
                ids += f" (+{len(event.failing_ids) - PRINTED_IDS} more)"
            self._print(
                f"[{self.done}/{self.total}] {event.fault.name} "
                f"({', '.join(event.fault.requirement_ids)}): {caught}; failing: {ids}; "
                f"{event.tests} tests, {event.duration:.1f} s"
            )
        elif isinstance(event, KillRunFinished):
            self._print(event.report.line())
            for verdict in event.report.uncaught():
                self._print(f"not caught: {verdict.fault.name} ({verdict.fault.summary})")

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
