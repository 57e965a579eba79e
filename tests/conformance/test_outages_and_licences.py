"""Outages, licence and episode changes, a second video organisation, not-ready videos.

spec: Errors > Catalog, Config, Series and playlists, Creatives (the 503 rows); States and
transitions (Series); Freshness (licences, episodes); Resources > Playlist detail
(`metadata_version`); Endpoints > GET /videos, GET /videos/{id}. Admin-driven scenarios use the
target's admin API (outages, licences, episodes); the `admin` fixture resets the target after.
Readings (docs/reading-of-the-spec.md): CAT-076, CFG-034, SER-045, PLS-041, CRE-059 (outages).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from json_support import at, body_of, obj, objs
from listing_support import (
    Code,
    Family,
    envelope_walk,
    error_shape_violations,
    expect_error,
    items_of,
    row_params,
    walk,
)
from playback_support import BASIC_DEVICE, play_body, post
from timing_support import CATALOG_AGE, EPISODE, LICENCE, settle, settle_steady

from delivery_conformance.checks import ConformanceFailure, expect
from delivery_conformance.target.client import DeliveryClient

LICENCE_BOUND = LICENCE.catalog  # spec: Freshness, licence changes in catalog and tickets
EPISODE_CATALOG_BOUND, EPISODE_TICKET_BOUND = EPISODE.catalog, EPISODE.tickets
POLL_EVERY = 0.25


def poll(send: Callable[[], Any], done: Callable[[Any], bool], bound: float) -> tuple[Any, bool]:
    """Call `send` until `done`, or until a call sent `bound` seconds after the first is not.

    Timing: the bounds (30 s, 60 s) are the spec's Freshness table; the answer that shows the
    change is the one received, so a round trip of up to a second or two is inside them.
    """
    seen = settle(send, done, bound, every=POLL_EVERY)
    return seen.value, seen.settled


def retry_after_ok(response: Any) -> bool:
    value = response.headers.get("retry-after", "")
    return value.isdigit()


# -- outages -----------------------------------------------------------------------------------

# (requirement, area, path template, role, where the code sits, code)
OUTAGES = [
    ("CAT-076", "catalog", "catalog", "films", Code.ERROR_CODE, "service_unavailable"),
    ("CFG-034", "config", "config", "films", Code.ERROR_CODE, "service_unavailable"),
    ("SER-045", "series", "series", "films", Code.ENVELOPE, 5030),
    ("SER-045", "series", "series/{series_code}", "films", Code.ENVELOPE, 5030),
    ("PLS-041", "playlists", "playlists", "videos", Code.ENVELOPE, 5030),
    ("PLS-041", "playlists", "playlists/{playlist_code}", "videos", Code.ENVELOPE, 5030),
    ("CRE-059", "creatives", "creatives", "films", Code.ENVELOPE, 5030),
    ("CRE-059", "creatives", "creatives/{creative_id}", "films", Code.ENVELOPE, 5030),
    ("CRE-059", "creatives", "creatives/{creative_id}/file", "films", Code.ENVELOPE, 5030),
]


def _fixtures_in(template: str) -> list[str]:
    return [part[1:-1] for part in template.split("/") if part.startswith("{")]


def _outage_marks(row: tuple) -> list[Any]:
    """The row's ID, the admin API, its role and the fixtures its path names."""
    fixtures = (f"fixture:{f}" for f in _fixtures_in(row[2]))
    return [
        pytest.mark.requirement(row[0]),
        pytest.mark.needs("admin", f"role:{row[3]}", *fixtures),
    ]


@pytest.mark.parametrize(
    ("requirement_id", "area", "template", "role", "where", "code"),
    row_params(OUTAGES, _outage_marks, lambda row: f"{row[0]}-{row[2]}", whole=False),
)
def test_outage_answers_the_retryable_503_of_its_error_table(
    client: DeliveryClient,
    admin: Any,
    fixture_id: Any,
    requirement_id: str,
    area: str,
    template: str,
    role: str,
    where: Code,
    code: object,
) -> None:
    path = template.format(**{name: fixture_id(name) for name in _fixtures_in(template)})
    admin.outage(area, True)
    response = client.get(path, role=role)
    expect_error(requirement_id, response, 503, where, code)
    # docs/reading-of-the-spec.md (SER-045, PLS-041, CRE-059): the retry policy retries 5030 "after
    # Retry-After if present"; a 5030 without it is accepted, one with it must give whole seconds.
    optional = code == 5030 and "retry-after" not in response.headers
    expect(
        requirement_id,
        optional or retry_after_ok(response),
        expected="Retry-After in whole seconds on a retryable 503",
        actual=response.headers.get("retry-after", "absent"),
        response=response,
    )
    found = error_shape_violations(requirement_id, response)
    if found:
        raise ConformanceFailure(found)
    admin.outage(area, False)
    back = client.get(path, role=role)
    expect(
        requirement_id,
        back.status_code in (200, 302),
        expected="the endpoint answers again once the outage ends",
        actual=back.status_code,
        response=back,
    )


# -- licences ----------------------------------------------------------------------------------


def _seed_view(client: DeliveryClient, fixture_id: Any) -> tuple[Any, ...]:
    """What a licence or episode change shows and a reset must bring back: the catalog's film
    and episode ids (role films) and the status of a ticket request for episode_encrypted."""
    catalog = client.get("catalog", role="films")
    body = catalog.json_body() if catalog.status_code == 200 else {}
    films = sorted(str(f.get("id")) for f in objs(at(body, "films")))
    episodes = sorted(str(e.get("id")) for e in objs(at(body, "episodes")))
    ticket = post(client, play_body(fixture_id, device=BASIC_DEVICE), role="films")
    return catalog.status_code, films, episodes, ticket.status_code


@pytest.fixture
def seed_restored(client: DeliveryClient, admin: Any, fixture_id: Any) -> Iterator[None]:
    """For a scenario that changes licences or episodes: afterwards the target is reset and read
    until it shows what it showed before, several reads in a row, for up to 60 s (Limits >
    Freshness: a licence granted shows within 30 s, an episode published within 60 s in ticket
    requests). Each server may have its own cache; the scenarios after this one count on the
    seeded state on all of them. A target fresh at once costs a few reads."""
    before = _seed_view(client, fixture_id)
    yield
    admin.reset()
    settle_steady(lambda: _seed_view(client, fixture_id), lambda view: view == before, 60.0)


def _series_item(client: DeliveryClient, code: str) -> dict[str, Any] | None:
    pages = envelope_walk(client, "series", "films_metadata", "STATE-008", limit=100)
    found = [i for i in items_of(pages) if isinstance(i, dict) and i.get("code") == code]
    return found[0] if found else None


def _in_catalog(response: Any, film_id: str) -> bool:
    body = response.json_body()
    films = body.get("films") if isinstance(body, dict) else None
    return any(f.get("id") == film_id for f in objs(films))


@pytest.mark.needs("admin", "role:films_metadata", "fixture:film_id", "fixture:series_code")
@pytest.mark.requirement("STATE-008", "FRESH-003")
@pytest.mark.parametrize("action", ["end", "suspend"])
@pytest.mark.usefixtures("seed_restored")
def test_licence_ended_or_suspended_withdraws_the_series_and_leaves_the_catalog(
    client: DeliveryClient, admin: Any, fixture_id: Any, action: str, unpaused: None
) -> None:
    film_id, code = fixture_id("film_id"), fixture_id("series_code")
    # An earlier scenario's licence change, undone by its reset, may show for the bound.
    before, _ = poll(
        lambda: _series_item(client, code),
        lambda i: i is not None and i.get("status") == "active",
        LICENCE_BOUND,
    )
    if before is None or before.get("status") != "active":
        pytest.skip("not exercised: series_code is not an active series of the films organisation")
    admin.licence(film_id, action)
    response, gone = poll(
        lambda: client.get("catalog", role="films_metadata"),
        lambda r: r.status_code == 200 and not _in_catalog(r, film_id),
        LICENCE_BOUND,
    )
    expect(
        "FRESH-003",
        gone,
        expected=f"film out of the catalog within {LICENCE_BOUND:g} s of the licence {action}",
        actual="still listed",
        response=response,
    )
    item, withdrawn = poll(
        lambda: _series_item(client, code),
        lambda i: i is not None and i.get("status") == "withdrawn",
        LICENCE_BOUND,
    )
    expect(
        "STATE-008",
        withdrawn,
        expected=f"the series listed as withdrawn within {LICENCE_BOUND:g} s",
        actual="missing" if item is None else item.get("status"),
        response=response,
    )
    detail, _ = poll(
        lambda: client.get(f"series/{code}", role="films_metadata"),
        lambda r: r.status_code == 404,
        LICENCE_BOUND,
    )
    expect_error("STATE-008", detail, 404, Code.ENVELOPE, 4040)


@pytest.mark.needs("admin", "role:films_playback", "fixture:episode_encrypted", "fixture:film_id")
@pytest.mark.requirement("FRESH-004")
@pytest.mark.usefixtures("seed_restored")
def test_licence_suspension_reaches_ticket_requests_within_30_s(
    client: DeliveryClient, admin: Any, fixture_id: Any, unpaused: None
) -> None:
    body = play_body(fixture_id, device=BASIC_DEVICE)
    first, _ = poll(
        lambda: post(client, body, role="films_playback"),
        lambda r: r.status_code == 200,
        LICENCE_BOUND,  # an earlier scenario's suspension, undone by its reset, may still show
    )
    if first.status_code != 200:
        pytest.skip(f"not exercised: episode_encrypted is not issuable ({first.status_code})")
    admin.licence(fixture_id("film_id"), "suspend")
    # The refusal that shows the suspension; a server still holding an earlier state (another
    # scenario's licence change, undone by its reset) may refuse for that reason meanwhile.
    response, refused = poll(
        lambda: post(client, body, role="films_playback"),
        lambda r: r.status_code == 403 and body_of(r).get("reason") == "entitlement_suspended",
        LICENCE_BOUND,
    )
    expect(
        "FRESH-004",
        refused,
        expected=f"403 not_entitled, reason entitlement_suspended, within {LICENCE_BOUND:g} s",
        actual=f"{response.status_code} {body_of(response).get('reason')}",
        response=response,
    )
    found = response.json_body()
    expect(
        "FRESH-004",
        found.get("error_code") == "not_entitled"
        and found.get("reason") == "entitlement_suspended",
        expected="not_entitled, reason entitlement_suspended",
        actual=f"{found.get('error_code')} / {found.get('reason')}",
        response=response,
    )


# -- episodes ----------------------------------------------------------------------------------


@pytest.mark.needs("admin", "role:films", "fixture:episode_encrypted", "fixture:film_id")
@pytest.mark.requirement("FRESH-001", "FRESH-002")
@pytest.mark.usefixtures("seed_restored")
def test_withdrawn_episode_leaves_the_catalog_and_ticket_requests(
    client: DeliveryClient, admin: Any, fixture_id: Any, unpaused: None
) -> None:
    episode_id = fixture_id("episode_encrypted")
    body = {"episode_id": episode_id, **BASIC_DEVICE}

    def listed(response: Any) -> bool:
        data = response.json_body()
        rows = data.get("episodes") if isinstance(data, dict) else None
        return any(e.get("id") == episode_id for e in objs(rows))

    # An earlier scenario's licence change, undone by its reset, may show for the bound.
    _, present = poll(lambda: client.get("catalog", role="films"), listed, LICENCE_BOUND)
    if not present:
        pytest.skip("not exercised: episode_encrypted is not in the catalog")
    admin.episode(episode_id, "withdraw")
    response, gone = poll(
        lambda: client.get("catalog", role="films"),
        lambda r: not listed(r),
        EPISODE_CATALOG_BOUND,
    )
    expect(
        "FRESH-001",
        gone,
        expected=f"episode out of the catalog within {EPISODE_CATALOG_BOUND:g} s",
        actual="still listed",
        response=response,
    )
    ticket, refused = poll(
        lambda: post(client, body),
        lambda r: r.status_code == 404,
        EPISODE_TICKET_BOUND,
    )
    expect(
        "FRESH-002",
        refused and ticket.json_body().get("error_code") == "not_ready",
        expected=f"404 not_ready within {EPISODE_TICKET_BOUND:g} s",
        actual=ticket.status_code,
        response=ticket,
    )


# -- creatives and licences --------------------------------------------------------------------


@pytest.mark.needs("admin", "role:films", "fixture:creative_id")
@pytest.mark.requirement("CRE-049")
@pytest.mark.usefixtures("seed_restored")
def test_file_of_a_creative_whose_film_licence_is_suspended_is_4032(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """The suspension reaches the file within the licence row of Limits > Freshness (30 s);
    the film is looked up in a catalog that may still be restoring an earlier scenario's
    licence change (30 s too)."""
    record = client.get(f"creatives/{fixture_id('creative_id')}", role="films").json_body()
    film = obj(at(record, "data.film"))

    def film_id() -> Any:
        catalog = client.get("catalog", role="films").json_body()
        return next(
            (
                f.get("id")
                for f in objs(at(catalog, "films"))
                if film.get("code") and f.get("code") == film.get("code")
            ),
            None,
        )

    found, _ = poll(film_id, lambda f: isinstance(f, str), CATALOG_AGE)
    if not isinstance(found, str):
        pytest.skip("not exercised: the creative's film is not in the catalog of its organisation")
    admin.licence(found, "suspend")
    response, _ = poll(
        lambda: client.get(f"creatives/{fixture_id('creative_id')}/file", role="films"),
        lambda r: r.status_code == 403,
        LICENCE_BOUND,
    )
    expect_error("CRE-049", response, 403, Code.ENVELOPE, 4032)


# -- a second video organisation ---------------------------------------------------------------


@pytest.mark.needs("role:videos", "role:videos_other", "fixture:playlist_code")
@pytest.mark.requirement("PLS-006")
def test_playlist_metadata_version_is_the_same_for_every_organisation(
    client: DeliveryClient, fixture_id: Any
) -> None:
    """Two organisations may be served from caches of different ages (Limits > Freshness):
    compared for the catalog's 30 s before a difference is concluded."""
    path = f"playlists/{fixture_id('playlist_code')}"
    (mine, theirs), _ = poll(
        lambda: (client.get(path, role="videos"), client.get(path, role="videos_other")),
        lambda pair: (
            at(pair[0].json_body(), "data.metadata_version")
            == at(pair[1].json_body(), "data.metadata_version")
        ),
        CATALOG_AGE,
    )
    if mine.status_code != 200 or theirs.status_code != 200:
        pytest.skip(f"not exercised: detail answered {mine.status_code}/{theirs.status_code}")
    first = at(mine.json_body(), "data.metadata_version")
    second = at(theirs.json_body(), "data.metadata_version")
    expect(
        "PLS-006",
        first == second,
        expected="the same metadata_version for both organisations",
        actual="different" if first != second else "same",
        response=theirs,
    )


# -- not-ready videos --------------------------------------------------------------------------


@pytest.mark.needs("role:videos", "fixture:video_not_ready")
@pytest.mark.requirement("VID-012")
def test_video_not_ready_is_left_out_of_every_list_page(
    client: DeliveryClient, fixture_id: Any
) -> None:
    target = fixture_id("video_not_ready")
    pages = walk(
        client, Family.VIDEOS, "videos", role="videos", limit=200, requirement_id="VID-012"
    )
    rows = items_of(pages)
    expect(
        "VID-012",
        all(not (isinstance(r, dict) and r.get("id") == target) for r in rows),
        expected="the not-ready video in no page",
        actual="listed",
        response=pages[-1].response if pages else None,
    )


@pytest.mark.needs("role:videos", "fixture:video_not_ready")
@pytest.mark.requirement("VID-027")
def test_video_not_ready_single_read_is_video_not_found(
    client: DeliveryClient, fixture_id: Any
) -> None:
    response = client.get(f"videos/{fixture_id('video_not_ready')}", role="videos")
    expect_error("VID-027", response, 404, Code.ERROR, "video_not_found")
