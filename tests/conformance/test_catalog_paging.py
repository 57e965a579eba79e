"""GET /catalog paged: cursors, limits, the page size with a cursor, links.next, whole walks.

spec: Endpoints > Paging and envelopes (stop on a null cursor, never because a page is short or
empty); Endpoints > GET /catalog (query table, response; "up to 30 seconds old"); Limits > Other
constants (catalog limit 1 to 200, 50 with a cursor and no limit); Limits > Freshness. Also the
flat shape of the four flat endpoints (PAGE-012).

A page holds at most `limit` films and may be short or empty while a cursor follows
(docs/reading-of-the-spec.md: PAGE (short pages), CAT-061 (page size)). What a walk holds is
compared with the unpaged catalog read as close to it as possible, polled for the catalog's 30 s
before a difference is concluded: each server may have its own cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from expect_support import expect_object
from json_support import arr, json_for, key, objs
from listing_support import (
    Family,
    Page,
    expect_next_link_is_the_cursor,
    has_items,
    items_of,
    page_for,
    page_of,
    walk,
)
from timing_support import CATALOG_AGE, Settled, settle

from delivery_conformance.checks import expect
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.target.client import DeliveryClient

FILMS = pytest.mark.needs("role:films")
WALK_LIMIT = 3
CURSOR_PAGE_SIZE = 50  # spec: Limits > Other constants (a cursor and no limit)


def _unpaged(client: DeliveryClient) -> dict[str, Any]:
    response = client.get("catalog", role="films")
    body = json_for("CAT-065", response)
    expect_object("CAT-065", response, body, expected=200)
    return dict(body)


def _walk(client: DeliveryClient) -> list[Page]:
    return walk(client, Family.CATALOG, "catalog", role="films", params={"limit": WALK_LIMIT})


@pytest.fixture(scope="module")
def unpaged(client: DeliveryClient) -> dict[str, Any]:
    return _unpaged(client)


@pytest.fixture(scope="module")
def pages(client: DeliveryClient) -> list[Page]:
    return _walk(client)


def film_ids(films: list[Any]) -> list[Any]:
    return [key(film.get("id")) for film in films if isinstance(film, dict)]


Pair = tuple[list[Page], dict[str, Any]]


def _pairs(client: DeliveryClient, pages: list[Page], unpaged: dict[str, Any]) -> Iterator[Pair]:
    """(walk, unpaged catalog): the module's own first, then fresh ones."""
    yield pages, unpaged
    while True:
        yield _walk(client), _unpaged(client)


def _settle_walk(
    client: DeliveryClient,
    pages: list[Page],
    unpaged: dict[str, Any],
    agree: Callable[[Pair], bool],
) -> Settled[Pair]:
    """Walk and unpaged catalog read again until `agree(pair)` or the catalog's 30 s passed."""
    pairs = _pairs(client, pages, unpaged)
    return settle(lambda: next(pairs), agree, CATALOG_AGE)


@FILMS
@pytest.mark.requirement("PAGE-001")
def test_returned_cursor_yields_the_next_page(client: DeliveryClient) -> None:
    """The first cursor (limit 1) leads on to films the first page did not hold; empty pages on
    the way are followed (a cursor, not a page's size, says more follow)."""
    first = page_of(Family.CATALOG, client.get("catalog", role="films", params={"limit": 1}))
    expect(
        "PAGE-001",
        isinstance(first.next_cursor, str),
        expected="a next_cursor on page 1",
        actual=first.next_cursor,
        response=first.response,
    )
    rest = walk(
        client,
        Family.CATALOG,
        "catalog",
        role="films",
        params={"cursor": str(first.next_cursor)},
        limit=1,
        requirement_id="PAGE-001",
        until=has_items,
    )
    second = rest[-1]
    expect(
        "PAGE-001",
        bool(second.items) and not set(film_ids(second.items)) & set(film_ids(first.items)),
        expected="other films on the pages after the cursor",
        actual=film_ids(second.items),
        response=second.response,
    )


def _films(pages: list[Page], unpaged: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The film ids of a walk, and of the unpaged catalog, in order (both sorted by
    `display_order`: a walk with no change in between is the unpaged sequence)."""
    return film_ids(items_of(pages)), film_ids(arr(unpaged.get("films")))


def _first_difference(walked: list[Any], whole: list[Any]) -> int:
    pairs = zip(walked, whole, strict=False)
    return next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(walked), len(whole)))


def _same_films(pair: Pair) -> bool:
    walked, whole = _films(*pair)
    return walked == whole


@FILMS
@pytest.mark.requirement("PAGE-002", "CAT-065")
def test_walk_ends_on_a_null_cursor_with_the_whole_catalog(
    client: DeliveryClient, pages: list[Page], unpaged: dict[str, Any]
) -> None:
    expect(
        "PAGE-002",
        pages[-1].next_cursor is None,
        expected="null cursor on the last page",
        actual=pages[-1].next_cursor,
        response=pages[-1].response,
    )

    seen = _settle_walk(client, pages, unpaged, _same_films)
    walked, whole = _films(*seen.value)
    expect(
        "CAT-065",
        seen.settled,
        expected=f"the {len(whole)} films of the unpaged catalog, in its order",
        actual=f"{len(walked)} walked; {len(set(whole) ^ set(walked))} differ, "
        f"first difference at position {_first_difference(walked, whole)}",
        response=seen.value[0][-1].response,
    )


@FILMS
@pytest.mark.requirement("CAT-060")
@pytest.mark.parametrize("limit", [1, WALK_LIMIT, 200])
def test_limit_caps_the_films_of_a_page(client: DeliveryClient, limit: int) -> None:
    """At most `limit` films a page, up to the first page that holds films."""
    walked = walk(
        client,
        Family.CATALOG,
        "catalog",
        role="films",
        limit=limit,
        requirement_id="CAT-060",
        until=has_items,
    )
    for page in walked:
        expect(
            "CAT-060",
            len(page.items) <= limit,
            expected=f"200 with at most {limit} films",
            actual=f"{page.response.status_code}, {len(page.items)} films",
            response=page.response,
        )
    expect(
        "CAT-060",
        bool(walked[-1].items),
        expected="a page with films before the walk ends",
        actual=f"{len(walked)} empty pages",
        response=walked[-1].response,
    )


@FILMS
@pytest.mark.requirement("CAT-061")
def test_cursor_without_limit_gives_pages_of_50(client: DeliveryClient) -> None:
    """ "With a cursor and no limit, page size is 50": the page is the one `limit=50` gives from
    the same cursor (at most 50 films; short like any page when the server cuts it so). The two
    answers may meet caches of different ages: compared for the catalog's 30 s."""
    first = page_for(
        "CAT-061", Family.CATALOG, client.get("catalog", role="films", params={"limit": 1})
    )
    if first.next_cursor is None:
        pytest.skip(NOT_EXERCISED_PREFIX + "the catalog has a single film")
    cursor = str(first.next_cursor)

    def read() -> tuple[Page, Page]:
        answers = (
            client.get("catalog", role="films", params={"cursor": cursor}),
            client.get("catalog", role="films", params={"cursor": cursor, "limit": 50}),
        )
        bare, sized = (page_for("CAT-061", Family.CATALOG, r) for r in answers)
        return bare, sized

    def agree(pair: tuple[Page, Page]) -> bool:
        bare, sized = pair
        return bare.response.status_code == 200 and film_ids(bare.items) == film_ids(sized.items)

    seen = settle(read, agree, CATALOG_AGE)
    bare, sized = seen.value
    expect(
        "CAT-061",
        seen.settled and len(bare.items) <= CURSOR_PAGE_SIZE,
        expected=f"the {len(sized.items)} films limit={CURSOR_PAGE_SIZE} gives from that cursor",
        actual=f"{bare.response.status_code}, {len(bare.items)} films",
        response=bare.response,
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


def _episode_problems(pages: list[Page], unpaged: dict[str, Any]) -> list[tuple[Page, str]]:
    """Each page whose episode rows are not exactly those of its films in the unpaged catalog."""
    rows: dict[Any, list[Any]] = {}
    for row in objs(unpaged.get("episodes")):
        entry = f"{row.get('episode_no')}:{row.get('id')}"
        rows.setdefault(key(row.get("film_id")), []).append(entry)
    problems = []
    for page in pages:
        ids = film_ids(page.items)
        due = sorted(r for fid in ids for r in rows.get(fid, []))
        got = sorted(
            f"{r.get('episode_no')}:{r.get('id')}"
            for r in objs(page.body.get("episodes"))
            if key(r.get("film_id")) in ids
        )
        stray = [r for r in objs(page.body.get("episodes")) if key(r.get("film_id")) not in ids]
        if got != due or stray:
            problems.append(
                (page, f"{len(got)} rows of {len(due)} due, {len(stray)} of other films")
            )
    return problems


@FILMS
@pytest.mark.requirement("CAT-064")
def test_each_page_carries_exactly_the_episodes_of_its_films(
    client: DeliveryClient, pages: list[Page], unpaged: dict[str, Any]
) -> None:
    seen = _settle_walk(client, pages, unpaged, lambda pair: not _episode_problems(*pair))
    problems = _episode_problems(*seen.value)
    page, actual = problems[0] if problems else (seen.value[0][-1], "")
    expect(
        "CAT-064",
        seen.settled,
        expected="the episode rows of the page's films, as the unpaged catalog lists them",
        actual=actual,
        response=page.response,
    )


@FILMS
@pytest.mark.requirement("PAGE-011")
def test_following_links_next_equals_passing_the_cursor(client: DeliveryClient) -> None:
    expect_next_link_is_the_cursor(client, "catalog", "films", 2, Family.CATALOG)


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
