"""Events of a conformance run. The pytest plugin emits them; report writers only consume them.

    RunStarted -> TestFinished* / TestDeselected* -> RunFinished

A consumer is any object with a `pytest_conformance_event(event)` method registered as a pytest
plugin (the runner registers its own; `--report-dir` registers the report writer).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.violation import Violation

__all__ = [
    "NOT_APPLICABLE_PREFIX",
    "Event",
    "ExpectedFailure",
    "Outcome",
    "RunFinished",
    "RunPolicy",
    "RunStarted",
    "TestDeselected",
    "TestFinished",
]

NOT_EXERCISED_PREFIX = "not exercised: "
# A test that found the target took a path the spec allows and that its rules do not bind (a
# server that never reuses tickets, "best effort only"): `pytest.skip(NOT_APPLICABLE_PREFIX +
# reason)`. Never counted as passed; never makes the run partial either.
NOT_APPLICABLE_PREFIX = "not applicable: "


class Outcome(Enum):
    PASSED = "passed"
    FAILED = "failed"  # the target broke the contract: typed violations attached
    NOT_EXERCISED = "not exercised"  # the profile lacks a role, fixture or the admin API
    NOT_APPLICABLE = "not applicable"  # the target legally took a path these rules do not bind
    ERROR = "error"  # the harness could not finish the test (unreachable, bug, fixture error)


@dataclass(frozen=True)
class ExpectedFailure:
    """A known violation a server team accepts until a date (`run --expected-failures FILE`):
    its failure is reported as a warning with the reason; past `expires` it counts again."""

    requirement_id: str
    reason: str
    expires: dt.date
    expired: bool  # judged once, against the run's start date, when the file is read

    def to_dict(self) -> dict[str, Any]:
        return {
            "requirement": self.requirement_id,
            "reason": self.reason,
            "expires": self.expires.isoformat(),
            "expired": self.expired,
        }


@dataclass(frozen=True)
class RunPolicy:
    """What the run was asked to select and how strictly to judge it (recorded in the report)."""

    selectors: tuple[str, ...] = ()  # --requirement patterns; empty: every requirement
    keyword: str | None = None  # -k expression
    strict: bool = False  # a failed `should` fails the run
    min_coverage: float | None = None  # percent of selected requirements that must be exercised
    max_duration: float | None = None  # seconds; the run stops there with a partial report
    expected_failures: tuple[ExpectedFailure, ...] = ()  # --expected-failures FILE


@dataclass(frozen=True)
class RunStarted:
    base_url: str
    started_at: float
    seed: int | None = None
    pacing: bool = True
    policy: RunPolicy = field(default_factory=RunPolicy)
    workers: int = 1  # processes judging scenarios at once (`run --workers N`)


@dataclass(frozen=True)
class TestFinished:
    __test__ = False  # not a pytest test class
    nodeid: str
    requirement_ids: tuple[str, ...]
    outcome: Outcome
    reason: str = ""
    violations: tuple[Violation, ...] = ()
    exchanges: tuple[Exchange, ...] = field(default=(), repr=False)
    duration: float = 0.0
    checked: tuple[str, ...] = ()  # requirement IDs its checks judged, even if it failed later

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "requirement_ids": list(self.requirement_ids),
            "outcome": self.outcome.value,
            "reason": self.reason,
            "violations": [v.to_dict() for v in self.violations],
            "duration": round(self.duration, 4),
            "exchanges": len(self.exchanges),
            "checked": list(self.checked),
        }


@dataclass(frozen=True)
class TestDeselected:
    __test__ = False
    nodeid: str
    requirement_ids: tuple[str, ...]


@dataclass(frozen=True)
class RunFinished:
    finished_at: float
    duration: float
    pytest_status: int
    stopped: str | None = None  # "timed out" or "interrupted" when the run did not finish


Event = RunStarted | TestFinished | TestDeselected | RunFinished
