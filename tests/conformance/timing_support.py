"""The target's round trip as the timing scenarios see it, and the margins derived from it.

A server in another data centre answers tens of milliseconds later than the embedded sandbox,
and a refilling counter keeps refilling while the answers travel. So every scenario that
depends on time (hold, drain, refill, clock minute, simulated-answers limit, freshness, ticket
lifetime) first measures the round trip with `round_trip` and derives its margins from it,
instead of assuming a loopback target.

    rt = round_trip(client, "limits")        # median and worst of a few GET /config
    rt.median, rt.worst, rt.at_once          # seconds; at_once: an answer that was not held

`GET /config` is the probe because it is the cheapest call every key may make (spec: GET
/config; Authentication, scopes): 3 calls of a clock-minute counter of 600 (Limits table).
Measure before lowering a limit: `lower()` starts the counter full again.

Freshness (spec: Limits > Freshness (upper bounds); "each server has its own cache, so calls
seconds apart can differ"): a scenario that reads data after a change, or compares what two
endpoints (or two reads) say, polls until the answers agree and concludes against the target
only with a read sent once the change's bound has passed. A target that is fresh at once costs
one read; no scenario sleeps a fixed time. The polls wait through `WAITS` (suite/waits.py): real
sleeps, or with `--advance-clock` moves of the sandbox's clock.

    seen = settle(read, agree, EPISODE.catalog)   # read() until agree(value), up to 30 s
    seen.value, seen.settled, seen.seconds

`poll_each` times several sends from one start (the freshness scenarios measure how long each
change took to show).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from delivery_conformance.suite.waits import WAITS
from delivery_conformance.target.client import DeliveryClient

__all__ = [
    "CATALOG_AGE",
    "CREATED",
    "EPISODE",
    "KEY",
    "LICENCE",
    "ORGANISATION",
    "SAMPLES",
    "SETTLE_EVERY",
    "STEADY_READS",
    "Bound",
    "RoundTrip",
    "Settled",
    "poll",
    "poll_each",
    "round_trip",
    "settle",
    "settle_steady",
    "timed",
]

SAMPLES = 3
NOT_HELD_SLACK = 0.3  # a busy 2-core machine; still well under the 0.5 s hold of the spec
SETTLE_EVERY = 0.5  # seconds between two reads of a settling poll: cheap on every counter
POLL_EVERY = 0.25  # seconds between two sends of a timed freshness poll
# Reads in a row that must show a state before a scenario counts on every server showing it: a
# target behind a load balancer may answer from servers whose caches differ (Limits > Freshness).
STEADY_READS = 3

T = TypeVar("T")


@dataclass(frozen=True)
class Bound:
    """Seconds until a change shows (spec: Limits > Freshness (upper bounds)): in the catalog,
    and in ticket requests. The series and playlist endpoints serve the catalog's metadata and
    are held to its column (docs/reading-of-the-spec.md (FRESH (metadata endpoints)))."""

    catalog: float
    tickets: float


# One row of the Freshness table each.
EPISODE = Bound(30.0, 60.0)  # a film or episode published or withdrawn, stream_ready changed
LICENCE = Bound(30.0, 30.0)  # a licence granted, suspended, switched off or past its window
ORGANISATION = Bound(30.0, 30.0)  # suspended: about 1 s, always within 30 s
KEY = Bound(30.0, 30.0)  # revoked or rotated: about 1 s, always within 30 s
CREATED = Bound(5.0, 5.0)  # something just created (key, episode, licence)
# GET /catalog: "up to 30 seconds old"; the widest catalog column above: what two reads of the
# metadata endpoints may disagree by when the suite does not know what changed last.
CATALOG_AGE = 30.0


@dataclass(frozen=True)
class RoundTrip:
    """Seconds one request/answer takes with no work at the target to speak of."""

    median: float
    worst: float

    @property
    def at_once(self) -> float:
        """The longest an answer may take and still count as "at once" (never held)."""
        return self.worst + NOT_HELD_SLACK

    def fits(self, requests: int, within: float) -> bool:
        """Whether `requests` sequential calls (at twice the median each) end `within` s."""
        return requests * 2 * self.median <= within


def round_trip(client: DeliveryClient, role: str, samples: int = SAMPLES) -> RoundTrip:
    """Median and worst elapsed of `samples` GET /config with `role`'s key.

    Paced like any call: the elapsed time of an exchange never includes a pacing wait.
    """
    times = [client.get("config", role=role).exchange.elapsed for _ in range(samples)]
    return RoundTrip(statistics.median(times), max(times))


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """Run `action`; answer the monotonic times just before and just after it."""
    before = time.monotonic()
    action()
    return before, time.monotonic()


@dataclass(frozen=True)
class Settled(Generic[T]):
    """The last value a settling poll read, whether it agreed, and when it was read (seconds
    after the poll started)."""

    value: T
    settled: bool
    seconds: float


def settle(
    read: Callable[[], T], agree: Callable[[T], bool], bound: float, *, every: float = SETTLE_EVERY
) -> Settled[T]:
    """`read()` until `agree(value)`, every `every` s; a value that never agrees is returned
    only once a read sent `bound` s or more after the start disagreed too, so a failure is
    concluded after the spec's bound and never before. Bounded in time: the last read starts at
    `bound`, or as soon as the read before it ended when that one ended later."""
    start = WAITS.monotonic()
    while True:
        sent = WAITS.monotonic() - start
        value = read()
        if agree(value):
            return Settled(value, True, sent)
        if sent >= bound:
            return Settled(value, False, sent)
        WAITS.sleep(max(0.0, min(every, bound - (WAITS.monotonic() - start))))


def settle_steady(
    read: Callable[[], T],
    agree: Callable[[T], bool],
    bound: float,
    *,
    reads: int = STEADY_READS,
    every: float = SETTLE_EVERY,
) -> Settled[T]:
    """`settle`, but `agree` must hold for `reads` reads in a row (sent back to back; the wait
    comes only after a read that disagrees): what a scenario leaves behind for the next ones."""
    start = WAITS.monotonic()
    streak = 0
    while True:
        sent = WAITS.monotonic() - start
        value = read()
        streak = streak + 1 if agree(value) else 0
        if streak >= reads:
            return Settled(value, True, sent)
        if sent >= bound:
            return Settled(value, False, sent)
        if not streak:
            WAITS.sleep(max(0.0, min(every, bound - (WAITS.monotonic() - start))))


def poll_each(
    sends: dict[str, Callable[[], T]],
    done: Callable[[T], bool],
    bound: float,
    every: float = POLL_EVERY,
) -> dict[str, tuple[T, float, bool]]:
    """Call each of `sends` every `every` s until it is `done`, all timed from one start, the
    last call at `bound` at the latest; return name -> (last response, seconds, seen)."""
    start = WAITS.monotonic()
    last = {name: send() for name, send in sends.items()}
    took: dict[str, float] = {}
    for _ in range(int(bound / every) + 1):
        elapsed = WAITS.monotonic() - start
        took |= {name: elapsed for name, r in last.items() if name not in took and done(r)}
        if len(took) == len(sends) or elapsed >= bound:
            break
        WAITS.sleep(min(every, bound - elapsed))
        last |= {name: send() for name, send in sends.items() if name not in took}
    elapsed = WAITS.monotonic() - start
    return {n: (r, took.get(n, elapsed), n in took or done(r)) for n, r in last.items()}


def poll(send: Callable[[], T], done: Callable[[T], bool], bound: float) -> tuple[T, float, bool]:
    """Call `send` every POLL_EVERY s until `done`; return (last response, seconds, seen)."""
    return poll_each({"": send}, done, bound)[""]
