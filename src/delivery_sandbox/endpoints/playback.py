"""POST /api/delivery/v1/playback (spec: POST /playback; Errors > Playback; Limits).

The handler only translates HTTP: authentication (auth.py) up to the organisation step, the
simulated scenarios (simulate.py), the rate-limit gate before the body (admission.py via
limits.py), the body (playback/request.py), the per-ticket checks against the store, admission
and reuse (tickets.py), then one of three shapes: a single ticket, a flat error, or a batch.

The cores run under the sandbox's policies (`Sandbox.policies`). Faults act at named steps of
the step seam (faults/steps.py: `bend`), one call each: the organisation
(`playback.org_suspended`), the simulation's rules, the gate and the malformed body's cost, the
refused items' cost, a reuse's cost and each ticket's admission, and the items before they are
rendered (`playback.items`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http import errors
from delivery_sandbox.http.headers import Exchange, Reply
from delivery_sandbox.playback import simulate
from delivery_sandbox.playback.admission import PREFETCH_SHED, IntentClass, admission_order
from delivery_sandbox.playback.policies import Policies
from delivery_sandbox.playback.request import BodyError, ItemRequest, PlaybackRequest, parse
from delivery_sandbox.playback.tickets import ENCRYPTED, ReuseKey, Ticket, TicketBook, mint
from delivery_sandbox.state.accounts import Caller
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.state.store import Episode, Failure

__all__ = ["answer", "ticket_book"]

HOLD_SLACK = 0.002  # sleep a hair longer than the bucket asks, so the token is there

MSG_NOT_READY = "episode unknown, not published or not ready to stream"
MSG_SDK = "encrypted episode: send union_info and drm_kek from the player SDK"
MSG_NO_PLAYABLE = "no playable version right now"
MSG_PROVIDER = "the video provider did not answer in time; retry"
MSG_STREAM = "the stream could not be prepared; retry with backoff"
MSG_INTERNAL = "unexpected error"
MSG_LIMIT = "playback limit reached; retry after Retry-After"
MSG_SHED = "prefetch paused near the playback limit"

# Tests replace this to advance a fake clock instead of sleeping.
sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep


def ticket_book(sb: Sandbox) -> TicketBook:
    """The sandbox's reuse book (emptied by an admin reset)."""
    return sb.tickets


@dataclass(slots=True)
class Outcome:
    """One item's answer: a ticket (status 200) or an error."""

    status: int
    error: str | None = None
    error_code: str | None = None
    reason: str | None = None
    retry_after: int | None = None
    extra: dict[str, Any] | None = None
    ticket: Ticket | None = None
    episode: Episode | None = None  # the episode a ticket or a licence refusal is for
    limited: bool = False  # refused by the rate limiter


# -- per-ticket checks (spec: Errors > Playback, per ticket) -----------------------------------


def _find(sb: Sandbox, item: ItemRequest) -> Episode | None:
    """The episode an item names: `episode_id` first, else `film_ref` (id or slug) and `episode_no`;
    `next` counts from the anchor.

    Requirements: PLAY-005, PLAY-006, PLAY-007, PLAY-008, PLAY-036, PLAY-037, PLAY-085, PLAY-086,
    PLAY-087.
    """
    store = sb.store
    if item.episode_id is not None:
        episode = store.episode(item.episode_id)
        if episode is None:
            return None
        film = store.films.get(episode.film_id)
        number = episode.episode_no
    else:
        film = store.film_by_ref(str(item.film_ref))
        no = item.episode_no
        if film is None or no is None:
            return None
        number = int(no)
    if film is None or not film.published:
        return None
    if item.next_offset == 0 and item.episode_id is not None:
        return store.episode(item.episode_id)
    return store.episode_by_no(film.id, number + item.next_offset)


MSG_CHECK_LATE = "the licence or episode could not be checked in time; retry"


def check(
    sb: Sandbox, caller: Caller, item: ItemRequest, request: PlaybackRequest, now: float
) -> Episode | Outcome:
    """The per-ticket checks in the order of the error table; licence and organisation are read on
    every request.

    Requirements: PLAY-011, PLAY-020, PLAY-067, PLAY-078, PLAY-079, PLAY-080, PLAY-081, PLAY-085,
    PLAY-086, PLAY-087, PLAY-088, PLAY-089, PLAY-091, PLAY-092, PLAY-093, PLAY-094, PLAY-095.

    Requirements: FRESH-002, FRESH-004, FRESH-006.
    """
    if "licences" in sb.outages:  # spec: Errors > Playback: a check that times out is a 503
        return Outcome(503, MSG_CHECK_LATE, "service_unavailable", retry_after=2)
    episode = _find(sb, item)
    if episode is None:
        return Outcome(404, MSG_NOT_READY, "not_ready")
    refusal = sb.store.licence_refusal(caller.org_id, episode.film_id, now)
    if refusal is not None:
        return _not_entitled(refusal, episode)
    if not episode.stream_ready:
        return Outcome(404, MSG_NOT_READY, "not_ready")
    if episode.protection == ENCRYPTED and not request.has_device:
        return Outcome(409, MSG_SDK, "sdk_required", extra={"protection": ENCRYPTED})
    if episode.failure is Failure.NO_PLAYABLE:
        return Outcome(503, MSG_NO_PLAYABLE, "not_ready")
    if episode.failure is Failure.PROVIDER_TIMEOUT:
        return Outcome(503, MSG_PROVIDER, "service_unavailable", retry_after=2)
    if episode.failure is Failure.STREAM_ERROR:
        return Outcome(502, MSG_STREAM)
    if episode.failure is Failure.INTERNAL_ERROR:
        return Outcome(500, MSG_INTERNAL)
    return episode


def _not_entitled(reason: str, episode: Episode | None = None) -> Outcome:
    """403 `not_entitled`: `error` is the reason, `reason` says which. (PLAY-083)"""
    return Outcome(403, reason, "not_entitled", reason=reason, episode=episode)


# -- admission and minting ---------------------------------------------------------------------


def _reuse_key(request: PlaybackRequest, item: ItemRequest) -> ReuseKey | None:
    """What a repeat must match to get the same ticket: viewer_ref, device values, episode, intent
    class.

    Requirements: PLAY-059, PLAY-060, PLAY-061, PLAY-062, PLAY-063.
    """
    if request.viewer_ref is None:
        return None
    return ReuseKey(
        request.viewer_ref, request.union_info, request.drm_kek, item.ident, item.intent_class
    )


def _mint(sb: Sandbox, caller: Caller, episode: Episode, now: float, tune: Policies) -> Ticket:
    """A fresh ticket for the caller's media space, its secret from the injected generator.

    Requirements: PLAY-059.
    """
    space = caller.organisation.space
    return mint(
        episode_id=episode.id,
        episode_no=episode.episode_no,
        protection=episode.protection,
        vid=episode.vid_for(space),
        subtitles=sb.store.subtitle_pairs(episode),
        now=now,
        new_secret=lambda: f"pat_{sb.rng.getrandbits(160):040x}",
        policy=tune.tickets,
    )


async def _admit(
    sb: Sandbox,
    caller: Caller,
    request: PlaybackRequest,
    outcomes: list[Outcome | Episode],
    tune: Policies,
) -> None:
    """Turn every checked episode into a ticket or a 429, play-class items first.

    Requirements: PLAY-046, PLAY-060, PLAY-064, PLAY-065, PLAY-090.

    Requirements: LIM-015, LIM-017, LIM-018, LIM-039.
    """
    org, limits, book = caller.org_id, sb.limits, ticket_book(sb)
    book.policy = tune.tickets
    items = request.items
    pending = [i for i, o in enumerate(outcomes) if isinstance(o, Episode)]
    if len(pending) == 1:
        order = [0]  # one item: nothing to order
    else:
        order = admission_order([items[i].intent_class for i in pending], limits.policy)
    hold_left = limits.policy.max_hold_s
    viewer_ref = request.viewer_ref
    cost = bend(sb, "playback.refused_cost", 0, refused=len(outcomes) - len(pending))
    if cost:
        limits.playback_charge(org, cost, sb.now())
    for position in order:
        index = pending[position]
        item, episode = items[index], outcomes[index]
        assert isinstance(episode, Episode)
        now = sb.now()
        key = None if viewer_ref is None else _reuse_key(request, item)
        kept = book.find(key, now) if key is not None else None
        if kept is not None:
            cost = bend(sb, "playback.reuse_cost", 0)
            if cost:
                limits.playback_charge(org, cost, now)
            outcomes[index] = Outcome(200, ticket=kept, episode=episode)
            continue
        while True:
            decision = limits.playback_ticket(org, item.intent_class, now, hold_left)
            if decision.hold <= 0:
                decision = bend(
                    sb,
                    "playback.ticket_decision",
                    decision,
                    org_id=org,
                    intent=item.intent_class,
                    position=position,
                    now=now,
                )
                break
            await sleep(decision.hold + HOLD_SLACK)
            hold_left -= decision.hold + HOLD_SLACK
            now = sb.now()
        if decision.issued:
            ticket = _mint(sb, caller, episode, now, tune)
            if key is not None:
                book.keep(key, ticket, now)
            outcomes[index] = Outcome(200, ticket=ticket, episode=episode)
            continue
        refusal = limits.refusal(org, "playback", decision.retry_after or 0, decision.reason)
        message = MSG_SHED if decision.reason == PREFETCH_SHED else MSG_LIMIT
        outcomes[index] = Outcome(
            429, message, "rate_limited", decision.reason, refusal.retry_after, limited=True
        )


# -- rendering ---------------------------------------------------------------------------------


def _flat_error(sb: Sandbox, exchange: Exchange, caller: Caller, outcome: Outcome) -> Reply:
    """A single request's error at the top level, the same status and code its batch item would
    have.

    Requirements: PLAY-074, PLAY-075, PLAY-096.
    """
    faults = sb.faults
    if outcome.limited:
        limit = sb.limits.refusal(caller.org_id, "playback", 0).limit
        reply = errors.rate_limited(exchange, faults, outcome.retry_after or 1, limit, 60)
        if outcome.reason is None:
            return reply
        return errors.flat(
            exchange,
            faults,
            429,
            outcome.error or MSG_SHED,
            "rate_limited",
            reply.headers,
            reason=outcome.reason,
        )
    headers: list[tuple[bytes, bytes]] = []
    if outcome.retry_after is not None:
        headers.append((b"retry-after", str(outcome.retry_after).encode()))
    extra = dict(outcome.extra or {})
    if outcome.reason is not None:
        extra["reason"] = outcome.reason
    return errors.flat(
        exchange, faults, outcome.status, outcome.error or "", outcome.error_code, headers, **extra
    )


def _item_body(item: ItemRequest, outcome: Outcome) -> dict[str, Any]:
    """One batch item: the request echo and status, then the ticket or the error fields.

    Requirements: PLAY-040, PLAY-041, PLAY-042, PLAY-043, PLAY-044, PLAY-090.

    Requirements: LIM-040.
    """
    body: dict[str, Any] = {"request": item.echo, "status": outcome.status}
    if outcome.ticket is not None:
        body["episode_id"] = outcome.ticket.episode_id
        body["episode_no"] = outcome.ticket.episode_no
        body.update(outcome.ticket.fields())
        return body
    body["error"] = outcome.error
    if outcome.error_code is not None:
        body["error_code"] = outcome.error_code
    if outcome.reason is not None:
        body["reason"] = outcome.reason
    if outcome.extra:
        body.update(outcome.extra)
    if outcome.retry_after is not None and outcome.status in (429, 503):
        body["retry_after"] = outcome.retry_after
    return body


def _render(
    sb: Sandbox,
    exchange: Exchange,
    caller: Caller,
    request: PlaybackRequest,
    outcomes: list[Outcome],
) -> Reply:
    """A single ticket, a single error, or the batch shape (429 as a whole only when nothing was
    issued).

    Requirements: PAGE-012, PLAY-026, PLAY-027, PLAY-035, PLAY-045, PLAY-047.

    Requirements: LIM-041.
    """
    pairs = bend(  # the render step: the items as the faults show them
        sb,
        "playback.items",
        list(zip(request.items, outcomes, strict=True)),
        org_id=caller.org_id,
        batch=request.batch,
        admitted=lambda: admission_order([i.intent_class for i in request.items], sb.limits.policy),
    )
    if not request.batch:
        only = pairs[0][1]
        if only.ticket is not None:
            return Reply(200, orjson.dumps(only.ticket.fields()))
        return _flat_error(sb, exchange, caller, only)
    issued = any(o.ticket is not None for o in outcomes)
    limited = [o for o in outcomes if o.limited]
    if not issued and limited:
        # spec: Behaviour at the ceiling 2 — 429 as a whole only when no item can be issued.
        shed = all(o.reason == PREFETCH_SHED for o in limited)
        whole = Outcome(
            429,
            MSG_SHED if shed else MSG_LIMIT,
            "rate_limited",
            PREFETCH_SHED if shed else None,
            min(o.retry_after or 1 for o in limited),
            limited=True,
        )
        return _flat_error(sb, exchange, caller, whole)
    items = [_item_body(item, o) for item, o in pairs]
    return Reply(200, orjson.dumps({"items": items}))


# -- the handler -------------------------------------------------------------------------------


def _holds_play(request: PlaybackRequest | BodyError) -> bool:
    if isinstance(request, BodyError):
        return False
    return any(item.intent_class is IntentClass.PLAY for item in request.items)


def _gate_outcome(sb: Sandbox, request: PlaybackRequest | BodyError, retry_after: int) -> Outcome:
    """The whole-request 429 at an empty bucket; a prefetch-only body is a shed prefetch.

    Requirements: PLAY-074, PLAY-075.

    Requirements: LIM-038.
    """
    if isinstance(request, PlaybackRequest) and sb.limits.policy.shed_prefetch:
        return Outcome(429, MSG_SHED, "rate_limited", PREFETCH_SHED, retry_after, limited=True)
    return Outcome(429, MSG_LIMIT, "rate_limited", None, retry_after, limited=True)


def _suspended(sb: Sandbox, exchange: Exchange) -> Reply:
    """Suspended organisation: 403 not_entitled, reason org_suspended (spec: Errors > Playback).

    Requirements: AUTH-020, PLAY-082.
    """
    return errors.flat(
        exchange, sb.faults, 403, "org_suspended", "not_entitled", reason="org_suspended"
    )


async def _suspended_per_item(
    sb: Sandbox,
    exchange: Exchange,
    caller: Caller,
    read_body: Callable[[], Awaitable[bytes]],
    tune: Policies,
) -> Reply:
    """A suspended organisation read per ticket (legal variant suspended_batch_per_item): a
    well-formed batch is 200 with every item 403 `not_entitled`, reason `org_suspended` (Errors >
    Playback, per ticket); a single or malformed body is the whole-request 403, as the
    organisation comes before the body (Authentication 4). Nothing is counted."""
    request = parse(await read_body(), tune.body)
    if not isinstance(request, PlaybackRequest) or not request.batch:
        return _suspended(sb, exchange)
    refused = [_not_entitled("org_suspended") for _ in request.items]
    return _render(sb, exchange, caller, request, refused)


async def answer(
    sb: Sandbox,
    exchange: Exchange,
    caller: Caller,
    simulate_header: str | None,
    read_body: Callable[[], Awaitable[bytes]],
) -> Reply:
    """Answer one POST /playback from the organisation step on (spec: Authentication 4).

    Requirements: AUTH-017, PLAY-066, PLAY-067, PLAY-068, PLAY-069, PLAY-070, PLAY-071, PLAY-072,
    PLAY-073, PLAY-077.

    Requirements: LIM-016.

    Requirements: SIM-003, SIM-005, SIM-006, SIM-007, SIM-008.
    """
    tune = sb.policies()
    suspended = bend(
        sb,
        "playback.org_suspended",
        caller.suspended,
        caller=caller,
        kept_tickets=len(ticket_book(sb)),
    )
    if suspended:
        if tune.suspended_per_item:
            return await _suspended_per_item(sb, exchange, caller, read_body, tune)
        return _suspended(sb, exchange)
    now = sb.now()
    scenario, rules = None, simulate.DEFAULT_RULES
    if simulate_header is not None:
        rules = bend(sb, "playback.simulation_rules", simulate.DEFAULT_RULES)
        test_org = caller.organisation.test or rules.production_honoured
        scenario = simulate.scenario_for(simulate_header, "playback", test_org)
    if scenario is not None and scenario.name != simulate.PARTIAL_BATCH:
        return simulate.respond(
            exchange, sb.faults, sb.limits, caller.org_id, scenario, "playback", now
        )
    refusal = bend(sb, "playback.gate", sb.limits.playback_gate(caller.org_id, now))
    if refusal is not None and not sb.limits.playback_holdable(caller.org_id, now):
        return errors.rate_limited(
            exchange, sb.faults, refusal.retry_after, refusal.limit, refusal.window
        )
    request = parse(await read_body(), tune.body)
    if refusal is not None and not _holds_play(request):
        # Not even one ticket: only a play item may wait for one (docs/reading-of-the-spec.md
        # (LIM-042, LIM-043)).
        return _flat_error(sb, exchange, caller, _gate_outcome(sb, request, refusal.retry_after))
    now = sb.now()
    if isinstance(request, BodyError):
        cost = bend(sb, "playback.malformed_cost", 1)  # spec: Limits, malformed body = 1
        sb.limits.playback_charge(caller.org_id, cost, now)
        extra: dict[str, Any] = {"fields": list(request.fields)} if request.fields else {}
        return errors.flat(exchange, sb.faults, 400, request.error, request.error_code, **extra)
    if scenario is not None and (not request.batch or len(request.items) < 2):
        scenario = None  # partial_batch needs a batch of two or more: ignored
    if scenario is not None and rules.counted:
        refused = sb.limits.take_request(caller.org_id, "simulated", now)
        if refused is not None:
            return errors.rate_limited(
                exchange, sb.faults, refused.retry_after, refused.limit, refused.window
            )
    return await _issue(sb, exchange, caller, request, scenario, tune, rules)


async def _issue(
    sb: Sandbox,
    exchange: Exchange,
    caller: Caller,
    request: PlaybackRequest,
    scenario: simulate.Scenario | None,
    tune: Policies,
    rules: simulate.SimulationRules,
) -> Reply:
    """Check every item, answer 500 for the whole request on an unexpected error, then admit and
    render.

    Requirements: PLAY-045, PLAY-076.

    Requirements: SIM-002, SIM-014.
    """
    now = sb.now()
    outcomes: list[Outcome | Episode] = []
    for index, item in enumerate(request.items):
        if scenario is not None and index > 0:
            outcomes.append(_partial_failure(sb, caller, item))
            continue
        outcomes.append(check(sb, caller, item, request, now))
    for found in outcomes:
        if isinstance(found, Outcome) and found.status == 500:
            return errors.flat(exchange, sb.faults, 500, MSG_INTERNAL)  # spec: 500 whole request
    if tune.whole_429_early and len(outcomes) > 1:
        bucket = sb.limits.bucket(caller.org_id)
        if bucket.level(now) < len(outcomes):
            refusal = sb.limits.refusal(caller.org_id, "playback", bucket.time_until(1, now))
            return errors.rate_limited(
                exchange, sb.faults, refusal.retry_after, refusal.limit, refusal.window
            )
    await _admit(sb, caller, request, outcomes, tune)
    final = [o for o in outcomes if isinstance(o, Outcome)]
    reply = _render(sb, exchange, caller, request, final)
    if scenario is not None and rules.header:
        reply.headers.append((simulate.SIMULATED_HEADER, scenario.name.encode()))
    if scenario is not None and rules.partial_batch_extra:
        sb.limits.playback_charge(caller.org_id, rules.partial_batch_extra, now)
    return reply


def _partial_failure(sb: Sandbox, caller: Caller, item: ItemRequest) -> Outcome:
    """partial_batch: a later item is refused as under the limit (docs/reading-of-the-spec.md
    (SIM-013)). (SIM-014)"""
    if item.intent_class is IntentClass.PREFETCH:
        return Outcome(429, MSG_SHED, "rate_limited", PREFETCH_SHED, 1, limited=True)
    return Outcome(429, MSG_LIMIT, "rate_limited", None, 1, limited=True)
