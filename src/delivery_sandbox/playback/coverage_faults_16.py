"""The acting part of the sixteenth block of coverage faults (its rows and the limiter's quirks:
faults/coverage_faults_16.py): a refused request still counted, a 429 held, the playback gate,
the cost of a malformed body and of refused items, and each ticket's admission bent.

Spec sections: Limits; Authentication 4 (order of checks).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.coverage_faults_16 import NAMES
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.http.headers import bearer_key
from delivery_sandbox.playback.admission import PREFETCH_SHED, Decision, IntentClass

if TYPE_CHECKING:
    from delivery_sandbox.auth import Endpoint
    from delivery_sandbox.faults.registry import FaultSwitch
    from delivery_sandbox.http.headers import Reply
    from delivery_sandbox.playback.limits import Limits, Refusal
    from delivery_sandbox.state.context import Sandbox

__all__ = [
    "charge_refused_16",
    "count_refused_16",
    "gate_16",
    "hold_refusal_16",
    "malformed_cost_16",
    "ticket_decision_16",
]

HOLD = 0.3  # the bound of LIM-044/LIM-045 is the median admitted answer + 0.1 s
SHEDDING = "shedding_16"  # FaultSwitch memo: organisations whose prefetches are being shed


def count_refused_16(
    sb: Sandbox, endpoint: Endpoint, authorization: str | None, reply: Reply
) -> None:
    """Under two faults, a request that authentication refused takes a unit of its key's
    organisation's counter all the same (the answer is not changed)."""
    revoked_on = sb.faults.enabled(FaultName.revoked_key_counted)
    refused_on = sb.faults.enabled(FaultName.refused_requests_counted)
    if not (revoked_on or refused_on) or endpoint.counter is None:
        return
    key = bearer_key(authorization)
    record = sb.accounts.keys.get(key) if key is not None else None
    if record is None:
        return
    revoked = revoked_on and record.revoked and reply.status == 401
    refused = refused_on and not record.revoked and reply.status in (400, 403)
    if revoked or refused:
        sb.limits.take_request(record.org_id, endpoint.counter, sb.now())


async def hold_refusal_16(reply: Reply, faults: FaultSwitch, path: str) -> None:
    """Under two faults, hold a 429 of the catalog counter or a refused prefetch before it goes."""
    on = faults.on & NAMES
    if reply.status != 429 or not on:
        return
    parts = path.rstrip("/").split("/")
    family = parts[parts.index("v1") + 1] if "v1" in parts[:-1] else ""  # the segment after v1
    catalog = FaultName.catalog_refusal_held in on and family in ("catalog", "series", "playlists")
    body: Any = bt.json_object(reply.body) if family == "playback" else None
    shed = isinstance(body, dict) and body.get("reason") == PREFETCH_SHED
    if catalog or (FaultName.prefetch_refusal_held in on and shed):
        await asyncio.sleep(HOLD)


def gate_16(faults: FaultSwitch, refusal: Refusal | None) -> Refusal | None:
    """The refusal before the body; under `body_read_before_gate` there is none (the ceiling is
    judged per ticket, after the body)."""
    return None if faults.enabled(FaultName.body_read_before_gate) else refusal


def malformed_cost_16(faults: FaultSwitch) -> int:
    """Tickets a malformed body costs (spec: Limits, 1)."""
    return 0 if faults.enabled(FaultName.malformed_body_free) else 1


def charge_refused_16(
    faults: FaultSwitch, limits: Limits, org_id: str, refused: int, now: float
) -> None:
    """Under `refused_ticket_costs_one`, charge a ticket for each item refused before admission."""
    if refused and faults.enabled(FaultName.refused_ticket_costs_one):
        limits.playback_charge(org_id, refused, now)


def ticket_decision_16(
    faults: FaultSwitch,
    limits: Limits,
    org_id: str,
    intent: IntentClass,
    position: int,
    decision: Decision,
    now: float,
) -> Decision:
    """The admission decision for one ticket, as this block's faults bend it.

    `batch_costs_one_ticket`: a ticket after the request's first is given back.
    `play_refused_while_shedding`: a shed prefetch marks the organisation; while marked and
    under the shedding band, a play ticket is refused (its unit given back)."""
    on = faults.on & NAMES
    if not on:
        return decision
    bucket = limits.bucket(org_id)
    if FaultName.batch_costs_one_ticket in on and decision.issued and position > 0:
        bucket.take(-1, now)
    if FaultName.play_refused_while_shedding not in on:
        return decision
    shedding: set[str] = faults.memo(SHEDDING, lambda _: set())
    if decision.reason == PREFETCH_SHED:
        shedding.add(org_id)
        return decision
    below = bucket.level(now) < limits.policy.shed_fraction * bucket.capacity
    if org_id not in shedding or intent is not IntentClass.PLAY:
        return decision
    if not below:
        shedding.discard(org_id)
        return decision
    if decision.issued:
        bucket.take(-1, now)
    return Decision(retry_after=bucket.time_until(1, now))
