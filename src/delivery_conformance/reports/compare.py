"""Two results.json of one kind side by side: what changed per requirement, in coverage, in time,
in the verdict and in what the server was seen to do (pure: two documents in, a `Comparison` out).

Per requirement, the status in OLD and in NEW give one change class (`classify`, first row that
matches wins):

    same status                                   unchanged
    anything          -> failed                   new failure          regression
    anything          -> error                    newly errored        regression
    passed / failed / warning -> not exercised    newly not exercised  regression
    anything          -> warning                  new warning          (an expected failure
                                                                        listed by the run is a
                                                                        warning: not a regression)
    failed / warning  -> passed                   fixed
    anything else     -> passed                   newly covered
    anything else                                 other change         (e.g. not covered -> not
                                                                        exercised, or a
                                                                        requirement only one run
                                                                        lists)

The comparison is a regression (`Comparison.regressed`) when a requirement regressed, when the
coverage (percent of the selected requirements exercised) went down, or when NEW has a finding
no requirement names that OLD did not have. Behavioural changes (`run.observed`, see
`observed.py`: limits, `Retry-After`, page sizes, deprecation headers, versions) are listed
apart and are not a regression unless asked (`compare --fail-on-behaviour`): a server may change
them within the spec (Versioning 3 allows additive changes; Limits allows raising a limit).
A figure only one run observed is not a change. `Retry-After` is compared on 503 answers and on
the 429s of continuously refilled counters only (see `CONTINUOUS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from delivery_conformance.spec.limits import SPEC_LIMITS

__all__ = [
    "REGRESSIONS",
    "BehaviourChange",
    "Change",
    "Comparison",
    "RequirementChange",
    "Side",
    "TestMove",
    "classify",
    "compare_behaviour",
    "compare_documents",
    "kind_of",
]

EXERCISED = frozenset({"passed", "failed", "warning"})
# spec: Limits > Behaviour at the ceiling: a clock-minute counter's Retry-After is the rest of
# the minute, so it moves with the wall clock of the run; only continuous counters' compare.
CONTINUOUS = frozenset(name for name, counter in SPEC_LIMITS.items() if counter.continuous)
ABSENT = "absent"  # a requirement the other run does not list
MOVES_LISTED = 10  # the per-test duration changes kept, largest first
MOVE_FLOOR = 0.01  # seconds: a smaller move of one test is noise, not listed


class Change(Enum):
    NEW_FAILURE = "new failure"
    NEWLY_ERRORED = "newly errored"
    NEWLY_NOT_EXERCISED = "newly not exercised"
    NEW_WARNING = "new warning"
    FIXED = "fixed"
    NEWLY_COVERED = "newly covered"
    OTHER = "other change"
    UNCHANGED = "unchanged"


REGRESSIONS = frozenset({Change.NEW_FAILURE, Change.NEWLY_ERRORED, Change.NEWLY_NOT_EXERCISED})


def classify(old: str, new: str) -> Change:
    """The change class of one requirement from its OLD and NEW status (module docstring)."""
    if old == new:
        return Change.UNCHANGED
    if new == "failed":
        return Change.NEW_FAILURE
    if new == "error":
        return Change.NEWLY_ERRORED
    if new == "not exercised" and old in EXERCISED:
        return Change.NEWLY_NOT_EXERCISED
    if new == "warning":
        return Change.NEW_WARNING
    if new == "passed":
        return Change.FIXED if old in ("failed", "warning") else Change.NEWLY_COVERED
    return Change.OTHER


@dataclass(frozen=True)
class RequirementChange:
    id: str
    change: Change
    old: str
    new: str
    statement: str
    note: str = ""  # NEW's first finding, expected-failure reason or why not exercised


@dataclass(frozen=True)
class TestMove:
    __test__ = False  # not a pytest test class
    nodeid: str
    old: float
    new: float

    @property
    def delta(self) -> float:
        return self.new - self.old


@dataclass(frozen=True)
class BehaviourChange:
    kind: str  # limit, retry-after, page size, deprecation, service version, config versions
    where: str
    old: str
    new: str

    def line(self) -> str:
        return f"{self.kind}: {self.where}: {self.old} -> {self.new}"


@dataclass(frozen=True)
class Side:
    """One run's figures as the comparison shows them."""

    format: str
    verdict: str
    coverage: Mapping[str, Any]  # run.coverage: exercised, selected, percent
    duration: float

    @classmethod
    def of(cls, document: Mapping[str, Any]) -> Side:
        run = document["run"]
        verdict = run.get("verdict_word") or f"exit {run['exit_code']}"
        return cls(str(document["format_version"]), str(verdict), dict(run["coverage"]),
                   float(run["duration_seconds"]))  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    kind: str
    old: Side
    new: Side
    requirements: tuple[RequirementChange, ...]
    moves: tuple[TestMove, ...]
    tests_added: int
    tests_removed: int
    new_unattributed: tuple[str, ...]
    behaviour: tuple[BehaviourChange, ...] | None  # None: a run did not record `run.observed`

    def of(self, change: Change) -> list[RequirementChange]:
        return [r for r in self.requirements if r.change is change]

    def counts(self) -> dict[str, int]:
        return {c.value: len(self.of(c)) for c in Change}

    @property
    def coverage_dropped(self) -> bool:
        return float(self.new.coverage["percent"]) < float(self.old.coverage["percent"])

    def regressions(self) -> list[str]:
        """Why this comparison is a regression, one phrase each (empty: it is not)."""
        out = [f"{len(self.of(c))} {c.value}" for c in Change if c in REGRESSIONS and self.of(c)]
        if self.coverage_dropped:
            out.append(
                f"coverage {self.old.coverage['percent']} % -> {self.new.coverage['percent']} %"
            )
        if self.new_unattributed:
            out.append(f"{len(self.new_unattributed)} new unattributed findings")
        return out

    @property
    def regressed(self) -> bool:
        return bool(self.regressions())


def kind_of(document: Mapping[str, Any]) -> str:
    """What produced the results: a server run, or a client certification (`run.kind`)."""
    return str(document["run"].get("kind") or "server run")


def _note(requirement: Mapping[str, Any]) -> str:
    expected = requirement.get("expected")
    if isinstance(expected, Mapping) and expected.get("reason"):
        return f"expected failure: {expected['reason']}"
    violations = requirement.get("violations") or []
    if violations:
        first = violations[0]
        return f"{first['title']} (expected {first['expected']}, got {first['actual']})"
    reasons = requirement.get("reasons") or []
    if requirement["status"] not in EXERCISED and reasons:
        return "; ".join(str(r) for r in reasons)
    return ""


def _requirements(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[RequirementChange]:
    before = {r["id"]: r for r in old["requirements"]}
    after = {r["id"]: r for r in new["requirements"]}
    out = []
    for rid in sorted(before.keys() | after.keys()):
        was, now = before.get(rid), after.get(rid)
        old_status = was["status"] if was else ABSENT
        new_status = now["status"] if now else ABSENT
        shown = now or was or {}
        out.append(
            RequirementChange(
                rid,
                classify(old_status, new_status),
                old_status,
                new_status,
                str(shown.get("statement", "")),
                _note(now) if now else "",
            )
        )
    return out


def _moves(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[TestMove]:
    before = {t["nodeid"]: float(t["duration"]) for t in old}
    after = {t["nodeid"]: float(t["duration"]) for t in new}
    moves = [TestMove(n, before[n], after[n]) for n in before.keys() & after.keys()]
    moves.sort(key=lambda m: (-abs(m.delta), m.nodeid))
    return [m for m in moves if abs(m.delta) >= MOVE_FLOOR][:MOVES_LISTED]


def _unattributed(document: Mapping[str, Any]) -> set[str]:
    return {
        f"{v['title']} (expected {v['expected']})"
        for v in document.get("unattributed_findings") or []
    }


def _text(value: Any) -> str:
    if value is None:
        return "not observed"
    if isinstance(value, Mapping) and {"min", "median", "max"} <= value.keys():
        return f"{value['min']}/{value['median']}/{value['max']} s (min/median/max)"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def _figures(
    kind: str, where: str, old: Mapping[str, Any], new: Mapping[str, Any], names: Sequence[str]
) -> list[BehaviourChange]:
    """A change for each figure both sides observed and that differs (one side null: skipped)."""
    out = []
    for name in names:
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            a, b = (
                {k: a.get(k) for k in ("min", "median", "max")},
                {k: b.get(k) for k in ("min", "median", "max")},
            )
        if a != b:
            label = f"{where} {name.replace('_', ' ')}".strip()
            out.append(BehaviourChange(kind, label, _text(a), _text(b)))
    return out


def _mapping(data: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    for key in path:
        value = data.get(key)
        data = value if isinstance(value, Mapping) else {}
    return data


def compare_behaviour(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[BehaviourChange]:
    """What the server was seen to do differently: two `run.observed` sections."""
    out: list[BehaviourChange] = []
    old_limits, new_limits = _mapping(old, "rate_limits"), _mapping(new, "rate_limits")
    out += _figures("limit", "", old_limits, new_limits, ("window_seconds",))
    old_counters, new_counters = _mapping(old_limits, "counters"), _mapping(new_limits, "counters")
    for counter in sorted(old_counters.keys() & new_counters.keys()):
        a, b = _mapping(old_counters, counter), _mapping(new_counters, counter)
        out += _figures("limit", counter, a, b, ("announced", "header_ceiling"))
        if counter in CONTINUOUS:
            out += _figures("retry-after", f"429 {counter}", a, b, ("retry_after",))
    old_retry, new_retry = _mapping(old, "retry_after"), _mapping(new, "retry_after")
    out += _figures("retry-after", "answers", old_retry, new_retry, ("503",))
    old_pages, new_pages = _mapping(old, "paging"), _mapping(new, "paging")
    for route in sorted(old_pages.keys() & new_pages.keys()):
        a, b = _mapping(old_pages, route), _mapping(new_pages, route)
        out += _figures("page size", route, a, b, sorted(a.keys() & b.keys()))
    out += _deprecations(_mapping(old, "deprecation"), _mapping(new, "deprecation"))
    was, now = set(_mapping(old, "service_versions")), set(_mapping(new, "service_versions"))
    if was and now and was != now:
        out.append(BehaviourChange("service version", "answered", _text(sorted(was)),
                                   _text(sorted(now))))  # fmt: skip
    listed, relisted = old.get("config_versions"), new.get("config_versions")
    if isinstance(listed, list) and isinstance(relisted, list) and listed != relisted:
        out.append(BehaviourChange("config versions", "GET /config api.supported_versions",
                                   _versions(listed), _versions(relisted)))  # fmt: skip
    return out


def _versions(rows: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(
        f"{r.get('version')} (deprecated {r.get('deprecated_at') or '-'}, "
        f"sunset {r.get('sunset_at') or '-'})"
        for r in rows
    )


def _deprecations(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[BehaviourChange]:
    """Deprecation, Sunset and Link on the 200 answers of one route and version, both runs."""
    out = []
    for route in sorted(old.keys() & new.keys()):
        a, b = _mapping(old, route), _mapping(new, route)
        for version in sorted(a.keys() & b.keys()):
            before, after = _mapping(a, version), _mapping(b, version)
            for header in ("deprecation", "sunset", "link"):
                was, now = list(before.get(header) or []), list(after.get(header) or [])
                if was == now:
                    continue
                what = "appeared" if not was else "disappeared" if not now else "changed"
                where = f"{route} (Service-Version {version}) {header.title()} {what}"
                out.append(BehaviourChange("deprecation", where, _text(was), _text(now)))
    return out


def compare_documents(old: Mapping[str, Any], new: Mapping[str, Any]) -> Comparison:
    """OLD and NEW results documents (checked, of one kind and one major format) compared."""
    old_run, new_run = old["run"], new["run"]
    old_observed, new_observed = old_run.get("observed"), new_run.get("observed")
    behaviour = None
    if isinstance(old_observed, Mapping) and isinstance(new_observed, Mapping):
        behaviour = tuple(compare_behaviour(old_observed, new_observed))
    before = {t["nodeid"] for t in old["tests"]}
    after = {t["nodeid"] for t in new["tests"]}
    return Comparison(
        kind=kind_of(new),
        old=Side.of(old),
        new=Side.of(new),
        requirements=tuple(_requirements(old, new)),
        moves=tuple(_moves(old["tests"], new["tests"])),
        tests_added=len(after - before),
        tests_removed=len(before - after),
        new_unattributed=tuple(sorted(_unattributed(new) - _unattributed(old))),
        behaviour=behaviour,
    )
