"""Simulated responses for test organisations (spec: POST /playback, header `Service-Simulate`).

`SCENARIOS` is the one table: scenario name -> the real answer it stands for and the endpoints
that accept it. A test organisation sends `Service-Simulate: <name>` on `GET /catalog`,
`GET /config` or `POST /playback` (docs/reading-of-the-spec.md: SIM (endpoints)) and gets the real
status, body and headers plus `Service-Simulated: <name>`. No ticket is issued and no limit but the
`simulated` one (300 per UTC minute per organisation) is spent; past it the answer is a real 429
without `Service-Simulated`. Production organisations, unknown names and names an endpoint does not
accept are ignored: the request runs normally.

`partial_batch` is special: it needs a batch body with two or more items, issues the first item
for real and fails the others; `playback.py` implements it and `accepts_partial_batch` tells it
when the scenario applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from delivery_sandbox.faults import catalog as simulation_faults
from delivery_sandbox.faults.catalog import DEFAULT_RULES, SimulationRules
from delivery_sandbox.faults.switch import FaultSwitch
from delivery_sandbox.http.errors import flat, rate_limited
from delivery_sandbox.http.headers import Exchange, Reply
from delivery_sandbox.playback.limits import LIMITS, Limits, Refill

__all__ = [
    "DEFAULT_RULES",
    "HEADER",
    "PARTIAL_BATCH",
    "SCENARIOS",
    "SIMULATED_HEADER",
    "Scenario",
    "SimulationRules",
    "respond",
    "scenario_for",
    "scenarios_for",
]

HEADER = "service-simulate"
SIMULATED_HEADER = b"service-simulated"
PARTIAL_BATCH = "partial_batch"

CATALOG, CONFIG, PLAYBACK = "catalog", "config", "playback"
ALL = frozenset({CATALOG, CONFIG, PLAYBACK})
ONLY_PLAYBACK = frozenset({PLAYBACK})

ENTITLEMENT_REASONS = (
    "org_suspended",
    "entitlement_not_found",
    "entitlement_suspended",
    "streaming_disabled",
    "outside_window",
)


@dataclass(frozen=True)
class Scenario:
    """One simulated answer: status, `error`, `error_code`, extra body fields and headers.

    Requirements: SIM-010, SIM-011, SIM-012.
    """

    name: str
    endpoints: frozenset[str]
    status: int
    error: str
    error_code: str | None = None
    reason: str | None = None
    retry_after: int | None = None  # header value; None for none (429 computes its own)
    extra: tuple[tuple[str, str], ...] = ()
    summary: str = ""


def _entitlement(reason: str) -> Scenario:
    return Scenario(
        f"not_entitled:{reason}",
        ONLY_PLAYBACK,
        403,
        reason,
        "not_entitled",
        reason=reason,
        summary=f"403 not_entitled, reason {reason} (spec: Errors > Playback, per ticket)",
    )


# Every error a partner's integration must handle on these endpoints.
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "rate_limited",
            ALL,
            429,
            "rate limit reached (simulated)",
            "rate_limited",
            summary="429 rate_limited with Retry-After and X-RateLimit-* of the endpoint's counter",
        ),
        Scenario(
            "prefetch_shed",
            ONLY_PLAYBACK,
            429,
            "prefetch paused near the limit (simulated)",
            "rate_limited",
            reason="prefetch_shed",
            summary="429 rate_limited, reason prefetch_shed",
        ),
        Scenario(
            "service_unavailable",
            ALL,
            503,
            "temporarily unavailable (simulated)",
            "service_unavailable",
            retry_after=2,
            summary="503 service_unavailable with Retry-After: 2",
        ),
        Scenario(
            "org_suspended",
            frozenset({CATALOG, CONFIG}),
            403,
            "org_suspended",
            summary="403 without error_code, error org_suspended (catalog, config)",
        ),
        *(_entitlement(reason) for reason in ENTITLEMENT_REASONS),
        Scenario(
            "not_ready",
            ONLY_PLAYBACK,
            404,
            "episode not ready (simulated)",
            "not_ready",
            summary="404 not_ready: unknown, unpublished or not ready episode",
        ),
        Scenario(
            "no_playable_version",
            ONLY_PLAYBACK,
            503,
            "no playable version (simulated)",
            "not_ready",
            summary="503 not_ready without Retry-After: try on the next play",
        ),
        Scenario(
            "sdk_required",
            ONLY_PLAYBACK,
            409,
            "device values required (simulated)",
            "sdk_required",
            extra=(("protection", "private-encrypted"),),
            summary="409 sdk_required with protection",
        ),
        Scenario(
            "stream_error",
            ONLY_PLAYBACK,
            502,
            "stream could not be prepared (simulated)",
            summary="502 without error_code: retry with backoff",
        ),
        Scenario(
            # Only playback lists a 500 (spec: Errors > Catalog, Config, Playback): on catalog
            # and config the header is ignored and the request runs normally.
            "internal_error",
            ONLY_PLAYBACK,
            500,
            "unexpected error (simulated)",
            summary="500 without error_code, with request_id (playback only)",
        ),
        Scenario(
            PARTIAL_BATCH,
            ONLY_PLAYBACK,
            200,
            "",
            summary="batch of 2 or 3: the first item is a real ticket, the others 429 "
            "rate_limited with retry_after (reason prefetch_shed on prefetch items)",
        ),
    )
}


def scenarios_for(endpoint: str) -> list[str]:
    """Names an endpoint accepts, in table order (for /config and docs/sandbox.md > Simulated
    scenarios)."""
    return [s.name for s in SCENARIOS.values() if endpoint in s.endpoints]


def scenario_for(
    value: str | None, endpoint: str, test_organisation: bool, *, beyond_table: bool = False
) -> Scenario | None:
    """The scenario asked for, or None when the header must be ignored.

    `beyond_table` (fault `simulated_beyond_error_table`) honours `internal_error` everywhere,
    a 500 the catalog and config error tables do not have.

    Requirements: SIM-007, SIM-008, SIM-009.
    """
    if value is None or not test_organisation:
        return None
    found = SCENARIOS.get(value.strip())
    if found is None:
        return None
    if endpoint not in found.endpoints and not (beyond_table and found.name == "internal_error"):
        return None
    return found


def _retry_after_429(counter: str, now: float) -> int:
    if LIMITS[counter].refill is Refill.CLOCK_MINUTE:
        return max(1, math.ceil(60 - now % 60))
    return 1


def respond(
    exchange: Exchange,
    faults: FaultSwitch,
    limits: Limits,
    org_id: str,
    scenario: Scenario,
    endpoint: str,
    now: float,
) -> Reply:
    """The simulated answer, or the real 429 of the simulated counter when it is spent.

    Not for `partial_batch`, which playback builds from a real ticket.

    Requirements: SIM-001, SIM-002, SIM-003, SIM-004, SIM-005, SIM-006.
    """
    rules = simulation_faults.simulation_rules(faults)  # the simulation step
    if rules.counted:
        refusal = limits.take_request(org_id, "simulated", now)
        if refusal is not None:
            return rate_limited(
                exchange, faults, refusal.retry_after, refusal.limit, refusal.window
            )
    if rules.spends_endpoint:
        limits.take_request(org_id, endpoint, now)
    reply = render(exchange, faults, scenario, endpoint, limits.limit_of(org_id, endpoint), now)
    if rules.header:
        reply.headers.append((SIMULATED_HEADER, scenario.name.encode()))
    return reply


def render(
    exchange: Exchange,
    faults: FaultSwitch,
    scenario: Scenario,
    counter: str,
    limit: int,
    now: float,
) -> Reply:
    """The real answer the scenario stands for, without `Service-Simulated`; `limit` is the
    organisation's allowance on `counter`, which a simulated 429 announces.

    Requirements: SIM-001, SIM-010, SIM-011, SIM-012.
    """
    if scenario.status == 429:
        reply = rate_limited(exchange, faults, _retry_after_429(counter, now), limit, 60)
        if scenario.reason is not None:
            return flat(
                exchange,
                faults,
                429,
                scenario.error,
                scenario.error_code,
                reply.headers,
                reason=scenario.reason,
            )
        return reply
    headers: list[tuple[bytes, bytes]] = []
    if scenario.retry_after is not None:
        headers.append((b"retry-after", str(scenario.retry_after).encode()))
    extra: dict[str, Any] = dict(scenario.extra)
    if scenario.reason is not None:
        extra["reason"] = scenario.reason
    return flat(
        exchange, faults, scenario.status, scenario.error, scenario.error_code, headers, **extra
    )
