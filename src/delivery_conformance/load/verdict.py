"""Verdicts of load campaigns: measured figures against the spec's numbers and /config.

spec: Limits. Counting "may run high by up to about 2.5 %": a server may refuse up to 2.5 %
early, never admit more. So every figure that counts admissions is one-sided: the accepted
range is `[expected * (1 - 2.5 %) - slack, expected + slack]`, where `slack` is only the
measurement's own resolution (latency and timing), stated in the figure.

Each expected number is what the target's `GET /config` advertises (`rate_limits.doors`), and
each door must be at least the spec's default (times the scale the target declares, 1 for a real
server): limits can be raised for an organisation, never lowered below the table. The run
counts only if the generator kept up (schedule.Validity).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from pathlib import Path
from typing import Any

from delivery_conformance.load.envelope import RefillBounds
from delivery_conformance.load.schedule import Validity
from delivery_conformance.spec.limits import SPEC_LIMITS, Counter
from delivery_conformance.verdict import Verdict as RunVerdict

__all__ = [
    "COUNTING_TOLERANCE",
    "MINUTE_DERIVATION",
    "SPEC_LIMITS",
    "WINDOW_SECONDS",
    "Counter",
    "ExitCode",
    "Expectations",
    "Figure",
    "Outcome",
    "Verdict",
    "min_admitted",
    "minute_figure",
    "one_sided",
    "refill_bounds_figure",
    "refill_figure",
    "within",
]

COUNTING_TOLERANCE = 0.025
MINUTE_DERIVATION = (
    "spec Limits: clock-minute counter, never more than the limit in one UTC minute; counting "
    "high by up to 2.5 % gives low = floor(0.975 x limit)"
)
WINDOW_SECONDS = 60


class ExitCode(IntEnum):
    """A campaign's exit codes: the numbers of the harness's one table (verdict.py)."""

    WITHIN_SPEC = RunVerdict.CONFORMING.exit_code
    DEVIATES = RunVerdict.VIOLATIONS.exit_code
    USAGE = RunVerdict.USAGE.exit_code
    INVALID = RunVerdict.HARNESS.exit_code  # the measurement cannot be trusted (target, tool)


class Outcome(Enum):
    """How one figure came out: inside its range, outside it, or not measurable."""

    PASS = "pass"
    FAIL = "fail"
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured number and the range the spec allows for it."""

    name: str
    requirements: tuple[str, ...]
    measured: float
    expected: float
    low: float
    high: float
    unit: str
    note: str = ""
    derivation: str = ""  # how the accepted range follows from the spec (printed in verdict.json)

    @property
    def passed(self) -> bool:
        return self.low <= self.measured <= self.high

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "requirements": list(self.requirements),
            "measured": round(self.measured, 4),
            "expected": round(self.expected, 4),
            "accepted": [round(self.low, 4), round(self.high, 4)],
            "unit": self.unit,
            "passed": self.passed,
            "note": self.note,
            "derivation": self.derivation,
        }


def one_sided(
    name: str,
    requirements: tuple[str, ...],
    measured: float,
    expected: float,
    unit: str,
    slack: float = 0.0,
    note: str = "",
) -> Figure:
    """An admission count: up to 2.5 % low is fine, any excess beyond the slack is not."""
    low = expected * (1 - COUNTING_TOLERANCE) - slack
    return Figure(name, requirements, measured, expected, low, expected + slack, unit, note)


def min_admitted(limit: int) -> float:
    """LIM-007 decision: floor(limit x 0.975) admitted at least."""
    return math.floor(limit * (1 - COUNTING_TOLERANCE))


def minute_figure(
    name: str, ids: tuple[str, ...], admitted: float, limit: int, note: str = ""
) -> Figure:
    """Requests a clock-minute counter admitted in one UTC minute: `min_admitted` to the limit."""
    low = min_admitted(limit)
    return Figure(name, ids, admitted, limit, low, limit, "requests", note, MINUTE_DERIVATION)


def refill_figure(
    name: str,
    requirements: tuple[str, ...],
    slope: float,
    rate: float,
    span: float,
    points: int,
    rtt: float,
    derivation: str,
) -> Figure:
    """The slope of admitted units over a saturated window of `span` seconds against the refill
    `rate`: 0.975 x rate to the rate, both widened by the resolution. Resolution: one unit either
    side of the window, plus the refill that may pass between a decision and its answer at each
    end: at most a round trip, measured at the start of the run (answer latencies cannot tell it:
    a held play's latency is mostly its hold)."""
    slack = (2.0 + 2.0 * rate * rtt) / span
    return Figure(
        name,
        requirements,
        slope,
        rate,
        rate * (1 - COUNTING_TOLERANCE) - slack,
        rate + slack,
        "units/s",
        f"slope over {span:.1f} s, {points} admitting answers, resolution {slack:.3f}",
        derivation,
    )


def refill_bounds_figure(
    name: str, requirements: tuple[str, ...], bounds: RefillBounds, rate: float, derivation: str
) -> Figure:
    """The refill between two refusals against the `rate`: 0.975 x rate to the rate. The range
    is widened by exactly the doubt the records leave (`RefillBounds`): the figure fails only
    when the fastest refill they allow is under 0.975 x rate or the slowest is over the rate."""
    measured = bounds.measured
    return Figure(
        name,
        requirements,
        measured,
        rate,
        rate * (1 - COUNTING_TOLERANCE) - (bounds.fastest_possible - measured),
        rate + (measured - bounds.slowest_possible),
        "units/s",
        f"between refusals {bounds.span_low:.1f} to {bounds.span_high:.1f} s apart, "
        f"{bounds.admitted_low} to {bounds.admitted_high} units admitted; the records allow "
        f"{bounds.slowest_possible:.3f} to {bounds.fastest_possible:.3f}",
        derivation,
    )


def within(
    name: str,
    requirements: tuple[str, ...],
    measured: float,
    expected: float,
    low: float,
    high: float,
    unit: str,
    note: str = "",
) -> Figure:
    return Figure(name, requirements, measured, expected, low, high, unit, note)


@dataclass(frozen=True)
class Expectations:
    """The limits a campaign expects: the spec's numbers times `scale`, and /config's."""

    scale: float
    advertised: Mapping[str, int]  # /config rate_limits.doors -> limit
    window: int = WINDOW_SECONDS
    rtt: float = 0.0  # round trip to the target measured before the run (s); sizes windows
    tenants: int = 0  # organisations the profile lists in [tenants] (the tenants campaign)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], scale: float | None = None) -> Expectations:
        """Read `rate_limits` of a /config body. Without a declared scale it is 1 (a real
        server must advertise the spec's numbers)."""
        limits = config.get("rate_limits") if isinstance(config, Mapping) else None
        if not isinstance(limits, Mapping) or not isinstance(limits.get("doors"), Mapping):
            raise ValueError("/config has no rate_limits.doors")
        advertised: dict[str, int] = {}
        for door, entry in limits["doors"].items():
            if isinstance(entry, Mapping) and isinstance(entry.get("limit"), int):
                advertised[str(door)] = entry["limit"]
        window = limits.get("window_seconds", WINDOW_SECONDS)
        return cls(scale if scale else 1.0, advertised, window if isinstance(window, int) else 0)

    def spec_limit(self, counter: str) -> int:
        return max(1, round(SPEC_LIMITS[counter].limit * self.scale))

    def limit(self, counter: str) -> int:
        """What the campaign measures against: /config's number when it lists the counter."""
        return self.advertised.get(counter, self.spec_limit(counter))

    def rate(self, counter: str) -> float:
        return self.limit(counter) / WINDOW_SECONDS

    def config_figures(self, counters: Sequence[str]) -> list[Figure]:
        """/config must advertise at least the spec's numbers (times the declared scale).

        spec: Limits (limits can be raised for an organisation on request;
        docs/reading-of-the-spec.md (LIM-012, LIM-019, LIM-022, LIM-025, LIM-028)): a door above the
        default is conforming, one below it is not. The campaigns measure against the door itself
        (`limit`)."""
        figures = [
            within(
                "config window_seconds",
                ("CFG", "LIM"),
                self.window,
                WINDOW_SECONDS,
                WINDOW_SECONDS,
                WINDOW_SECONDS,
                "s",
            )
        ]
        for counter in counters:
            if not SPEC_LIMITS[counter].advertised:
                continue
            expected = self.spec_limit(counter)
            measured = self.advertised.get(counter, -1)
            figures.append(
                within(
                    f"config advertises {counter} limit",
                    ("CFG", "LIM"),
                    measured,
                    expected,
                    expected,
                    math.inf,
                    "units/60 s",
                    note=f"spec {SPEC_LIMITS[counter].limit} x scale {self.scale:g} or more",
                )
            )
        return figures


@dataclass(frozen=True)
class Verdict:
    profile: str
    figures: tuple[Figure, ...]
    validity: Validity
    target_failure: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        if self.target_failure or not self.validity.valid or not self.figures:
            return Outcome.INVALID
        return Outcome.PASS if all(f.passed for f in self.figures) else Outcome.FAIL

    @property
    def exit_code(self) -> ExitCode:
        return {
            Outcome.PASS: ExitCode.WITHIN_SPEC,
            Outcome.FAIL: ExitCode.DEVIATES,
            Outcome.INVALID: ExitCode.INVALID,
        }[self.outcome]

    @property
    def failed(self) -> list[Figure]:
        return [f for f in self.figures if not f.passed]

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "outcome": self.outcome.value,
            "exit_code": int(self.exit_code),
            "tolerance": {
                "counting": COUNTING_TOLERANCE,
                "rule": "one-sided: up to 2.5 % early refusal accepted, no excess admission",
            },
            "generator": self.validity.to_json(),
            "target_failure": self.target_failure,
            "figures": [f.to_json() for f in self.figures],
            "details": dict(self.details),
        }

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n", "utf-8")

    def summary(self) -> str:
        lines = [f"{self.profile}: {self.outcome.value.upper()} (exit {int(self.exit_code)})"]
        if self.target_failure:
            lines.append(f"  target or generator failure: {self.target_failure}")
        if not self.validity.valid:
            lines.append(f"  invalid run: {self.validity.reason}")
        for w in self.validity.workers:
            lines.append(
                f"  generator {w.worker}: {w.requests}/{w.planned} sent ({w.dropped} dropped), "
                f"lateness p99 {w.p99_lateness * 1000:.1f} ms, max {w.max_lateness * 1000:.1f} ms"
                + ("" if w.valid else f": BEHIND ({w.reason})")
            )
        for f in self.figures:
            mark = "ok  " if f.passed else "FAIL"
            lines.append(
                f"  {mark} {f.name}: {f.measured:.6g} {f.unit} "
                f"(expected {f.expected:.6g}, accepted {f.low:.6g}..{f.high:.6g})"
            )
        return "\n".join(lines)
