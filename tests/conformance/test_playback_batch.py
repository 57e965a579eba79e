"""Batch playback: form A (`episodes`), form B (`next`), the shape of `items[]` and mixed items.

spec: POST /playback (`episodes`, `next`, batch response); Errors > Playback (per ticket);
Limits > Other constants (tickets per batch). Readings followed (docs/reading-of-the-spec.md):
PLAY-045 (a well-formed, admitted batch answers 200 whatever its items' statuses), PLAY-039 (an
item's own `intent` is kept).
"""

from __future__ import annotations

from typing import Any

import pytest
from expect_support import expect_equal
from playback_support import (
    DEVICE,
    TICKET_FIELDS,
    batch_body,
    body_of,
    expect_batch,
    expect_ticket,
    play_body,
    post,
)

from delivery_conformance.checks import expect
from delivery_conformance.target.client import Response

pytestmark = pytest.mark.needs("role:films")

EPISODE_DATA = ("episode_id", "episode_no", *TICKET_FIELDS)


def _expect_item_frames(response: Response, items: list[dict[str, Any]]) -> None:
    """spec: batch response: every item has `request` (object) and `status` (integer)."""
    bad = [
        i
        for i, item in enumerate(items)
        if not isinstance(item.get("request"), dict)
        or not isinstance(item.get("status"), int)
        or isinstance(item.get("status"), bool)
    ]
    expect(
        "PLAY-040",
        not bad,
        expected="request object and integer status on every item",
        actual=f"items {bad} lack them",
        response=response,
    )


def _numbers(items: list[dict[str, Any]]) -> list[object]:
    return [item.get("episode_no") for item in items]


@pytest.mark.requirement("PLAY-026", "PLAY-040")
@pytest.mark.needs("fixture:episode_paged_film")
def test_form_a_answers_one_item_per_episode_in_request_order(client, fixture_id):
    film = fixture_id("episode_paged_film")
    episodes = [
        {"film_ref": film, "episode_no": 3, "intent": "prefetch"},
        {"film_ref": film, "episode_no": 1, "intent": "play"},
        {"film_ref": film, "episode_no": 2},
    ]
    response = post(client, {"intent": "play", "episodes": episodes, **DEVICE})
    items = expect_batch("PLAY-026", response, 3)
    _expect_item_frames(response, items)
    expect_equal(
        "PLAY-026",
        [i.get("status") for i in items],
        [200, 200, 200],
        expected="three tickets",
        response=response,
    )
    expect_equal(
        "PLAY-026",
        _numbers(items),
        [3, 1, 2],
        expected="episode_no 3, 1, 2 (as asked)",
        response=response,
    )


@pytest.mark.requirement("PLAY-027", "PLAY-040")
@pytest.mark.needs("fixture:episode_encrypted")
def test_batch_of_one_still_answers_the_batch_shape(client, fixture_id):
    body = {"episodes": [{"episode_id": fixture_id("episode_encrypted")}], **DEVICE}
    response = post(client, body)
    items = expect_batch("PLAY-027", response, 1)
    _expect_item_frames(response, items)
    top = [name for name in TICKET_FIELDS if name in body_of(response)]
    expect(
        "PLAY-027",
        not top,
        expected="no ticket fields at the top level",
        actual=top,
        response=response,
    )


@pytest.mark.requirement("PLAY-035", "PLAY-040")
@pytest.mark.needs("fixture:episode_encrypted")
def test_next_zero_switches_to_the_batch_shape(client, fixture_id):
    body = play_body(fixture_id, next=0)
    response = post(client, body)
    items = expect_batch("PLAY-035", response, 1)
    _expect_item_frames(response, items)
    expect(
        "PLAY-035",
        items[0].get("status") == 200 and "vid" not in body_of(response),
        expected="one issued item and no top-level ticket",
        actual=f"item status {items[0].get('status')}",
        response=response,
    )


@pytest.mark.requirement("PLAY-036")
@pytest.mark.needs("fixture:episode_paged_film")
def test_next_adds_the_following_episodes_in_order(client, fixture_id):
    body = {"film_ref": fixture_id("episode_paged_film"), "episode_no": 1, "next": 2, **DEVICE}
    response = post(client, body)
    items = expect_batch("PLAY-036", response, 3)
    expect_equal(
        "PLAY-036", _numbers(items), [1, 2, 3], expected="episode_no 1, 2, 3", response=response
    )
    expect(
        "PLAY-036",
        all(i.get("status") == 200 for i in items),
        expected="three tickets",
        actual=[i.get("status") for i in items],
        response=response,
    )


@pytest.mark.requirement("PLAY-037", "PLAY-042")
@pytest.mark.needs("fixture:episode_paged_film", "fixture:episode_last_no")
def test_next_past_the_last_episode_is_a_404_item(client, fixture_id):
    last = int(fixture_id("episode_last_no"))
    body = {"film_ref": fixture_id("episode_paged_film"), "episode_no": last, "next": 2, **DEVICE}
    response = post(client, body)
    items = expect_batch("PLAY-037", response, 3)
    expect_equal(
        "PLAY-037", items[0].get("status"), 200, expected="the anchor issued", response=response
    )
    for item in items[1:]:
        expect(
            "PLAY-037",
            (item.get("status"), item.get("error_code")) == (404, "not_ready"),
            expected="404 not_ready past the end",
            actual=f"{item.get('status')} {item.get('error_code')!r}",
            response=response,
        )
        leaked = [name for name in EPISODE_DATA if name in item]
        expect(
            "PLAY-042",
            isinstance(item.get("error"), str) and not leaked,
            expected="`error` and no episode or ticket data",
            actual=leaked or item.get("error"),
            response=response,
        )


@pytest.mark.requirement("PLAY-041")
@pytest.mark.needs("fixture:episode_encrypted", "fixture:episode_encrypted_no")
def test_issued_items_carry_the_episode_and_the_ticket(client, fixture_id):
    anchor = fixture_id("episode_encrypted")
    number = int(fixture_id("episode_encrypted_no"))
    response = post(client, {"episode_id": anchor, "next": 1, **DEVICE})
    items = expect_batch("PLAY-041", response, 2)
    for item in items:
        expect_equal("PLAY-041", item.get("status"), 200, expected="status 200", response=response)
        missing = [
            n
            for n in ("episode_id", "episode_no", "expires_at", "protection", "subtitles")
            if n not in item
        ]
        expect(
            "PLAY-041",
            not missing,
            expected="episode and ticket fields",
            actual=missing,
            response=response,
        )
        expect_ticket("PLAY-041", item, response)
    expect(
        "PLAY-041",
        (items[0].get("episode_id"), _numbers(items)) == (anchor, [number, number + 1]),
        expected=f"anchor {anchor} then episode_no {number + 1}",
        actual=f"{items[0].get('episode_id')} {_numbers(items)}",
        response=response,
    )


@pytest.mark.requirement("PLAY-045", "PLAY-042")
@pytest.mark.needs("fixture:episode_encrypted", "fixture:episode_not_ready")
def test_a_failed_item_leaves_the_others_issued(client, fixture_id):
    response = post(client, batch_body(fixture_id, "episode_encrypted", "episode_not_ready"))
    items = expect_batch("PLAY-045", response, 2)
    statuses = [(i.get("status"), i.get("error_code")) for i in items]
    expect_equal(
        "PLAY-045",
        statuses,
        [(200, None), (404, "not_ready")],
        expected="item 0 issued, item 1 404 not_ready",
        response=response,
    )
    leaked = [name for name in EPISODE_DATA if name in items[1]]
    expect(
        "PLAY-042",
        not leaked,
        expected="no episode or ticket data on the failed item",
        actual=leaked,
        response=response,
    )


def _after_a_good_item(rid: str, client, fixture_id, fixture: str) -> tuple:
    """A batch of an issuable episode then the fixture's; the answer and its second item."""
    response = post(client, batch_body(fixture_id, "episode_encrypted", fixture))
    return response, expect_batch(rid, response, 2)[1]


@pytest.mark.requirement("PLAY-044")
@pytest.mark.needs("fixture:episode_encrypted", "fixture:episode_outside_window")
def test_a_refused_item_carries_its_reason(client, fixture_id):
    response, item = _after_a_good_item("PLAY-044", client, fixture_id, "episode_outside_window")
    shape = (item.get("status"), item.get("error_code"), item.get("reason"))
    expect_equal(
        "PLAY-044",
        shape,
        (403, "not_entitled", "outside_window"),
        expected="403 not_entitled, reason outside_window",
        response=response,
    )


@pytest.mark.requirement("PLAY-043")
@pytest.mark.needs("fixture:episode_encrypted", "fixture:episode_provider_timeout")
def test_a_503_item_carries_retry_after_in_seconds(client, fixture_id):
    response, item = _after_a_good_item("PLAY-043", client, fixture_id, "episode_provider_timeout")
    wait = item.get("retry_after")
    expect(
        "PLAY-043",
        item.get("status") == 503
        and isinstance(wait, int)
        and not isinstance(wait, bool)
        and wait >= 0,
        expected="status 503 with an integer retry_after",
        actual=f"{item.get('status')}, retry_after {wait!r}",
        response=response,
    )
