"""The kill rate's verdicts, pure: fault rows, test results, and how a fault or a clean run is
judged (no I/O, no pytest session). `measure.py` runs the suite and feeds these; `cycle.py`, the
pytest side, records results into them; `report.py` renders them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from delivery_conformance.evidence.events import Outcome
from delivery_conformance.evidence.violation import Violation
from delivery_conformance.exceptions import HarnessFailure, UsageError

__all__ = [
    "CleanRun",
    "Consumer",
    "FaultRow",
    "FaultVerdict",
    "KillRate",
    "KillRateEvent",
    "KillRunFinished",
    "KillRunStarted",
    "Mode",
    "TestResult",
    "catalogue_rows",
    "judge_clean_run",
    "judge_fault",
    "select_faults",
    "specific_ids",
]

LISTED_TESTS = 20  # failing tests listed per fault in the report


class Mode(Enum):
    """Which tests a fault run selects: the rules it names, the whole suite, or the properties."""

    TARGETED = "targeted"
    FULL = "full"
    PROPERTIES = "properties"


@dataclass(frozen=True)
class FaultRow:
    """One row of the target's fault catalogue."""

    name: str
    requirement_ids: tuple[str, ...]
    summary: str = ""
    collateral: tuple[str, ...] = ()  # IDs it legitimately breaks too (declared with a reason)


@dataclass(frozen=True)
class TestResult:
    """One test of one cycle, as the conformance plugin reported it."""

    __test__ = False
    test: str  # node id without the cycle parameter
    outcome: Outcome
    failing_ids: tuple[str, ...] = ()  # requirement IDs of the violations (failed tests only);
    # for property tests only typed ones: their markers list every ID a check may judge, so a
    # failure charged to all of them names no rule in particular (`specific_ids`)
    properties: bool = False  # the test is a property test (tests/properties)
    reason: str = ""


@dataclass(frozen=True)
class FaultVerdict:
    fault: FaultRow
    caught: bool
    tests: int  # tests run with the fault on
    failing_ids: tuple[str, ...]  # every requirement ID a violation named
    caught_by: tuple[str, ...]  # tests that failed naming one of the fault's IDs (first few)
    failed_tests: tuple[str, ...]  # every test that failed with the fault on (first few)
    caught_elsewhere: tuple[str, ...]  # failing IDs that are not the fault's
    caught_by_properties: bool | None  # None when no property test ran with the fault
    errors: int  # tests the harness could not finish with the fault on
    duration: float
    # Blame precision: requirements blamed that the fault neither breaks nor declares as
    # collateral ("" for an unattributed finding).
    blamed_elsewhere: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        """Caught, and nothing blamed but the fault's own IDs and its declared collateral."""
        return self.caught and not self.blamed_elsewhere

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.fault.name,
            "requirement_ids": list(self.fault.requirement_ids),
            "summary": self.fault.summary,
            "caught": self.caught,
            "exact_blame": self.exact,
            "collateral": list(self.fault.collateral),
            "blamed_elsewhere": list(self.blamed_elsewhere),
            "tests": self.tests,
            "failing_ids": list(self.failing_ids),
            "caught_by": list(self.caught_by),
            "failed_tests": list(self.failed_tests),
            "caught_elsewhere": list(self.caught_elsewhere),
            "caught_by_properties": self.caught_by_properties,
            "errors": self.errors,
            "duration": round(self.duration, 3),
        }


@dataclass(frozen=True)
class CleanRun:
    index: int
    tests: int
    failed: tuple[str, ...]  # tests that failed or errored
    failing_ids: tuple[str, ...]
    duration: float

    @property
    def passed(self) -> bool:
        return self.tests > 0 and not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "passed": self.passed,
            "tests": self.tests,
            "failed": list(self.failed),
            "failing_ids": list(self.failing_ids),
            "duration": round(self.duration, 3),
        }


@dataclass(frozen=True)
class KillRate:
    mode: Mode
    faults: tuple[FaultVerdict, ...]
    clean_runs: tuple[CleanRun, ...]
    duration: float = 0.0

    @property
    def caught(self) -> int:
        return sum(1 for verdict in self.faults if verdict.caught)

    @property
    def rate(self) -> float:
        return self.caught / len(self.faults) if self.faults else 0.0

    @property
    def exact(self) -> int:
        """Faults whose failed requirements are exactly their own (or declared collateral)."""
        return sum(1 for verdict in self.faults if verdict.exact)

    def uncaught(self) -> list[FaultVerdict]:
        return [verdict for verdict in self.faults if not verdict.caught]

    def ok(self) -> bool:
        """Every fault caught and every clean run passed."""
        clean = all(run.passed for run in self.clean_runs)
        return bool(self.faults) and self.caught == len(self.faults) and clean

    def line(self) -> str:
        clean = sum(1 for run in self.clean_runs if run.passed)
        return (
            f"kill rate ({self.mode.value}): {self.caught}/{len(self.faults)} faults caught "
            f"({100 * self.rate:.1f} %); exact blame {self.exact}/{len(self.faults)}; "
            f"clean runs passed {clean}/{len(self.clean_runs)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "faults_total": len(self.faults),
            "faults_caught": self.caught,
            "kill_rate": round(self.rate, 4),
            "exact_blame": self.exact,
            "not_exact": [v.fault.name for v in self.faults if v.caught and not v.exact],
            "uncaught": [verdict.fault.name for verdict in self.uncaught()],
            "clean_runs": [run.to_dict() for run in self.clean_runs],
            "duration": round(self.duration, 3),
            "faults": [verdict.to_dict() for verdict in self.faults],
        }


@dataclass(frozen=True)
class KillRunStarted:
    mode: Mode
    faults: tuple[FaultRow, ...]
    clean_runs: int
    base_url: str


@dataclass(frozen=True)
class KillRunFinished:
    report: KillRate


KillRateEvent = KillRunStarted | CleanRun | FaultVerdict | KillRunFinished
Consumer = Callable[[KillRateEvent], None]


def specific_ids(violations: Iterable[Violation], claimed: Iterable[str]) -> tuple[str, ...]:
    """IDs of the typed violations, leaving out a blanket: one failure the plugin charged to
    every ID the test claims (a bare assertion, or a Schemathesis check of its own)."""
    claimed_ids = set(claimed)
    groups: dict[tuple[str, str, str], set[str]] = {}
    for found in violations:
        key = (found.title, found.expected, repr(found.actual))
        groups.setdefault(key, set()).add(found.requirement_id)
    blanket = {k for k, ids in groups.items() if len(claimed_ids) > 1 and ids == claimed_ids}
    return tuple(
        dict.fromkeys(
            v.requirement_id
            for v in violations
            if (v.title, v.expected, repr(v.actual)) not in blanket
        )
    )


def judge_fault(
    fault: FaultRow,
    results: Sequence[TestResult],
    duration: float,
    failed_clean: Iterable[str] = (),
) -> FaultVerdict:
    """Caught: a test, not failing on the clean target, failed naming one of the fault's IDs."""
    unreliable = set(failed_clean)
    wanted = set(fault.requirement_ids)
    evidence = [r for r in results if r.outcome is Outcome.FAILED and r.test not in unreliable]
    failing = sorted({i for r in evidence for i in r.failing_ids})
    catching = [r for r in evidence if wanted & set(r.failing_ids)]
    property_results = [r for r in results if r.properties]
    return FaultVerdict(
        fault=fault,
        caught=bool(catching),
        tests=len(results),
        failing_ids=tuple(failing),
        caught_by=tuple(r.test for r in catching[:LISTED_TESTS]),
        failed_tests=tuple(r.test for r in evidence[:LISTED_TESTS]),
        caught_elsewhere=tuple(i for i in failing if i not in wanted),
        blamed_elsewhere=tuple(i for i in failing if i not in wanted and i not in fault.collateral),
        caught_by_properties=(any(r.properties for r in catching) if property_results else None),
        errors=sum(1 for r in results if r.outcome is Outcome.ERROR),
        duration=duration,
    )


def judge_clean_run(index: int, results: Sequence[TestResult], duration: float) -> CleanRun:
    """A clean run passes when every test ran and none failed or errored."""
    bad = [r for r in results if r.outcome in (Outcome.FAILED, Outcome.ERROR)]
    return CleanRun(
        index=index,
        tests=len(results),
        failed=tuple(r.test for r in bad),
        failing_ids=tuple(sorted({i for r in bad for i in r.failing_ids})),
        duration=duration,
    )


def catalogue_rows(answer: Any) -> tuple[FaultRow, ...]:
    """The rows of `GET /_sandbox/faults` (`[{name, requirements, summary, enabled}]`)."""
    if not isinstance(answer, list):
        raise HarnessFailure("the admin API's fault catalogue is not a list")
    rows = []
    for entry in answer:
        ok = isinstance(entry, dict) and isinstance(entry.get("name"), str)
        ids = entry.get("requirements") if ok else None
        if not ok or not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise HarnessFailure(f"malformed fault catalogue row: {str(entry)[:120]}")
        if entry.get("load_only") is True:
            continue  # measured by the load campaigns (tests/harness/test_load_smoke.py)
        collateral = entry.get("collateral") or []
        if not isinstance(collateral, list) or not all(
            isinstance(c, dict) and isinstance(c.get("requirement"), str) for c in collateral
        ):
            raise HarnessFailure(f"malformed collateral in fault row {entry['name']!r}")
        rows.append(
            FaultRow(
                entry["name"],
                tuple(ids),
                str(entry.get("summary", "")),
                tuple(c["requirement"] for c in collateral),
            )
        )
    return tuple(rows)


def select_faults(rows: Sequence[FaultRow], names: Sequence[str]) -> tuple[FaultRow, ...]:
    if not names:
        return tuple(rows)
    known = {row.name: row for row in rows}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"unknown fault: {', '.join(unknown)} (see GET /_sandbox/faults)")
    return tuple(known[name] for name in dict.fromkeys(names))
