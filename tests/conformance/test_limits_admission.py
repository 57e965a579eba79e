"""Playback admission near and at the ceiling: whole 429, prefetch shedding, batch order, hold.

spec: Limits > Behaviour at the ceiling (items 1 to 3); POST /playback (batch: items admitted
one by one, prefetch last; `next` items are prefetch); Errors > Playback (whole 429 and per-item
429 with `retry_after`). README readings followed: LIM-035 (shedding onset between 25 % and 15 %
left), LIM-041/PLAY-047 (whole 429 only when no item issued and one was refused by the limiter),
LIM-042 (429 before the body is read), LIM-043 (a hold of up to 0.7 s is accepted).
"""

from __future__ import annotations

import pytest
from limits_support import lower, median_elapsed, play_batch, spend, tickets
from playback_support import DEVICE, body_of, expect_answer, expect_batch, post

from delivery_conformance.checks import expect
from delivery_conformance.client import Response

pytestmark = pytest.mark.needs("admin", "role:limits", "fixture:episode_encrypted")

SHED_LIMIT = 100
MAX_HOLD = 0.7


@pytest.fixture
def episode(fixture_id) -> str:
    return str(fixture_id("episode_encrypted"))


def _lower(admin, limit: int) -> None:
    lower(admin, "limits", "playback", limit)


def _single(client, episode: str, intent: str = "play") -> Response:
    return post(client, {"episode_id": episode, "intent": intent, **DEVICE}, role="limits")


def _spend_tickets(client, episode: str, count: int) -> None:
    """Spend `count` tickets with play requests (batches of 3, then singles)."""
    batch = play_batch(episode)
    issued = 0
    for _ in range(count // 3):
        issued += tickets(post(client, batch, role="limits"))
    for _ in range(count - issued):
        issued += tickets(_single(client, episode))
    expect(
        "LIM-006",
        issued == count,
        expected=f"{count} tickets spent under the limit",
        actual=issued,
        response=None,
    )


def _expect_refused_item(rid: str, response: Response, item: dict, shed: bool | None) -> None:
    wait = item.get("retry_after")
    problems = []
    if (item.get("status"), item.get("error_code")) != (429, "rate_limited"):
        problems.append(f"{item.get('status')} {item.get('error_code')!r}")
    if not isinstance(wait, int) or isinstance(wait, bool) or wait < 0:
        problems.append(f"retry_after {wait!r}")
    if shed is True and item.get("reason") != "prefetch_shed":
        problems.append(f"reason {item.get('reason')!r}")
    expect(
        rid,
        not problems,
        expected="item 429 rate_limited with an integer retry_after"
        + (" and reason prefetch_shed" if shed else ""),
        actual="; ".join(problems),
        response=response,
    )


def _expect_whole_429(rid: str, response: Response, reason: str | None = None) -> None:
    body = expect_answer(rid, response, 429, "rate_limited")
    wait = response.headers.get("retry-after", "")
    expect(
        rid,
        wait.isdigit() and int(wait) > 0,
        expected="Retry-After in seconds",
        actual=wait or "none",
        response=response,
    )
    if reason is not None:
        expect(
            rid,
            body.get("reason") == reason,
            expected=f"reason {reason}",
            actual=body.get("reason"),
            response=response,
        )


@pytest.mark.requirement("PLAY-074")
def test_no_ticket_left_answers_a_whole_429(client, admin, episode):
    _lower(admin, 1)
    expect_answer("PLAY-074", _single(client, episode), 200, what="for the one ticket")
    _expect_whole_429("PLAY-074", _single(client, episode))


@pytest.mark.requirement("LIM-042")
def test_no_ticket_left_is_429_before_the_body_is_read(client, admin, episode):
    _lower(admin, 2)
    _spend_tickets(client, episode, 2)
    response = client.post("playback", role="limits", content="{not json")
    _expect_whole_429("LIM-042", response)


@pytest.mark.requirement("LIM-036")
@pytest.mark.parametrize("spent", [0, 60])
def test_prefetch_is_served_while_plenty_is_left(client, admin, episode, spent):
    _lower(admin, SHED_LIMIT)
    _spend_tickets(client, episode, spent)
    response = _single(client, episode, "prefetch")
    expect_answer("LIM-036", response, 200, what=f"for a prefetch with {100 - spent} % left")


@pytest.mark.requirement("LIM-035", "LIM-037", "LIM-038", "PLAY-075")
def test_prefetch_is_shed_near_the_ceiling_while_play_is_issued(client, admin, episode):
    _lower(admin, SHED_LIMIT)
    _spend_tickets(client, episode, 88)
    shed = _single(client, episode, "prefetch")
    body = body_of(shed)
    expect(
        "LIM-035",
        (shed.status_code, body.get("reason")) == (429, "prefetch_shed"),
        expected="429 prefetch_shed with 12 % left",
        actual=f"{shed.status_code} reason {body.get('reason')!r}",
        response=shed,
    )
    _expect_whole_429("PLAY-075", shed, "prefetch_shed")
    _expect_whole_429("LIM-038", shed)
    expect_answer("LIM-037", _single(client, episode, "play"), 200, what="for play while shedding")


@pytest.mark.requirement("LIM-040", "PLAY-090", "PLAY-039")
def test_batch_in_the_shedding_band_sheds_its_prefetch_items(client, admin, episode):
    _lower(admin, SHED_LIMIT)
    _spend_tickets(client, episode, 88)
    item = {"episode_id": episode}
    response = post(client, {"intent": "play", "episodes": [item, item], **DEVICE}, role="limits")
    items = expect_batch("LIM-040", response, 2)
    expect(
        "LIM-040",
        items[0].get("status") == 200,
        expected="item 0 (play) issued",
        actual=items[0].get("status"),
        response=response,
    )
    _expect_refused_item("LIM-040", response, items[1], shed=True)
    _expect_refused_item("PLAY-090", response, items[1], shed=True)
    own = {"intent": "play", "episodes": [item, {**item, "intent": "play"}], **DEVICE}
    both = expect_batch("PLAY-039", post(client, own, role="limits"), 2)
    expect(
        "PLAY-039",
        [i.get("status") for i in both] == [200, 200],
        expected="an item with its own intent play is issued while shedding",
        actual=[i.get("status") for i in both],
        response=response,
    )


@pytest.mark.requirement("PLAY-038")
def test_next_items_are_prefetch(client, admin, episode):
    _lower(admin, SHED_LIMIT)
    _spend_tickets(client, episode, 88)
    response = post(
        client, {"episode_id": episode, "intent": "play", "next": 1, **DEVICE}, role="limits"
    )
    items = expect_batch("PLAY-038", response, 2)
    shape = [(i.get("status"), i.get("reason")) for i in items]
    expect(
        "PLAY-038",
        shape == [(200, None), (429, "prefetch_shed")],
        expected="anchor issued, next item shed as a prefetch",
        actual=shape,
        response=response,
    )


@pytest.mark.requirement("PLAY-046", "LIM-039", "LIM-040", "PLAY-043")
def test_batch_admits_play_items_before_prefetch_items(client, admin, episode):
    _lower(admin, 4)
    _spend_tickets(client, episode, 2)
    item = {"episode_id": episode}
    episodes = [item, item, {**item, "intent": "play"}]  # item 1 defaults to prefetch
    response = post(client, {"intent": "play", "episodes": episodes, **DEVICE}, role="limits")
    items = expect_batch("LIM-039", response, 3)
    statuses = [i.get("status") for i in items]
    expect(
        "PLAY-046",
        statuses == [200, 429, 200],
        expected="items 0 and 2 (play) issued, item 1 (prefetch) refused",
        actual=statuses,
        response=response,
    )
    _expect_refused_item("LIM-040", response, items[1], shed=None)
    _expect_refused_item("PLAY-043", response, items[1], shed=None)


@pytest.mark.requirement("PLAY-047", "LIM-041", "LIM-039")
def test_batch_is_429_as_a_whole_only_when_no_item_is_issued(client, admin, episode):
    _lower(admin, 4)
    _spend_tickets(client, episode, 3)
    batch = {"intent": "play", "episodes": [{"episode_id": episode}] * 2, **DEVICE}
    response = post(client, batch, role="limits")
    items = expect_batch("LIM-041", response, 2)
    statuses = [i.get("status") for i in items]
    expect(
        "PLAY-047",
        statuses == [200, 429],
        expected="200 with items 200 and 429",
        actual=statuses,
        response=response,
    )
    _expect_whole_429("LIM-041", post(client, batch, role="limits"))


@pytest.mark.requirement("LIM-043")
def test_play_request_just_before_room_is_held_then_issued(client, admin, episode):
    _lower(admin, 120)  # a ticket every 0.5 s
    _spend_tickets(client, episode, 120)
    held = [_single(client, episode) for _ in range(3)]
    statuses = [r.status_code for r in held]
    expect(
        "LIM-043",
        statuses == [200, 200, 200],
        expected="play requests held and issued",
        actual=statuses,
        response=held[-1],
    )
    slowest = max(r.exchange.elapsed for r in held)
    expect(
        "LIM-043",
        0.05 <= slowest <= MAX_HOLD,
        expected=f"a hold between 0.05 and {MAX_HOLD} s",
        actual=f"{slowest:.2f} s",
        response=held[-1],
    )


@pytest.mark.requirement("LIM-043")
def test_play_request_far_from_room_is_refused_at_once(client, admin, episode):
    _lower(admin, 30)  # a ticket every 2 s
    _spend_tickets(client, episode, 30)
    response = _single(client, episode)
    expect(
        "LIM-043",
        response.status_code == 429 and response.exchange.elapsed <= MAX_HOLD,
        expected=f"429 within {MAX_HOLD} s when room is 2 s away",
        actual=f"{response.status_code} after {response.exchange.elapsed:.2f} s",
        response=response,
    )


@pytest.mark.requirement("LIM-044")
def test_prefetch_at_the_ceiling_is_never_held(client, admin, episode):
    _lower(admin, 120)
    admitted = [_single(client, episode, "prefetch") for _ in range(5)]
    _spend_tickets(client, episode, 115)
    refused = _single(client, episode, "prefetch")
    bound = median_elapsed([r for r in admitted if r.status_code == 200]) + 0.1
    expect(
        "LIM-044",
        refused.status_code == 429 and refused.exchange.elapsed <= bound,
        expected=f"429 within {bound:.2f} s",
        actual=f"{refused.status_code} after {refused.exchange.elapsed:.2f} s",
        response=refused,
    )


@pytest.mark.requirement("LIM-045")
def test_catalog_at_the_ceiling_is_never_held(client, admin):
    lower(admin, "limits", "catalog", 120)
    admitted, refused = spend(
        lambda: client.get("catalog", role="limits", params={"limit": 1}), limit=140
    )
    bound = median_elapsed(admitted) + 0.1
    expect(
        "LIM-045",
        refused is not None and refused.exchange.elapsed <= bound,
        expected=f"429 within {bound:.2f} s",
        actual="no 429" if refused is None else f"{refused.exchange.elapsed:.2f} s",
        response=refused,
    )
