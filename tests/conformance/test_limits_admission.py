"""Playback admission near and at the ceiling: whole 429, prefetch shedding, batch order, hold.

spec: Limits > Behaviour at the ceiling (items 1 to 3); POST /playback (batch: items admitted
one by one, prefetch last; `next` items are prefetch); Errors > Playback (whole 429 and per-item
429 with `retry_after`). Readings followed (docs/reading-of-the-spec.md): LIM-035 (shedding onset
between 25 % and 15 % left), LIM-041/PLAY-047 (whole 429 only when no item issued and one was
refused by the limiter), LIM-042 (429 before the body is read), LIM-043 (a hold of up to 0.7 s is
accepted).

Timing: every scenario runs as one burst (the `_burst` fixture): it spends the playback or
catalog counter of the dedicated `limits` organisation, lowered by the test itself and reset by
the admin fixture afterwards, so pacing must not pause it while the bucket refills. Scenarios
that need a precise level or an empty bucket measure the round trip first (`round_trip`) and
either top up what refilled while spending or drain until the first refusal; each docstring
states what it assumes.
"""

from __future__ import annotations

import time

import pytest
from expect_support import expect_equal
from limits_support import (
    drain_play,
    fewest_admitted,
    lower,
    median_elapsed,
    play_batch,
    refilled,
    spend_to_ceiling,
    tickets,
)
from playback_support import DEVICE, body_of, expect_answer, expect_batch, post
from timing_support import round_trip

from delivery_conformance.checks import ConformanceFailure, expect, violation
from delivery_conformance.evidence import ledger
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import Response

# The catalog limit LIM-045 lowers the counter to: its refill (one call every 2 s) leaves a
# sequential sender ahead of it up to a round trip of about 1 s.
CATALOG_CEILING = 30

pytestmark = [
    pytest.mark.needs("admin", "role:limits", "fixture:episode_encrypted"),
    pytest.mark.usefixtures("dedicated_counters"),
    pytest.mark.exclusive(LIMITS_ORGANISATION),
]

SHED_LIMIT = 100
MAX_HOLD = 0.7


@pytest.fixture
def episode(fixture_id) -> str:
    return str(fixture_id("episode_encrypted"))


def _lower(admin, limit: int) -> None:
    lower(admin, "limits", "playback", limit)


def _single(client, episode: str, intent: str = "play") -> Response:
    return post(client, {"episode_id": episode, "intent": intent, **DEVICE}, role="limits")


def _spend_tickets(client, episode: str, count: int, limit: int | None = None) -> None:
    """Spend `count` tickets with play requests (batches of 3, then singles).

    With `limit` (the lowered limit), the tickets that refilled while spending are spent too,
    so the bucket ends `count` below full whatever the round trip (bounded: 3 rounds).
    """
    batch = play_batch(episode)
    issued, goal, start = 0, count, time.monotonic()
    for _ in range(3):
        for _ in range((goal - issued) // 3):
            issued += tickets(post(client, batch, role="limits"))
        for _ in range(goal - issued):
            issued += tickets(_single(client, episode))
        back = 0 if limit is None else refilled("playback", limit, time.monotonic() - start)
        if count + back <= goal:
            break
        goal = count + back
    # Counting may run up to 2.5 % high (Limits): the limit may stop the spending that early.
    least = goal - (0 if limit is None else limit - fewest_admitted(limit))
    expect(
        "LIM-006",
        least <= issued <= goal,
        expected=f"{least} to {goal} tickets spent under the limit ({goal - count} refilled "
        "meanwhile)",
        actual=issued,
        response=None,
    )


def _expect_all(
    rids: tuple[str, ...],
    condition: bool,
    *,
    expected: str,
    actual: object,
    response: Response,
    title: str | None = None,
) -> None:
    """`expect` for one rule the spec states under several IDs: a miss is charged to each."""
    ledger.record(rids)
    if not condition:
        raise ConformanceFailure(
            [
                violation(
                    rid,
                    title or f"{rid} not met",
                    expected=expected,
                    actual=actual,
                    response=response,
                )
                for rid in rids
            ]
        )


def _expect_refused_item(
    rids: str | tuple[str, ...], response: Response, item: dict, shed: bool | None
) -> None:
    wait = item.get("retry_after")
    problems = []
    if (item.get("status"), item.get("error_code")) != (429, "rate_limited"):
        problems.append(f"{item.get('status')} {item.get('error_code')!r}")
    if not isinstance(wait, int) or isinstance(wait, bool) or wait < 0:
        problems.append(f"retry_after {wait!r}")
    if shed is True and item.get("reason") != "prefetch_shed":
        problems.append(f"reason {item.get('reason')!r}")
    _expect_all(
        (rids,) if isinstance(rids, str) else rids,
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
        expect_equal(
            rid, body.get("reason"), reason, expected=f"reason {reason}", response=response
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
    _spend_tickets(client, episode, 88, SHED_LIMIT)
    shed = _single(client, episode, "prefetch")
    body = body_of(shed)
    expect(
        "LIM-035",
        (shed.status_code, body.get("reason")) == (429, "prefetch_shed"),
        expected="429 prefetch_shed with 12 % left",
        actual=f"{shed.status_code} reason {body.get('reason')!r}",
        response=shed,
    )
    # One rule stated twice (Limits, Errors > Playback): a shed 429 without a Retry-After in
    # seconds is charged to both.
    wait = shed.headers.get("retry-after", "")
    _expect_all(
        ("PLAY-075", "LIM-038"),
        wait.isdigit() and int(wait) > 0,
        expected="Retry-After in seconds",
        actual=wait or "none",
        response=shed,
        title="shed 429 without Retry-After",
    )
    _expect_whole_429("PLAY-075", shed, "prefetch_shed")
    expect_answer("LIM-037", _single(client, episode, "play"), 200, what="for play while shedding")


@pytest.mark.requirement("LIM-040", "PLAY-090", "PLAY-039")
def test_batch_in_the_shedding_band_sheds_its_prefetch_items(client, admin, episode):
    _lower(admin, SHED_LIMIT)
    _spend_tickets(client, episode, 88, SHED_LIMIT)
    item = {"episode_id": episode}
    response = post(client, {"intent": "play", "episodes": [item, item], **DEVICE}, role="limits")
    items = expect_batch("LIM-040", response, 2)
    expect_equal(
        "LIM-040", items[0].get("status"), 200, expected="item 0 (play) issued", response=response
    )
    # One rule stated twice (Limits, Errors > Playback): a bad shed item is charged to both.
    _expect_refused_item(("LIM-040", "PLAY-090"), response, items[1], shed=True)
    own = {"intent": "play", "episodes": [item, {**item, "intent": "play"}], **DEVICE}
    both = expect_batch("PLAY-039", post(client, own, role="limits"), 2)
    expect_equal(
        "PLAY-039",
        [i.get("status") for i in both],
        [200, 200],
        expected="an item with its own intent play is issued while shedding",
        response=response,
    )


@pytest.mark.requirement("PLAY-038")
def test_next_items_are_prefetch(client, admin, episode):
    _lower(admin, SHED_LIMIT)
    _spend_tickets(client, episode, 88, SHED_LIMIT)
    response = post(
        client, {"episode_id": episode, "intent": "play", "next": 1, **DEVICE}, role="limits"
    )
    items = expect_batch("PLAY-038", response, 2)
    shape = [(i.get("status"), i.get("reason")) for i in items]
    expect_equal(
        "PLAY-038",
        shape,
        [(200, None), (429, "prefetch_shed")],
        expected="anchor issued, next item shed as a prefetch",
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
    expect_equal(
        "PLAY-046",
        statuses,
        [200, 429, 200],
        expected="items 0 and 2 (play) issued, item 1 (prefetch) refused",
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
    _expect_all(  # one rule stated twice (POST /playback, Limits): a whole 429 too early
        ("PLAY-047", "LIM-041"),
        response.status_code == 200,
        expected="200: one item could be issued",
        actual=response.status_code,
        response=response,
    )
    items = expect_batch("LIM-041", response, 2)
    statuses = [i.get("status") for i in items]
    expect(
        "PLAY-047",
        200 in statuses,
        expected="one item issued",
        actual=statuses,
        response=response,
    )
    # Which item got the last ticket is the admission order's rule (play before prefetch).
    expect_equal(
        "LIM-039",
        statuses,
        [200, 429],
        expected="items 200 (play) and 429 (prefetch)",
        response=response,
    )
    _expect_whole_429("LIM-041", post(client, batch, role="limits"))


def _expect_hold_bounded(answers: list[Response], bound: float) -> None:
    """spec: Behaviour at the ceiling item 3: no play answer is held past the hold bound."""
    slowest = max(answers, key=lambda r: r.exchange.elapsed)
    expect(
        "LIM-043",
        slowest.exchange.elapsed <= bound,
        expected=f"every play answer within {bound:.2f} s (round trip + {MAX_HOLD} s hold)",
        actual=f"{slowest.exchange.elapsed:.2f} s",
        response=slowest,
    )


def _drain(client, episode: str, limit: int, bound: float) -> Response:
    batches = limit // 3 + 20
    answers, refused = drain_play(client, episode, "limits", batches, held_over=bound)
    _expect_hold_bounded(answers, bound)
    expect(
        "LIM-043",
        refused is not None,
        expected=f"an item refused within {batches} play batches at a limit of {limit}",
        actual=f"{sum(tickets(a) for a in answers)} tickets issued, none refused",
        response=answers[-1],
    )
    assert refused is not None
    return refused


@pytest.mark.requirement("LIM-043")
def test_play_request_just_before_room_is_held_then_issued(client, admin, episode):
    """Assumes the round trip is well under the refill interval chosen from it.

    The interval is max(0.45 s, round trip + 0.3 s) per ticket (a refill 2.5 % slow, counting
    on the high side, still brings room within the 0.5 s hold). Play-only batches drain the
    bucket until an item is refused (the count is not assumed: it refills while answers
    travel); then each play request arrives about one round trip after the last ticket was
    taken, a few hundred milliseconds before the next one: it must be held and issued.
    "Held" means the answer took at least 0.05 s more than the median round trip.
    """
    rt = round_trip(client, "limits")
    interval = max(0.45, rt.median + 0.3)
    limit = int(60 / interval)
    _lower(admin, limit)
    bound = rt.worst + MAX_HOLD
    _drain(client, episode, limit, bound)
    held = [_single(client, episode) for _ in range(3)]
    statuses = [r.status_code for r in held]
    expect_equal(
        "LIM-043",
        statuses,
        [200, 200, 200],
        expected="play requests held and issued",
        response=held[-1],
    )
    _expect_hold_bounded(held, bound)
    longest = max(r.exchange.elapsed for r in held) - rt.median
    expect(
        "LIM-043",
        longest >= 0.05,
        expected=f"a hold (answer 0.05 s or more over the {rt.median:.3f} s round trip)",
        actual=f"{longest:.2f} s over it",
        response=held[-1],
    )


@pytest.mark.requirement("LIM-043")
def test_play_request_far_from_room_is_refused_at_once(client, admin, episode):
    """Assumes a round trip under about 1.4 s: room is then over 0.5 s away when it arrives.

    At 30 a minute a ticket comes every 2 s. Play-only batches drain the bucket until an item is
    refused; the next play request arrives one round trip after the last ticket was taken, so
    room is about 2 s away: it must be refused without a hold (within the round trip + 0.3 s).
    """
    rt = round_trip(client, "limits")
    _lower(admin, 30)
    _drain(client, episode, 30, rt.worst + MAX_HOLD)
    response = _single(client, episode)
    expect(
        "LIM-043",
        response.status_code == 429 and response.exchange.elapsed <= rt.at_once,
        expected=f"429 within {rt.at_once:.2f} s when room is 2 s away",
        actual=f"{response.status_code} after {response.exchange.elapsed:.2f} s",
        response=response,
    )


@pytest.mark.requirement("LIM-044")
def test_prefetch_at_the_ceiling_is_never_held(client, admin, episode):
    """The bound is the median of the admitted prefetches' own answers + 0.1 s: no hold."""
    _lower(admin, 120)
    admitted = [_single(client, episode, "prefetch") for _ in range(5)]
    _spend_tickets(client, episode, 115, 120)
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
    """Spends until the first 429 (the limit, plus what refills meanwhile: the same verdict at any
    round trip); the bound is the median admitted answer + 0.1 s: no hold."""
    lower(admin, "limits", "catalog", CATALOG_CEILING)
    seen = spend_to_ceiling(
        lambda: client.get("catalog", role="limits", params={"limit": 1}),
        "catalog",
        CATALOG_CEILING,
    )
    if not seen.outpaced:
        pytest.skip(
            f"{NOT_EXERCISED_PREFIX}{len(seen.admitted)} catalog calls in 60 s never got ahead "
            f"of a refill of {CATALOG_CEILING} a minute (the target is too far for this counter)"
        )
    refused = seen.refused
    bound = median_elapsed(seen.admitted) + 0.1
    expect(
        "LIM-045",
        refused is not None and refused.exchange.elapsed <= bound,
        expected=f"429 within {bound:.2f} s",
        actual=f"no 429 after {len(seen.admitted)} calls"
        if refused is None
        else f"{refused.exchange.elapsed:.2f} s",
        response=refused,
    )
