"""Single playback requests: the ways to name an episode, the two ticket shapes, lifetimes,
subtitles, intent and viewer_ref acceptance.

spec: POST /playback (body, response 200 single); Resources > Playback ticket; Limits > Other
constants (play token 1,800 s, manifest link 900 s); Limits > Freshness (a ticket is compared
with the catalog for 60 s). Readings followed (docs/reading-of-the-spec.md): PLAY-004 (no
Content-Type), PLAY-056 (code-point order of `lang`), times judged with 5 s of slack.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from expect_support import expect_equal
from json_support import key, objs
from playback_support import (
    DEVICE,
    body_of,
    expect_answer,
    expect_ticket,
    iso_epoch,
    post,
    response_time,
    within,
)
from timing_support import EPISODE, settle

from delivery_conformance.checks import ConformanceFailure, expect, expect_status, violation
from delivery_conformance.target.client import DeliveryClient, Response

pytestmark = pytest.mark.needs("role:films")

PLAY_TOKEN_TTL = 1800
MANIFEST_TTL = 900


def _against_catalog(
    client: DeliveryClient,
    episodes: tuple[str, ...],
    send: Callable[[dict[str, dict[str, Any]]], Response],
) -> tuple[Response, dict[str, Any]]:
    """A ticket request built from the catalog rows of `episodes` (`send(rows)`), and the row
    of the first, read again until the ticket's `vid` is that row's `vid`.

    spec: Limits > Freshness: the catalog and ticket requests may each be served from a cache
    (an episode an earlier scenario withdrew and the reset restored shows in the catalog within
    30 s, in ticket requests within 60 s), so they are compared for 60 s before a difference is
    concluded; a target that agrees at once costs one read of each."""

    def read() -> tuple[Response, dict[str, list[dict[str, Any]]], Response | None]:
        catalog = client.get("catalog", role="films")
        rows = objs(body_of(catalog).get("episodes"))
        found = {e: [r for r in rows if r.get("id") == e] for e in episodes}
        whole = all(len(rs) == 1 for rs in found.values())
        ticket = send({e: rs[0] for e, rs in found.items()}) if whole else None
        return catalog, found, ticket

    def agree(seen: tuple[Response, dict[str, list[dict[str, Any]]], Response | None]) -> bool:
        _, found, ticket = seen
        row = found[episodes[0]]
        return (
            ticket is not None
            and ticket.status_code == 200
            and row[0].get("vid") == (body_of(ticket).get("vid"))
        )

    catalog, found, ticket = settle(read, agree, EPISODE.tickets).value
    expect_status("PLAY-005", catalog, 200, expected="200 from GET /catalog")
    for episode_id, rows in found.items():
        expect(
            "PLAY-005",
            len(rows) == 1,
            expected=f"episode {episode_id} in the catalog",
            actual=f"{len(rows)} rows",
            response=catalog,
        )
    assert ticket is not None
    return ticket, found[episodes[0]][0]


@pytest.fixture
def encrypted(fixture_id) -> str:
    return str(fixture_id("episode_encrypted"))


def _expect_protection(rid: str, ticket: dict, level: str, response) -> None:
    """spec: Playback ticket `protection`: the level of the episode the ticket opens."""
    expect_equal(rid, ticket.get("protection"), level, what="protection", response=response)


@pytest.mark.requirement("PLAY-005", "PLAY-001", "PLAY-048", "PLAY-053")
@pytest.mark.needs("fixture:episode_encrypted")
def test_episode_id_alone_issues_a_token_pair_for_the_catalog_vid(client, encrypted):
    response, row = _against_catalog(
        client, (encrypted,), lambda _: post(client, {"episode_id": encrypted, **DEVICE})
    )
    ticket = expect_answer("PLAY-005", response, 200)
    expect_ticket("PLAY-001", ticket, response)
    for name in ("vid", "play_auth_token"):
        expect(
            "PLAY-048",
            isinstance(ticket.get(name), str) and ticket[name] != "",
            expected=f"`{name}` a non-empty string",
            actual=type(ticket.get(name)).__name__,
            response=response,
        )
    expect_equal("PLAY-005", ticket.get("vid"), row.get("vid"), what="vid", response=response)
    _expect_protection("PLAY-053", ticket, "private-encrypted", response)


@pytest.mark.requirement("PLAY-007", "PLAY-008")
@pytest.mark.needs("fixture:episode_encrypted", "fixture:episode_encrypted_no", "fixture:film_slug")
@pytest.mark.parametrize("form", ["id", "slug"])
def test_film_ref_by_id_or_slug_names_the_same_episode(client, fixture_id, encrypted, form):
    rid = "PLAY-007" if form == "id" else "PLAY-008"
    number = int(fixture_id("episode_encrypted_no"))
    slug = fixture_id("film_slug")

    def send(rows: dict[str, dict[str, Any]]) -> Response:
        ref = rows[encrypted].get("film_id") if form == "id" else slug
        return post(client, {"film_ref": ref, "episode_no": number, **DEVICE})

    response, row = _against_catalog(client, (encrypted,), send)
    ticket = expect_answer(rid, response, 200, what=f"for film_ref by {form}")
    expect_equal(rid, ticket.get("vid"), row.get("vid"), what="vid", response=response)


@pytest.mark.requirement("PLAY-006")
@pytest.mark.needs("fixture:episode_encrypted", "fixture:episode_signed")
def test_episode_id_takes_precedence_over_film_ref(client, fixture_id, encrypted):
    signed = str(fixture_id("episode_signed"))

    def send(rows: dict[str, dict[str, Any]]) -> Response:
        film = rows[signed].get("film_id")
        return post(client, {"episode_id": encrypted, "film_ref": film, "episode_no": 99, **DEVICE})

    response, row = _against_catalog(client, (encrypted, signed), send)
    ticket = expect_answer("PLAY-006", response, 200)
    expect_equal("PLAY-006", ticket.get("vid"), row.get("vid"), what="vid", response=response)


@pytest.mark.requirement("PLAY-004")
def test_json_body_without_content_type_is_accepted(client, encrypted):
    content = json.dumps({"episode_id": encrypted, **DEVICE})
    response = client.post(
        "playback", role="films", content=content, headers={"Content-Type": None}
    )
    expect_answer("PLAY-004", response, 200, what="without Content-Type")


@pytest.mark.requirement("PLAY-020", "PLAY-001", "PLAY-049", "PLAY-054")
@pytest.mark.needs("fixture:episode_signed")
def test_unencrypted_episode_issues_a_manifest_link_without_device_values(client, fixture_id):
    response = post(client, {"episode_id": fixture_id("episode_signed")})
    ticket = expect_answer("PLAY-020", response, 200, what="without device values")
    expect(  # before the shape of every ticket: this rule names the unencrypted one
        "PLAY-049",
        isinstance(ticket.get("manifest_url"), str)
        and "vid" not in ticket
        and "play_auth_token" not in ticket,
        expected="manifest_url and no vid/play_auth_token",
        actual=sorted(k for k in ticket if k in ("vid", "play_auth_token", "manifest_url")),
        response=response,
    )
    expect_ticket("PLAY-001", ticket, response)
    _expect_protection("PLAY-054", ticket, "signed-url-only", response)


@pytest.mark.requirement("PLAY-021", "PLAY-022")
@pytest.mark.parametrize(
    "intent", [None, "watch", 42, "PLAY"], ids=["absent", "watch", "42", "upper"]
)
def test_missing_or_unknown_intent_is_served(client, encrypted, intent):
    body: dict[str, Any] = {"episode_id": encrypted, **DEVICE}
    if intent is not None:
        body["intent"] = intent
    rid = "PLAY-021" if intent is None else "PLAY-022"
    expect_answer(rid, post(client, body), 200, what=f"with intent {intent!r}")


@pytest.mark.requirement("PLAY-024")
def test_viewer_ref_of_256_characters_is_accepted(client, encrypted):
    body = {"episode_id": encrypted, "viewer_ref": "v" * 256, **DEVICE}
    expect_answer("PLAY-024", post(client, body), 200, what="with a 256-character viewer_ref")


def _expect_expiry(rids: tuple[str, ...], response, ttl: int) -> None:
    """A 200 ticket whose expires_at (ISO 8601 UTC, PLAY-050) is `ttl` s after the answer.

    The lifetime is stated twice in the spec (the playback table and States and transitions), so
    a wrong lifetime is charged to every requirement in `rids`. Timing: "after the answer" is the
    answer's own `Date` (else the exchange from start to end), so the round trip never shifts
    the window; the 5 s slack covers Date's whole seconds.
    """
    ticket = expect_answer(rids[0], response, 200)
    expires = iso_epoch(ticket.get("expires_at"))
    expect(
        "PLAY-050",
        expires is not None,
        expected="expires_at an ISO 8601 UTC string",
        actual=ticket.get("expires_at"),
        response=response,
    )
    low, high = response_time(response)
    if not within(expires, low + ttl, high + ttl):
        raise ConformanceFailure(
            [
                violation(
                    rid,
                    f"{rid} not met",
                    expected=f"expires_at {ttl} s after the answer (5 s slack)",
                    actual=f"{(expires or 0) - low:.0f} s after",
                    response=response,
                )
                for rid in rids
            ]
        )


@pytest.mark.requirement("PLAY-050", "PLAY-051", "STATE-018")
def test_play_token_expires_thirty_minutes_after_issue(client, encrypted):
    response = post(client, {"episode_id": encrypted, **DEVICE})
    _expect_expiry(("PLAY-051", "STATE-018"), response, PLAY_TOKEN_TTL)


@pytest.mark.requirement("PLAY-050", "PLAY-052", "STATE-019")
@pytest.mark.needs("fixture:episode_signed")
def test_manifest_link_expires_fifteen_minutes_after_issue(client, fixture_id):
    response = post(client, {"episode_id": fixture_id("episode_signed")})
    _expect_expiry(("PLAY-052", "STATE-019"), response, MANIFEST_TTL)


def _subtitle_problems(subtitles: object) -> list[str]:
    if not isinstance(subtitles, list):
        return [f"subtitles is {type(subtitles).__name__}, not an array"]
    problems = []
    for i, item in enumerate(subtitles):
        if not isinstance(item, dict):
            problems.append(f"subtitles[{i}] not an object")
            continue
        problems += [
            f"subtitles[{i}].{name} not a string"
            for name in ("lang", "url", "format")
            if not isinstance(item.get(name), str)
        ]
    return problems


@pytest.mark.requirement("PLAY-055")
@pytest.mark.parametrize("fixture", ["episode_encrypted", "episode_signed"])
def test_ticket_subtitles_are_an_array_of_lang_url_format(client, fixture_id, fixture):
    body = {"episode_id": fixture_id(fixture)}
    if fixture == "episode_encrypted":
        body.update(DEVICE)
    response = post(client, body)
    ticket = expect_answer("PLAY-055", response, 200)
    problems = _subtitle_problems(ticket.get("subtitles"))
    expect(
        "PLAY-055",
        not problems,
        expected="subtitles[] of {lang, url, format}",
        actual="; ".join(problems),
        response=response,
    )


@pytest.mark.requirement("PLAY-056", "PLAY-057")
def test_ticket_subtitles_are_webvtt_in_lang_order(client, encrypted):
    response = post(client, {"episode_id": encrypted, **DEVICE})
    ticket = expect_answer("PLAY-056", response, 200)
    subtitles = ticket.get("subtitles")
    expect(
        "PLAY-056",
        isinstance(subtitles, list) and len(subtitles) >= 2,
        expected="two or more subtitles on the fixture episode",
        actual=subtitles,
        response=response,
    )
    langs = [s.get("lang") for s in subtitles if isinstance(s, dict)]
    expect_equal(
        "PLAY-056",
        langs,
        sorted(langs, key=str),
        expected="lang in ascending order",
        response=response,
    )
    formats = {key(s.get("format")) for s in subtitles if isinstance(s, dict)}
    expect(
        "PLAY-057",
        formats == {"webvtt"},
        expected="format webvtt on every subtitle",
        actual=sorted(map(str, formats)),
        response=response,
    )


@pytest.mark.requirement("PLAY-058")
def test_subtitle_links_do_not_change_with_each_ticket(client, encrypted):
    first = expect_answer("PLAY-058", post(client, {"episode_id": encrypted, **DEVICE}), 200)
    response = post(client, {"episode_id": encrypted, **DEVICE})
    second = expect_answer("PLAY-058", response, 200)

    def urls(ticket: dict[str, Any]) -> list[object]:
        subs = ticket.get("subtitles")
        return [s.get("url") for s in subs if isinstance(s, dict)] if isinstance(subs, list) else []

    expect(
        "PLAY-058",
        urls(first) == urls(second) and urls(first) != [],
        expected="the same subtitle urls on two tickets",
        actual="they differ or are empty",
        response=response,
    )
