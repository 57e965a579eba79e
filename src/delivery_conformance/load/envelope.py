"""The token bucket's theoretical envelope, measured against raw records.

spec: Limits (playback and catalog rows): a continuously refilled counter starts full from idle
(capacity C) and refills at r per second. Whatever the server does inside, between a moment when
it was full and a later moment t it cannot admit more than `C + r * t`.

Timing: the generator sees a request leave at `sent` and come back at `answered`; the server
decided somewhere in between. Counting an admitted request at its answer time and starting the
clock at the first send makes the upper bound exact (a server over it admitted too much, whatever
the latency). Lower bounds (did it refuse too early?) carry the latency as a stated slack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from delivery_conformance.load.records import Record

__all__ = [
    "CapacityEstimate",
    "Crossing",
    "RefillBounds",
    "admitted_curve",
    "bucket_envelope",
    "estimate_capacity",
    "refill_between",
    "refill_slope",
    "tickets_left_at",
]


def bucket_envelope(elapsed: float, capacity: float, rate: float) -> float:
    """Most units a bucket full at time 0 may admit by `elapsed` seconds."""
    return capacity + rate * max(0.0, elapsed)


def admitted_curve(records: Sequence[Record], start: float) -> list[tuple[float, int]]:
    """(seconds after `start`, cumulative admitted units) at each admitting answer."""
    points: list[tuple[float, int]] = []
    total = 0
    for record in sorted(records, key=lambda r: r.answered):
        units = record.admitted
        if units:
            total += units
            points.append((record.answered - start, total))
    return points


@dataclass(frozen=True)
class Crossing:
    """The worst point of the curve against the envelope."""

    elapsed: float
    admitted: int
    allowed: float

    @property
    def excess(self) -> float:
        return self.admitted - self.allowed


@dataclass(frozen=True)
class CapacityEstimate:
    """What the records say about the bucket's capacity.

    `capacity` is the largest `admitted(t) - r * t` over the run: the allowance the server
    actually gave beyond its refill. It never exceeds the true capacity of an exact server, so
    a value above the expected capacity means the server admitted too much. `slack` is the refill
    that latency may have hidden (r times the latency at that point and at the start): a value
    below the expected capacity by more than the slack means the server refused early.
    """

    capacity: float
    slack: float
    worst: Crossing | None
    first_refusal: float | None  # seconds after start
    admitted_before_refusal: int
    admitted_total: int


def estimate_capacity(records: Sequence[Record], rate: float, capacity: float) -> CapacityEstimate:
    """Estimate the capacity from a run that starts from a full bucket."""
    ordered = sorted(records, key=lambda r: r.sent)
    if not ordered:
        return CapacityEstimate(0.0, 0.0, None, None, 0, 0)
    first = ordered[0]
    start = first.sent
    by_answer = sorted(ordered, key=lambda r: r.answered)
    best, best_slack, worst = float("-inf"), 0.0, None
    total = 0
    for record in by_answer:
        units = record.admitted
        if not units:
            continue
        total += units
        elapsed = record.answered - start
        beyond = total - rate * elapsed
        if beyond > best:
            best = beyond
            best_slack = rate * (record.latency + first.latency)
            worst = Crossing(elapsed, total, bucket_envelope(elapsed, capacity, rate))
    refusals = [r for r in ordered if r.refused]
    first_refusal = refusals[0] if refusals else None
    before = (
        sum(r.admitted for r in ordered if r.answered <= first_refusal.sent)
        if first_refusal
        else total
    )
    return CapacityEstimate(
        capacity=max(best, 0.0),
        slack=best_slack,
        worst=worst,
        first_refusal=(first_refusal.sent - start) if first_refusal else None,
        admitted_before_refusal=before,
        admitted_total=total,
    )


def refill_slope(records: Sequence[Record], begin: float, end: float) -> tuple[float, int]:
    """Least-squares slope (units per second) of cumulative admitted units against answer time,
    over admitting answers with `begin <= answered < end` (absolute times); and the point count.
    """
    points = admitted_curve([r for r in records if begin <= r.answered < end], begin)
    if len(points) < 3:
        return 0.0, len(points)
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var <= 0:
        return 0.0, n
    cov = sum((t - mean_t) * (y - mean_y) for t, y in points)
    return cov / var, n


@dataclass(frozen=True)
class RefillBounds:
    """What the records prove about the refill between two refused requests.

    At each refusal the bucket held less than the units that request asked, so everything
    admitted between the two decisions came from the refill in between plus at most what the
    first refusal asked; and at least the refill in between, minus what the last one asked, was
    admitted. Each decision lies somewhere between its request's send and answer, so the span and
    the count between them are known as ranges; no round trip measured elsewhere enters.
    """

    admitted_low: int  # admitted by requests decided between the refusals for certain
    admitted_high: int  # admitted by requests that may have been decided between them
    span_low: float  # shortest time between the two decisions (s)
    span_high: float  # longest
    first_asked: int  # units the first refusal asked: the bucket held less
    last_asked: int  # units the last refusal asked

    @property
    def measured(self) -> float:
        """The refill the middle of both ranges gives (units/s)."""
        span = (self.span_low + self.span_high) / 2
        return (self.admitted_low + self.admitted_high) / 2 / max(span, 1e-9)

    @property
    def slowest_possible(self) -> float:
        """The slowest refill the records allow: every doubt read as in the refill's favour."""
        return (self.admitted_low - self.first_asked) / max(self.span_high, 1e-9)

    @property
    def fastest_possible(self) -> float:
        """The fastest refill the records allow."""
        return (self.admitted_high + self.last_asked) / max(self.span_low, 1e-9)


def refill_between(records: Sequence[Record], first: Record, last: Record) -> RefillBounds:
    """Bounds of the units admitted between the decisions on two refused requests `first` and
    `last` (one counter of one organisation)."""
    others = [r for r in records if r is not first and r is not last and r.admitted]
    surely = sum(r.admitted for r in others if r.sent >= first.answered and r.answered <= last.sent)
    maybe = sum(r.admitted for r in others if r.answered > first.sent and r.sent < last.answered)
    return RefillBounds(
        surely,
        maybe,
        max(0.0, last.sent - first.answered),
        last.answered - first.sent,
        first.tickets,
        last.tickets,
    )


def tickets_left_at(
    records: Sequence[Record], moment: Record, start: float, capacity: float, rate: float
) -> tuple[float, float]:
    """Bounds of what a bucket full at `start` had left when `moment` was decided.

    Low bound: everything sent before `moment` came back, counted as spent, and refill only up
    to `moment.sent`. High bound: only what was answered before `moment` left, and refill up to
    its answer.
    """
    spent_max = sum(r.admitted for r in records if r is not moment and r.sent < moment.answered)
    spent_min = sum(r.admitted for r in records if r is not moment and r.answered <= moment.sent)
    low = min(capacity, capacity + rate * (moment.sent - start) - spent_max)
    high = min(capacity, capacity + rate * (moment.answered - start) - spent_min)
    return low, high
