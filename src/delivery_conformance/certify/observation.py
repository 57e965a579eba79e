"""What every client judge reads and answers (pure values): the journal entries and flow runs of
one scenario (`Observation`), and a judge's answer (`JudgeResult`, or the plain `Verdict` tuple
of the judges in request_judges.py, refresh_judges.py and state_judges.py, which judges.py turns
into one). judges.py registers every judge; the judge modules import only this one, so none of
them imports judges.py back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from delivery_conformance.certify.journal import Entry

__all__ = [
    "FAILED",
    "NOT_EXERCISED",
    "PASSED",
    "FlowRun",
    "JudgeResult",
    "Observation",
    "Verdict",
]

PASSED, FAILED, NOT_EXERCISED = "passed", "failed", "not exercised"
# (status, expected, actual, entries): judges.py turns it into a JudgeResult
Verdict = tuple[str, str, str, tuple[Entry, ...]]


@dataclass(frozen=True)
class FlowRun:
    phase: int
    exit_code: int | None  # None: killed at the time limit
    duration: float
    export: Any = None  # the parsed export after this run, when the plan has one
    ended_wall: float = 0.0  # epoch seconds when the flow command ended (0: not known)


@dataclass(frozen=True)
class Observation:
    entries: tuple[Entry, ...]
    runs: tuple[FlowRun, ...]
    seen_kinds: frozenset[str] = frozenset()  # kinds of secret the proxy handed the client
    leaks: tuple[tuple[str, str, int], ...] = ()  # (kind, masked value, run) found in output
    stored: tuple[tuple[str, str, int], ...] = ()  # (kind, masked value, run) found in state
    item_failure_exit: int | None = None  # the plan's per_item_failure_exit, if it declares one
    personal: tuple[str, ...] = ()  # the viewer's personal data the plan could hand the client


@dataclass(frozen=True)
class JudgeResult:
    status: str
    expected: str
    actual: str = ""
    entries: tuple[Entry, ...] = field(default=())
