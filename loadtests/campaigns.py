"""The load campaigns as data: stages built from the limits the target advertises.

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
from delivery_conformance.load.tenants import IDLE, NEAR, OVER, phase_name
from delivery_conformance.load.verdict import Expectations

__all__ = ["CAMPAIGNS", "ENDPOINTS", "Campaign", "Endpoint"]

PLAY3 = ("play", "play", "play")
SHED_IN_FLIGHT = 0.01  # share of the playback allowance the shedding campaign keeps in flight
# Admission: the play item sits between two prefetch items (spec: POST /playback, batch).
ADMISSION_BATCH = ("prefetch", "play", "prefetch")
ADMISSION_LIMIT = 4  # tickets; refill 4/60 per s: states of 2, 1 and 0 tickets stay put
HOLD_LIMIT = 120  # a ticket every 0.5 s (LIM-043 observe)
# The refill window is long enough that the slope's resolution, (2 units + 2 x rate x round
# trip) / window (analysis.py), stays under 60 % of the 2.5 % of the rate a fault must stand out
# by: window >= (2 + 2 x rate x rtt) / (1.5 % of the rate); 10 s at least, 60 s at most.
REFILL_WINDOW_S = (10.0, 60.0)
REFILL_RESOLUTION = 0.015


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
    "video": Endpoint(
        "GET",
        "/api/delivery/v1/videos/00000000-0000-4000-8000-000000000000",
        "limits_videos",
        "video",
    ),
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
    # Campaigns of a chosen length (mixed, soak): the default, in seconds; None: fixed plan.
    default_duration: float | None = None
    max_duration: float = 3600.0
    config_role: str = "limits"  # whose GET /config gives the limits the run is judged against

    def stages(self, exp: Expectations, duration: float | None = None) -> list[Stage]:
        if self.default_duration is None:
            return self.build(exp)
        length = self.default_duration if duration is None else duration
        if not 1.0 <= length <= self.max_duration:
            raise ValueError(
                f"campaign {self.name}: duration must be 1 to "
                f"{self.max_duration:g} s, not {length:g}"
            )
        return _TIMED[self.name](exp, length)


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
    needed = (2 + 2 * refill * exp.rtt) / (REFILL_RESOLUTION * max(refill, 1e-9))
    window = _rate(needed, *REFILL_WINDOW_S)
    offered = 2 * refill
    return [
        *_burst_stages(exp, "drain"),
        Stage("window", math.ceil(offered * window), offered, "playback", "play"),
    ]


def _shedding(exp: Expectations) -> list[Stage]:
    cap, refill = exp.limit("playback"), exp.rate("playback")
    # at most 1 % of the allowance in flight (rate x round trip): the onset stays sharp
    rate = _rate(min(cap / 2.0, SHED_IN_FLIGHT * cap / max(exp.rtt, 1e-3)), 40, 900)
    net = rate / max(rate - refill, 1e-9)
    return [
        Stage("prefetch", math.ceil(1.1 * 0.8 * cap * net) + 10, rate, "playback", "prefetch"),
        Stage("play", math.ceil(1.3 * 0.2 * cap * net) + 10, rate, "playback", "play"),
    ]


def _admission(exp: Expectations) -> list[Stage]:
    stages: list[Stage] = []
    for left in (2, 1, 0):
        stages.append(
            Stage(f"reset-{left}", 1, 0, "admin", None, extra=(("action", "reset-limits"),))
        )
        stages.append(Stage(f"consume-{left}", ADMISSION_LIMIT - left, 0, "playback", "play"))
        stages.append(Stage(f"batch-{left}", 1, 0, "playback", "prefetch", ADMISSION_BATCH))
    return stages


def _hold(exp: Expectations) -> list[Stage]:
    refill = HOLD_LIMIT / 60
    return [
        Stage("drain", HOLD_LIMIT + 5, 250.0, "playback", "play"),
        # twice the refill: each play finds its ticket a quarter second further away than the
        # one before (0.5, 0.75, 1.0 s...): a server holding longer than about 0.5 s shows it
        Stage("held", 12, 2.0 * refill, "playback", "play"),
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
        Stage(
            "simulated",
            count,
            _rate(count / 2.0, 10, 200),
            "playback",
            "play",
            simulate="not_entitled:outside_window",
        ),
        *_burst_stages(exp, "real"),
    ]


def _simulated_setup(exp: Expectations) -> list[AdminStep]:
    return _lower(exp.spec_limit("simulated"))(exp)


# Mixed and soak: (endpoint pattern, counter) for every counter (spec: Limits table).
SUSTAINED = (
    ("playback", "playback"),
    ("catalog|series", "catalog"),
    ("creatives", "creatives"),
    ("videos", "videos"),
    ("video", "video"),
    ("config", "config"),
)
CONTINUOUS = ("playback", "catalog")
MIXED_OVER = "config"  # pushed past its ceiling while the others run near theirs
MIXED_NEAR = 0.9  # share of its allowance each other counter is offered during the run
MIXED_OVER_SHARE = 1.15


def _mixed(exp: Expectations, duration: float) -> list[Stage]:
    """All counters at once for `duration` s (inside one UTC minute): each continuous counter
    offered 90 % of its capacity plus the refill over the run, each clock-minute counter 90 % of
    its limit, and config 115 % of its limit (so it sits at its ceiling for the last part)."""
    stages = []
    for k, (pattern, counter) in enumerate(SUSTAINED):
        limit = exp.limit(counter) if counter in exp.advertised else exp.spec_limit(counter)
        if counter == MIXED_OVER:
            count = MIXED_OVER_SHARE * limit
        elif counter in CONTINUOUS:
            count = MIXED_NEAR * limit + exp.rate(counter) * duration
        else:
            count = MIXED_NEAR * limit
        n = max(2, math.floor(count))
        stages.append(
            Stage(
                "mixed",
                n,
                n / duration,
                pattern,
                "play" if counter == "playback" else None,
                together=k > 0,
            )
        )
    return stages


def _soak(exp: Expectations, duration: float) -> list[Stage]:
    """Every counter at 80 % of its limit per 60 s for `duration` seconds."""
    stages = []
    for k, (pattern, counter) in enumerate(SUSTAINED):
        limit = exp.limit(counter) if counter in exp.advertised else exp.spec_limit(counter)
        rate = SOAK_SHARE * limit / 60.0
        n = max(2, math.floor(rate * duration))
        stages.append(
            Stage(
                "soak",
                n,
                n / duration,
                pattern,
                "play" if counter == "playback" else None,
                together=k > 0,
            )
        )
    return stages


SOAK_SHARE = 0.8

# Tenants: every organisation of the profile's [tenants] on its playback and catalog counters at
# once, alternately past its allowance over the run (TENANT_OVER) and near it (TENANT_NEAR), and
# the idle organisation at TENANT_IDLE_RATE per counter (spec: Limits, per organisation).
TENANT_OVER = 1.5
TENANT_NEAR = 0.9
TENANT_IDLE_RATE = 1.0
IDLE_ROLE = "tenant:idle"


def tenant_role(index: int) -> str:
    """The profile role of the index-th (0-based) key of [tenants] (loadtests/target.py)."""
    return f"tenant:{index + 1}"


def tenant_label(index: int) -> str:
    """The organisation's name in records and verdicts; the sandbox's role of the same name."""
    return f"tenant_{index + 1:02d}"


def _tenants(exp: Expectations, duration: float) -> list[Stage]:
    """Each organisation's playback plays (batches of 3) and catalog + series requests, offered
    its share of its allowance over the run (capacity + refill x duration), all together."""
    if exp.tenants < 1:
        raise ValueError("campaign tenants: the profile lists no [tenants] keys")
    stages = []
    for index in range(exp.tenants):
        share = OVER if index % 2 == 0 else NEAR
        factor = TENANT_OVER if share == OVER else TENANT_NEAR
        for counter, pattern, batch in (
            ("playback", "playback", PLAY3),
            ("catalog", "catalog|series", ()),
        ):
            allowance = exp.limit(counter) + exp.rate(counter) * duration
            n = max(2, math.floor(factor * allowance / max(1, len(batch))))
            stages.append(
                Stage(
                    phase_name(tenant_label(index), share),
                    n,
                    n / duration,
                    pattern,
                    "play" if counter == "playback" else None,
                    batch,
                    extra=(("role", tenant_role(index)),),
                    together=bool(stages),
                )
            )
    idle = max(2, math.floor(TENANT_IDLE_RATE * duration))
    for pattern in ("playback", "catalog|series"):
        stages.append(
            Stage(
                phase_name(IDLE, IDLE),
                idle,
                idle / duration,
                pattern,
                "play" if pattern == "playback" else None,
                extra=(("role", IDLE_ROLE),),
                together=True,
            )
        )
    return stages


def _tenants_setup(exp: Expectations) -> list[AdminStep]:
    """Every tenant's counters full (the sandbox's roles tenant_01.. and tenant_idle)."""
    roles = [tenant_label(index) for index in range(exp.tenants)] + ["tenant_idle"]
    return [(role, "reset-limits", {}) for role in roles]


_TIMED: dict[str, Callable[[Expectations, float], list[Stage]]] = {
    "mixed": _mixed,
    "soak": _soak,
    "tenants": _tenants,
}


def _reset(roles: tuple[str, ...]) -> Callable[[Expectations], list[AdminStep]]:
    return lambda exp: [(role, "reset-limits", {}) for role in roles]


def _lower(limit: int) -> Callable[[Expectations], list[AdminStep]]:
    return lambda exp: [
        ("limits", "limits", {"counter": "playback", "limit": limit}),
        ("limits", "reset-limits", {}),
    ]


CAMPAIGNS: dict[str, Campaign] = {
    c.name: c
    for c in (
        Campaign(
            "burst",
            "from idle, the whole playback allowance and the first 429",
            ("playback",),
            _burst_stages,
            _reset(("limits",)),
        ),
        Campaign(
            "refill",
            "drain, then twice the refill rate: the slope is the refill",
            ("playback",),
            _refill,
            _reset(("limits",)),
        ),
        Campaign(
            "shedding",
            "prefetch until shed near 20 % left, then play until empty",
            ("playback",),
            _shedding,
            _reset(("limits",)),
        ),
        Campaign(
            "admission",
            "batches with 2, 1 and 0 tickets left: play first",
            ("playback",),
            _admission,
            _lower(ADMISSION_LIMIT),
            needs_admin=True,
            single_worker=True,
        ),
        Campaign(
            "hold",
            "plays on an empty bucket are held and issued",
            ("playback",),
            _hold,
            _lower(HOLD_LIMIT),
            needs_admin=True,
            single_worker=True,
        ),
        Campaign(
            "catalog",
            "catalog + series share one bucket: capacity and refill",
            ("catalog",),
            _catalog,
            _reset(("limits",)),
        ),
        Campaign(
            "minute",
            "clock-minute counters: count, Retry-After, reset at the minute",
            ("config", "creatives", "videos"),
            _minute,
            _reset(("limits", "limits_videos")),
            boundary_at=_after_fill,
        ),
        Campaign(
            "simulated",
            "300 simulated answers a minute, apart from real tickets",
            ("playback",),
            _simulated,
            _simulated_setup,
            boundary_at=lambda plan: -0.5,
        ),
        Campaign(
            "mixed",
            "every counter near its ceiling at once, config past it",
            ("playback", "catalog", "creatives", "videos", "config"),
            lambda exp: [],
            _reset(("limits", "limits_videos")),
            boundary_at=lambda plan: -0.5,
            default_duration=40.0,
            max_duration=50.0,
        ),
        Campaign(
            "soak",
            "every counter at 80 % of its limit for a long run",
            ("playback", "catalog", "creatives", "videos", "config"),
            lambda exp: [],
            _reset(("limits", "limits_videos")),
            default_duration=600.0,
        ),
        Campaign(
            "tenants",
            "many organisations at their playback and catalog ceilings at once, one idle",
            ("playback", "catalog"),
            lambda exp: [],
            _tenants_setup,
            default_duration=40.0,
            max_duration=600.0,
            config_role="tenant:1",
        ),
    )
}
