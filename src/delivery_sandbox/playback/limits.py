"""Rate limits per organisation and counter (spec: Limits).

Pure: no I/O and no clock reads; every method takes `now` (float epoch seconds).

Two refill kinds exist. A *continuous* counter is a token bucket that holds the whole
per-minute allowance when idle and refills at allowance/60 per second (playback, catalog).
A *clock-minute* counter counts requests inside the current UTC minute, floor(now / 60),
and starts again at zero when the minute changes (creatives, videos, video, config, and the
simulated-response counter).

The playback counter is counted in tickets; the admission policy (shedding, hold, order) that
spends it lives in `admission.py` and is reached through `Limits.playback_*`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum, auto

from delivery_sandbox.playback.admission import (
    AdmissionPolicy,
    Decision,
    IntentClass,
    decide_ticket,
    gate_request,
    holdable,
)

__all__ = [
    "CONFIG_DOORS",
    "LIMITS",
    "WINDOW_SECONDS",
    "AdmissionPolicy",
    "ClockMinuteCounter",
    "CounterPolicy",
    "Decision",
    "IntentClass",
    "LimitQuirks",
    "Limits",
    "Refill",
    "Refusal",
    "TokenBucket",
]

WINDOW_SECONDS = 60


class Refill(StrEnum):
    """How a counter gets its allowance back: a token bucket or a UTC clock minute."""

    CONTINUOUS = auto()
    CLOCK_MINUTE = auto()


@dataclass(frozen=True)
class CounterPolicy:
    """One row of the limits table: allowance per 60 s, its unit and how it refills."""

    name: str
    limit: int
    unit: str
    refill: Refill


# spec: Limits (table) and "Behaviour at the ceiling" point 4 for `simulated`.
# The continuous refill rate is always limit / 60 per second (10,800 -> 180/s, 3,000 -> 50/s).
# Requirements: LIM-012, LIM-019, LIM-022, LIM-025, LIM-026, LIM-028 (the default of each row).
LIMITS: dict[str, CounterPolicy] = {
    p.name: p
    for p in (
        CounterPolicy("playback", 10_800, "tickets", Refill.CONTINUOUS),
        CounterPolicy("catalog", 3_000, "requests", Refill.CONTINUOUS),
        CounterPolicy("creatives", 3_000, "requests", Refill.CLOCK_MINUTE),
        CounterPolicy("videos", 3_000, "requests", Refill.CLOCK_MINUTE),
        CounterPolicy("video", 10_800, "requests", Refill.CLOCK_MINUTE),
        CounterPolicy("config", 600, "requests", Refill.CLOCK_MINUTE),
        CounterPolicy("simulated", 300, "requests", Refill.CLOCK_MINUTE),
    )
}

# Counters listed by GET /config under rate_limits.doors (spec: GET /config).
CONFIG_DOORS = ("catalog", "playback", "creatives", "videos", "config")


@dataclass(frozen=True)
class Refusal:
    """Why a request was not counted in: the 429's Retry-After and X-RateLimit-* values."""

    retry_after: int
    limit: int
    window: int = WINDOW_SECONDS
    reason: str | None = None


def _ceil_seconds(seconds: float) -> int:
    return max(1, math.ceil(seconds - 1e-9))


@dataclass
class TokenBucket:
    """Continuous refill; full from idle (spec: Limits, playback row).

    Requirements: LIM-006, LIM-007, LIM-013, LIM-014, LIM-020, LIM-033.
    """

    capacity: float
    rate_per_s: float
    _level: float = field(init=False)
    _at: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._level = self.capacity

    def _refill(self, now: float) -> None:
        if self._at is not None and now > self._at:
            self._level = min(self.capacity, self._level + (now - self._at) * self.rate_per_s)
        if self._at is None or now > self._at:
            self._at = now

    def level(self, now: float) -> float:
        self._refill(now)
        return self._level

    def take(self, n: float, now: float) -> bool:
        self._refill(now)
        if self._level + 1e-9 < n:
            return False
        self._level -= n
        return True

    def time_until(self, n: float, now: float) -> float:
        """Seconds until `n` tokens are available (0 when they already are)."""
        self._refill(now)
        missing = n - self._level
        if missing <= 1e-9:
            return 0.0
        if n > self.capacity + 1e-9 or self.rate_per_s <= 0:
            return math.inf
        return missing / self.rate_per_s

    def resize(self, capacity: float, rate_per_s: float, now: float | None = None) -> None:
        """New allowance: headroom grows by the raise, never above the new capacity."""
        if now is not None:
            self._refill(now)
        grown = self._level + max(0.0, capacity - self.capacity)
        self.capacity, self.rate_per_s = capacity, rate_per_s
        self._level = min(capacity, grown)

    def fill(self) -> None:
        self._level = self.capacity


@dataclass
class ClockMinuteCounter:
    """Counts inside the UTC clock minute floor(now / 60) (spec: Limits, "Clock minute (UTC)").

    With `rolling` the window instead starts at the first request and lasts 60 s; that is
    the fault `clock_minute_rolling`, never the default.

    Requirements: LIM-006, LIM-007, LIM-024, LIM-034.
    """

    limit: int
    rolling: bool = False
    _window: float | None = field(init=False, default=None)
    _count: int = field(init=False, default=0)

    def _start(self, now: float) -> float:
        if self.rolling:
            if self._window is None or now >= self._window + WINDOW_SECONDS:
                return now
            return self._window
        return math.floor(now / WINDOW_SECONDS) * WINDOW_SECONDS

    def _roll(self, now: float) -> None:
        start = self._start(now)
        if start != self._window:
            self._window, self._count = start, 0

    def take(self, now: float) -> bool:
        self._roll(now)
        if self._count >= self.limit:
            return False
        self._count += 1
        return True

    def remaining(self, now: float) -> int:
        self._roll(now)
        return max(0, self.limit - self._count)

    def retry_after(self, now: float) -> int:
        """The rest of the current window, at least 1 second."""
        self._roll(now)
        assert self._window is not None
        return _ceil_seconds(self._window + WINDOW_SECONDS - now)

    def fill(self) -> None:
        self._count = 0


@dataclass(frozen=True)
class LimitQuirks:
    """Deliberate departures used by sandbox faults; the defaults keep the spec."""

    refill_factor: float = 1.0  # continuous refill rate multiplier
    capacity_factor: float = 1.0  # bucket capacity multiplier (limit advertised unchanged)
    rolling_minute: bool = False  # clock-minute windows start at the first request
    retry_after_offset: int = 0  # added to every Retry-After
    advertised_limit_factor: float = 1.0  # X-RateLimit-Limit multiplier
    minute_limit_factor: float = 1.0  # clock-minute counters (not `simulated`) admit limit x this
    simulated_limit_factor: float = 1.0  # the simulated counter admits limit x this
    config_spends_catalog: bool = False  # GET /config also takes a unit of the catalog bucket
    shared_counters: bool = False  # one counter of each kind for every organisation
    early_refusals: int = 0  # clock-minute counters (not `simulated`) admit limit - this
    playback_burst_cap: int = 0  # the playback bucket holds at most this many tickets (0: none)
    catalog_refill_factor: float = 1.0  # the catalog bucket's refill rate multiplier
    raise_ignored: bool = False  # a raise is recorded but a live counter keeps its old limit
    default_limits: tuple[tuple[str, int], ...] = ()  # (counter, limit) replacing the table's
    continuous_retry_after: int = 0  # the least Retry-After of a continuous counter (a variant)
    counted_high: float = 1.0  # each unit counts this much (a variant: up to about 2.5 % high)
    tenants: tuple[str, ...] = ()  # the organisations of `--tenants N` (set at start, not a fault)
    tenants_pooled: bool = False  # the tenants draw on one bucket per counter (sum of limits)
    tenant_refusals_drain_others: bool = False  # a tenant's 429 spends a unit of every other's

    def _counted(self, limit: int) -> int:
        """What `limit` admits when every unit counts `counted_high`: never fewer than the
        limit less its share of the error, so a small limit is not refused a whole unit early."""
        return math.ceil(limit / self.counted_high - 1e-9)

    def minute_limit(self, counter: str, limit: int) -> int:
        """What a clock-minute counter really admits (the advertised limit stays `limit`)."""
        if self.counted_high != 1.0:
            limit = self._counted(limit)
        factor = self.simulated_limit_factor if counter == "simulated" else self.minute_limit_factor
        early = 0 if counter == "simulated" else self.early_refusals
        if factor == 1.0 and not early:
            return limit
        return max(1, math.floor(limit * factor + 1e-9) - early)

    def bucket_shape(self, counter: str, limit: int) -> tuple[float, float]:
        """(capacity, refill per second) of a continuous counter of this limit."""
        capacity = limit * self.capacity_factor
        rate = limit / WINDOW_SECONDS * self.refill_factor
        if self.counted_high != 1.0:
            capacity = self._counted(limit) * self.capacity_factor
            rate /= self.counted_high
        if counter == "playback" and self.playback_burst_cap:
            capacity = min(capacity, self.playback_burst_cap)
        return capacity, rate * (self.catalog_refill_factor if counter == "catalog" else 1.0)


Counter = TokenBucket | ClockMinuteCounter
POOL = "*tenants"  # the key of the tenants' pooled counters (fault `tenant_buckets_pooled`)


class Limits:
    """Per-organisation registry of counters, created lazily from `LIMITS`.

    `scale` multiplies every limit (and so every continuous rate) at start, for short smokes;
    `set_limit` raises or lowers one counter of one organisation (the admin API).

    Requirements: LIM-001, LIM-002, LIM-011, LIM-021, LIM-023, LIM-027.
    """

    def __init__(
        self,
        scale: float = 1.0,
        policy: AdmissionPolicy | None = None,
        quirks: LimitQuirks | None = None,
    ) -> None:
        if scale <= 0:
            raise ValueError("scale must be positive")
        self.scale = scale
        self.policy = policy or AdmissionPolicy()
        self.quirks = quirks or LimitQuirks()
        self._counters: dict[tuple[str, str], Counter] = {}
        self._overrides: dict[tuple[str, str], int] = {}

    # -- table -------------------------------------------------------------------------------

    def limit_of(self, org_id: str, counter: str) -> int:
        """The effective limit: an admin override, else the table value times `scale`."""
        override = self._overrides.get((org_id, counter))
        if override is not None:
            return override
        default = dict(self.quirks.default_limits).get(counter, LIMITS[counter].limit)
        return max(1, round(default * self.scale))

    def doors(self, org_id: str) -> dict[str, dict[str, object]]:
        """`rate_limits.doors` of GET /config: the effective limits of this organisation.

        Requirements: CFG-015, CFG-016, CFG-017, LIM-008, LIM-009, LIM-010.

        Requirements: CFG-037.
        """
        return {
            name: {"limit": self.limit_of(org_id, name), "unit": LIMITS[name].unit}
            for name in CONFIG_DOORS
        }

    def _make(self, org_id: str, counter: str) -> Counter:
        policy = LIMITS[counter]
        limit = self.limit_of(org_id, counter)
        if policy.refill is Refill.CONTINUOUS:
            if self._key(org_id, counter)[0] == POOL:
                limit *= len(self.quirks.tenants)
            return TokenBucket(*self.quirks.bucket_shape(counter, limit))
        return ClockMinuteCounter(
            self.quirks.minute_limit(counter, limit), rolling=self.quirks.rolling_minute
        )

    def _key(self, org_id: str, counter: str) -> tuple[str, str]:
        if self.quirks.shared_counters:
            return "*", counter
        pooled = self.quirks.tenants_pooled and LIMITS[counter].refill is Refill.CONTINUOUS
        if pooled and org_id in self.quirks.tenants:
            return POOL, counter
        return org_id, counter

    def _drain_other_tenants(self, org_id: str, counter: str, now: float) -> None:
        """Fault `tenant_refusals_drain_others`: a refusal of one tenant organisation spends a
        unit of the same counter of every other tenant organisation."""
        if not self.quirks.tenant_refusals_drain_others or org_id not in self.quirks.tenants:
            return
        for other in self.quirks.tenants:
            if other != org_id:
                found = self._counter(other, counter)
                if isinstance(found, TokenBucket):
                    found.take(1, now)
                else:
                    found.take(now)

    def _counter(self, org_id: str, counter: str) -> Counter:
        key = self._key(org_id, counter)
        found = self._counters.get(key)
        if found is None:
            found = self._counters[key] = self._make(org_id, counter)
        return found

    def bucket(self, org_id: str, counter: str = "playback") -> TokenBucket:
        found = self._counter(org_id, counter)
        assert isinstance(found, TokenBucket), f"{counter} is not a continuous counter"
        return found

    # -- requests ----------------------------------------------------------------------------

    def refusal(
        self, org_id: str, counter: str, seconds: float, reason: str | None = None
    ) -> Refusal:
        """The values of a 429: `Retry-After` from the counter, the organisation's limit, window 60.

        Requirements: LIM-030, LIM-031, LIM-032, LIM-033, LIM-034.
        """
        advertised = round(self.limit_of(org_id, counter) * self.quirks.advertised_limit_factor)
        wait = _ceil_seconds(seconds)
        if LIMITS[counter].refill is Refill.CONTINUOUS:
            wait = max(wait, self.quirks.continuous_retry_after)
        return Refusal(
            retry_after=wait + self.quirks.retry_after_offset,
            limit=advertised,
            reason=reason,
        )

    def take_request(self, org_id: str, counter: str, now: float) -> Refusal | None:
        """Count one request; None when admitted, else the refusal.

        spec: Limits > Behaviour at the ceiling, point 1.

        Requirements: LIM-004, LIM-005, LIM-021, LIM-023, LIM-027, LIM-045.
        """
        if counter == "config" and self.quirks.config_spends_catalog:
            self.bucket(org_id, "catalog").take(1, now)
        found = self._counter(org_id, counter)
        if isinstance(found, TokenBucket):
            if found.take(1, now):
                return None
            self._drain_other_tenants(org_id, counter, now)
            return self.refusal(org_id, counter, found.time_until(1, now))
        if found.take(now):
            return None
        self._drain_other_tenants(org_id, counter, now)
        return self.refusal(org_id, counter, found.retry_after(now))

    # -- admin -------------------------------------------------------------------------------

    def set_limit(self, org_id: str, counter: str, limit: int, now: float | None = None) -> None:
        """Raise or lower a counter; a continuous counter refills at limit/60 per second.

        Requirements: FRESH-014, LIM-003, LIM-009.
        """
        if counter not in LIMITS:
            raise KeyError(counter)
        if limit < 1:
            raise ValueError("limit must be at least 1")
        raised = limit > self.limit_of(org_id, counter)
        self._overrides[(org_id, counter)] = int(limit)
        found = self._counters.get(self._key(org_id, counter))
        if raised and self.quirks.raise_ignored:
            return
        if isinstance(found, TokenBucket):
            found.resize(*self.quirks.bucket_shape(counter, int(limit)), now)
        elif isinstance(found, ClockMinuteCounter):
            found.limit = self.quirks.minute_limit(counter, int(limit))

    def reset(self, org_id: str) -> None:
        """Refill every counter of the organisation; limits set by `set_limit` stay."""
        shared = ("*", POOL) if org_id in self.quirks.tenants else ("*",)
        for (org, _), found in self._counters.items():
            if org == org_id or org in shared:  # counters shared by a fault (faults/limits.py)
                found.fill()

    def restore(self, org_id: str) -> None:
        """The organisation's counters back to the start state: limits as at start, full."""
        for key in [k for k in self._overrides if k[0] == org_id]:
            del self._overrides[key]
        shared = ("*", POOL) if org_id in self.quirks.tenants else ("*",)
        for key in [k for k in self._counters if k[0] == org_id or k[0] in shared]:
            del self._counters[key]

    def clear(self) -> None:
        """Back to the start state: no counters, no overrides."""
        self._counters.clear()
        self._overrides.clear()

    def set_quirks(self, quirks: LimitQuirks) -> None:
        """Switch quirks (faults); existing counters are rebuilt on next use."""
        if quirks != self.quirks:
            self.quirks = quirks
            self._counters.clear()

    def set_policy(self, policy: AdmissionPolicy) -> None:
        self.policy = policy

    def snapshot(self, org_id: str, now: float) -> dict[str, dict[str, object]]:
        """Every counter of the organisation: limit, unit, refill kind and what is left."""
        out: dict[str, dict[str, object]] = {}
        for name, policy in LIMITS.items():
            found = self._counter(org_id, name)
            if isinstance(found, TokenBucket):
                remaining: float = round(found.level(now), 3)
            else:
                remaining = found.remaining(now)
            out[name] = {
                "limit": self.limit_of(org_id, name),
                "unit": policy.unit,
                "refill": policy.refill.value,
                "window": WINDOW_SECONDS,
                "remaining": remaining,
            }
        return out

    def organisations(self) -> list[str]:
        return sorted({org for org, _ in self._counters} | {org for org, _ in self._overrides})

    # -- playback (spec: Behaviour at the ceiling 2 and 3; POST /playback batch rules) ----------

    def playback_gate(self, org_id: str, now: float) -> Refusal | None:
        """Before the body: None when a ticket is there, else the whole-request refusal.

        The handler may still hold a play request when `playback_holdable(refusal)` is true.
        """
        seconds = gate_request(self.bucket(org_id), now, self.policy)
        if seconds is None:
            return None
        self._drain_other_tenants(org_id, "playback", now)
        return self.refusal(org_id, "playback", seconds)

    def playback_holdable(self, org_id: str, now: float) -> bool:
        """Whether the next ticket comes within the hold window (for a play request)."""
        return holdable(self.bucket(org_id).time_until(1, now), self.policy)

    def playback_ticket(
        self, org_id: str, intent: IntentClass, now: float, hold_left: float
    ) -> Decision:
        """Admit one ticket: issue (1 unit taken), hold for some seconds, or refuse.

        A refused decision becomes a 429 through `refusal(org_id, "playback", ...)`.

        Requirements: LIM-015, LIM-035, LIM-036, LIM-037, LIM-044.
        """
        decision = decide_ticket(self.bucket(org_id), intent, now, hold_left, self.policy)
        if decision.refused:
            self._drain_other_tenants(org_id, "playback", now)
        return decision

    def playback_charge(self, org_id: str, units: int, now: float) -> bool:
        """Charge units outside admission (a malformed body costs 1) when they are available.

        Requirements: LIM-016.
        """
        return self.bucket(org_id).take(units, now)
