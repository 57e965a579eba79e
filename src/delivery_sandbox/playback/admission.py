"""Playback admission at the ceiling, pure.

spec: Limits > Behaviour at the ceiling; POST /playback (batch rules).

The playback counter is a token bucket of tickets. Before the body is read the whole request is
refused when not even one ticket is there (`gate_request`), unless it is a play request whose
ticket comes within the hold window (`holdable`). Then the items
that passed their own checks are admitted one by one, play-class first and prefetch last
(`admission_order`), each through `decide_ticket`, which answers one of three things:

- issue: one token was taken;
- hold for X seconds: a play-class item with room coming within what is left of the hold budget
  (the handler sleeps X, then asks again);
- refuse: 429 for this item, with `retry_after` seconds and, for a prefetch paused because under
  `shed_fraction` of the allowance is left, reason `prefetch_shed`.

Nothing here reads a clock: `now` and the bucket are passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

__all__ = [
    "PREFETCH_SHED",
    "AdmissionPolicy",
    "Bucket",
    "Decision",
    "IntentClass",
    "admission_order",
    "classify_intent",
    "decide_ticket",
    "gate_request",
    "holdable",
    "recorded_intent",
]

PREFETCH_SHED = "prefetch_shed"


class IntentClass(Enum):
    """Class used for admission and reuse; `unknown` counts as play (spec: POST /playback)."""

    PLAY = "play"
    PREFETCH = "prefetch"


def recorded_intent(value: object) -> str:
    """What the server records: `play`, `prefetch`, or `unknown` for anything else."""
    if value == "play" or value == "prefetch":
        return str(value)
    return "unknown"


def classify_intent(value: object) -> IntentClass:
    return IntentClass.PREFETCH if value == "prefetch" else IntentClass.PLAY


class Bucket(Protocol):
    capacity: float

    def level(self, now: float) -> float: ...
    def take(self, n: float, now: float) -> bool: ...
    def time_until(self, n: float, now: float) -> float: ...


@dataclass(frozen=True)
class AdmissionPolicy:
    """The knobs of the policy; the defaults are our reading of the spec, faults change them."""

    shed_fraction: float = 0.2  # "under about 20 % of the allowance left"
    max_hold_s: float = 0.5  # "held up to about 0.5 seconds"
    hold_play: bool = True
    shed_prefetch: bool = True
    play_first: bool = True
    hold_prefetch: bool = False  # prefetches are never held


@dataclass(frozen=True)
class Decision:
    issued: bool = False
    hold: float = 0.0  # > 0: sleep this long, then ask again
    retry_after: float | None = None  # set when refused: seconds until it may succeed
    reason: str | None = None  # `prefetch_shed` for a shed prefetch

    @property
    def refused(self) -> bool:
        return self.retry_after is not None


ISSUE = Decision(issued=True)


def gate_request(bucket: Bucket, now: float, policy: AdmissionPolicy) -> float | None:
    """Before the body: None when a ticket is there, else seconds until one is.

    When the wait fits in the hold window (`holdable`) the handler looks at the body only to learn
    whether it holds a play-class item to hold; a malformed or prefetch-only body is then refused
    whole with this wait, like any request when the wait is longer.
    """
    wait = bucket.time_until(1, now)
    return None if wait <= 0 else wait


def holdable(wait: float, policy: AdmissionPolicy) -> bool:
    return policy.hold_play and wait <= policy.max_hold_s


def admission_order(classes: Sequence[IntentClass], policy: AdmissionPolicy) -> list[int]:
    """Indexes in admission order: play-class items first, prefetch last, stable otherwise.

    Requirements: LIM-039, PLAY-046.
    """
    first = IntentClass.PLAY if policy.play_first else IntentClass.PREFETCH
    return [i for i, c in enumerate(classes) if c is first] + [
        i for i, c in enumerate(classes) if c is not first
    ]


def decide_ticket(
    bucket: Bucket, intent: IntentClass, now: float, hold_left: float, policy: AdmissionPolicy
) -> Decision:
    """Admit one ticket of the given class (spec: Behaviour at the ceiling 2 and 3).

    Requirements: LIM-035, LIM-036, LIM-037, LIM-044.
    """
    if intent is IntentClass.PREFETCH and policy.shed_prefetch:
        threshold = policy.shed_fraction * bucket.capacity
        if bucket.level(now) < threshold:
            return Decision(retry_after=bucket.time_until(threshold + 1, now), reason=PREFETCH_SHED)
    if bucket.take(1, now):
        return ISSUE
    wait = bucket.time_until(1, now)
    may_hold = policy.hold_play if intent is IntentClass.PLAY else policy.hold_prefetch
    if may_hold and wait <= hold_left:
        return Decision(hold=wait)
    return Decision(retry_after=wait)
