"""Faults of the limits: what the counters count and how the playback ceiling admits, one rule
of the Limits section each; and every fault that acts through the policies of the playback and
limits cores (their rows: here and faults/playback_rows.py).

Spec sections: Limits (per organisation; only valid keys counted; nothing refused before the
rate-limit step counted; counting error; burst and refill; ticket units; Behaviour at the
ceiling); Authentication 4 (order of checks); POST /playback (body, tickets, reuse).

Seams, each one call where the sandbox decides:
- `bend_policies` (the policy step, `state/context.py: Sandbox.policies`): the cores' policies
  (admission, the limiter's quirks, tickets, body rules, batch refusal) bent from their bases;
- `count_refused` (control/front_faults.py, when authentication refuses): a refused request still counted;
- `hold_refusal` (control/front_faults.py, after the answer is built): a 429 held before it is sent;
- `gate`, `malformed_cost`, `refused_cost`, `reuse_cost`, `ticket_decision` (endpoints/playback.py,
  at the step seam: faults/steps.py): the gate before the body, the cost of a malformed body, of
  refused items and of a reused ticket, and each ticket's admission.
The faults never import the cores: the limiter, its bucket and each decision come in at the
seam, and a decision is bent with `dataclasses.replace`.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = [
    "FAULTS",
    "FAULT_ROWS",
    "NAMES",
    "bend_policies",
    "count_refused",
    "gate",
    "hold_refusal",
    "malformed_cost",
    "refused_cost",
    "reuse_cost",
    "ticket_decision",
]

FAULT_ROWS: tuple[FaultRow, ...] = fault_rows("""
limits_shared_across_orgs    | LIM-002 | one counter of each kind serves every organisation
limit_raise_ignored          | LIM-003 | a raised limit is recorded (and reported) but a live counter keeps its old limit
revoked_key_counted          | LIM-004 | a request with a revoked key is refused 401 but counted against its organisation
refused_requests_counted     | LIM-005 | a request refused before the rate-limit step (version, scope, organisation) is counted
minute_counter_two_early     | LIM-007 | clock-minute counters refuse two requests early (admit limit - 2)
playback_default_9000        | LIM-012 | the playback counter's default limit is 9,000 tickets (reported and enforced)
catalog_default_2500         | LIM-019 | the catalog counter's default limit is 2,500 requests (reported and enforced)
creatives_default_2500       | LIM-022 | the creatives counter's default limit is 2,500 requests (reported and enforced)
videos_default_2500          | LIM-025 | the videos counter's default limit is 2,500 requests (reported and enforced)
config_default_500           | LIM-028 | the config counter's default limit is 500 requests (reported and enforced)
playback_burst_capped_20     | LIM-014 | the playback bucket holds at most 20 tickets, whatever the limit
batch_costs_one_ticket       | LIM-015 | a batch costs one ticket however many it issues
malformed_body_free          | LIM-016 | a whole-request 400 of POST /playback costs nothing
refused_ticket_costs_one     | LIM-018 | every item refused before admission (403, 404, 409) costs a ticket
catalog_refill_half          | LIM-020 | the catalog bucket refills at half its rate (limit / 120 per second)
play_refused_while_shedding  | LIM-037 | once a prefetch is shed, play requests are refused too until the band is left
body_read_before_gate        | LIM-042 | with no ticket left the body is read first: a malformed one answers 400
prefetch_refusal_held        | LIM-044 | a prefetch refused at the ceiling is held 0.3 s before its 429
catalog_refusal_held         | LIM-045 | a catalog-counter 429 is held 0.3 s before it is sent
""")  # fmt: skip
FAULTS = declare(FAULT_ROWS, area="Limits", seam="step")
NAMES = frozenset(row[0] for row in FAULT_ROWS)

BURST_CAP = 20


def limit_quirks(on: frozenset[FaultName]) -> dict[str, Any]:
    """The `LimitQuirks` fields these faults set (`bend_policies`)."""
    return {
        "shared_counters": FaultName.limits_shared_across_orgs in on,
        "early_refusals": 2 if FaultName.minute_counter_two_early in on else 0,
        "playback_burst_cap": BURST_CAP if FaultName.playback_burst_capped_20 in on else 0,
        "catalog_refill_factor": 0.5 if FaultName.catalog_refill_half in on else 1.0,
        "raise_ignored": FaultName.limit_raise_ignored in on,
        "tenants_pooled": FaultName.tenant_buckets_pooled in on,
        "tenant_refusals_drain_others": FaultName.tenant_refusals_drain_others in on,
        "default_limits": _default_limits(on),
    }


def _default_limits(on: frozenset[FaultName]) -> tuple[tuple[str, int], ...]:
    """(counter, limit) of the switched-on `<counter>_default_<limit>` faults."""
    found = (name.partition("_default_") for name in sorted(on & NAMES))
    return tuple((counter, int(limit)) for counter, sep, limit in found if sep)


# -- the policy step: the cores' policies as the switched-on faults bend them ------------------

P = TypeVar("P")  # playback/policies.py: Policies (admission, quirks, tickets, body, ...)

# Fault -> (the policy field it bends, the value it sets there); the first switched-on row wins.
BENT_VALUES: dict[FaultName, tuple[str, float]] = {
    FaultName.shed_threshold_wrong: ("shed_fraction", 0.5),
    FaultName.shed_at_15pc: ("shed_fraction", 0.15),
    FaultName.shed_at_25pc: ("shed_fraction", 0.25),
    FaultName.play_hold_too_long: ("max_hold_s", 3.0),
    FaultName.play_hold_1s: ("max_hold_s", 1.0),
    FaultName.bucket_refills_too_fast: ("refill_factor", 2.0),
    FaultName.bucket_refill_5pc_slow: ("refill_factor", 0.95),
    FaultName.bucket_refill_5pc_fast: ("refill_factor", 1.05),
    FaultName.bucket_holds_too_much: ("capacity_factor", 1.5),
    FaultName.bucket_capacity_5pc_low: ("capacity_factor", 0.95),
    FaultName.bucket_capacity_5pc_high: ("capacity_factor", 1.05),
}


def _pick(on: frozenset[FaultName], field: str, default: float) -> float:
    """The value the first switched-on fault of `BENT_VALUES` sets on `field`, else the default."""
    return next((v for name, (f, v) in BENT_VALUES.items() if f == field and name in on), default)


def _bent(on: frozenset[FaultName], bases: Any) -> Any:
    admission, quirks, tickets, body = bases.admission, bases.quirks, bases.tickets, bases.body
    admission = replace(
        admission,
        shed_fraction=_pick(on, "shed_fraction", admission.shed_fraction),
        max_hold_s=_pick(on, "max_hold_s", admission.max_hold_s),
        hold_play=admission.hold_play and FaultName.no_play_hold not in on,
        shed_prefetch=admission.shed_prefetch and FaultName.no_prefetch_shedding not in on,
        play_first=admission.play_first and FaultName.prefetch_admitted_first not in on,
    )
    bent = limit_quirks(on)
    defaults = dict(quirks.default_limits) | dict(bent.pop("default_limits"))
    quirks = replace(
        quirks,
        refill_factor=_pick(on, "refill_factor", quirks.refill_factor),
        capacity_factor=_pick(on, "capacity_factor", quirks.capacity_factor),
        minute_limit_factor=0.95
        if FaultName.minute_counter_5pc_low in on
        else quirks.minute_limit_factor,
        simulated_limit_factor=0.95
        if FaultName.simulated_limit_285 in on
        else quirks.simulated_limit_factor,
        config_spends_catalog=FaultName.config_spends_catalog in on,
        rolling_minute=FaultName.clock_minute_rolling in on,
        retry_after_offset=30 if FaultName.retry_after_wrong in on else quirks.retry_after_offset,
        advertised_limit_factor=2.0
        if FaultName.ratelimit_limit_wrong in on
        else quirks.advertised_limit_factor,
        default_limits=tuple(sorted(defaults.items())),
        **bent,
    )
    tickets = replace(
        tickets,
        play_token_ttl=1_200 if FaultName.play_token_ttl_short in on else tickets.play_token_ttl,
        manifest_ttl=1_800 if FaultName.manifest_ttl_long in on else tickets.manifest_ttl,
        reuse_ignores_device=FaultName.reuse_ignores_device in on,
        sort_subtitles=FaultName.subtitles_unsorted not in on,
        reuse_margin=60 if FaultName.reuse_margin_one_minute in on else tickets.reuse_margin,
        reuse_extension=300 if FaultName.reuse_extends_ticket in on else tickets.reuse_extension,
    )
    body = replace(
        body,
        trim_device_values=FaultName.device_value_untrimmed not in on,
        null_words_any_case=FaultName.null_words_case_sensitive not in on,
        later_items_default="play" if FaultName.batch_item_intent_play in on else "prefetch",
        next_items_intent="play" if FaultName.next_items_play in on else "prefetch",
    )
    return replace(
        bases,
        admission=admission,
        quirks=quirks,
        tickets=tickets,
        body=body,
        whole_429_early=FaultName.batch_whole_429_early in on,
    )


def bend_policies(faults: FaultSwitch, bases: P, default: bool) -> P:
    """`bases` (the cores' policies before any fault; `default`: the cores' own defaults, else a
    legal variant's) as the switched-on faults bend them, built once per switch state."""
    key = "policies" if default else "policies+variants"
    bent: P = faults.memo(key, lambda on: _bent(on, bases))
    return bent


# -- the hooks where the limiter and the ceiling decide ----------------------------------------

HOLD = 0.3  # the bound of LIM-044/LIM-045 is the median admitted answer + 0.1 s
SHEDDING = "prefetch_shedding"  # FaultSwitch memo: organisations whose prefetches are being shed
PREFETCH_SHED = "prefetch_shed"  # playback/admission.py: the reason of a shed prefetch
PLAY = "play"  # playback/admission.py: IntentClass.PLAY's value
BEARER = "Bearer "


def _key(authorization: str | None) -> str | None:
    """The key of `Authorization: Bearer <key>`, exactly one space (http/headers.py: bearer_key)."""
    if authorization is None or not authorization.startswith(BEARER):
        return None
    key = authorization[len(BEARER) :]
    return None if not key or " " in key else key


def count_refused(
    sb: Server, counter: str | None, authorization: str | None, reply: Answer
) -> None:
    """Under two faults, a request that authentication refused takes a unit of its key's
    organisation's `counter` (the endpoint's; None: it counts on none) all the same (the answer
    is not changed)."""
    on = sb.faults.on
    revoked_on = FaultName.revoked_key_counted in on
    refused_on = FaultName.refused_requests_counted in on
    if not (revoked_on or refused_on) or counter is None:
        return
    key = _key(authorization)
    record = sb.accounts.keys.get(key) if key is not None else None
    if record is None:
        return
    revoked = revoked_on and record.revoked and reply.status == 401
    refused = refused_on and not record.revoked and reply.status in (400, 403)
    if revoked or refused:
        sb.limits.take_request(record.org_id, counter, sb.now())


async def hold_refusal(reply: Answer, faults: FaultSwitch, path: str) -> None:
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


R = TypeVar("R")  # playback/limits.py: Refusal


def gate(sb: Server, refusal: R | None) -> R | None:
    """The refusal before the body; under `body_read_before_gate` there is none (the ceiling is
    judged per ticket, after the body)."""
    return None if FaultName.body_read_before_gate in sb.faults.on else refusal


def malformed_cost(sb: Server, cost: int) -> int:
    """Tickets a malformed body costs (spec: Limits, 1): none under `malformed_body_free`."""
    return 0 if FaultName.malformed_body_free in sb.faults.on else cost


def reuse_cost(sb: Server, cost: int) -> int:
    """Tickets a reused ticket costs (none): one under `reuse_counted`."""
    return 1 if FaultName.reuse_counted in sb.faults.on else cost


def refused_cost(sb: Server, cost: int, *, refused: int) -> int:
    """Tickets the items refused before admission cost (none): one each under
    `refused_ticket_costs_one`."""
    return refused if FaultName.refused_ticket_costs_one in sb.faults.on else cost


D = TypeVar("D")  # playback/admission.py: Decision


def ticket_decision(
    sb: Server, decision: D, *, org_id: str, intent: Any, position: int, now: float
) -> D:
    """The admission decision for one ticket (`intent`: the item's `IntentClass`), as the
    limit faults bend it (the limiter: `sb.limits`, playback/limits.py `Limits`).

    `batch_costs_one_ticket`: a ticket after the request's first is given back.
    `play_refused_while_shedding`: a shed prefetch marks the organisation; while marked and
    under the shedding band, a play ticket is refused (its unit given back)."""
    faults, limits = sb.faults, sb.limits
    on = faults.on & NAMES
    if not on:
        return decision
    seen: Any = decision
    bucket = limits.bucket(org_id)
    if FaultName.batch_costs_one_ticket in on and seen.issued and position > 0:
        bucket.take(-1, now)
    if FaultName.play_refused_while_shedding not in on:
        return decision
    shedding: set[str] = faults.memo(SHEDDING, lambda _: set())
    if seen.reason == PREFETCH_SHED:
        shedding.add(org_id)
        return decision
    below = bucket.level(now) < limits.policy.shed_fraction * bucket.capacity
    if org_id not in shedding or intent.value != PLAY:
        return decision
    if not below:
        shedding.discard(org_id)
        return decision
    if seen.issued:
        bucket.take(-1, now)
    refused: D = replace(
        seen, issued=False, hold=0.0, retry_after=bucket.time_until(1, now), reason=None
    )
    return refused
