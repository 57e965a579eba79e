"""The retry policy as data and pure functions (spec: Errors > Retry policy (client side)).

`classify` reads the table; `plan_retry` turns one answer into the next step, given an immutable
`RetryState` (like urllib3's `Retry`: each retry returns a new state with its history). Clock and
randomness come in as arguments; nothing here sleeps or sends.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace

__all__ = [
    "BACKGROUND",
    "INTERACTIVE",
    "MIN_ATTEMPT_TIMEOUT",
    "PROFILES",
    "RETRYABLE_503_CODES",
    "RETRY_AFTER_JITTER",
    "Answer",
    "Decision",
    "RetryProfile",
    "RetryState",
    "RetryStep",
    "backoff_bound",
    "classify",
    "plan_retry",
    "wait_for",
]

Uniform = Callable[[float, float], float]


class Decision(enum.Enum):
    DONE = "done"  # a success or a redirect: hand it back
    NO_RETRY = "no_retry"  # 4xx: never sent again
    NOT_NOW = "not_now"  # 503 not_ready: try at the next play or sync
    BACKOFF = "backoff"  # network error, 500, 502, unknown 5xx
    AFTER = "after"  # 429, retryable 503: Retry-After when sent, else backoff


@dataclass(frozen=True)
class RetryProfile:
    """Spec figures; the attempt timeout is never used below `MIN_ATTEMPT_TIMEOUT`."""

    name: str
    base: float
    cap: float
    attempt_timeout: float
    max_retries: int
    total: float


INTERACTIVE = RetryProfile("interactive", 0.5, 8.0, 8.0, 3, 15.0)
BACKGROUND = RetryProfile("background", 1.0, 30.0, 15.0, 5, 120.0)
PROFILES = {profile.name: profile for profile in (INTERACTIVE, BACKGROUND)}
MIN_ATTEMPT_TIMEOUT = 5.0  # "never below 5 s"
RETRY_AFTER_JITTER = 1.0  # Retry-After plus a random 0 to this many seconds

# 503 codes the Retry policy names as retryable (flat and creatives envelope).
RETRYABLE_503_CODES = frozenset({"service_unavailable", "5030", "5031", "5032"})


@dataclass(frozen=True)
class Answer:
    """What one attempt gave: an HTTP status and code, or `status` None for a transport error."""

    status: int | None
    code: str | None = None
    retry_after: float | None = None
    error: str | None = None  # "timeout", "network" when status is None


def classify(answer: Answer) -> Decision:
    """One row of the Retry policy table per branch; unknown codes go by status class."""
    status, code = answer.status, answer.code
    if status is None:
        return Decision.BACKOFF
    if status < 400:
        return Decision.DONE
    if status == 429:
        return Decision.AFTER
    if status == 503 and code == "not_ready":
        return Decision.NOT_NOW
    if status == 503 and code in RETRYABLE_503_CODES:
        return Decision.AFTER
    if status >= 500:
        return Decision.AFTER if status == 503 else Decision.BACKOFF
    return Decision.NO_RETRY


def backoff_bound(attempt: int, profile: RetryProfile) -> float:
    """min(cap, base x 2^attempt); `attempt` counts the retries already made (0 for the first)."""
    return min(profile.cap, profile.base * 2.0 ** min(attempt, 60))


def wait_for(
    decision: Decision,
    attempt: int,
    retry_after: float | None,
    profile: RetryProfile,
    uniform: Uniform,
) -> float:
    """Retry-After plus uniform 0 to 1 s when it was sent (429, retryable 503); else uniform 0
    to the backoff bound."""
    if decision is Decision.AFTER and retry_after is not None:
        return retry_after + uniform(0.0, RETRY_AFTER_JITTER)
    return uniform(0.0, backoff_bound(attempt, profile))


@dataclass(frozen=True)
class RetryState:
    profile: RetryProfile
    started_at: float
    attempt: int = 0
    history: tuple[tuple[Answer, float], ...] = field(default=())

    def attempt_timeout(self, now: float) -> float:
        """The profile's timeout, cut to the time left but never below the floor."""
        left = self.started_at + self.profile.total - now
        floor = MIN_ATTEMPT_TIMEOUT
        return max(floor, min(max(self.profile.attempt_timeout, floor), left))


@dataclass(frozen=True)
class RetryStep:
    decision: Decision
    retry: bool
    wait: float
    state: RetryState
    why: str  # one line: why no retry ("4xx", "retries", "time", ...); "" when retrying


def plan_retry(
    state: RetryState,
    answer: Answer,
    now: float,
    uniform: Uniform,
) -> RetryStep:
    """The next step after `answer` at `now`. A retry is planned only when it is retryable, the
    retry count allows it, and its wait ends with at least the attempt-timeout floor left in the
    profile's total (so waits and attempts together stay inside the total)."""
    decision = classify(answer)
    if decision in (Decision.DONE, Decision.NO_RETRY, Decision.NOT_NOW):
        return RetryStep(decision, False, 0.0, state, decision.value)
    if state.attempt >= state.profile.max_retries:
        return RetryStep(decision, False, 0.0, state, "retries")
    wait = wait_for(decision, state.attempt, answer.retry_after, state.profile, uniform)
    deadline = state.started_at + state.profile.total
    if now + wait + min(MIN_ATTEMPT_TIMEOUT, state.profile.attempt_timeout) > deadline:
        return RetryStep(decision, False, wait, state, "time")
    following = replace(state, attempt=state.attempt + 1, history=(*state.history, (answer, wait)))
    return RetryStep(decision, True, wait, following, "")
