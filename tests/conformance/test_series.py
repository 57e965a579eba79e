"""GET /series and GET /series/{code}: list and detail fields, order, paging, errors.

spec: Resources and their fields > Series, Series list item; Endpoints > GET /series,
GET /series/{code}, Paging and envelopes; Errors > Series and playlists; Limits > Freshness
(what two reads or two endpoints say is compared for the catalog's 30 s before a difference is
concluded: each server may have its own cache).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, TypeVar

import listing_support as listing
import pytest
from expect_support import each_requirement, expect_equal
from json_support import arr, at, json_for, key, obj, objs
from timing_support import CATALOG_AGE, Settled, settle

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.checks.schema import expect_schema
from delivery_conformance.target.client import DeliveryClient, Response

ROLE = "films_metadata"
META = pytest.mark.needs(f"role:{ROLE}", "fixture:series_code")
UNKNOWN_KEY = "svc_live_" + "Qq7" * 10 + "Qq"

# Requirement -> Series detail fields whose schema it proves (spec: Resources > Series).
DETAIL_FIELDS: dict[str, tuple[str, ...]] = {
    "SER-003": ("film_status",),
    "SER-004": ("tier",),
    "SER-005": ("updated_at",),
    "SER-006": ("content_version",),
    "SER-007": ("language", "default_lang"),
    "SER-008": ("title_i18n", "synopsis_short_i18n", "synopsis_i18n"),
    "SER-009": ("genres",),
    "SER-010": ("poster",),
    "SER-011": ("content_rating", "is_completed", "release_date", "planned_episodes"),
    "SER-012": ("tags",),
    "SER-013": ("people",),
    "SER-014": ("images",),
    "SER-016": ("trailer",),
    "SER-017": ("metadata_version",),
    "SER-018": ("metadata_updated_at",),
    "SER-019": ("media",),
    "SER-022": ("episodes",),
}


def detail(client: DeliveryClient, code: str, role: str = ROLE) -> tuple[Response, dict[str, Any]]:
    response = client.get(f"series/{code}", role=role)
    expect_status("SER-032", response, 200, expected=f"200 for series {code}")
    body = json_for("SER-032", response)
    data = body.get("data") if isinstance(body, dict) else None
    expect(
        "SER-032",
        isinstance(data, dict),
        expected="data object",
        actual=type(data).__name__,
        response=response,
    )
    return response, data


@pytest.fixture(scope="module")
def series_walk(client: DeliveryClient) -> list[listing.Page]:
    return listing.envelope_walk(client, "series", ROLE, "SER-031", limit=5)


# -- detail ------------------------------------------------------------------------------------


@META
@pytest.mark.parametrize("requirement_id", each_requirement(DETAIL_FIELDS))
def test_detail_fields_follow_the_series_table(
    client: DeliveryClient, fixture_id: Any, requirement_id: str
) -> None:
    response, data = detail(client, fixture_id("series_code"))
    expect_schema(
        requirement_id,
        data,
        "Series",
        fields=DETAIL_FIELDS[requirement_id],
        where="data",
        response=response,
    )


@META
@pytest.mark.requirement("SER-001", "SER-002", "SER-032")
def test_detail_names_its_code_is_active_and_links_itself(
    client: DeliveryClient, fixture_id: Any, profile: Any
) -> None:
    code = fixture_id("series_code")
    response, data = detail(client, code)
    expect_equal("SER-001", data.get("code"), code, response=response)
    expect_equal("SER-002", data.get("status"), "active", response=response)
    body = response.json_body()
    links = body.get("links") if isinstance(body.get("links"), dict) else {}
    due = f"{profile.base_url}/api/delivery/v1/series/{code}"
    expect(
        "SER-032",
        links.get("self") == due and listing.is_int(body.get("server_time")),
        expected=f"links.self {due} and server_time",
        actual=links.get("self"),
        response=response,
    )


@META
@pytest.mark.requirement("SER-006")
def test_content_version_holds_between_reads(client: DeliveryClient, fixture_id: Any) -> None:
    """Two reads in a row name the same content_version; two servers with caches of different
    ages may answer them (Limits > Freshness), so pairs are read for 30 s before concluding."""
    code = fixture_id("series_code")
    seen = settle(
        lambda: (detail(client, code), detail(client, code)),
        lambda pair: pair[0][1].get("content_version") == pair[1][1].get("content_version"),
        CATALOG_AGE,
    )
    (_, first), (response, second) = seen.value
    expect_equal(
        "SER-006", second.get("content_version"), first.get("content_version"), response=response
    )


@META
@pytest.mark.requirement("SER-012")
def test_at_most_one_main_tag(client: DeliveryClient, fixture_id: Any) -> None:
    response, data = detail(client, fixture_id("series_code"))
    mains = [t for t in objs(data.get("tags")) if t.get("is_main") is True]
    expect(
        "SER-012",
        len(mains) <= 1,
        expected="at most one main tag",
        actual=len(mains),
        response=response,
    )


@META
@pytest.mark.requirement("SER-015")
def test_cover_image_is_the_poster(client: DeliveryClient, fixture_id: Any) -> None:
    response, data = detail(client, fixture_id("series_code"))
    poster = data.get("poster")
    covers = [i.get("url") for i in objs(data.get("images")) if i.get("kind") == "cover_9_16"]
    if not isinstance(poster, dict) or not covers:
        pytest.skip("not exercised: the series has no poster or no cover_9_16 image")
    expect(
        "SER-015",
        all(url == poster.get("url") for url in covers),
        expected="cover_9_16 url equal to poster.url",
        actual="different",
        response=response,
    )


@META
@pytest.mark.requirement("SER-019")
def test_media_playlist_name_is_the_code(client: DeliveryClient, fixture_id: Any) -> None:
    code = fixture_id("series_code")
    response, data = detail(client, code)
    media = data.get("media") if isinstance(data.get("media"), dict) else {}
    expect_equal("SER-019", media.get("playlist_name"), code, response=response)


@pytest.mark.needs(f"role:{ROLE}", "fixture:series_code_long")
@pytest.mark.requirement("SER-020", "SER-002")
def test_long_series_spreads_over_numbered_playlists(
    client: DeliveryClient, fixture_id: Any
) -> None:
    code = fixture_id("series_code_long")
    response, data = detail(client, code)
    expect_equal("SER-002", data.get("status"), "active", response=response)
    playlists = arr(obj(data.get("media")).get("playlists"))
    if not playlists:
        pytest.skip("not exercised: no media playlist exists yet")
    names = [p.get("name") for p in playlists if isinstance(p, dict)]
    due = [code] + [f"{code}-{n}" for n in range(2, len(names) + 1)]
    expect_equal("SER-020", names, due, response=response)
    episodes = len(arr(data.get("episodes")))
    expect(
        "SER-020",
        len(names) <= math.ceil(episodes / 100),
        expected=f"at most {math.ceil(episodes / 100)} playlists for {episodes} episodes",
        actual=len(names),
        response=response,
    )


def _detail_and_catalog(
    client: DeliveryClient, code: str
) -> tuple[Response, dict[str, Any], list[dict[str, Any]], list[Any]]:
    """The series detail, the catalog films with its code, and their published episode_no."""
    response, data = detail(client, code, role="films")
    catalog = json_for("SER-017", client.get("catalog", role="films"))
    films = [f for f in objs(at(catalog, "films")) if f.get("code") == code]
    ids = {f.get("id") for f in films}
    published = [
        r.get("episode_no")
        for r in objs(at(catalog, "episodes"))
        if r.get("film_id") in ids and r.get("status") == "published"
    ]
    return response, data, films, sorted(published, key=_number_order)


def _number_order(value: Any) -> tuple[int, Any]:
    """Whole numbers in order, anything else after them (the schema checks judge it)."""
    return (0, value) if listing.is_int(value) else (1, str(value))


def _agrees_with_the_catalog(seen: tuple[Response, dict[str, Any], list, list]) -> bool:
    _, data, films, published = seen
    numbers = [e.get("ep_number") for e in objs(data.get("episodes"))]
    return (
        len(films) == 1
        and data.get("metadata_version") == films[0].get("metadata_version")
        and numbers == published
    )


@pytest.mark.needs("role:films", "fixture:series_code")
@pytest.mark.requirement("SER-017", "SER-021")
def test_detail_agrees_with_the_catalog(client: DeliveryClient, fixture_id: Any) -> None:
    """Two endpoints, each possibly served from its own cache (Limits > Freshness): read again
    for 30 s until they agree before a difference is concluded."""
    code = fixture_id("series_code")
    seen = settle(lambda: _detail_and_catalog(client, code), _agrees_with_the_catalog, CATALOG_AGE)
    response, data, films, published = seen.value
    expect_equal(
        "SER-017", len(films), 1, expected=f"one catalog film with code {code}", response=response
    )
    film = films[0]
    expect_equal(
        "SER-017", data.get("metadata_version"), film.get("metadata_version"), response=response
    )
    numbers = [e.get("ep_number") for e in objs(data.get("episodes"))]
    expect(
        "SER-021",
        numbers == published,
        expected=published[:20],
        actual=numbers[:20],
        response=response,
    )


# -- list --------------------------------------------------------------------------------------

Read = TypeVar("Read")


def _settle_with_walk(
    client: DeliveryClient,
    walked: list[listing.Page],
    read: Callable[[], Read],
    agree: Callable[[tuple[list[listing.Page], Read]], bool],
) -> Settled[tuple[list[listing.Page], Read]]:
    """(list walk, `read()`) until they `agree`: the module's walk first, then fresh walks,
    for the catalog's 30 s (Limits > Freshness: list and detail may come from different
    caches)."""
    walks = _walks(client, walked)
    return settle(lambda: (next(walks), read()), agree, CATALOG_AGE)


def _walks(client: DeliveryClient, walked: list[listing.Page]) -> Iterator[list[listing.Page]]:
    yield walked
    while True:
        yield listing.envelope_walk(client, "series", ROLE, "SER-031", limit=100)


def _opens_or_left_the_list(code: str, pair: tuple[list[listing.Page], Response]) -> bool:
    """The detail of `code` opens, or the list no longer calls it active."""
    listed = [i for i in listing.items_of(pair[0]) if i.get("code") == code]
    return pair[1].status_code == 200 or not any(i.get("status") == "active" for i in listed)


@META
@pytest.mark.requirement("SER-023", "SER-030", "PAGE-005", "PAGE-006", "PAGE-007", "PAGE-009")
def test_list_pages_are_envelopes_of_series_items(series_walk: list[listing.Page]) -> None:
    listing.expect_list_items(series_walk, "SER-030", "SER-023", "SeriesListItem")


@META
@pytest.mark.requirement("PAGE-008")
def test_server_time_is_close_to_the_response_time(series_walk: list[listing.Page]) -> None:
    page = series_walk[0]
    expect(
        "PAGE-008",
        listing.server_time_close(page),
        expected="within 5 minutes of the response",
        actual=page.body.get("server_time"),
        response=page.response,
    )


@META
@pytest.mark.requirement("SER-027", "SER-031", "PAGE-010")
def test_walk_is_oldest_first_without_repeats(series_walk: list[listing.Page]) -> None:
    items = listing.items_of(series_walk)
    times = [i.get("updated_at") for i in items]
    listing.expect_never_decreasing(
        "SER-027", times, expected="updated_at never decreasing", response=series_walk[-1].response
    )
    codes = [key(i.get("code")) for i in items]
    expect(
        "SER-031",
        len(codes) == len(set(codes)),
        expected="no item repeated",
        actual=f"{len(codes) - len(set(codes))} repeats",
        response=series_walk[-1].response,
    )
    for page in series_walk:
        listing.expect_next_link_ends_with_the_walk(page)


@META
@pytest.mark.requirement("SER-024", "SER-025")
def test_list_item_matches_its_detail(
    client: DeliveryClient, fixture_id: Any, series_walk: list[listing.Page]
) -> None:
    code = fixture_id("series_code")

    def agree(pair: tuple[list[listing.Page], tuple[Response, dict[str, Any]]]) -> bool:
        items = [i for i in listing.items_of(pair[0]) if i.get("code") == code]
        data = pair[1][1]
        return (
            len(items) == 1
            and items[0].get("content_version") == data.get("content_version")
            and items[0].get("episode_count") == len(arr(data.get("episodes")))
        )

    seen = _settle_with_walk(client, series_walk, lambda: detail(client, code), agree)
    walked, (response, data) = seen.value
    item = listing.listed_once("SER-024", walked, code)
    expect_equal(
        "SER-024", item.get("content_version"), data.get("content_version"), response=response
    )
    expect_equal(
        "SER-025", item.get("episode_count"), len(arr(data.get("episodes"))), response=response
    )


@pytest.mark.needs(f"role:{ROLE}", "fixture:series_code_unlicensed")
@pytest.mark.requirement("SER-026")
def test_unlicensed_series_is_never_active(
    series_walk: list[listing.Page], fixture_id: Any
) -> None:
    code = fixture_id("series_code_unlicensed")
    active = [
        i
        for i in listing.items_of(series_walk)
        if i.get("code") == code and i.get("status") == "active"
    ]
    expect(
        "SER-026",
        not active,
        expected=f"{code} not active in the list",
        actual="active",
        response=series_walk[-1].response,
    )


@META
@pytest.mark.requirement("SER-034", "SER-002")
def test_every_active_series_opens(client: DeliveryClient, series_walk: list[listing.Page]) -> None:
    """A series the list calls active opens. The list and the detail may come from caches of
    different ages (Limits > Freshness): a detail that does not open is read again, with the
    list, for 30 s; the series must open, or leave the list's active ones, by then."""
    active = [i.get("code") for i in listing.items_of(series_walk) if i.get("status") == "active"]
    for code in active[:: max(1, len(active) // 15)]:
        seen = _settle_with_walk(
            client,
            series_walk,
            lambda c=code: client.get(f"series/{c}", role=ROLE),
            partial(_opens_or_left_the_list, code),
        )
        response = seen.value[1]
        expect_status("SER-034", response, 200, expected=f"200 for {code}")
        status = at(response.json_body(), "data.status")
        expect_equal("SER-002", status, "active", response=response)


@META
@pytest.mark.requirement("SER-028")
def test_updated_since_leaves_out_older_items(
    client: DeliveryClient, series_walk: list[listing.Page]
) -> None:
    listing.expect_updated_since_leaves_out_older("SER-028", client, series_walk, "series", ROLE)


# -- errors (spec: Errors > Series and playlists) ----------------------------------------------

LIST, DETAIL = "series", "series/{code}"
# (requirement, path template, role or key, query, status, code place, code)
ERROR_ROWS: list[listing.ErrorRow] = [
    ("SER-036", LIST, ROLE, {}, 400, listing.Code.ERROR_CODE, "unsupported_version"),
    ("SER-036", DETAIL, ROLE, {}, 400, listing.Code.ERROR_CODE, "unsupported_version"),
    ("SER-037", LIST, None, {}, 401, listing.Code.ENVELOPE, 4010),
    ("SER-037", DETAIL, None, {}, 401, listing.Code.ENVELOPE, 4010),
    ("SER-038", LIST, "revoked", {}, 401, listing.Code.ENVELOPE, 4011),
    ("SER-038", DETAIL, "unknown", {}, 401, listing.Code.ENVELOPE, 4011),
    ("SER-039", LIST, "films_playback", {}, 403, listing.Code.ENVELOPE, 4030),
    ("SER-039", DETAIL, "webhooks", {}, 403, listing.Code.ENVELOPE, 4030),
    ("SER-040", LIST, "suspended", {}, 403, listing.Code.ENVELOPE, 4031),
    ("SER-040", DETAIL, "suspended", {}, 403, listing.Code.ENVELOPE, 4031),
    *[
        ("SER-041", LIST, ROLE, {"limit": v}, 422, listing.Code.ENVELOPE, 4220)
        for v in ("0", "101", "abc", "")
    ],
    *[
        ("SER-042", LIST, ROLE, {"updated_since": v}, 422, listing.Code.ENVELOPE, 4220)
        for v in ("abc", "-1", "1.5")  # 12 digits: docs/reading-of-the-spec.md (SER-042)
    ],
    ("SER-043", LIST, ROLE, {"cursor": "forged"}, 422, listing.Code.ENVELOPE, 4220),
    ("SER-046", LIST, "unverifiable", {}, 503, listing.Code.ENVELOPE, 5031),
    ("SER-046", DETAIL, "unverifiable", {}, 503, listing.Code.ENVELOPE, 5031),
]


test_error_rows = listing.error_rows_scenario(
    ERROR_ROWS, "SER-047", "series_code", UNKNOWN_KEY, needs=META
)
