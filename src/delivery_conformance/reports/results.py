"""From events to a verdict per requirement and for the run (pure: no I/O, no clock).

A requirement is
  failed         when a violation names it and it is a `must` (whatever test raised it);
  warning        when only `should` violations (or violations judged as warnings) name it;
  passed         when a test naming it passed, or a failed test judged it (its checks ran and
                 recorded it) and no violation names it;
  error          when the harness could not finish a test naming it (and none passed);
  not exercised  when its tests were skipped for a missing role/fixture/admin API, deselected,
                 stopped by the run's time bound, or stopped on another requirement's violation
                 before judging it;
  not applicable when every test naming it found the target on a path the spec allows and
                 the rule does not bind (a server that never reuses tickets: the reuse rules);
                 neither passed nor missing: left out of the coverage, like not testable;
  not testable   when `spec/requirements.yaml` says why it cannot be observed from outside;
  load campaign  when no conformance test names it and `spec/requirements.yaml` names the load
                 campaign that measures it (`loadtests.run <campaign>`): not judged by this run;
  not covered    when no test names it (a gap of the tool, reported, not charged to the run).
Client-role requirements are reported apart: a server run cannot prove them.

A requirement listed in the run's expected failures (`run --expected-failures FILE`) and still
in date: failed becomes warning, with the entry's reason (state "held"; `--strict` does not fail
on it: the team accepted it); passed stays passed and is marked "fixed" (the entry can go); any
other status is kept ("not judged"). An entry past its date is not applied (state "expired") and
fails the run, whatever the requirement did.

A finding with no requirement of its own (requirement_id "") is *unattributed*: it fails the
run but is charged to no requirement. Coverage is judged against what the run selected (the
requirements its selected tests name, narrowed by `--requirement` patterns). The verdict word and
exit code come from `verdict.Verdict` (docs/running.md > Exit codes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

from delivery_conformance.evidence.events import (
    Event,
    ExpectedFailure,
    Outcome,
    RunFinished,
    RunPolicy,
    RunStarted,
    TestDeselected,
    TestFinished,
)
from delivery_conformance.evidence.redact import ROLE_PREFIX
from delivery_conformance.evidence.violation import Severity, Violation
from delivery_conformance.reports.observed import observe
from delivery_conformance.spec.endpoints import match_endpoint
from delivery_conformance.spec.requirements import Level, Requirement, Role
from delivery_conformance.verdict import Verdict

__all__ = ["RequirementResult", "RunSummary", "Status", "finding_key", "summarise"]

PYTEST_BROKEN = frozenset({3, 4})  # internal error, usage error
PYTEST_INTERRUPTED = 2
EXERCISED = frozenset({"passed", "failed", "warning"})
EXPECTED_STATES = ("held", "fixed", "expired", "not judged")


class Status(Enum):
    FAILED = "failed"
    WARNING = "warning"
    ERROR = "error"
    NOT_EXERCISED = "not exercised"
    PASSED = "passed"
    NOT_TESTABLE = "not testable"
    NOT_APPLICABLE = "not applicable"
    LOAD_CAMPAIGN = "load campaign"
    NOT_COVERED = "not covered"


# Left out of the coverage: no run of this target could judge them (not testable from outside,
# or the target legally never took the path they bind).
UNBOUND = frozenset({Status.NOT_TESTABLE, Status.NOT_APPLICABLE})


@dataclass(frozen=True)
class RequirementResult:
    requirement: Requirement
    status: Status
    tests: tuple[str, ...] = ()
    violations: tuple[Violation, ...] = ()
    reasons: tuple[str, ...] = ()
    expected: ExpectedFailure | None = None
    expected_state: str = ""  # held, fixed, expired or not judged (with `expected` only)

    def to_dict(self) -> dict[str, Any]:
        req = self.requirement
        listed = {}
        if self.expected is not None:
            listed = {"expected": self.expected.to_dict() | {"state": self.expected_state}}
        return {
            "id": req.id,
            "status": self.status.value,
            "section": req.section,
            "statement": req.statement,
            "level": req.level.value,
            "tests": list(self.tests),
            "reasons": list(self.reasons),
            "untestable": req.untestable,
            "load_campaign": req.load_campaign,
            "violations": [v.to_dict() for v in self.violations],
        } | listed


def finding_key(violation: Violation) -> tuple[str, ...]:
    """One defect seen several times is one finding: same rule, same expectation, same route."""
    exchange = violation.exchange
    where = (exchange.method, _route(exchange.url), str(exchange.status)) if exchange else ()
    return (violation.requirement_id, violation.title, violation.expected, *where)


def _route(url: str) -> str:
    """The path without its query and with ids folded, so the same endpoint groups together."""
    path = url.split("://", 1)[-1].partition("/")[2].split("?", 1)[0]
    parts = [
        "{id}" if any(c.isdigit() for c in part) and len(part) > 8 else part
        for part in path.split("/")
    ]
    return "/" + "/".join(parts)


def _causes(reason: str) -> list[str]:
    """`the profile lacks role:x, fixture:y` -> [role:x, fixture:y]; other reasons as they are."""
    lacks = "the profile lacks "
    if reason.startswith(lacks):
        return [part.strip() for part in reason.removeprefix(lacks).split(",")]
    return [reason]


@dataclass(frozen=True)
class Coverage:
    """Exercised / selected requirements; what was left out and why."""

    selected: int
    exercised: int
    not_exercised: tuple[tuple[str, tuple[str, ...]], ...]  # (id, reasons)
    not_covered: int  # server requirements no test names: the tool's gap, not the run's
    testable: int  # server requirements testable from outside

    @property
    def percent(self) -> float:
        return 100.0 * self.exercised / self.selected if self.selected else 0.0

    def reasons(self, most: int = 6) -> str:
        """What kept requirements out, most common first: `role:videos (120), admin (40)`."""
        counts: Counter[str] = Counter()
        for _, reasons in self.not_exercised:
            counts.update({cause for reason in reasons for cause in _causes(reason)})
        parts = [f"{cause} ({n})" for cause, n in counts.most_common(most)]
        if len(counts) > most:
            parts.append(f"{len(counts) - most} more causes")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "selected": self.selected,
            "exercised": self.exercised,
            "percent": round(self.percent, 1),
            "not_covered_by_tool": self.not_covered,
            "testable": self.testable,
            "not_exercised": [{"id": rid, "reasons": list(r)} for rid, r in self.not_exercised],
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
    policy: RunPolicy = field(default_factory=RunPolicy)
    stopped: str | None = None
    unattributed: tuple[Violation, ...] = ()
    workers: int = 1

    def exchange_counts(self) -> dict[str, Any]:
        """Requests the run sent: in all, per rate counter of the spec (spec: Limits), and per
        counter for each key role (the spec counts per organisation; a twin reads as its role)."""
        per_counter: Counter[str] = Counter()
        per_role: dict[str, Counter[str]] = {}
        total = 0
        for test in self.tests:
            for exchange in test.exchanges:
                total += 1
                endpoint = match_endpoint(exchange.method, urlsplit(exchange.url).path)
                if endpoint is not None and endpoint.counter is not None:
                    per_counter[endpoint.counter] += 1
                    role = exchange.credential.removeprefix(ROLE_PREFIX)
                    if role != exchange.credential:  # a key of the profile, not none or junk
                        per_role.setdefault(role, Counter())[endpoint.counter] += 1
        return {
            "total": total,
            "per_counter": dict(sorted(per_counter.items())),
            "per_role": {role: dict(sorted(c.items())) for role, c in sorted(per_role.items())},
        }

    def test_counts(self) -> dict[str, int]:
        counts = Counter(t.outcome.value for t in self.tests)
        return {o.value: counts.get(o.value, 0) for o in Outcome}

    def requirement_counts(self) -> dict[str, int]:
        counts = Counter(r.status.value for r in self.requirements)
        return {s.value: counts.get(s.value, 0) for s in Status}

    def selected_ids(self) -> set[str]:
        named = {rid for t in self.tests for rid in t.requirement_ids}
        if self.policy.selectors:
            patterns = self.policy.selectors
            named = {rid for rid in named if any(fnmatchcase(rid, p) for p in patterns)}
        return named

    def coverage_detail(self) -> Coverage:
        selected_ids = self.selected_ids()
        testable = [r for r in self.requirements if r.status not in UNBOUND]
        selected = [r for r in testable if r.requirement.id in selected_ids]
        exercised = [r for r in selected if r.status.value in EXERCISED]
        left = tuple(
            (r.requirement.id, r.reasons or (r.status.value,))
            for r in selected
            if r.status.value not in EXERCISED
        )
        not_covered = sum(r.status is Status.NOT_COVERED for r in self.requirements)
        return Coverage(len(selected), len(exercised), left, not_covered, len(testable))

    def coverage(self) -> tuple[int, int]:
        """(requirements with a verdict, server requirements testable from outside)."""
        testable = [r for r in self.requirements if r.status not in UNBOUND]
        judged = [r for r in testable if r.status.value in EXERCISED]
        return len(judged), len(testable)

    def findings(self) -> dict[tuple[str, ...], list[Violation]]:
        """Distinct findings (see `finding_key`), each with every violation that showed it."""
        grouped: dict[tuple[str, ...], list[Violation]] = {}
        for violation in self._all_violations():
            grouped.setdefault(finding_key(violation), []).append(violation)
        return grouped

    def widest_charge(self) -> int:
        """The most requirements one defect (same title, expectation and route) is charged to."""
        charged: dict[tuple[str, ...], set[str]] = {}
        for key in self.findings():
            charged.setdefault(key[1:], set()).add(key[0] or "(unattributed)")
        return max((len(ids) for ids in charged.values()), default=0)

    def _all_violations(self) -> list[Violation]:
        return [v for t in self.tests for v in t.violations]

    def verdict(self) -> Verdict:
        counts = self.requirement_counts()
        if self.stopped == "interrupted" or self.pytest_status == PYTEST_INTERRUPTED:
            return Verdict.INTERRUPTED
        if self.pytest_status in PYTEST_BROKEN:  # pytest crashed: the run is not whole
            return Verdict.HARNESS
        if counts["failed"] or self.stray_violations or self.unattributed:
            return Verdict.VIOLATIONS
        if self.policy.strict and self._unaccepted_warnings():
            return Verdict.VIOLATIONS
        if self.expected_states()["expired"]:
            return Verdict.VIOLATIONS
        if any(t.outcome is Outcome.ERROR for t in self.tests):
            return Verdict.HARNESS
        if self.stopped == "timed out":
            return Verdict.TIMED_OUT
        coverage = self.coverage_detail()
        if coverage.not_exercised:
            minimum = self.policy.min_coverage
            if minimum is None or coverage.percent < minimum:
                return Verdict.PARTIAL
            return Verdict.PARTIAL_ACCEPTED
        return Verdict.WARNINGS if counts["warning"] else Verdict.CONFORMING

    def exit_code(self) -> int:
        return self.verdict().exit_code

    def _unaccepted_warnings(self) -> int:
        """Warnings not accepted by an expected-failures entry (what `--strict` fails on)."""
        return sum(
            r.status is Status.WARNING and r.expected_state != "held" for r in self.requirements
        )

    def expected_states(self) -> dict[str, int]:
        """How the run's expected-failures entries came out: held, fixed, expired, not judged."""
        counts = Counter(r.expected_state for r in self.requirements if r.expected is not None)
        return {state: counts.get(state, 0) for state in EXPECTED_STATES}

    def line(self) -> str:
        tests, reqs = self.test_counts(), self.requirement_counts()
        coverage = self.coverage_detail()
        findings = self.findings()
        verdict = self.verdict()
        head = verdict.word
        if verdict is Verdict.PARTIAL_ACCEPTED:
            head += f" (--min-coverage {self.policy.min_coverage:g} %)"
        text = (
            f"{head}: {reqs['failed']} requirements failed ({len(findings)} distinct findings"
            f"{f', {len(self.unattributed)} unattributed' if self.unattributed else ''}), "
            f"{reqs['warning']} warnings, {reqs['passed']} passed, "
            f"{self._not_exercised_words()}, {reqs['error']} errored; coverage "
            f"{coverage.exercised}/{coverage.selected} selected requirements exercised "
            f"({coverage.percent:.1f} %); tests {tests['passed']} passed, "
            f"{tests['failed']} failed, {tests['not exercised']} not exercised, "
            f"{tests['error']} errors"
        )
        if findings:
            text += f"; widest charge {self.widest_charge()}"
        if self.policy.expected_failures:
            states = self.expected_states()
            text += (
                f"; expected failures: {states['held']} held, {states['fixed']} fixed "
                f"(remove them), {states['expired']} expired"
                + (f", {states['not judged']} not judged" if states["not judged"] else "")
            )
        return text

    def _not_exercised_words(self) -> str:
        """`N not exercised` among what the run selected, and apart the requirements it left
        out on purpose (`--requirement`, `-k`), so the line agrees with the coverage figure."""
        selected = self.selected_ids()
        left = [r for r in self.requirements if r.status is Status.NOT_EXERCISED]
        inside = sum(r.requirement.id in selected for r in left)
        outside = len(left) - inside
        words = f"{inside} not exercised" + (f" ({outside} not selected)" if outside else "")
        unbound = sum(r.status is Status.NOT_APPLICABLE for r in self.requirements)
        return words + (f", {unbound} not applicable" if unbound else "")

    def coverage_line(self) -> str:
        """What kept selected requirements out, or "" when nothing did."""
        coverage = self.coverage_detail()
        if not coverage.not_exercised:
            return ""
        return f"not exercised for lack of (requirements): {coverage.reasons()}"

    def to_dict(self) -> dict[str, Any]:
        judged, testable = self.coverage()
        verdict = self.verdict()
        return {
            "run": {
                **self.extra,
                "base_url": self.base_url,
                "service_versions_seen": list(self.service_versions),
                "started_at": self.started_at,
                "duration_seconds": round(self.duration, 3),
                "seed": self.seed,
                "pacing": self.pacing,
                "workers": self.workers,
                "exchanges": self.exchange_counts(),
                "observed": observe(e for t in self.tests for e in t.exchanges),
                "exit_code": verdict.exit_code,
                "verdict_word": verdict.word,
                "verdict": self.line(),
                "stopped": self.stopped,
                "policy": {
                    "requirements": list(self.policy.selectors),
                    "keyword": self.policy.keyword,
                    "strict": self.policy.strict,
                    "min_coverage": self.policy.min_coverage,
                    "max_duration": self.policy.max_duration,
                    "expected_failures": [e.to_dict() for e in self.policy.expected_failures],
                },
                "tests": self.test_counts(),
                "requirements": self.requirement_counts(),
                "findings": len(self.findings()),
                "widest_charge": self.widest_charge(),
                "coverage": {"judged": judged, "testable": testable}
                | self.coverage_detail().to_dict(),
            },
            "requirements": [r.to_dict() for r in self.requirements],
            "client_requirements": [r.to_dict() for r in self.client_requirements],
            "violations_of_unknown_requirements": [v.to_dict() for v in self.stray_violations],
            "unattributed_findings": [v.to_dict() for v in self.unattributed],
            "tests": [t.to_dict() for t in self.tests],
        }


def _is_warning(requirement: Requirement, violations: tuple[Violation, ...]) -> bool:
    if requirement.level is Level.SHOULD:
        return True
    return all(v.severity is Severity.WARNING for v in violations)


def _accept(result: RequirementResult, entry: ExpectedFailure | None) -> RequirementResult:
    """`result` as the expected-failures entry that lists it makes it (see the module text)."""
    if entry is None:
        return result
    until = entry.expires.isoformat()
    if entry.expired:
        note = f"expected-failure entry expired on {until}: not applied ({entry.reason})"
        return replace(result, expected=entry, expected_state="expired",
                       reasons=(*result.reasons, note))  # fmt: skip
    if result.status in (Status.FAILED, Status.WARNING):
        note = f"expected failure, accepted until {until}: {entry.reason}"
        return replace(result, status=Status.WARNING, expected=entry, expected_state="held",
                       reasons=(*result.reasons, note))  # fmt: skip
    if result.status is Status.PASSED:
        note = "listed as an expected failure, but it passed: fixed, remove the entry"
        return replace(result, expected=entry, expected_state="fixed",
                       reasons=(*result.reasons, note))  # fmt: skip
    return replace(result, expected=entry, expected_state="not judged")


def _judge(
    requirement: Requirement, tests: list[TestFinished], deselected: bool
) -> RequirementResult:
    rid = requirement.id
    violations = tuple(v for t in tests for v in t.violations if v.requirement_id == rid)
    involved = [t for t in tests if rid in t.requirement_ids]
    naming = tuple(t.nodeid for t in involved)
    reasons = tuple(dict.fromkeys(t.reason for t in involved if t.reason))
    judged_in_failed = any(t.outcome is Outcome.FAILED and rid in t.checked for t in involved)
    if violations:
        status = Status.WARNING if _is_warning(requirement, violations) else Status.FAILED
    elif any(t.outcome is Outcome.PASSED for t in involved) or judged_in_failed:
        status = Status.PASSED
    elif any(t.outcome is Outcome.ERROR for t in involved):
        status = Status.ERROR
    elif involved and all(t.outcome is Outcome.NOT_APPLICABLE for t in involved):
        status = Status.NOT_APPLICABLE
    elif involved:
        status = Status.NOT_EXERCISED
        if any(t.outcome is Outcome.FAILED for t in involved):
            reasons += ("the test stopped on a violation of another requirement",)
    elif deselected:
        status, reasons = Status.NOT_EXERCISED, ("not selected in this run",)
    elif requirement.untestable:
        status, reasons = Status.NOT_TESTABLE, (requirement.untestable,)
    elif requirement.load_campaign:
        campaign = requirement.load_campaign
        status = Status.LOAD_CAMPAIGN
        reasons = (f"measured by the load campaign `{campaign}` (loadtests.run), not by this run",)
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
    policy = started.policy if started else RunPolicy()
    listed = {entry.requirement_id: entry for entry in policy.expected_failures}
    results = [
        _accept(_judge(req, tests, req.id in deselected), listed.get(req.id))
        for req in requirements.values()
    ]
    every = [v for t in tests for v in t.violations]
    stray = tuple(v for v in every if v.requirement_id and v.requirement_id not in requirements)
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
        workers=started.workers if started else 1,
        pytest_status=finished.pytest_status if finished else None,
        service_versions=tuple(v for v, _ in versions.most_common()),
        tests=tuple(tests),
        requirements=tuple(r for r in results if r.requirement.role is Role.SERVER),
        client_requirements=tuple(r for r in results if r.requirement.role is Role.CLIENT),
        stray_violations=stray,
        extra=dict(extra or {}),
        policy=policy,
        stopped=finished.stopped if finished else None,
        unattributed=tuple(v for v in every if not v.requirement_id),
    )
