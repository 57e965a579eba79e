"""GET /catalog paged: cursors, limits, the page size with a cursor, links.next, whole walks.

spec: Endpoints > Paging and envelopes; Endpoints > GET /catalog (query table, response);
Limits > Other constants (catalog limit 1 to 200, 50 with a cursor and no limit). Also the flat
shape of the four flat endpoints (PAGE-012).
"""

from __future__ import annotations

from typing import Any

import pytest
from expect_support import expect_equal, expect_object
from json_support import arr, json_for, key, objs
from listing_support import Family, Page, items_of, page_for, page_of, walk

from delivery_conformance.checks import expect
from delivery_conformance.target.client import DeliveryClient

FILMS = pytest.mark.needs("role:films")
WALK_LIMIT = 3


@pytest.fixture(scope="module")
def unpaged(client: DeliveryClient) -> dict[str, Any]:
    response = client.get("catalog", role="films")
    body = json_for("CAT-065", response)
    expect_object("CAT-065", response, body, expected=200)
    return dict(body)


@pytest.fixture(scope="module")
def pages(client: DeliveryClient) -> list[Page]:
    return walk(client, Family.CATALOG, "catalog", role="films", params={"limit": WALK_LIMIT})


def film_ids(films: list[Any]) -> list[Any]:
    return [key(film.get("id")) for film in films if isinstance(film, dict)]


@FILMS
@pytest.mark.requirement("PAGE-001")
def test_returned_cursor_yields_the_next_page(client: DeliveryClient) -> None:
    first = page_of(Family.CATALOG, client.get("catalog", role="films", params={"limit": 1}))
    expect(
        "PAGE-001",
        isinstance(first.next_cursor, str),
        expected="a next_cursor on page 1",
        actual=first.next_cursor,
        response=first.response,
    )
    response = client.get("catalog", role="films", params={"limit": 1, "cursor": first.next_cursor})
    second = page_of(Family.CATALOG, response)
    expect(
        "PAGE-001",
        response.status_code == 200
        and bool(second.items)
        and not set(film_ids(second.items)) & set(film_ids(first.items)),
        expected="200 with other films",
        actual=film_ids(second.items),
        response=response,
    )


@FILMS
@pytest.mark.requirement("PAGE-002", "CAT-065")
def test_walk_ends_on_a_null_cursor_with_the_whole_catalog(
    pages: list[Page], unpaged: dict[str, Any]
) -> None:
    expect(
        "PAGE-002",
        pages[-1].next_cursor is None,
        expected="null cursor on the last page",
        actual=pages[-1].next_cursor,
        response=pages[-1].response,
    )
    walked = set(film_ids(items_of(pages)))
    whole = set(film_ids(arr(unpaged.get("films"))))
    expect(
        "CAT-065",
        walked == whole,
        expected=f"{len(whole)} films of the unpaged catalog",
        actual=f"{len(walked)} walked; {len(whole ^ walked)} differ",
        response=pages[-1].response,
    )


@FILMS
@pytest.mark.requirement("CAT-060")
@pytest.mark.parametrize("limit", [1, WALK_LIMIT, 200])
def test_limit_caps_the_films_of_a_page(client: DeliveryClient, limit: int) -> None:
    response = client.get("catalog", role="films", params={"limit": limit})
    page = page_of(Family.CATALOG, response)
    expect(
        "CAT-060",
        response.status_code == 200 and 1 <= len(page.items) <= limit,
        expected=f"200 with 1 to {limit} films",
        actual=f"{response.status_code}, {len(page.items)} films",
        response=response,
    )


@FILMS
@pytest.mark.requirement("CAT-061")
def test_cursor_without_limit_gives_pages_of_50(
    client: DeliveryClient, unpaged: dict[str, Any]
) -> None:
    first = page_for(
        "CAT-061", Family.CATALOG, client.get("catalog", role="films", params={"limit": 1})
    )
    if first.next_cursor is None:
        pytest.skip("not exercised: the catalog has a single film")
    response = client.get("catalog", role="films", params={"cursor": first.next_cursor})
    page = page_for("CAT-061", Family.CATALOG, response)
    due = min(50, len(arr(unpaged.get("films"))) - 1)
    expect(
        "CAT-061",
        response.status_code == 200 and len(page.items) == due,
        expected=f"{due} films (page size 50)",
        actual=len(page.items),
        response=response,
    )


@FILMS
@pytest.mark.requirement("CAT-062", "CAT-063")
def test_every_page_has_a_cursor_and_a_matching_next_link(pages: list[Page]) -> None:
    for page in pages:
        expect(
            "CAT-062",
            "next_cursor" in page.body and "next" in page.links,
            expected="next_cursor and links.next",
            actual=sorted(page.body),
            response=page.response,
        )
        cursor, link = page.next_cursor, page.links.get("next")
        expect(
            "CAT-062",
            cursor is None or isinstance(cursor, str),
            expected="string or null",
            actual=type(cursor).__name__,
            response=page.response,
        )
        expect(
            "CAT-063",
            (cursor is None) == (link is None),
            expected="links.next null exactly when next_cursor is",
            actual=f"cursor {'null' if cursor is None else 'set'}, "
            f"link {'null' if link is None else 'set'}",
            response=page.response,
        )


@FILMS
@pytest.mark.requirement("CAT-064")
def test_each_page_carries_exactly_the_episodes_of_its_films(
    pages: list[Page], unpaged: dict[str, Any]
) -> None:
    rows: dict[Any, list[Any]] = {}
    for row in objs(unpaged.get("episodes")):
        entry = f"{row.get('episode_no')}:{row.get('id')}"
        rows.setdefault(key(row.get("film_id")), []).append(entry)
    for page in pages:
        ids = film_ids(page.items)
        due = sorted(r for fid in ids for r in rows.get(fid, []))
        got = sorted(
            f"{r.get('episode_no')}:{r.get('id')}"
            for r in objs(page.body.get("episodes"))
            if key(r.get("film_id")) in ids
        )
        stray = [r for r in objs(page.body.get("episodes")) if key(r.get("film_id")) not in ids]
        expect(
            "CAT-064",
            got == due and not stray,
            expected=f"{len(due)} rows of the page's films",
            actual=f"{len(got)} rows, {len(stray)} of other films",
            response=page.response,
        )


@FILMS
@pytest.mark.requirement("PAGE-011")
def test_following_links_next_equals_passing_the_cursor(client: DeliveryClient) -> None:
    first = page_of(Family.CATALOG, client.get("catalog", role="films", params={"limit": 2}))
    link = first.links.get("next")
    expect(
        "PAGE-011",
        isinstance(link, str),
        expected="links.next",
        actual=link,
        response=first.response,
    )
    by_link = page_of(Family.CATALOG, client.get(_path_of(link), role="films"))
    by_cursor = page_of(
        Family.CATALOG,
        client.get("catalog", role="films", params={"limit": 2, "cursor": first.next_cursor}),
    )
    expect_equal(
        "PAGE-011", film_ids(by_link.items), film_ids(by_cursor.items), response=by_link.response
    )


def _path_of(url: Any) -> str:
    """A service link rebased on the target's base_url (path and query kept)."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(url))
    return parts.path + (f"?{parts.query}" if parts.query else "")


FLAT_CALLS = [
    ("catalog", "films", "GET", None),
    ("config", "films", "GET", None),
    ("videos", "videos", "GET", "collection_code"),
    ("playback", "films", "POST", "episode_signed"),
]


@pytest.mark.requirement("PAGE-012")
@pytest.mark.parametrize(
    ("path", "role", "method", "fixture"), FLAT_CALLS, ids=[c[0] for c in FLAT_CALLS]
)
def test_flat_endpoints_answer_without_envelope_members(
    client: DeliveryClient,
    key: Any,
    fixture_id: Any,
    path: str,
    role: str,
    method: str,
    fixture: str | None,
) -> None:
    key(role)
    params: dict[str, str | int] = {}
    body = None
    if path == "videos":
        params = {"collection": fixture_id("collection_code")}
    elif path == "playback":
        body = {"episode_id": fixture_id("episode_signed")}
    elif path == "catalog":
        params = {"limit": 1}
    response = client.request(method, path, role=role, params=params, json=body)
    data = response.json_body()
    expect_object("PAGE-012", response, data, expected="200 with a JSON object")
    found = sorted({"code", "message", "server_time"} & set(data))
    expect("PAGE-012", not found, expected="no envelope members", actual=found, response=response)
