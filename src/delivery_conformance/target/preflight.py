"""Before a run: is the target there, how far away is it, how long will this take?

    rtt = probe(profile)                       # median round trip of a few GET /config, seconds
    expectation(rtt, max_duration) -> str       # one line for the terminal

A target that refuses, hangs or answers garbage ends here with a one-line `HarnessError`
(exit 3). The expected duration is a floor: the measured round trip times the requests of a
full run (measured against the embedded sandbox: `benchmarks/conformance_run.py`), before any
pacing wait; when it passes `--max-duration` the line says the run will stop there.
"""

from __future__ import annotations

import statistics

from delivery_conformance.exceptions import TargetGarbage
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import TargetProfile

__all__ = ["FULL_RUN_REQUESTS", "PROBES", "expectation", "probe"]

FULL_RUN_REQUESTS = 4000  # a full run's requests (3,992 measured, property tests included)
PROBES = 3
PROBE_TIMEOUT = 10.0


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


def expectation(rtt: float, max_duration: float, requests: int = FULL_RUN_REQUESTS) -> str:
    floor = rtt * requests
    line = (
        f"target round trip {rtt * 1000:.0f} ms (median of {PROBES} GET /config); a full run "
        f"makes about {requests:,} requests: at least {_span(floor)} before pacing waits; "
        f"bounded by --max-duration {_span(max_duration)}"
    )
    if floor > max_duration:
        line += " (this run will stop there with a partial report: TIMED OUT)"
    return line
