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
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from delivery_conformance.target.client import DeliveryClient

__all__ = ["SAMPLES", "RoundTrip", "round_trip", "timed"]

SAMPLES = 3
NOT_HELD_SLACK = 0.3  # a busy 2-core machine; still well under the 0.5 s hold of the spec


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
