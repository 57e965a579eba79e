"""Before a run: is the target there, how far away is it, how long will this take?

    rtt = probe(profile)                       # median round trip of a few GET /config, seconds
    expectation(rtt, max_duration) -> str       # one line for the terminal
    chosen_workers(rtt, asked, profile_says)    # (N, why) for `run --workers`

A target that refuses, hangs or answers garbage ends here with a one-line `HarnessError`
(exit 3). The expected duration is a floor: the measured round trip times the requests of a
full run (measured against the embedded sandbox: `benchmarks/conformance_run.py`), before any
pacing wait, divided among the workers; when it passes `--max-duration` the line says the run
will stop there.

Workers: a nearby target (round trip under 10 ms) gets one, since a worker there is bound by the
processor, not the network. Farther, one worker per 20 ms of round trip, at most 8, and never
more than the pacing budget can keep busy (workers beyond budget/s × round trip only wait).
"""

from __future__ import annotations

import math
import statistics

from delivery_conformance.exceptions import TargetGarbage
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.pacing import DEFAULT_LIMITS, WINDOW_SECONDS
from delivery_conformance.target.profile import TargetProfile

__all__ = ["FULL_RUN_REQUESTS", "PROBES", "chosen_workers", "expectation", "probe"]

FULL_RUN_REQUESTS = 4000  # a full run's requests (3,992 measured, property tests included)
PROBES = 3
PROBE_TIMEOUT = 10.0
NEARBY = 0.010  # seconds of round trip under which one worker is fastest
PER_WORKER = 0.020  # seconds of round trip per default worker
MOST_WORKERS = 8  # the default's ceiling (--workers may ask for more)
# Requests per second the pacing budget allows over every counter (half of each limit).
BUDGET_PER_SECOND = sum(DEFAULT_LIMITS.values()) * 0.5 / WINDOW_SECONDS


def probe(profile: TargetProfile) -> float:
    """GET /config (with a key when there is one) must answer JSON over HTTP; return the RTT."""
    role = "films" if "films" in profile.keys else next(iter(profile.keys), None)
    elapsed: list[float] = []
    with DeliveryClient(profile, timeout=PROBE_TIMEOUT) as client:
        for _ in range(PROBES):
            response = client.request("GET", "config", role=role)
            try:
                response.json_body()
            except TargetGarbage as error:
                raise TargetGarbage(f"{error} (is base_url a Delivery API server?)") from None
            elapsed.append(response.exchange.elapsed)
    return statistics.median(elapsed)


def _span(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def chosen_workers(rtt: float, asked: int | None, profile_says: int | None) -> tuple[int, str]:
    """How many workers a run gets, and why (one phrase for the terminal)."""
    if asked is not None:
        return asked, "--workers"
    if profile_says is not None:
        return profile_says, "the profile's `workers`"
    if rtt < NEARBY:
        return 1, f"round trip {rtt * 1000:.0f} ms: a nearby target is fastest with one"
    by_distance = math.ceil(rtt / PER_WORKER)
    by_budget = max(1, math.floor(BUDGET_PER_SECOND * rtt))
    workers = max(1, min(by_distance, by_budget, MOST_WORKERS))
    return workers, (
        f"chosen from the {rtt * 1000:.0f} ms round trip: one per {PER_WORKER * 1000:.0f} ms, "
        f"at most {MOST_WORKERS}, at most {by_budget} by the pacing budget; --workers N to choose"
    )


def expectation(
    rtt: float, max_duration: float, requests: int = FULL_RUN_REQUESTS, workers: int = 1
) -> str:
    floor = rtt * requests / workers
    line = (
        f"target round trip {rtt * 1000:.0f} ms (median of {PROBES} GET /config); a full run "
        f"makes about {requests:,} requests: at least {_span(floor)} before pacing waits; "
        f"bounded by --max-duration {_span(max_duration)}"
    )
    if floor > max_duration:
        line += " (this run will stop there with a partial report: TIMED OUT)"
    return line
