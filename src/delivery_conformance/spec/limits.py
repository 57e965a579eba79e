"""The spec's rate-limit table, defined once for the harness (spec: Limits, the counter table;
"Behaviour at the ceiling" point 4 for simulated responses).

Pacing (`target/pacing.py`) reads the limits, the load verdicts (`load/verdict.py`) the limits,
the refill kind and whether `/config` lists the counter among its doors.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SPEC_LIMITS", "Counter"]


@dataclass(frozen=True)
class Counter:
    """One row of the spec's limits table (spec: Limits)."""

    name: str
    limit: int
    continuous: bool
    advertised: bool  # listed in /config rate_limits.doors


SPEC_LIMITS: dict[str, Counter] = {
    c.name: c
    for c in (
        Counter("playback", 10_800, True, True),
        Counter("catalog", 3_000, True, True),
        Counter("creatives", 3_000, False, True),
        Counter("videos", 3_000, False, True),
        Counter("video", 10_800, False, False),
        Counter("config", 600, False, True),
        Counter("simulated", 300, False, False),
    )
}
