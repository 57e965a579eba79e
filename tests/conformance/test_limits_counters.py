"""What each counter counts: per organisation, shared and separate counters, ticket units,
valid keys only, raised limits, burst and refill.

spec: Limits (table: endpoints, units, refill; "Only requests with a valid key are counted";
"raised ... effective within about a minute"); Authentication item 4 (order of checks).
Lowered limits on the dedicated roles; the admin fixture puts their organisation back after
each test (the whole target, for a scenario that holds it).
Readings followed (docs/reading-of-the-spec.md): LIM (counting) (never more than the limit; up to
2.5 % early, at least one request with a lowered limit: `fewest_admitted`), LIM (defaults) (doors at
the table's value or above), LIM-005 (a should), LIM-013/LIM-020 (refill L/60 per second), LIM-016
(every malformed body costs 1; rejected device values 0 or 1), LIM-018 (every non-200 ticket costs
0), LIM-003.

Timing: every scenario runs as one burst (the `_burst` fixture): it spends counters it lowered
itself on a dedicated organisation (reset by the admin fixture afterwards), and pacing would let
a continuous counter refill in the middle of a count. Where a continuous counter refills while
answers travel, the bound is derived from the measured time (`refilled`), not from a loopback
target; clock-minute counters do not refill within the minute.
"""

from __future__ import annotations

import time
import uuid

import pytest
from expect_support import expect_between
from json_support import at
from limits_support import (
    CLOCK_MINUTE,
    COUNTERS,
    admitted_count,
    expect_each_status,
    fewest_admitted,
    fresh_minute,
    lower,
    play_batch,
    refilled,
    require_fixtures,
    spend,
    spend_timed,
    tickets,
)
from listing_support import envelope_walk, has_items, items_of
from playback_support import (
    DEVICE,
    body_of,
    expect_answer,
    new_viewer,
    play_body,
    post,
    repeat_ticket,
    skip_unless_reused,
)
from timing_support import round_trip

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION, OWN_CLOCK, TARGET

pytestmark = [
    pytest.mark.needs("admin", "role:limits"),
    pytest.mark.usefixtures("dedicated_counters"),
    pytest.mark.exclusive(LIMITS_ORGANISATION),
]

UNKNOWN_KEY = "svc_live_" + "Lm9" * 10 + "q2"
RAISE_BOUND = 65.0  # docs/reading-of-the-spec.md (LIM-003): 65 s
HOLD = 0.5  # spec: Behaviour at the ceiling item 3 (a play request may wait this long)


def _ticket_body(fixture_id) -> dict:
    return play_body(fixture_id, intent="play")


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("LIM-006", "LIM-007")
@pytest.mark.needs("role:limits_videos")
@pytest.mark.parametrize("counter", list(COUNTERS))
def test_lowered_counter_admits_its_limit_and_no_more(client, admin, fixture_id, counter):
    """Spends until the first 429; a continuous counter may admit what refilled meanwhile, a
    clock-minute one starts at second 1 of a minute so that the count stays in it."""
    call = COUNTERS[counter]
    require_fixtures(fixture_id, counter)
    if counter in CLOCK_MINUTE:
        fresh_minute(admin, call.role)
    lower(admin, call.role, counter, 10)
    admitted, refused, took = spend_timed(lambda: call.send(client, fixture_id), limit=25)
    ok = sum(1 for r in admitted if r.status_code == 200)
    back = refilled(counter, 10, took)
    last = refused or admitted[-1]
    expect(
        "LIM-006",
        refused is not None and ok <= 10 + back,
        expected=f"at most {10 + back} admitted ({back} refilled in {took:.1f} s), then 429",
        actual=f"{ok} admitted, {'a 429' if refused else 'no 429'}",
        response=last,
    )
    least = fewest_admitted(10)
    expect_between(
        "LIM-007",
        ok,
        least,
        expected=f"at least {least} of 10 admitted before the first 429",
        response=last,
    )


@pytest.mark.exclusive(LIMITS_ORGANISATION, TARGET)  # it lowers a shared organisation
@pytest.mark.requirement("LIM-001")
@pytest.mark.needs("role:films", "role:films_metadata")
def test_two_keys_of_one_organisation_share_a_counter(client, admin):
    lower(admin, "films", "catalog", 5)
    admitted, refused = spend(
        lambda: client.get("series", role="films_metadata", params={"limit": 1}), limit=10
    )
    expect(
        "LIM-001",
        refused is not None,
        expected="films_metadata reaches the ceiling",
        actual=f"{len(admitted)} answers without 429",
        response=admitted[-1],
    )
    response = client.get("catalog", role="films", params={"limit": 1})
    expect_status("LIM-001", response, 429, expected="429 for the other key at once")


@pytest.mark.parametrize(
    ("counter", "rid", "default"),
    [
        pytest.param(counter, rid, default, marks=pytest.mark.requirement(rid), id=counter)
        for counter, rid, default in (
            ("playback", "LIM-012", 10_800),
            ("catalog", "LIM-019", 3_000),
            ("creatives", "LIM-022", 3_000),
            ("videos", "LIM-025", 3_000),
            ("config", "LIM-028", 600),
        )
    ],
)
def test_doors_report_the_default_limits_or_more(client, admin, counter, rid, default):
    """docs/reading-of-the-spec.md (LIM-012 and the other defaults): the Limits table gives the
    limit an organisation starts with and lets it be raised on request, so in the admin API's start
    state (where every scenario using the admin API leaves the target) each door of /config for the
    organisation of `limits` (its actual limit, LIM-009) is the table's default or more, never less.
    The single-video counter has no door: LIM-026 is left to the load campaign."""
    response = client.get("config", role="limits")
    limit = at(body_of(response), f"rate_limits.doors.{counter}.limit")
    expect(
        rid,
        type(limit) is int and limit >= default,
        expected=f"doors.{counter}.limit {default} or more",
        actual=limit,
        response=response,
    )


@pytest.mark.requirement("LIM-002")
@pytest.mark.needs("role:films_metadata")
def test_another_organisation_is_not_refused(client, admin):
    lower(admin, "limits", "catalog", 3)
    spend(lambda: client.get("catalog", role="limits", params={"limit": 1}), limit=8)
    response = client.get("catalog", role="films_metadata", params={"limit": 1})
    expect_status("LIM-002", response, 200, expected="200 for another organisation")


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("LIM-003")
def test_raised_limit_takes_effect(client, admin):
    """The target's clock then moves on by the bound, as the refill scenarios move it (the
    spec's times are the target's): the raised limit must be in force, so a window admits more
    than the old limit of 2, not merely a fresh window of the old limit."""
    fresh_minute(admin, "limits")  # the config counter counts clock minutes
    lower(admin, "limits", "config", 2)
    _, refused = spend(lambda: client.get("config", role="limits"), limit=6)
    expect(
        "LIM-003",
        refused is not None,
        expected="429 at the lowered limit",
        actual="no 429",
        response=None,
    )
    admin.set_limit("limits", "config", 600)
    admin.clock(advance=RAISE_BOUND, role="limits")
    ok = admitted_count(lambda: client.get("config", role="limits"), 3)
    expect_between(
        "LIM-003",
        ok,
        3,
        expected=f"more than the old limit of 2 admitted {RAISE_BOUND:g} s after the raise",
    )


@pytest.mark.exclusive(LIMITS_ORGANISATION, TARGET)  # it lowers a shared organisation
@pytest.mark.requirement("LIM-004")
@pytest.mark.needs("role:revoked", "role:films")
def test_requests_without_a_valid_key_are_not_counted(client, admin, key):
    """The revoked key belongs to the organisation of `films` (ARCHITECTURE: Key roles), so its
    refused requests would show on that organisation's counter if they were counted."""
    lower(admin, "films", "catalog", 5)
    for secret in (UNKNOWN_KEY, key("revoked"), None):
        expect_each_status(
            "LIM-004",
            lambda s=secret: client.get("catalog", key=s, params={"limit": 1}),
            5,
            401,
            "401",
        )
    ok = admitted_count(lambda: client.get("catalog", role="films", params={"limit": 1}), 5)
    least = fewest_admitted(5)
    expect_between("LIM-004", ok, least, expected=f"{least} to 5 requests with the valid key")


@pytest.mark.requirement("LIM-005")
def test_requests_refused_before_the_rate_limit_step_are_not_counted(client, admin):
    lower(admin, "limits", "catalog", 5)
    expect_each_status(
        "LIM-005",
        lambda: client.get("catalog", role="limits", version="1999-01-01"),
        10,
        400,
        "400 unsupported_version",
    )
    admin.suspend("limits")
    expect_each_status(
        "LIM-005",
        lambda: client.get("catalog", role="limits", params={"limit": 1}),
        5,
        403,
        "403 while suspended",
    )
    admin.unsuspend("limits")
    ok = admitted_count(lambda: client.get("catalog", role="limits", params={"limit": 1}), 5)
    least = fewest_admitted(5)
    expect_between("LIM-005", ok, least, expected=f"{least} to 5 valid requests admitted")


@pytest.mark.requirement("LIM-014", "LIM-006")
@pytest.mark.needs("fixture:episode_encrypted")
def test_full_allowance_is_available_as_a_burst(client, admin, fixture_id):
    """The extra request must be refused only while what refilled (plus a hold) is under one
    ticket: at 30 a minute that holds for a burst shorter than about 1 s of round trips."""
    rt = round_trip(client, "limits")
    lower(admin, "limits", "playback", 30)
    body = _ticket_body(fixture_id)
    batch = play_batch(body["episode_id"])
    start = time.monotonic()
    issued = sum(tickets(post(client, batch, role="limits")) for _ in range(10))
    least = fewest_admitted(30)
    expect_between("LIM-014", issued, least, 30, expected=f"{least} to 30 tickets in a burst")
    level = 30 / 60 * (time.monotonic() - start + rt.worst + HOLD)
    extra = post(client, body, role="limits")
    if level < 1:
        expect_status("LIM-006", extra, 429, expected="429 past the 30 tickets")


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.parametrize(
    ("counter", "rid"),
    [
        pytest.param("playback", "LIM-013", marks=pytest.mark.requirement("LIM-013")),
        pytest.param("catalog", "LIM-020", marks=pytest.mark.requirement("LIM-020")),
    ],
)
@pytest.mark.needs("fixture:episode_encrypted")
@pytest.mark.long
def test_continuous_counter_refills_at_a_sixtieth_of_the_limit_per_second(
    client, admin, fixture_id, counter, rid
):
    """After the first 429, the target's clock moves 10 s: about 10 units come back, plus
    what refills in real time while the count runs (measured, with one round trip), plus 2
    (a play request may be held for the next ticket: spec ceiling item 3)."""
    call = COUNTERS[counter]
    rt = round_trip(client, "limits")
    lower(admin, "limits", counter, 60)
    spend(lambda: call.send(client, fixture_id), limit=70)
    start = time.monotonic()
    admin.clock(advance=10, role="limits")
    ok = admitted_count(lambda: call.send(client, fixture_id), 30)
    high = 10 + refilled(counter, 60, time.monotonic() - start + rt.worst) + 2
    expect_between(
        rid, ok, 9, high, expected=f"about 10 back after 10 s at 60 a minute (9 to {high})"
    )


@pytest.mark.requirement("LIM-015")
@pytest.mark.needs("fixture:episode_encrypted")
def test_a_batch_costs_one_ticket_per_issued_ticket(client, admin, fixture_id):
    lower(admin, "limits", "playback", 9)
    batch = play_batch(fixture_id("episode_encrypted"))
    issued = [tickets(post(client, batch, role="limits")) for _ in range(3)]
    least = fewest_admitted(9)
    expect(
        "LIM-015",
        issued[:2] == [3, 3] and least <= sum(issued) <= 9,
        expected=f"three batches of 3 issued ({least} to 9 tickets: counting may run high)",
        actual=issued,
        response=None,
    )
    extra = post(client, _ticket_body(fixture_id), role="limits")
    expect_status("LIM-015", extra, 429, expected="429 after 9 tickets")


@pytest.mark.requirement("LIM-016")
@pytest.mark.needs("fixture:episode_encrypted")
def test_a_malformed_body_costs_one_ticket(client, admin, fixture_id):
    lower(admin, "limits", "playback", 10)
    bodies = [
        None,
        {},
        {"episodes": []},
        {"episode_id": fixture_id("episode_encrypted"), "union_info": "short", "drm_kek": "short"},
        {"next": 1},
    ]
    for body in bodies:
        response = (
            client.post("playback", role="limits", content="{not json")
            if body is None
            else post(client, body, role="limits")
        )
        expect_status("LIM-016", response, 400, expected="400 for a malformed body")
    ok = admitted_count(lambda: post(client, _ticket_body(fixture_id), role="limits"), 10)
    low, high = fewest_admitted(10) - 5, 10 - 4
    expect_between(
        "LIM-016",
        ok,
        low,
        high,
        expected=f"{low} to {high} tickets left: 1 each for 4 malformed bodies, 0 or 1 for the "
        "rejected device values",
    )


@pytest.mark.requirement("LIM-017")
@pytest.mark.needs("fixture:episode_encrypted")
def test_a_reused_ticket_costs_nothing(client, admin, fixture_id):
    """10 requests with one viewer_ref: each the server reused is free, each it minted costs
    one (reuse is best effort: a server that reused none is not judged here). No repeat may be
    refused before 5 were minted, and 5 less the minted tickets are left afterwards."""
    lower(admin, "limits", "playback", 5)
    body = {**_ticket_body(fixture_id), "viewer_ref": new_viewer()}
    run = repeat_ticket("LIM-017", lambda: post(client, body, role="limits"), 10)
    skip_unless_reused(run.reused > 0)
    least = fewest_admitted(5)
    expect(
        "LIM-017",
        run.refused is None or run.minted >= least,
        expected=f"no repeat refused while fewer than {least} tickets were minted",
        actual=f"429 after {run.minted} minted and {run.reused} reused",
        response=run.refused,
    )
    ok = admitted_count(lambda: post(client, _ticket_body(fixture_id), role="limits"), 5)
    left = max(0, least - run.minted)
    expect_between("LIM-017", ok, left, expected=f"{left} or more tickets after the reuses")


@pytest.mark.requirement("LIM-018")
@pytest.mark.needs("fixture:episode_encrypted")
def test_a_refused_ticket_costs_nothing(client, admin, fixture_id):
    lower(admin, "limits", "playback", 5)
    episode = fixture_id("episode_encrypted")
    for _ in range(6):
        expect_answer(
            "LIM-018",
            post(client, {"episode_id": str(uuid.uuid4()), **DEVICE}, role="limits"),
            404,
            "not_ready",
        )
    expect_answer(
        "LIM-018", post(client, {"episode_id": episode}, role="limits"), 409, "sdk_required"
    )
    missing = {"episodes": [{"episode_id": str(uuid.uuid4())}] * 3, **DEVICE}
    post(client, missing, role="limits")
    ok = admitted_count(lambda: post(client, _ticket_body(fixture_id), role="limits"), 5)
    least = fewest_admitted(5)
    expect_between("LIM-018", ok, least, expected=f"{least} to 5 tickets after refused ones")


@pytest.mark.requirement("LIM-021")
def test_series_and_catalog_share_the_catalog_counter(client, admin):
    # A series code first (pages may be empty while more follow), then 6 calls on a full
    # counter of 6: 4 of the list, 2 of the detail.
    pages = envelope_walk(client, "series", "limits", "LIM-021", limit=1, until=has_items)
    codes = [i.get("code") for i in items_of(pages)]
    expect(
        "LIM-021",
        bool(codes),
        expected="a series for role limits",
        actual=codes,
        response=pages[-1].response,
    )
    lower(admin, "limits", "catalog", 6)
    series = client.get("series", role="limits", params={"limit": 1})
    expect_status("LIM-021", series, 200, expected="200 for GET /series within the counter")
    for _ in range(3):
        client.get("series", role="limits", params={"limit": 1})
    for _ in range(2):
        client.get(f"series/{codes[0]}", role="limits")
    response = client.get("catalog", role="limits", params={"limit": 1})
    expect_status("LIM-021", response, 429, expected="429 on /catalog after 6 series calls")


@pytest.mark.exclusive(LIMITS_ORGANISATION, TARGET)  # it lowers a shared organisation
@pytest.mark.requirement("LIM-021")
@pytest.mark.needs("role:videos", "fixture:playlist_code")
def test_playlists_and_catalog_share_the_catalog_counter(client, admin, fixture_id):
    lower(admin, "videos", "catalog", 4)
    client.get("playlists", role="videos", params={"limit": 1})
    client.get("playlists", role="videos", params={"limit": 1})
    client.get(f"playlists/{fixture_id('playlist_code')}", role="videos")
    client.get(f"playlists/{fixture_id('playlist_code')}", role="videos")
    response = client.get("catalog", role="videos", params={"limit": 1})
    expect_status("LIM-021", response, 429, expected="429 on /catalog after 4 playlist calls")


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("LIM-023")
@pytest.mark.needs("fixture:creative_id")
@pytest.mark.parametrize("last", ["list", "single", "file"])
def test_creatives_endpoints_share_one_counter(client, admin, fixture_id, last):
    fresh_minute(admin, "limits")  # the creatives counter counts clock minutes
    lower(admin, "limits", "creatives", 6)
    cid = fixture_id("creative_id")
    calls = {
        "list": lambda: client.get("creatives", role="limits", params={"limit": 1}),
        "single": lambda: client.get(f"creatives/{cid}", role="limits"),
        "file": lambda: client.get(
            f"creatives/{cid}/file", role="limits", params={"redirect": "0"}
        ),
    }
    least = fewest_admitted(6)  # counting may run high: the 6th call may already be refused
    for count, name in enumerate(("list", "list", "single", "single", "file", "file"), 1):
        response = calls[name]()
        expect(
            "LIM-023",
            response.status_code != 429 or count > least,
            expected=f"room for {least} to 6 calls",
            actual=f"429 on call {count}",
            response=response,
        )
    response = calls[last]()
    expect_status("LIM-023", response, 429, expected=f"429 on {last} after 6 calls")


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("LIM-027")
@pytest.mark.needs("role:limits_videos", "fixture:video_id")
@pytest.mark.parametrize("exhausted", ["videos", "video"])
def test_video_list_and_single_are_counted_separately(client, admin, fixture_id, exhausted):
    other = "video" if exhausted == "videos" else "videos"
    fresh_minute(admin, "limits_videos")  # both counters count clock minutes
    lower(admin, "limits_videos", exhausted, 3)
    _, refused = spend(lambda: COUNTERS[exhausted].send(client, fixture_id), limit=8)
    expect(
        "LIM-027",
        refused is not None,
        expected=f"{exhausted} reaches its ceiling",
        actual="no 429",
        response=None,
    )
    response = COUNTERS[other].send(client, fixture_id)
    expect_status("LIM-027", response, 200, expected=f"{other} still answers 200")
