"""Open-model schedules: when each request is due, and whether the generator kept up.

A campaign is a list of stages (profiles as data). Inside an open stage request i is due at
`stage start + i / rate`, whatever happened to the requests before it: the generator never
waits for an answer before sending the next one. A closed ("step") stage is a script: each step
is due when the previous answer came back (used to set a bucket to an exact state).

Lateness is `sent - due`. A run whose generator fell behind measured its own queue, not the
server: such a run is invalid, never passed. With several generator processes (workers) each is
judged on its own share too: one worker late, or one that left requests of its share unsent
(dropped from the schedule), makes the whole run invalid (`assess_workers`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

__all__ = [
    "LatenessBound",
    "Plan",
    "Slot",
    "Stage",
    "Validity",
    "WorkerLateness",
    "assess_generator",
    "assess_workers",
    "percentile",
]


@dataclass(frozen=True)
class Stage:
    """One stage of a campaign: `count` requests of one shape at `rate` per second.

    `rate` 0 makes a closed stage: one request at a time, each due at the previous answer.
    `pause` is idle time before the stage starts (for example to let a bucket refill).
    """

    name: str
    count: int
    rate: float
    endpoint: str = "playback"
    intent: str | None = "play"
    batch: tuple[str | None, ...] = ()  # item intents of a batch; empty: a single request
    pause: float = 0.0
    simulate: str | None = None  # a Service-Simulate scenario
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    together: bool = False  # starts with the previous stage instead of after it (open only)

    def __post_init__(self) -> None:
        if self.count < 0 or self.rate < 0 or self.pause < 0:
            raise ValueError(f"stage {self.name}: count, rate and pause must not be negative")
        if self.together and not self.open:
            raise ValueError(f"stage {self.name}: only an open stage runs together with another")

    @property
    def open(self) -> bool:
        return self.rate > 0

    @property
    def duration(self) -> float:
        return self.count / self.rate if self.open else 0.0

    @property
    def tickets(self) -> int:
        return len(self.batch) if self.batch else 1


@dataclass(frozen=True)
class Slot:
    """Request `index` of the plan: its stage and its offset from the campaign start."""

    index: int
    stage: Stage
    offset: float  # seconds after the campaign start (for closed stages: the earliest time)


class Plan:
    """The stages laid end to end on one clock."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        if not stages:
            raise ValueError("a plan needs at least one stage")
        self.stages = tuple(stages)
        self._starts: list[float] = []
        self._first: list[int] = []
        first, start, end = 0, 0.0, 0.0
        for stage in self.stages:
            # a stage `together` with the previous one starts when it started; the next stage
            # that is not together starts when every stage before it has ended
            start = (start if stage.together else end) + stage.pause
            self._starts.append(start)
            self._first.append(first)
            end = max(end, start + stage.duration)
            first += stage.count
        self.total = first
        self.duration = end

    def slot(self, index: int) -> Slot:
        if not 0 <= index < self.total:
            raise IndexError(index)
        position = max(k for k, first in enumerate(self._first) if first <= index)
        # skip empty stages that share the same first index
        while self.stages[position].count == 0:
            position += 1
        stage = self.stages[position]
        within = index - self._first[position]
        offset = self._starts[position] + (within / stage.rate if stage.open else 0.0)
        return Slot(index, stage, offset)

    def indexes(self, worker: int, workers: int) -> range:
        """The share of one worker among `workers`: every workers-th request."""
        if workers < 1 or not 0 <= worker < workers:
            raise ValueError(f"worker {worker} out of {workers}")
        return range(worker, self.total, workers)

    def order(self, worker: int, workers: int) -> list[int]:
        """The share of one worker in the order the requests are due (stages may overlap)."""
        share = self.indexes(worker, workers)
        if not any(s.together for s in self.stages):
            return list(share)
        return sorted(share, key=lambda i: (self.slot(i).offset, i))

    def requests_of(self, worker: int, workers: int) -> int:
        """Requests of one worker's share that reach the target (admin steps aside)."""
        return sum(
            1 for i in self.indexes(worker, workers) if self.slot(i).stage.endpoint != "admin"
        )

    def peak_rate(self) -> float:
        """The highest rate the stages ask at one time (overlapping stages add up)."""
        peak, group = 0.0, 0.0
        for stage in self.stages:
            group = group + stage.rate if stage.together else stage.rate
            peak = max(peak, group)
        return peak


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(frozen=True)
class LatenessBound:
    """How late the generator may be before its run stops counting."""

    p99: float = 0.05
    worst: float = 0.25


@dataclass(frozen=True)
class WorkerLateness:
    """One generator process's share: how late it sent, and what it never sent."""

    worker: str
    requests: int
    planned: int
    p99_lateness: float
    max_lateness: float
    reason: str = ""  # why this worker fell behind; empty when it kept up

    @property
    def dropped(self) -> int:
        return max(0, self.planned - self.requests)

    @property
    def valid(self) -> bool:
        return not self.reason

    def to_json(self) -> dict[str, object]:
        return {
            "worker": self.worker,
            "valid": self.valid,
            "requests": self.requests,
            "planned": self.planned,
            "dropped": self.dropped,
            "p99_lateness_s": round(self.p99_lateness, 6),
            "max_lateness_s": round(self.max_lateness, 6),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Validity:
    valid: bool
    p99_lateness: float
    max_lateness: float
    count: int
    reason: str = ""
    workers: tuple[WorkerLateness, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "valid": self.valid,
            "p99_lateness_s": round(self.p99_lateness, 6),
            "max_lateness_s": round(self.max_lateness, 6),
            "requests": self.count,
            "reason": self.reason,
            "workers": [w.to_json() for w in self.workers],
            "dropped": sum(w.dropped for w in self.workers),
        }


def assess_generator(lateness: Iterable[float], bound: LatenessBound) -> Validity:
    """Judge the generator from the lateness of every request it sent."""
    values = list(lateness)
    if not values:
        return Validity(False, 0.0, 0.0, 0, "no record of a sent request reached the judge")
    p99, worst = percentile(values, 0.99), max(values)
    if p99 > bound.p99:
        reason = f"generator fell behind: p99 lateness {p99:.3f} s > {bound.p99:.3f} s"
        return Validity(False, p99, worst, len(values), reason)
    if worst > bound.worst:
        reason = f"generator fell behind: a request was {worst:.3f} s late > {bound.worst:.3f} s"
        return Validity(False, p99, worst, len(values), reason)
    return Validity(True, p99, worst, len(values))


def _worker(
    name: str, lateness: Sequence[float], planned: int, bound: LatenessBound
) -> WorkerLateness:
    p99, worst = percentile(lateness, 0.99), max(lateness, default=0.0)
    reason = ""
    if p99 > bound.p99:
        reason = f"p99 lateness {p99:.3f} s > {bound.p99:.3f} s"
    elif worst > bound.worst:
        reason = f"a request was {worst:.3f} s late > {bound.worst:.3f} s"
    elif planned > len(lateness):
        reason = (
            f"{planned - len(lateness)} of its {planned} requests never sent "
            "(or their records never reached the master)"
        )
    return WorkerLateness(name, len(lateness), planned, p99, worst, reason)


def assess_workers(
    lateness: Mapping[str, Sequence[float]], planned: Mapping[str, int], bound: LatenessBound
) -> Validity:
    """Judge the whole generator and each worker's share (`planned`: requests per worker; a
    worker planned but silent dropped its whole share). Any worker behind: the run is invalid."""
    overall = assess_generator([x for values in lateness.values() for x in values], bound)
    names = sorted(set(lateness) | set(planned))
    workers = tuple(_worker(n, lateness.get(n, ()), planned.get(n, 0), bound) for n in names)
    behind = [w for w in workers if not w.valid]
    if overall.valid and behind:
        first = behind[0]
        reason = f"worker {first.worker} fell behind: {first.reason}"
        return replace(overall, valid=False, reason=reason, workers=workers)
    return replace(overall, workers=workers)
