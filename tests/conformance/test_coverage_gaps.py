"""Rules the suite named but could not charge on their own (issue 13): each scenario here
charges a violation to the exact rule it judges, so a server breaking only that rule fails it.

spec: Endpoints > Paging and envelopes (the success envelope: which members, `code`, `message`,
`links`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import listing_support as listing
import pytest
from envelope_support import envelope_violations
from json_support import arr, at, obj, objs
from playback_support import post

from delivery_conformance.checks import (
    ConformanceFailure,
    Violation,
    expect,
    expect_status,
    violation,
)
from delivery_conformance.evidence import ledger
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.target.client import DeliveryClient, Response

# The envelope lists: path, key role, the rule a list that does not answer 200 breaks.
ENVELOPE_LISTS = (
    ("series", "films_metadata", "SER-030"),
    ("playlists", "videos", "PLS-023"),
    ("creatives", "films", "CRE-032"),
)
ENVELOPE_RULES = ("PAGE-005", "PAGE-006", "PAGE-007", "PAGE-009")


@pytest.mark.needs("role:films", "role:films_metadata", "role:videos")
@pytest.mark.needs("fixture:series_code", "fixture:playlist_code", "fixture:creative_id")
@pytest.mark.requirement("PAGE-005", "PAGE-006", "PAGE-007", "PAGE-009")
def test_every_success_envelope_member_is_judged_by_its_own_rule(client: DeliveryClient) -> None:
    """A list that does not answer 200 is charged to that list's own rule, not to PAGE-*."""
    found: list[Violation] = []
    for path, role, list_rule in ENVELOPE_LISTS:
        response = client.get(path, role=role, params={"limit": 2})
        if response.status_code != 200:
            found.append(
                violation(
                    list_rule,
                    f"GET /{path} did not answer 200",
                    expected="200 with a list envelope",
                    actual=response.status_code,
                    response=response,
                )
            )
            continue
        ledger.record(ENVELOPE_RULES)
        found += envelope_violations(response, listing=True)
    if found:
        raise ConformanceFailure(found)


@pytest.mark.needs("role:videos", "fixture:playlist_code_not_granted")
@pytest.mark.requirement("PLS-025")
def test_a_playlist_not_granted_is_read_like_any_other(
    client: DeliveryClient, fixture_id: Any
) -> None:
    """spec: Endpoints > GET /playlists/{code}: any playlist of the library reads, granted or
    not (what it then holds is PLS-016's)."""
    code = fixture_id("playlist_code_not_granted")
    response = client.get(f"playlists/{code}", role="videos")
    expect_status("PLS-025", response, 200, expected=f"200 for the library playlist {code}")


# -- behaviours the suite had no check for -------------------------------------------------------


@pytest.mark.needs("role:films")
@pytest.mark.requirement("HDR-031")
def test_every_response_has_its_own_request_id(client: DeliveryClient) -> None:
    """spec: Common response headers: `Service-Request-Id` identifies one request."""
    answers = [client.get("config", role="films") for _ in range(5)]
    ids = [r.headers.get("service-request-id") for r in answers]
    repeated = sorted({i for i in ids if i is not None and ids.count(i) > 1})
    expect(
        "HDR-031",
        not repeated,
        expected="five different Service-Request-Id values",
        actual=f"repeated: {repeated}",
        response=answers[-1],
    )


def _catalog_rows(client: DeliveryClient) -> tuple[Response, list[dict[str, Any]]]:
    response = client.get("catalog", role="films")
    expect_status("CAT-001", response, 200, expected="200 for GET /catalog")
    body = response.json_body()
    rows = body.get("episodes") if isinstance(body, dict) else None
    return response, objs(rows)


@pytest.mark.needs("role:films")
@pytest.mark.requirement("CAT-079")
def test_a_row_ready_in_its_space_names_its_video(client: DeliveryClient) -> None:
    """spec: Resources > Episode: `vid` is null until ready; `vid_ready` true means playable."""
    response, rows = _catalog_rows(client)
    bad = [r.get("id") for r in rows if r.get("vid_ready") is True and r.get("vid") is None]
    expect(
        "CAT-079",
        not bad,
        expected="a vid on every row with vid_ready true",
        actual=f"{len(bad)} rows without: {bad[:3]}",
        response=response,
    )


def _within(host: str, domains: list[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


@pytest.mark.needs("role:films")
@pytest.mark.requirement("CAT-080")
def test_poster_links_live_on_a_playback_domain(client: DeliveryClient) -> None:
    """spec: Resources > Episode (`poster_signed_url` on the caller's playback domain);
    GET /config (`playback.domains`). Hosts only are shown: the links are secrets."""
    config = client.get("config", role="films")
    expect_status("CFG-001", config, 200, expected="200 for GET /config")
    body = config.json_body()
    playback = body.get("playback") if isinstance(body, dict) else None
    domains = playback.get("domains") if isinstance(playback, dict) else None
    domains = [d for d in arr(domains) if isinstance(d, str)]
    response, rows = _catalog_rows(client)
    hosts = {
        urlsplit(r["poster_signed_url"]).hostname or ""
        for r in rows
        if isinstance(r.get("poster_signed_url"), str)
    }
    outside = sorted(h for h in hosts if not _within(h, domains))
    expect(
        "CAT-080",
        bool(domains) and not outside,
        expected=f"poster hosts within {domains}",
        actual=f"outside: {outside}" if domains else "no playback.domains",
        response=response,
    )


@pytest.mark.needs("role:videos", "fixture:playlist_code")
@pytest.mark.requirement("PLS-044")
def test_a_ready_clip_names_its_video(client: DeliveryClient, fixture_id: Any) -> None:
    """spec: Resources > Playlist detail: `ready` means copied and playable in `media.space`."""
    response = client.get(f"playlists/{fixture_id('playlist_code')}", role="videos")
    expect_status("PLS-026", response, 200, expected="200 for the playlist")
    body = response.json_body()
    data = body.get("data") if isinstance(body, dict) else None
    clips = data.get("clips") if isinstance(data, dict) else None
    clips = objs(clips)
    bad = [c.get("position") for c in clips if c.get("ready") is True and c.get("vid") is None]
    expect(
        "PLS-044",
        bool(clips) and not bad,
        expected="a vid on every ready clip",
        actual=f"positions without: {bad[:5]}" if clips else "no clips",
        response=response,
    )


def _media_name(code: str, position: int) -> str:
    block = (position - 1) // 100 + 1
    return code if block == 1 else f"{code}-{block}"


@pytest.mark.needs("role:videos")
@pytest.mark.requirement("PLS-008")
def test_a_long_playlist_spreads_over_media_playlists_of_100(client: DeliveryClient) -> None:
    """spec: Resources > Playlist detail (`media.playlists[]`: at most 100 videos each, then
    `<code>-2`...). Needs a granted playlist of more than 100 clips; not exercised without."""
    pages = listing.envelope_walk(client, "playlists", "videos", "PLS-023", limit=100)
    items = listing.items_of(pages)
    long = [
        i
        for i in items
        if i.get("granted") is True
        and isinstance(i.get("clip_count"), int)
        and i["clip_count"] > 100
    ]
    if not long:
        pytest.skip(NOT_EXERCISED_PREFIX + "no granted playlist of more than 100 clips listed")
    code = str(long[0].get("code"))
    detail = client.get(f"playlists/{code}", role="videos")
    expect_status("PLS-026", detail, 200, expected=f"200 for playlist {code}")
    found = detail.json_body()
    playlist = obj(at(found, "data"))
    clips = objs(playlist.get("clips"))
    wrong = [
        (c.get("position"), c.get("playlist_name"))
        for c in clips
        if isinstance(c.get("position"), int)
        and c.get("playlist_name") != _media_name(code, c["position"])
    ]
    media = obj(playlist.get("media"))
    names = [p.get("name") for p in objs(media.get("playlists"))]
    due = [_media_name(code, p) for p in range(1, len(clips) + 1, 100)]
    expect(
        "PLS-008",
        not wrong and names == due,
        expected=f"media playlists {due}, each clip in the one of its hundred",
        actual=f"playlists {names}; clips misplaced {wrong[:3]}",
        response=detail,
    )


@pytest.mark.needs("admin", "role:films", "fixture:episode_signed")
@pytest.mark.requirement("PLAY-095")
def test_a_licence_check_that_times_out_is_a_503_never_a_refusal(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """spec: Errors > Playback (per ticket): a licence or episode check that times out answers
    503 `service_unavailable`; it says nothing about the licence, so never 403 or 404. Sandbox
    outage `licences` (README: Admin API)."""
    admin.outage("licences", True)
    response = post(client, {"episode_id": fixture_id("episode_signed")})
    body = response.json_body()
    code = body.get("error_code") if isinstance(body, dict) else None
    expect(
        "PLAY-095",
        response.status_code == 503 and code == "service_unavailable",
        expected="503 service_unavailable (not 403, not 404)",
        actual=f"{response.status_code} {code!r}",
        response=response,
    )
