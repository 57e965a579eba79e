"""The eight load campaigns as data: stages built from the limits the target advertises.

spec: Limits (all of it), POST /playback (batch form, intents), GET /config (rate_limits.doors).
Every campaign is bounded: a fixed number of requests on a fixed clock, so it stops by itself.
Numbers scale with /config, so the same campaign runs at the real limits and against a sandbox
started with `--limits-scale 0.05`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from delivery_conformance.load.schedule import LatenessBound, Plan, Stage
from delivery_conformance.load.verdict import Expectations

__all__ = ["CAMPAIGNS", "ENDPOINTS", "Campaign", "Endpoint"]

PLAY3 = ("play", "play", "play")
# Admission: the play item sits between two prefetch items (spec: POST /playback, batch).
ADMISSION_BATCH = ("prefetch", "play", "prefetch")
ADMISSION_LIMIT = 4  # tickets; refill 4/60 per s: states of 2, 1 and 0 tickets stay put
HOLD_LIMIT = 120  # a ticket every 0.5 s (LIM-043 observe)


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    role: str
    counter: str


ENDPOINTS: dict[str, Endpoint] = {
    "playback": Endpoint("POST", "/api/delivery/v1/playback", "limits", "playback"),
    "catalog": Endpoint("GET", "/api/delivery/v1/catalog?limit=1", "limits", "catalog"),
    "series": Endpoint("GET", "/api/delivery/v1/series?limit=1", "limits", "catalog"),
    "config": Endpoint("GET", "/api/delivery/v1/config", "limits", "config"),
    "creatives": Endpoint("GET", "/api/delivery/v1/creatives?limit=1", "limits", "creatives"),
    "videos": Endpoint("GET", "/api/delivery/v1/videos?limit=1", "limits_videos", "videos"),
    # Any UUID: a 404 still counts (only a valid key is needed to be counted).
    "video": Endpoint("GET", "/api/delivery/v1/videos/00000000-0000-4000-8000-000000000000",
                      "limits_videos", "video"),
}

AdminStep = tuple[str, str, dict[str, Any]]  # (role, action, body)


@dataclass(frozen=True)
class Campaign:
    name: str
    summary: str
    counters: tuple[str, ...]  # /config doors this campaign relies on
    build: Callable[[Expectations], list[Stage]]
    setup: Callable[[Expectations], list[AdminStep]] = lambda exp: []
    needs_admin: bool = False
    # Where the target's UTC minute boundary must fall, in seconds after the plan start
    # (None: anywhere). The generator moves the sandbox clock, or waits for the real minute.
    boundary_at: Callable[[Plan], float] | None = None
    single_worker: bool = False  # closed stages: one generator process
    lateness: LatenessBound = field(default_factory=LatenessBound)

    def stages(self, exp: Expectations) -> list[Stage]:
        return self.build(exp)


def _rate(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def _burst_stages(exp: Expectations, name: str = "burst") -> list[Stage]:
    cap, refill = exp.limit("playback"), exp.rate("playback")
    rate = _rate(cap / 3 / 1.5, 30, 800)  # batches per second: about 1.5 s at small scales
    duration = cap / 3 / rate
    count = math.ceil((cap * 1.1 + refill * duration) / 3) + 10
    return [Stage(name, count, rate, "playback", "play", PLAY3)]


def _refill(exp: Expectations) -> list[Stage]:
    refill = exp.rate("playback")
    window = 4.0
    offered = 2 * refill
    return [*_burst_stages(exp, "drain"),
            Stage("window", math.ceil(offered * window), offered, "playback", "play")]


def _shedding(exp: Expectations) -> list[Stage]:
    cap, refill = exp.limit("playback"), exp.rate("playback")
    rate = _rate(cap / 2.0, 40, 900)
    net = rate / max(rate - refill, 1e-9)
    return [
        Stage("prefetch", math.ceil(1.1 * 0.8 * cap * net) + 10, rate, "playback", "prefetch"),
        Stage("play", math.ceil(1.3 * 0.2 * cap * net) + 10, rate, "playback", "play"),
    ]


def _admission(exp: Expectations) -> list[Stage]:
    stages: list[Stage] = []
    for left in (2, 1, 0):
        stages.append(Stage(f"reset-{left}", 1, 0, "admin", None,
                            extra=(("action", "reset-limits"),)))
        stages.append(Stage(f"consume-{left}", ADMISSION_LIMIT - left, 0, "playback", "play"))
        stages.append(Stage(f"batch-{left}", 1, 0, "playback", "prefetch", ADMISSION_BATCH))
    return stages


def _hold(exp: Expectations) -> list[Stage]:
    refill = HOLD_LIMIT / 60
    return [
        Stage("drain", HOLD_LIMIT + 5, 250.0, "playback", "play"),
        # a little faster than the refill: each play finds its ticket up to 0.5 s away
        Stage("held", 8, 1.2 * refill, "playback", "play"),
        Stage("prefetch", 3, 1.2 * refill, "playback", "prefetch"),
    ]


def _catalog(exp: Expectations) -> list[Stage]:
    cap, refill = exp.limit("catalog"), exp.rate("catalog")
    rate = _rate(cap / 1.5, 20, 700)
    duration = cap / rate
    window = 6.0
    return [
        Stage("burst", math.ceil(cap * 1.15 + refill * duration) + 5, rate, "catalog|series"),
        Stage("window", math.ceil(3 * refill * window), 3 * refill, "catalog|series"),
    ]


MINUTE_FILL = ("config", "creatives", "videos", "video")


def _minute(exp: Expectations) -> list[Stage]:
    stages = []
    for counter in MINUTE_FILL:
        limit = exp.limit(counter)
        count = math.ceil(limit * 1.1) + 3
        stages.append(Stage("fill", count, _rate(count / 1.0, 20, 1000), counter, None))
    stages.append(Stage("after", 8, 16.0, "|".join(MINUTE_FILL), None, pause=1.5))
    return stages


def _after_fill(plan: Plan) -> float:
    """The minute turns 1 s after the last fill request is due."""
    fill = [s for s in plan.stages if s.name == "fill"]
    return sum(s.duration + s.pause for s in fill) + 1.0


def _simulated(exp: Expectations) -> list[Stage]:
    """Simulations first, then the whole real allowance: a simulation that spent the real
    counter shows as missing real tickets (SIM-004). With an admin API the playback limit is
    lowered to the simulated limit for the run, so the loss cannot hide in the refill."""
    limit = exp.spec_limit("simulated")
    count = math.ceil(limit * 1.2) + 5
    return [
        Stage("simulated", count, _rate(count / 0.3, 10, 400), "playback", "play",
              simulate="not_entitled:outside_window"),
        *_burst_stages(exp, "real"),
    ]


def _simulated_setup(exp: Expectations) -> list[AdminStep]:
    return _lower(exp.spec_limit("simulated"))(exp)


def _reset(roles: tuple[str, ...]) -> Callable[[Expectations], list[AdminStep]]:
    return lambda exp: [(role, "reset-limits", {}) for role in roles]


def _lower(limit: int) -> Callable[[Expectations], list[AdminStep]]:
    return lambda exp: [("limits", "limits", {"counter": "playback", "limit": limit}),
                        ("limits", "reset-limits", {})]


CAMPAIGNS: dict[str, Campaign] = {
    c.name: c
    for c in (
        Campaign("burst", "from idle, the whole playback allowance and the first 429",
                 ("playback",), _burst_stages, _reset(("limits",))),
        Campaign("refill", "drain, then twice the refill rate: the slope is the refill",
                 ("playback",), _refill, _reset(("limits",))),
        Campaign("shedding", "prefetch until shed near 20 % left, then play until empty",
                 ("playback",), _shedding, _reset(("limits",))),
        Campaign("admission", "batches with 2, 1 and 0 tickets left: play first",
                 ("playback",), _admission, _lower(ADMISSION_LIMIT), needs_admin=True,
                 single_worker=True),
        Campaign("hold", "plays on an empty bucket are held and issued",
                 ("playback",), _hold, _lower(HOLD_LIMIT), needs_admin=True,
                 single_worker=True),
        Campaign("catalog", "catalog + series share one bucket: capacity and refill",
                 ("catalog",), _catalog, _reset(("limits",))),
        Campaign("minute", "clock-minute counters: count, Retry-After, reset at the minute",
                 ("config", "creatives", "videos"), _minute,
                 _reset(("limits", "limits_videos")), boundary_at=_after_fill),
        Campaign("simulated", "300 simulated answers a minute, apart from real tickets",
                 ("playback",), _simulated, _simulated_setup,
                 boundary_at=lambda plan: -0.5),
    )
}
