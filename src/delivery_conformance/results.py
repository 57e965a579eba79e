"""From events to a verdict per requirement (pure: no I/O, no clock).

A requirement is
  failed         when any violation names it (whatever test raised it);
  passed         when at least one test naming it passed and none failed;
  error          when the harness could not finish a test naming it (and none passed);
  not exercised  when its tests were skipped for a missing role/fixture/admin API, deselected,
                 or stopped early on a violation of another requirement;
  not testable   when `spec/requirements.yaml` says why it cannot be observed from outside;
  not covered    when no test names it (listed so the coverage figure stays honest).
Client-role requirements are reported apart: a server run cannot prove them.

Exit code (README > Exit codes): 1 when any violation was found; else 3 when any test errored or
pytest itself stopped; else 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from delivery_conformance.checks.violation import Violation
from delivery_conformance.events import (
    Event,
    Outcome,
    RunFinished,
    RunStarted,
    TestDeselected,
    TestFinished,
)
from delivery_conformance.requirements import Requirement, Role

__all__ = ["RequirementResult", "RunSummary", "Status", "summarise"]

EXIT_CONFORMING, EXIT_VIOLATIONS, EXIT_HARNESS = 0, 1, 3
PYTEST_BROKEN = frozenset({2, 3, 4})  # interrupted, internal error, usage error


class Status(Enum):
    FAILED = "failed"
    ERROR = "error"
    NOT_EXERCISED = "not exercised"
    PASSED = "passed"
    NOT_TESTABLE = "not testable"
    NOT_COVERED = "not covered"


@dataclass(frozen=True)
class RequirementResult:
    requirement: Requirement
    status: Status
    tests: tuple[str, ...] = ()
    violations: tuple[Violation, ...] = ()
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        req = self.requirement
        return {
            "id": req.id,
            "status": self.status.value,
            "section": req.section,
            "statement": req.statement,
            "level": req.level.value,
            "tests": list(self.tests),
            "reasons": list(self.reasons),
            "untestable": req.untestable,
            "violations": [v.to_dict() for v in self.violations],
        }


@dataclass(frozen=True)
class RunSummary:
    base_url: str
    started_at: float
    duration: float
    seed: int | None
    pacing: bool
    pytest_status: int | None
    service_versions: tuple[str, ...]
    tests: tuple[TestFinished, ...]
    requirements: tuple[RequirementResult, ...]
    client_requirements: tuple[RequirementResult, ...]
    stray_violations: tuple[Violation, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def test_counts(self) -> dict[str, int]:
        counts = Counter(t.outcome.value for t in self.tests)
        return {o.value: counts.get(o.value, 0) for o in Outcome}

    def requirement_counts(self) -> dict[str, int]:
        counts = Counter(r.status.value for r in self.requirements)
        return {s.value: counts.get(s.value, 0) for s in Status}

    def coverage(self) -> tuple[int, int]:
        """(requirements with a verdict, server requirements testable from outside)."""
        testable = [r for r in self.requirements if r.status is not Status.NOT_TESTABLE]
        judged = [r for r in testable if r.status in (Status.PASSED, Status.FAILED)]
        return len(judged), len(testable)

    def exit_code(self) -> int:
        if self.stray_violations or any(t.outcome is Outcome.FAILED for t in self.tests):
            return EXIT_VIOLATIONS
        if any(t.outcome is Outcome.ERROR for t in self.tests):
            return EXIT_HARNESS
        if self.pytest_status in PYTEST_BROKEN:
            return EXIT_HARNESS
        return EXIT_CONFORMING

    def line(self) -> str:
        tests, reqs = self.test_counts(), self.requirement_counts()
        judged, testable = self.coverage()
        verdict = {0: "CONFORMING", 1: "VIOLATIONS FOUND", 3: "HARNESS ERROR"}[self.exit_code()]
        return (
            f"{verdict}: {reqs['failed']} requirements failed, {reqs['passed']} passed, "
            f"{reqs['not exercised']} not exercised, {reqs['error']} errored; coverage "
            f"{judged}/{testable} testable requirements; tests {tests['passed']} passed, "
            f"{tests['failed']} failed, {tests['not exercised']} not exercised, "
            f"{tests['error']} errors"
        )

    def to_dict(self) -> dict[str, Any]:
        judged, testable = self.coverage()
        return {
            "run": {
                **self.extra,
                "base_url": self.base_url,
                "service_versions_seen": list(self.service_versions),
                "started_at": self.started_at,
                "duration_seconds": round(self.duration, 3),
                "seed": self.seed,
                "pacing": self.pacing,
                "exit_code": self.exit_code(),
                "verdict": self.line(),
                "tests": self.test_counts(),
                "requirements": self.requirement_counts(),
                "coverage": {"judged": judged, "testable": testable},
            },
            "requirements": [r.to_dict() for r in self.requirements],
            "client_requirements": [r.to_dict() for r in self.client_requirements],
            "violations_of_unknown_requirements": [v.to_dict() for v in self.stray_violations],
            "tests": [t.to_dict() for t in self.tests],
        }


def _judge(
    requirement: Requirement, tests: list[TestFinished], deselected: bool
) -> RequirementResult:
    rid = requirement.id
    violations = tuple(v for t in tests for v in t.violations if v.requirement_id == rid)
    naming = tuple(t.nodeid for t in tests if rid in t.requirement_ids)
    involved = [t for t in tests if rid in t.requirement_ids]
    reasons = tuple(dict.fromkeys(t.reason for t in involved if t.reason))
    if violations:
        status = Status.FAILED
    elif any(t.outcome is Outcome.PASSED for t in involved):
        status = Status.PASSED
    elif any(t.outcome is Outcome.ERROR for t in involved):
        status = Status.ERROR
    elif involved:
        status = Status.NOT_EXERCISED
        if any(t.outcome is Outcome.FAILED for t in involved):
            reasons += ("the test stopped on a violation of another requirement",)
    elif deselected:
        status, reasons = Status.NOT_EXERCISED, ("not selected in this run",)
    elif requirement.untestable:
        status, reasons = Status.NOT_TESTABLE, (requirement.untestable,)
    else:
        status = Status.NOT_COVERED
    if requirement.untestable and status is Status.NOT_EXERCISED and not involved:
        status, reasons = Status.NOT_TESTABLE, (requirement.untestable,)
    return RequirementResult(requirement, status, naming, violations, reasons)


def summarise(
    requirements: Mapping[str, Requirement],
    events: Iterable[Event],
    extra: Mapping[str, Any] | None = None,
) -> RunSummary:
    """Fold the events of one run into a `RunSummary` over every known requirement."""
    started: RunStarted | None = None
    finished: RunFinished | None = None
    tests: list[TestFinished] = []
    deselected: set[str] = set()
    for event in events:
        if isinstance(event, RunStarted):
            started = event
        elif isinstance(event, RunFinished):
            finished = event
        elif isinstance(event, TestFinished):
            tests.append(event)
        elif isinstance(event, TestDeselected):
            deselected.update(event.requirement_ids)
    results = [_judge(req, tests, req.id in deselected) for req in requirements.values()]
    stray = tuple(v for t in tests for v in t.violations if v.requirement_id not in requirements)
    versions = Counter(
        value
        for t in tests
        for exchange in t.exchanges
        for name, value in exchange.response_headers.items()
        if name.lower() == "service-version"
    )
    return RunSummary(
        base_url=started.base_url if started else "",
        started_at=started.started_at if started else 0.0,
        duration=finished.duration if finished else 0.0,
        seed=started.seed if started else None,
        pacing=started.pacing if started else True,
        pytest_status=finished.pytest_status if finished else None,
        service_versions=tuple(v for v, _ in versions.most_common()),
        tests=tuple(tests),
        requirements=tuple(r for r in results if r.requirement.role is Role.SERVER),
        client_requirements=tuple(r for r in results if r.requirement.role is Role.CLIENT),
        stray_violations=stray,
        extra=dict(extra or {}),
    )
