"""Server-side ticket reuse with `viewer_ref`, and the intent class that reuse reveals.

spec: POST /playback (server-side reuse, "Best effort only"; `intent`; `episodes` item 0 takes
the top-level intent, later items default to `prefetch`); Limits (reused ticket = 0; reuse
window: until 5 minutes before `expires_at`); Resources > Playback ticket (never extended);
Limits > Freshness (a suspension shows in ticket requests within 30 s).

Reuse is best effort, so a repeat may legally get a new ticket. Three kinds of rules follow:
- "must not reuse when ..." (another viewer_ref, other device values, another intent class, the
  episode named another way, under 5 minutes left, no viewer_ref): judged on every server; a
  server that never reuses keeps them trivially.
- rules about a reused ticket (same expires_at, not counted, the intent class an item was
  recorded with): judged when the server reused (the repeat came back with the earlier token);
  when it minted a new ticket instead they are not applicable, with the reason.
- PLAY-060, the reuse itself: a should (docs/reading-of-the-spec.md (PLAY-060)): a repeat
  that is not reused is a warning, never a failure.
Readings followed (docs/reading-of-the-spec.md): PLAY-039 (an item's own intent is kept), PLAY-060
(episode form).
"""

from __future__ import annotations

from typing import Any

import pytest
from expect_support import expect_between, expect_equal
from json_support import at, objs
from limits_support import admitted_count, fewest_admitted, lower
from playback_support import (
    DEVICE,
    OTHER_DEVICE,
    expect_answer,
    expect_batch,
    iso_epoch,
    new_viewer,
    post,
    repeat_ticket,
    skip_unless_reused,
)
from timing_support import EPISODE, ORGANISATION, settle

from delivery_conformance.checks import expect
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION, OWN_CLOCK
from delivery_conformance.target.client import DeliveryClient, Response

pytestmark = pytest.mark.needs("role:films", "fixture:episode_encrypted")

REUSE_MARGIN = 300  # spec: Limits > Other constants (reuse until 5 minutes before expires_at)
PLAY_TOKEN_TTL = 1800


@pytest.fixture
def episode(fixture_id) -> str:
    return str(fixture_id("episode_encrypted"))


def _ticket(rid: str, response: Response) -> tuple[Any, Any]:
    body = expect_answer(rid, response, 200)
    return body.get("play_auth_token"), body.get("expires_at")


def _expect_new(rid: str, first: tuple[Any, Any], response: Response, change: str) -> None:
    """The repeat's ticket (of its first episode, in a batch) is not the `first` one."""
    token, _ = _first_token(rid, response)
    expect(
        rid,
        token != first[0],
        expected=f"a new ticket after {change}",
        actual="the earlier token",
        response=response,
    )


def _viewer_body(episode: str, intent: str = "play") -> dict[str, Any]:
    return {"episode_id": episode, "intent": intent, "viewer_ref": new_viewer(), **DEVICE}


# -- rules judged on every server ---------------------------------------------------------------


# Every request shape POST /playback takes, none with a viewer_ref: single (by id or by film and
# number; play, prefetch or no intent), batch form A (`episodes`) and batch form B (`next`).
MINTING_SHAPES: dict[str, Any] = {
    "single_play": lambda e, fx: {"episode_id": e, "intent": "play"},
    "single_prefetch": lambda e, fx: {"episode_id": e, "intent": "prefetch"},
    "single_no_intent": lambda e, fx: {"episode_id": e},
    "single_film_ref": lambda e, fx: {
        "film_ref": fx("film_id_of_encrypted"),
        "episode_no": int(fx("episode_encrypted_no")),
        "intent": "play",
    },
    "batch_episodes": lambda e, fx: {"intent": "play", "episodes": [{"episode_id": e}]},
    "batch_next": lambda e, fx: {"episode_id": e, "intent": "play", "next": 1},
}


def _tokens(response: Response) -> list[Any]:
    """The ticket secrets of an answer: the single ticket's, or each issued batch item's."""
    body = expect_answer("PLAY-059", response, 200, what="for a ticket request")
    tickets = [i for i in objs(body.get("items")) if i.get("status") == 200] or [body]
    return [t.get("play_auth_token") or t.get("manifest_url") for t in tickets]


@pytest.mark.requirement("PLAY-059")
@pytest.mark.parametrize("shape", sorted(MINTING_SHAPES))
def test_without_viewer_ref_every_request_mints_a_new_ticket(client, fixture_id, episode, shape):
    """Repeated in every request shape: a cache keyed on anything but the viewer_ref would
    answer a repeat of one shape with the ticket of the first (POST /playback, reuse)."""
    if shape == "single_film_ref":
        film = _film_of(client, episode)
        if film is None:
            pytest.skip("not exercised: episode_encrypted is not in the catalog")
        lookup = {"film_id_of_encrypted": film}
        body = MINTING_SHAPES[shape](episode, lambda name: lookup.get(name) or fixture_id(name))
    else:
        body = MINTING_SHAPES[shape](episode, fixture_id)
    body = {**body, **DEVICE}
    first = [t for t in _tokens(post(client, body)) if t]
    response = post(client, body)
    again = [t for t in _tokens(response) if t]
    if not first or not again:
        pytest.skip(f"not exercised: {shape} issued no ticket to compare")
    expect(
        "PLAY-059",
        not set(first) & set(again),
        expected=f"new tickets for a repeat of {shape} without viewer_ref",
        actual=f"{len(set(first) & set(again))} of {len(again)} tickets came back",
        response=response,
    )


# The request shapes a reuse rule is repeated in, each with a viewer_ref: single, batch form A
# (`episodes`, item 0 takes the top-level intent) and batch form B (`next`, the anchor takes it).
# A reuse cache keyed otherwise in one shape only is seen only by repeating that shape.
REUSE_SHAPES: dict[str, Any] = {
    "single": lambda e: {"episode_id": e},
    "batch_episodes": lambda e: {"episodes": [{"episode_id": e}]},
    "batch_next": lambda e: {"episode_id": e, "next": 0},
}


def _shaped(shape: str, episode: str, intent: str | None = "play") -> dict[str, Any]:
    body: dict[str, Any] = {**REUSE_SHAPES[shape](episode), "viewer_ref": new_viewer(), **DEVICE}
    if intent is not None:
        body["intent"] = intent
    return body


def _first_token(rid: str, response: Response) -> tuple[Any, Any]:
    """The ticket of the request's first episode: the single answer's, or batch item 0's (the
    item that takes the top-level intent); None when that item was not issued."""
    body = expect_answer(rid, response, 200)
    items = body.get("items")
    if not isinstance(items, list):
        return body.get("play_auth_token"), body.get("expires_at")
    first = items[0] if items and isinstance(items[0], dict) else {}
    if first.get("status") != 200:
        return None, None
    return first.get("play_auth_token"), first.get("expires_at")


def _expect_new_ticket(
    client: DeliveryClient, rid: str, shape: str, body: dict[str, Any], repeat: dict[str, Any]
) -> None:
    first = _first_token(rid, post(client, body))
    if first[0] is None:
        pytest.skip(f"not exercised: {shape} issued no ticket for its first episode")
    change = ", ".join(k for k in repeat if repeat[k] != body.get(k)) or "nothing"
    _expect_new(rid, first, post(client, repeat), f"another {change} ({shape})")


@pytest.mark.requirement("PLAY-061")
@pytest.mark.parametrize("shape", sorted(REUSE_SHAPES))
def test_another_viewer_ref_gets_a_new_ticket(client, episode, shape):
    body = _shaped(shape, episode)
    _expect_new_ticket(client, "PLAY-061", shape, body, {**body, "viewer_ref": new_viewer()})


@pytest.mark.requirement("PLAY-062")
@pytest.mark.parametrize("shape", sorted(REUSE_SHAPES))
@pytest.mark.parametrize("field", ["union_info", "drm_kek"])
def test_other_device_values_get_a_new_ticket(client, episode, shape, field):
    body = _shaped(shape, episode)
    _expect_new_ticket(client, "PLAY-062", shape, body, {**body, field: OTHER_DEVICE[field]})


@pytest.mark.requirement("PLAY-063")
@pytest.mark.parametrize("shape", sorted(REUSE_SHAPES))
@pytest.mark.parametrize(
    ("before", "after"), [("play", "prefetch"), ("prefetch", "play"), (None, "prefetch")]
)
def test_another_intent_class_gets_a_new_ticket(client, episode, shape, before, after):
    """The top-level intent is the class of the single ticket, of batch item 0 and of the
    anchor of `next` (POST /playback, `episodes` and `next`); `next` items stay prefetch."""
    body = _shaped(shape, episode, before)
    _expect_new_ticket(client, "PLAY-063", shape, body, {**body, "intent": after})


def _film_of(client, episode: str) -> Any:
    """The catalog's `film_id` of an episode, read until the catalog lists it (an episode
    restored by an earlier scenario's reset shows within the Freshness bound)."""

    def read() -> Any:
        catalog = client.get("catalog", role="films").json_body()
        rows = objs(at(catalog, "episodes"))
        return next((e.get("film_id") for e in rows if e.get("id") == episode), None)

    return settle(read, lambda film: film is not None, EPISODE.catalog).value


@pytest.mark.requirement("PLAY-060")
@pytest.mark.needs("fixture:episode_encrypted_no")
def test_the_same_episode_named_another_way_gets_a_new_ticket(client, fixture_id, episode):
    """Reuse needs the episode identified the same way; by film_ref it is another request."""
    viewer = new_viewer()
    first = _ticket(
        "PLAY-060",
        post(client, {"episode_id": episode, "intent": "play", "viewer_ref": viewer, **DEVICE}),
    )
    body = {
        "film_ref": _film_of(client, episode),
        "episode_no": int(fixture_id("episode_encrypted_no")),
        "intent": "play",
        "viewer_ref": viewer,
        **DEVICE,
    }
    _expect_new("PLAY-060", first, post(client, body), "naming the episode by film_ref")


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("PLAY-064")
@pytest.mark.needs("admin")
def test_ticket_with_less_than_five_minutes_left_is_not_reused(
    client, admin, episode, own_clock_role
):
    """The clock of the organisation asking (the target's, where it keeps one for all) moves
    1,501 s: 299 s are left, under the 5 minutes of the reuse window. Real time spent in round
    trips only shortens what is left, so no margin depends on the round trip."""
    body = _viewer_body(episode)
    first = _ticket("PLAY-064", post(client, body, role=own_clock_role))
    admin.clock(advance=PLAY_TOKEN_TTL - REUSE_MARGIN + 1, role=own_clock_role)
    response = post(client, body, role=own_clock_role)
    token, expires_at = _ticket("PLAY-064", response)
    later = (iso_epoch(expires_at) or 0) > (iso_epoch(first[1]) or float("inf"))
    expect(
        "PLAY-064",
        token != first[0] and later,
        expected="a new token with a later expires_at",
        actual="the earlier token" if token == first[0] else expires_at,
        response=response,
    )


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("PLAY-066")
@pytest.mark.needs("role:limits", "admin")
def test_reuse_rechecks_the_organisation(client, admin, episode):
    """A repeat after the organisation is suspended is refused, whether the server would have
    reused the ticket or not; the suspension may take the Freshness bound to show."""
    body = _viewer_body(episode)
    _ticket("PLAY-066", post(client, body, role="limits"))
    admin.suspend("limits")
    bound = ORGANISATION.tickets
    seen = settle(lambda: post(client, body, role="limits"), lambda r: r.status_code == 403, bound)
    answer = expect_answer(
        "PLAY-066",
        seen.value,
        403,
        "not_entitled",
        what=f"for a repeat within {bound:g} s of the suspension",
    )
    expect_equal(
        "PLAY-066", answer.get("reason"), "org_suspended", what="reason", response=seen.value
    )


# -- the reuse itself (a should) ----------------------------------------------------------------


@pytest.mark.requirement("PLAY-060")
@pytest.mark.parametrize("intent", ["play", "prefetch"])
def test_repeat_with_the_same_viewer_ref_returns_the_same_ticket(client, episode, intent):
    body = _viewer_body(episode, intent)
    first = _ticket("PLAY-060", post(client, body))
    response = post(client, body)
    again = _ticket("PLAY-060", response)
    expect(
        "PLAY-060",
        again[0] == first[0],
        expected="the same play_auth_token (reuse, best effort)",
        actual="a new token",
        response=response,
    )


# -- rules about a reused ticket: judged when the server reused ---------------------------------


@pytest.mark.requirement("PLAY-003")
@pytest.mark.parametrize("intent", ["play", "prefetch"])
def test_a_reused_ticket_keeps_its_expires_at(client, episode, intent):
    body = _viewer_body(episode, intent)
    first = _ticket("PLAY-003", post(client, body))
    response = post(client, body)
    again = _ticket("PLAY-003", response)
    skip_unless_reused(again[0] == first[0], f"intent {intent}")
    expect_equal("PLAY-003", again[1], first[1], what="the same expires_at", response=response)


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("PLAY-065")
@pytest.mark.needs("role:limits", "admin")
@pytest.mark.usefixtures("dedicated_counters")
def test_reused_tickets_are_not_counted_toward_the_limit(client, admin, episode):
    """Limit 4: one ticket and 5 repeats. Each repeat the server reused costs nothing, each it
    minted costs one (a repeat may be served by a server that does not hold the ticket): no
    repeat may be refused before the limit is spent by minted tickets, and afterwards new
    tickets are admitted up to the limit and no further. Counting may run high by a unit with
    a lowered limit (docs/reading-of-the-spec.md (LIM (counting)))."""
    limit = 4
    lower(admin, "limits", "playback", limit)
    body = _viewer_body(episode)
    run = repeat_ticket("PLAY-065", lambda: post(client, body, role="limits"), 6)
    skip_unless_reused(run.reused > 0)
    least = fewest_admitted(limit)
    expect(
        "PLAY-065",
        run.refused is None or run.minted >= least,
        expected=f"no repeat refused while fewer than {least} tickets were minted",
        actual=f"429 after {run.minted} minted and {run.reused} reused",
        response=run.refused,
    )
    ok = admitted_count(
        lambda: post(client, {**body, "viewer_ref": new_viewer()}, role="limits"), limit
    )
    low, high = max(0, least - run.minted), max(0, limit - run.minted)
    expect_between(
        "PLAY-065",
        ok,
        low,
        high,
        expected=f"{low} to {high} new tickets after {run.minted} minted and {run.reused} reused",
    )


@pytest.mark.requirement("PLAY-039")
@pytest.mark.needs("fixture:episode_paged_film")
def test_later_batch_items_are_prefetch_and_item_zero_takes_the_top_intent(client, fixture_id):
    """Reuse proves the class each batch item was recorded with: a single request of the same
    class as the item gets its token back, one of the other class never does. Item 1 is asked
    as `play` first (never its token), then as `prefetch` (its token when the server reuses);
    item 0 the other way round. A server that reused neither is not judged here (PLAY-039 is
    also judged where prefetch items are shed, test_limits_admission)."""
    film = fixture_id("episode_paged_film")
    a, b = ({"film_ref": film, "episode_no": n} for n in (1, 2))
    viewer = new_viewer()
    batch = post(client, {"intent": "play", "viewer_ref": viewer, "episodes": [a, b], **DEVICE})
    items = expect_batch("PLAY-039", batch, 2)
    tokens = [item.get("play_auth_token") for item in items]
    reused = False
    for index, item, own, other in ((1, b, "prefetch", "play"), (0, a, "play", "prefetch")):
        for intent in (other, own):
            response = post(client, {**item, "intent": intent, "viewer_ref": viewer, **DEVICE})
            token, _ = _ticket("PLAY-039", response)
            same = token == tokens[index]
            expect(
                "PLAY-039",
                not (same and intent == other),
                expected=f"item {index} recorded as {own}: a single {intent} request never "
                "gets its token",
                actual=f"item {index}'s token for a {intent} request",
                response=response,
            )
            reused |= same
    skip_unless_reused(reused, "of a batch item")
