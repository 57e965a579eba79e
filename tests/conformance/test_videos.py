"""GET /videos and GET /videos/{id} (frozen legacy): rows, order, paging, link times, errors.

spec: Resources and their fields > Open video row; Endpoints > GET /videos, GET /videos/{id};
Errors > Open videos. Signed links are secrets: compared, never printed.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import listing_support as listing
import pytest
from expect_support import expect_equal, expect_object
from json_support import arr, json_for, key, obj, objs

from delivery_conformance.checks import expect
from delivery_conformance.checks.schema import expect_schema
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import DeliveryClient, Response

ROLE = "videos"
COLLECTION = pytest.mark.needs(f"role:{ROLE}", "fixture:collection_code")
UNKNOWN_KEY = "svc_live_" + "Vv1" * 10 + "Vv"


def walk_collection(
    client: DeliveryClient, code: str, limit: int, requirement_id: str
) -> list[listing.Page]:
    """Every page of one collection's rows, `limit` a page."""
    return listing.walk(
        client,
        listing.Family.VIDEOS,
        "videos",
        role=ROLE,
        params={"collection": code},
        limit=limit,
        requirement_id=requirement_id,
    )


@pytest.fixture(scope="module")
def rows_walk(client: DeliveryClient, profile: Any) -> list[listing.Page]:
    return walk_collection(client, profile.fixtures.get("collection_code", ""), 1, "VID-011")


def single(client: DeliveryClient, video: str) -> tuple[Response, dict[str, Any]]:
    response = client.get(f"videos/{video}", role=ROLE)
    body = json_for("VID-014", response)
    expect_object("VID-014", response, body, expected="200")
    return response, body


def expect_link_times(requirement_id: str, response: Response, body: Any) -> None:
    body = obj(body)
    low, high = listing.response_time(response)
    expires, refresh = (
        listing.iso_epoch(body.get("expires_at")),
        listing.iso_epoch(body.get("refresh_before")),
    )
    expect(
        requirement_id,
        listing.within(expires, low + 3600, high + 3600)
        and listing.within(refresh, low + 2700, high + 2700),
        expected="expires_at +1 h and refresh_before +45 min (5 s slack)",
        actual=f"{body.get('expires_at')} / {body.get('refresh_before')}",
        response=response,
    )


# spec: Resources > Open video row; the open video endpoints are frozen (no new fields).
ROW_FIELDS = frozenset(
    {"id", "slug", "title", "order_code", "collection", "position", "duration_ms"}
    | {"muscle_groups", "equipment", "difficulty", "kcal_est", "mp4"}
)


@COLLECTION
@pytest.mark.requirement("VID-001", "VID-009", "VID-003", "VID-013")
@pytest.mark.long
def test_pages_and_rows_follow_the_row_table(
    rows_walk: list[listing.Page], fixture_id: Any
) -> None:
    code = fixture_id("collection_code")
    for page in rows_walk:  # the rows first: a bad row is VID-001's, not the page's
        for index, row in enumerate(page.items):
            expect_schema(
                "VID-001", row, "VideoRow", where=f"rows[{index}]", response=page.response
            )
            expect(
                "VID-013",
                set(row) <= ROW_FIELDS,
                expected="only the documented row fields",
                actual=sorted(set(row) - ROW_FIELDS),
                response=page.response,
            )
            expect_equal("VID-003", row.get("collection"), code, response=page.response)
        expect_schema("VID-009", page.body, "VideoPage", response=page.response)


@COLLECTION
@pytest.mark.requirement("VID-007", "VID-011")
@pytest.mark.long
def test_walks_return_every_row_once_in_collection_order(
    client: DeliveryClient, rows_walk: list[listing.Page], fixture_id: Any
) -> None:
    small = listing.items_of(rows_walk)
    positions = [r.get("position") for r in small]
    listing.expect_increasing(
        "VID-007",
        positions,
        expected="position increasing along the walk",
        response=rows_walk[-1].response,
    )
    big = listing.items_of(walk_collection(client, fixture_id("collection_code"), 200, "VID-011"))
    ids_small, ids_big = [str(r.get("id")) for r in small], [str(r.get("id")) for r in big]
    # Every row once whatever the page size; their order is VID-007's (checked on both walks).
    expect(
        "VID-011",
        sorted(ids_small) == sorted(ids_big) and len(set(ids_small)) == len(ids_small),
        expected=f"{len(ids_big)} rows once each",
        actual=f"{len(ids_small)} rows",
        response=rows_walk[-1].response,
    )
    big_positions = [r.get("position") for r in big]
    expect(
        "VID-007",
        all(
            listing.is_int(a) and listing.is_int(b) and a < b
            for a, b in itertools.pairwise(big_positions)
        ),
        expected="position increasing with limit=200",
        actual=big_positions[:10],
        response=rows_walk[-1].response,
    )


@COLLECTION
@pytest.mark.requirement("VID-008")
@pytest.mark.parametrize("limit", [1, 200, None])
def test_limit_caps_the_page(client: DeliveryClient, fixture_id: Any, limit: int | None) -> None:
    params: dict[str, str | int] = {"collection": fixture_id("collection_code")}
    if limit is not None:
        params["limit"] = limit
    page = listing.page_of(listing.Family.VIDEOS, client.get("videos", role=ROLE, params=params))
    cap = limit or 50
    expect(
        "VID-008",
        page.response.status_code == 200 and len(page.items) <= cap,
        expected=f"200 with at most {cap} rows",
        actual=len(page.items),
        response=page.response,
    )


@COLLECTION
@pytest.mark.requirement("VID-010", "VID-005")
def test_list_links_expire_in_one_hour(client: DeliveryClient, fixture_id: Any) -> None:
    response = client.get("videos", role=ROLE, params={"collection": fixture_id("collection_code")})
    body = response.json_body()
    expect_link_times("VID-010", response, body)
    bad = [
        r.get("id")
        for r in objs(obj(body).get("rows"))
        if not isinstance(obj(r.get("mp4")).get("p480"), str)
    ]
    expect(
        "VID-005",
        not bad,
        expected="mp4.p480 a link on every row",
        actual=bad[:3],
        response=response,
    )


@pytest.mark.needs(f"role:{ROLE}", "fixture:video_id", "fixture:collection_code")
@pytest.mark.requirement("VID-002", "VID-014", "VID-015", "VID-017")
@pytest.mark.long
def test_single_read_returns_the_listed_row(
    client: DeliveryClient, fixture_id: Any, rows_walk: list[listing.Page]
) -> None:
    video = fixture_id("video_id")
    response, body = single(client, video)
    expect_schema("VID-014", body, "VideoSingle", response=response)
    collections = body.get("collections") or []
    expect(
        "VID-015",
        bool(collections) and body["row"].get("collection") == collections[0],
        expected="row.collection first in collections",
        actual=collections[:3],
        response=response,
    )
    expect_equal("VID-002", body["row"].get("id"), video, response=response)
    expect_link_times("VID-017", response, body)


@pytest.mark.needs(f"role:{ROLE}", "fixture:video_two_collections")
@pytest.mark.requirement("VID-004")
def test_video_in_two_collections_appears_once_under_each(
    client: DeliveryClient, fixture_id: Any
) -> None:
    video = fixture_id("video_two_collections")
    response, body = single(client, video)
    for code in arr(obj(body).get("collections")):
        rows = listing.items_of(walk_collection(client, code, 200, "VID-004"))
        mine = [r for r in rows if r.get("id") == video]
        expect(
            "VID-004",
            len(mine) == 1 and mine[0].get("collection") == code,
            expected=f"once under {code}",
            actual=len(mine),
            response=response,
        )


@pytest.mark.needs(f"role:{ROLE}", "fixture:video_not_granted")
@pytest.mark.requirement("VID-006")
def test_list_without_collection_holds_only_granted_videos(
    client: DeliveryClient, fixture_id: Any
) -> None:
    pages = listing.walk(
        client, listing.Family.VIDEOS, "videos", role=ROLE, limit=200, requirement_id="VID-006"
    )
    expect(
        "VID-006",
        fixture_id("video_not_granted") not in {key(r.get("id")) for r in listing.items_of(pages)},
        expected="no video of a collection not granted",
        actual="listed",
        response=pages[-1].response,
    )


@pytest.mark.needs(f"role:{ROLE}", "fixture:video_id")
@pytest.mark.requirement("VID-016", "VID-020")
def test_slug_is_not_an_id(client: DeliveryClient, fixture_id: Any) -> None:
    _, body = single(client, fixture_id("video_id"))
    slug = obj(body.get("row")).get("slug")
    if not isinstance(slug, str) or not slug:
        pytest.skip("not exercised: the video's row has no slug to try as an id (VID-014)")
    response = client.get(f"videos/{slug}", role=ROLE)
    listing.expect_error("VID-016", response, 400, listing.Code.NONE)


# -- errors (spec: Errors > Open videos) -------------------------------------------------------

LIST, ONE = "videos", "videos/{id}"
ERROR_ROWS: list[listing.ErrorRow] = [
    *[("VID-018", LIST, ROLE, {"cursor": "forged"}, 400, listing.Code.NONE, None)],
    *[
        ("VID-019", LIST, ROLE, {"limit": v}, 400, listing.Code.NONE, None)
        for v in ("0", "201", "abc", "")
    ],
    ("VID-020", "videos/not-a-uuid", ROLE, {}, 400, listing.Code.NONE, None),
    *[
        ("VID-021", p, ROLE, {}, 400, listing.Code.ERROR_CODE, "unsupported_version")
        for p in (LIST, ONE)
    ],
    *[
        ("VID-022", p, w, {}, 401, listing.Code.NONE, None)
        for p in (LIST, ONE)
        for w in (None, "unknown", "revoked")
    ],
    *[("VID-023", p, "films", {}, 403, listing.Code.NONE, None) for p in (LIST, ONE)],
    *[
        ("VID-024", p, "videos_unbound", {}, 403, listing.Code.ERROR, "app_not_registered")
        for p in (LIST, ONE)
    ],
    *[
        ("VID-025", p, "suspended", {}, 403, listing.Code.ERROR, "org_suspended")
        for p in (LIST, ONE)
    ],
    (
        "VID-026",
        LIST,
        ROLE,
        {"collection": "no-such-collection"},
        404,
        listing.Code.ERROR,
        "collection_not_found",
    ),
    ("VID-027", f"videos/{uuid.UUID(int=7)}", ROLE, {}, 404, listing.Code.ERROR, "video_not_found"),
    *[
        ("VID-030", p, "unverifiable", {}, 503, listing.Code.ERROR_CODE, "service_unavailable")
        for p in (LIST, ONE)
    ],
]
FIXTURE_ROWS = [
    ("VID-026", LIST, "collection_not_granted", 404, listing.Code.ERROR, "collection_not_found"),
    ("VID-027", ONE, "video_not_granted", 404, listing.Code.ERROR, "video_not_found"),
    ("VID-029", LIST, "collection_broken", 500, listing.Code.NONE, None),
    ("VID-029", ONE, "video_broken", 500, listing.Code.NONE, None),
]


test_error_rows = listing.error_rows_scenario(
    ERROR_ROWS,
    "VID-031",
    "video_id",
    UNKNOWN_KEY,
    needs=pytest.mark.needs(f"role:{ROLE}", "fixture:video_id"),
)


@pytest.mark.needs(f"role:{ROLE}")
@pytest.mark.parametrize(
    ("requirement_id", "template", "fixture", "status", "where", "code"),
    [
        pytest.param(
            *row, marks=pytest.mark.requirement(row[0], "VID-031"), id=f"{row[0]}-{row[2]}"
        )
        for row in FIXTURE_ROWS
    ],
)
def test_fixture_error_rows(
    client: DeliveryClient,
    fixture_id: Any,
    requirement_id: str,
    template: str,
    fixture: str,
    status: int,
    where: listing.Code,
    code: object,
) -> None:
    target = fixture_id(fixture)
    if template == LIST:
        response = client.get(LIST, role=ROLE, params={"collection": target})
    else:
        response = client.get(f"videos/{target}", role=ROLE)
    listing.expect_error_row(requirement_id, "VID-031", response, status, where, code)


@pytest.mark.needs("role:films", f"role:{ROLE}")
@pytest.mark.requirement("VID-018")
def test_catalog_cursor_is_refused(client: DeliveryClient) -> None:
    other = listing.page_of(
        listing.Family.CATALOG, client.get("catalog", role="films", params={"limit": 1})
    )
    if not isinstance(other.next_cursor, str):
        pytest.skip("not exercised: the catalog gave no cursor")
    response = client.get("videos", role=ROLE, params={"cursor": other.next_cursor})
    listing.expect_error("VID-018", response, 400, listing.Code.NONE)


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.needs("role:limits_videos", "admin")
@pytest.mark.requirement("VID-028")
@pytest.mark.parametrize("counter", ["videos", "video"])
def test_counters_reached_are_429(
    client: DeliveryClient, admin: Any, fixture_id: Any, counter: str
) -> None:
    admin.set_limit("limits_videos", counter, 2)
    path = "videos" if counter == "videos" else f"videos/{fixture_id('video_id')}"
    params = {"collection": fixture_id("collection_code")} if counter == "videos" else {}
    answers = [client.get(path, role="limits_videos", params=params) for _ in range(4)]
    listing.expect_counter_refused("VID-028", answers, limit=2)
