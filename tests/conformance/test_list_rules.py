"""Rules the envelope lists share (series, playlists, creatives): one scenario per rule, one row
per list, each row marked with the list's own requirement IDs and needs.

spec: Paging and envelopes (page size, links.next); Limits (the catalog counter of the metadata
lists); Errors > Series and playlists, Errors > Creatives list, single read and file (a cursor
of another list, an unknown or unlisted item).
"""

from __future__ import annotations

from typing import Any

import listing_support as listing
import pytest
from timing_support import CATALOG_AGE, settle

from delivery_conformance.checks import expect
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import DeliveryClient

SERIES = pytest.mark.needs("role:films_metadata", "fixture:series_code")
PLAYLISTS = pytest.mark.needs("role:videos", "fixture:playlist_code")
CREATIVES = pytest.mark.needs("role:films", "fixture:creative_id")


def _limit_rows(path: str, role: str, needs: Any, marks: Any, ids: tuple[str, str]) -> list[Any]:
    """One row per page size; `ids`: the rule of a given limit, the rule of no limit."""
    return [
        pytest.param(
            path, role, ids[limit is None], limit, marks=[needs, marks], id=f"{path}-{limit}"
        )
        for limit in (1, 100, None)
    ]


@pytest.mark.parametrize(
    ("path", "role", "rid", "limit"),
    [
        *_limit_rows("series", "films_metadata", SERIES, pytest.mark.requirement("SER-029"),
                     ("SER-029", "SER-029")),
        *_limit_rows("playlists", "videos", PLAYLISTS, pytest.mark.requirement("PLS-021"),
                     ("PLS-021", "PLS-021")),
        *_limit_rows("creatives", "films", CREATIVES,
                     pytest.mark.requirement("CRE-030", "CRE-031"), ("CRE-030", "CRE-031")),
    ],
)  # fmt: skip
def test_limit_caps_the_page(
    client: DeliveryClient, path: str, role: str, rid: str, limit: int | None
) -> None:
    listing.expect_limit_caps_the_page(rid, client, path, role, limit)


@pytest.mark.requirement("PAGE-011")
@pytest.mark.parametrize(
    ("path", "role", "limit"),
    [
        pytest.param("series", "films_metadata", 1, marks=SERIES, id="series"),
        pytest.param("playlists", "videos", 2, marks=PLAYLISTS, id="playlists"),
    ],
)
def test_following_links_next_equals_passing_the_cursor(
    client: DeliveryClient, path: str, role: str, limit: int
) -> None:
    listing.expect_next_link_is_the_cursor(client, path, role, limit)


@pytest.mark.parametrize(
    ("path", "role", "rid"),
    [
        pytest.param("series", "limits", "SER-044", id="series", marks=[
            pytest.mark.needs("role:limits", "admin"), pytest.mark.requirement("SER-044"),
            pytest.mark.exclusive(LIMITS_ORGANISATION)]),
        pytest.param("playlists", "videos", "PLS-040", id="playlists", marks=[
            pytest.mark.needs("role:videos", "admin"), pytest.mark.requirement("PLS-040")]),
    ],
)  # fmt: skip
def test_catalog_counter_reached_is_a_flat_429(
    client: DeliveryClient, admin: Any, path: str, role: str, rid: str
) -> None:
    admin.set_limit(role, "catalog", 2)
    answers = [client.get(path, role=role, params={"limit": 1}) for _ in range(4)]
    listing.expect_counter_refused(rid, answers, limit=2, flat_only=True)


@pytest.mark.parametrize(
    ("path", "role", "other", "other_role", "rid", "code"),
    [
        pytest.param("series", "films_metadata", "creatives", "films", "SER-043", 4220,
                     marks=[SERIES, pytest.mark.requirement("SER-043", "SER-047")], id="series"),
        pytest.param("creatives", "films", "series", "films_metadata", "CRE-057", 4222,
                     marks=[CREATIVES, pytest.mark.requirement("CRE-057")], id="creatives"),
    ],
)  # fmt: skip
def test_cursor_of_another_list_is_refused(
    client: DeliveryClient,
    key: Any,
    path: str,
    role: str,
    other: str,
    other_role: str,
    rid: str,
    code: int,
) -> None:
    key(other_role)
    page = client.get(other, role=other_role, params={"limit": 1})
    cursor = listing.page_of(listing.Family.ENVELOPE, page).next_cursor
    if not isinstance(cursor, str):
        pytest.skip(f"not exercised: the {other} list gave no cursor")
    response = client.get(path, role=role, params={"cursor": cursor})
    listing.expect_error(rid, response, 422, listing.Code.ENVELOPE, code)


def _unlisted(path: str, role: str, fixture: str, unknown: str, rid: str, marked: Any) -> Any:
    """A row: the item of `fixture` (withheld from the list) and a code no one issued."""
    needs = pytest.mark.needs(f"role:{role}", f"fixture:{fixture}")
    return pytest.param(path, role, fixture, unknown, rid, marks=[needs, marked], id=path)


@pytest.mark.parametrize(
    ("path", "role", "fixture", "unknown", "rid"),
    [
        _unlisted("series", "films_metadata", "series_code_unlicensed", "ZZ999999", "SER-033",
                  pytest.mark.requirement("SER-033", "SER-047")),
        _unlisted("playlists", "videos", "playlist_code_withdrawn", "PLZZ9999", "PLS-027",
                  pytest.mark.requirement("PLS-027", "PLS-043")),
    ],
)  # fmt: skip
def test_an_unlisted_and_an_unknown_item_get_the_same_404(
    client: DeliveryClient, fixture_id: Any, path: str, role: str, fixture: str, unknown: str,
    rid: str,
) -> None:  # fmt: skip
    for code in (fixture_id(fixture), unknown):
        response = client.get(f"{path}/{code}", role=role)
        listing.expect_error(rid, response, 404, listing.Code.ENVELOPE, 4040)


# -- walks as sequences ------------------------------------------------------------------------

WALK_SIZES = (1, 7, 100)  # one item a page, a size that cuts the list unevenly, whole pages
KEYS = {"series": "code", "playlists": "code", "creatives": "creative_id"}


def _sequences(client: DeliveryClient, path: str, role: str, rid: str) -> dict[int, list[Any]]:
    """The keys of one whole walk per page size, in the order served (a walk that never reaches
    a null cursor breaks the same rule: a next page, until a null cursor)."""
    return {
        size: [
            item.get(KEYS[path])
            for item in listing.items_of(listing.envelope_walk(client, path, role, rid, limit=size))
        ]
        for size in WALK_SIZES
    }


def _one_sequence(walks: dict[int, list[Any]]) -> bool:
    first = walks[WALK_SIZES[0]]
    return all(len(w) == len(set(map(str, w))) and w == first for w in walks.values())


@pytest.mark.parametrize(
    ("path", "role", "rid"),
    [
        pytest.param("series", "films_metadata", "SER-031", id="series",
                     marks=[SERIES, pytest.mark.requirement("SER-031")]),
        pytest.param("playlists", "videos", "PLS-049", id="playlists",
                     marks=[PLAYLISTS, pytest.mark.requirement("PLS-049")]),
        pytest.param("creatives", "films", "FRESH-021", id="creatives",
                     marks=[CREATIVES, pytest.mark.requirement("FRESH-021")]),
    ],
)  # fmt: skip
@pytest.mark.long
def test_walks_of_an_unchanged_list_are_one_sequence(
    client: DeliveryClient, path: str, role: str, rid: str
) -> None:
    """Compared as sequences, not as sets: on a list nothing changes, every page size gives the
    same items in the same order, none twice (Paging: a cursor gives the next page; the order of
    each list). A server whose caches still differ after an earlier scenario's change is read
    again until they agree, within the metadata bound of Limits > Freshness."""
    seen = settle(lambda: _sequences(client, path, role, rid), _one_sequence, CATALOG_AGE)
    walks = seen.value
    repeats = {size: len(w) - len(set(map(str, w))) for size, w in walks.items()}
    first = walks[WALK_SIZES[0]]
    differ = [size for size, w in walks.items() if w != first]
    expect(
        rid,
        seen.settled,
        expected=f"page sizes {WALK_SIZES} give one sequence of {len(first)} items, none twice",
        actual=f"repeats by page size {repeats}; other order or items with limit {differ}",
    )


@pytest.mark.requirement("PLS-045")
@pytest.mark.needs("admin", "role:videos", "fixture:playlist_code")
def test_a_playlist_changed_after_the_walk_passed_it_is_seen_again(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """A walk passes the playlist, the playlist changes (sandbox `playlists/{code}/retitle`),
    the walk goes on: the changed playlist must come back later in the walk or on the next sync
    from the walk's largest `updated_at`, within the metadata bound of Limits > Freshness
    (GET /playlists: `updated_at` moves with every change; sync with `updated_since`)."""
    code, title = fixture_id("playlist_code"), "Changed during a walk"

    def holds(page: listing.Page) -> bool:
        return any(i.get("code") == code for i in listing.items_of([page]))

    first = listing.envelope_walk(client, "playlists", "videos", "PLS-045", limit=1, until=holds)
    cursor = first[-1].next_cursor
    if not holds(first[-1]) or cursor is None:
        pytest.skip("not exercised: the walk ended on the playlist, or never reached it")
    admin.call("POST", f"playlists/{code}/retitle", {"title": title})
    rest = listing.envelope_walk(client, "playlists", "videos", "PLS-045", limit=1, cursor=cursor)
    stamps = [i.get("updated_at") for i in listing.items_of(first + rest)]
    since = max((t for t in stamps if listing.is_int(t)), default=0)

    def again() -> list[dict[str, Any]]:
        following = listing.envelope_walk(
            client, "playlists", "videos", "PLS-045", limit=100, updated_since=since
        )
        return listing.items_of(rest + following)

    seen = settle(again, lambda items: any(i.get("title") == title for i in items), CATALOG_AGE)
    expect(
        "PLS-045",
        seen.settled,
        expected=f"playlist {code} with its new title later in the walk or from "
        f"updated_since={since}, within {CATALOG_AGE:g} s",
        actual=f"not among {len(seen.value)} items",
    )
