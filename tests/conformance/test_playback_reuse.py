"""Server-side ticket reuse with `viewer_ref`, and the intent class that reuse reveals.

spec: POST /playback (server-side reuse; `intent`; `episodes` item 0 takes the top-level intent,
later items default to `prefetch`); Limits (reused ticket = 0; reuse window: until 5 minutes
before `expires_at`); Resources > Playback ticket (never extended). Reuse is best effort: the
spec makes it a should, and the report shows the level of each requirement. README readings
followed: PLAY-039 (an item's own intent is kept), LIM (admin) (lowering caps what is left).
"""

from __future__ import annotations

from typing import Any

import pytest
from expect_support import expect_equal
from json_support import at, objs
from playback_support import (
    DEVICE,
    OTHER_DEVICE,
    expect_answer,
    expect_batch,
    iso_epoch,
    new_viewer,
    post,
)

from delivery_conformance.checks import expect
from delivery_conformance.target.client import Response

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
    token, _ = _ticket(rid, response)
    expect(
        rid,
        token != first[0],
        expected=f"a new play_auth_token after {change}",
        actual="the earlier token",
        response=response,
    )


@pytest.mark.requirement("PLAY-059")
def test_without_viewer_ref_every_request_mints_a_new_ticket(client, episode):
    body = {"episode_id": episode, "intent": "play", **DEVICE}
    first = _ticket("PLAY-059", post(client, body))
    _expect_new("PLAY-059", first, post(client, body), "a repeat without viewer_ref")


@pytest.mark.requirement("PLAY-060", "PLAY-003")
@pytest.mark.parametrize("intent", ["play", "prefetch"])
def test_repeat_with_the_same_viewer_ref_returns_the_same_ticket(client, episode, intent):
    body = {"episode_id": episode, "intent": intent, "viewer_ref": new_viewer(), **DEVICE}
    first = _ticket("PLAY-060", post(client, body))
    response = post(client, body)
    again = _ticket("PLAY-060", response)
    expect(
        "PLAY-060",
        again[0] == first[0],
        expected="the same play_auth_token",
        actual="a new token",
        response=response,
    )
    expect_equal("PLAY-003", again[1], first[1], what="the same expires_at", response=response)


@pytest.mark.requirement("PLAY-061")
def test_another_viewer_ref_gets_a_new_ticket(client, episode):
    body = {"episode_id": episode, "intent": "play", "viewer_ref": new_viewer(), **DEVICE}
    first = _ticket("PLAY-061", post(client, body))
    response = post(client, {**body, "viewer_ref": new_viewer()})
    _expect_new("PLAY-061", first, response, "another viewer_ref")


@pytest.mark.requirement("PLAY-062")
@pytest.mark.parametrize("field", ["union_info", "drm_kek"])
def test_other_device_values_get_a_new_ticket(client, episode, field):
    body = {"episode_id": episode, "intent": "play", "viewer_ref": new_viewer(), **DEVICE}
    first = _ticket("PLAY-062", post(client, body))
    response = post(client, {**body, field: OTHER_DEVICE[field]})
    _expect_new("PLAY-062", first, response, f"another {field}")


@pytest.mark.requirement("PLAY-063")
@pytest.mark.parametrize(
    ("before", "after"), [("play", "prefetch"), ("prefetch", "play"), (None, "prefetch")]
)
def test_another_intent_class_gets_a_new_ticket(client, episode, before, after):
    body: dict[str, Any] = {"episode_id": episode, "viewer_ref": new_viewer(), **DEVICE}
    if before is not None:
        body["intent"] = before
    first = _ticket("PLAY-063", post(client, body))
    response = post(client, {**body, "intent": after})
    _expect_new("PLAY-063", first, response, f"intent {before or 'absent'} then {after}")


@pytest.mark.requirement("PLAY-060")
@pytest.mark.needs("fixture:episode_encrypted_no")
def test_the_same_episode_named_another_way_gets_a_new_ticket(client, fixture_id, episode):
    """Reuse needs the episode identified the same way; by film_ref it is another request."""
    viewer = new_viewer()
    first = _ticket(
        "PLAY-060",
        post(client, {"episode_id": episode, "intent": "play", "viewer_ref": viewer, **DEVICE}),
    )
    catalog = client.get("catalog", role="films").json_body()
    film = next(
        (e.get("film_id") for e in objs(at(catalog, "episodes")) if e.get("id") == episode),
        None,
    )
    body = {
        "film_ref": film,
        "episode_no": int(fixture_id("episode_encrypted_no")),
        "intent": "play",
        "viewer_ref": viewer,
        **DEVICE,
    }
    _expect_new("PLAY-060", first, post(client, body), "naming the episode by film_ref")


@pytest.mark.requirement("PLAY-064")
@pytest.mark.needs("admin")
def test_ticket_with_less_than_five_minutes_left_is_not_reused(client, admin, episode):
    """The target's clock moves 1,501 s: 299 s are left, under the 5 minutes of the reuse
    window. Real time spent in round trips only shortens what is left, so no margin depends
    on the round trip."""
    body = {"episode_id": episode, "intent": "play", "viewer_ref": new_viewer(), **DEVICE}
    first = _ticket("PLAY-064", post(client, body))
    admin.clock(advance=PLAY_TOKEN_TTL - REUSE_MARGIN + 1)
    response = post(client, body)
    token, expires_at = _ticket("PLAY-064", response)
    later = (iso_epoch(expires_at) or 0) > (iso_epoch(first[1]) or float("inf"))
    expect(
        "PLAY-064",
        token != first[0] and later,
        expected="a new token with a later expires_at",
        actual="the earlier token" if token == first[0] else expires_at,
        response=response,
    )


@pytest.mark.requirement("PLAY-065")
@pytest.mark.needs("role:limits", "admin")
def test_reused_tickets_are_not_counted_toward_the_limit(client, admin, episode):
    admin.set_limit("limits", "playback", 2)
    body = {"episode_id": episode, "intent": "play", "viewer_ref": new_viewer(), **DEVICE}
    first = _ticket("PLAY-065", post(client, body, role="limits"))
    for _ in range(5):
        response = post(client, body, role="limits")
        token, _ = _ticket("PLAY-065", response)
        expect(
            "PLAY-065",
            token == first[0],
            expected="the reused token",
            actual="a new token",
            response=response,
        )
    expect_answer(
        "PLAY-065",
        post(client, {**body, "viewer_ref": new_viewer()}, role="limits"),
        200,
        what="for the second real ticket of a limit of 2",
    )
    expect_answer(
        "PLAY-065",
        post(client, {**body, "viewer_ref": new_viewer()}, role="limits"),
        429,
        "rate_limited",
        what="for a third real ticket of a limit of 2",
    )


@pytest.mark.requirement("PLAY-066")
@pytest.mark.needs("role:limits", "admin")
def test_reuse_rechecks_the_organisation(client, admin, episode):
    body = {"episode_id": episode, "intent": "play", "viewer_ref": new_viewer(), **DEVICE}
    _ticket("PLAY-066", post(client, body, role="limits"))
    admin.suspend("limits")
    response = post(client, body, role="limits")
    answer = expect_answer(
        "PLAY-066", response, 403, "not_entitled", what="for a repeat after suspension"
    )
    expect_equal(
        "PLAY-066", answer.get("reason"), "org_suspended", what="reason", response=response
    )


@pytest.mark.requirement("PLAY-039")
@pytest.mark.needs("fixture:episode_paged_film")
def test_later_batch_items_are_prefetch_and_item_zero_takes_the_top_intent(client, fixture_id):
    film = fixture_id("episode_paged_film")
    a, b = ({"film_ref": film, "episode_no": n} for n in (1, 2))
    viewer = new_viewer()
    batch = post(client, {"intent": "play", "viewer_ref": viewer, "episodes": [a, b], **DEVICE})
    items = expect_batch("PLAY-039", batch, 2)
    tokens = [item.get("play_auth_token") for item in items]
    for item, intent, same in ((a, "play", 0), (b, "prefetch", 1)):
        response = post(client, {**item, "intent": intent, "viewer_ref": viewer, **DEVICE})
        token, _ = _ticket("PLAY-039", response)
        expect(
            "PLAY-039",
            token == tokens[same],
            expected=f"item {same}'s token for a single {intent} request",
            actual="a new token",
            response=response,
        )
