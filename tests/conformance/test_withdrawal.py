"""Withdrawn series and playlists: kept 30 days with nulls, detail 404, categories as filters.

spec: States and transitions (Series, Playlist rows); Endpoints > GET /series, GET /playlists.
Admin-driven scenarios withdraw with the admin API and move its clock; the `admin` fixture
resets the target afterwards. Readings STATE-003, STATE-006 (gone after 30 days: a must, Limits >
Other constants), STATE-007/014, STATE-017 (past 30 days: 404 4040 or no active playlist).
Limits > Freshness: a
read after a change polls until it shows, for the 30 s a withdrawal may take (`listed_when`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from listing_support import (
    Code,
    Family,
    envelope_walk,
    expect_error,
    is_int,
    items_of,
    page_of,
    walk,
)
from timing_support import EPISODE, settle

from delivery_conformance.checks import expect
from delivery_conformance.target.client import DeliveryClient

DAY = 86400
SERIES_ROLE, PLAYLIST_ROLE = "films_metadata", "videos"
# kind -> (role, list path, fields that turn null on withdrawal)
KINDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "series": (SERIES_ROLE, "series", ("content_version", "episode_count")),
    "playlists": (PLAYLIST_ROLE, "playlists", ("clip_count", "content_version")),
}


def listed(client: DeliveryClient, kind: str, code: str, **params: Any) -> dict[str, Any] | None:
    role, path, _ = KINDS[kind]
    pages = walk(
        client,
        Family.ENVELOPE,
        path,
        role=role,
        params={"limit": 100, **params},
        requirement_id="STATE-001" if kind == "series" else "STATE-009",
    )
    found = [i for i in items_of(pages) if i.get("code") == code]
    return found[0] if found else None


def listed_when(
    client: DeliveryClient,
    kind: str,
    code: str,
    holds: Callable[[dict[str, Any] | None], bool],
    **params: Any,
) -> dict[str, Any] | None:
    """`listed`, read again until `holds(item)`: a withdrawal shows in the metadata lists within
    30 s (Limits > Freshness, a film withdrawn; the catalog's column), so a list read just after
    a change (or after the reset that undid an earlier one) may still show the state before."""
    return settle(lambda: listed(client, kind, code, **params), holds, EPISODE.catalog).value


def is_withdrawn(item: dict[str, Any] | None) -> bool:
    return item is not None and item.get("status") == "withdrawn"


def server_time(client: DeliveryClient, kind: str) -> int:
    role, path, _ = KINDS[kind]
    value = page_of(Family.ENVELOPE, client.get(path, role=role, params={"limit": 1})).body.get(
        "server_time"
    )
    return value if is_int(value) else 0


def withdraw(admin: Any, kind: str, code: str) -> None:
    if kind == "series":
        admin.withdraw_series(code)
    else:
        admin.withdraw_playlist(code)


def expect_listed_withdrawn(
    listed_id: str, nulls_id: str, item: dict[str, Any] | None, nulls: tuple[str, ...], when: str
) -> dict[str, Any]:
    """The list shows the item as withdrawn (`when`: "" or "still ") with its KINDS fields null."""
    expect(
        listed_id,
        item is not None and item.get("status") == "withdrawn",
        expected=f"{when}listed as withdrawn",
        actual=item and item.get("status"),
    )
    assert item is not None
    expect(
        nulls_id,
        all(item.get(name) is None for name in nulls),
        expected=f"{' and '.join(nulls)} null",
        actual={name: item.get(name) for name in nulls},
    )
    return item


def expect_seeded_withdrawn(
    client: DeliveryClient, kind: str, code: str, listed_id: str, nulls_id: str, detail_id: str
) -> None:
    """A withdrawn item: listed as withdrawn, its KINDS fields null, its detail a 404."""
    role, path, nulls = KINDS[kind]
    expect_listed_withdrawn(listed_id, nulls_id, listed(client, kind, code), nulls, "")
    expect_error(detail_id, client.get(f"{path}/{code}", role=role), 404, Code.ENVELOPE, 4040)


def kind_params(series_ids: tuple[str, ...], playlist_ids: tuple[str, ...]) -> list[Any]:
    """(kind, fixture) params for both kinds, each marked with its IDs and what it needs."""
    rows = (("series", "series_code", SERIES_ROLE, series_ids),
            ("playlists", "playlist_code", PLAYLIST_ROLE, playlist_ids))  # fmt: skip
    return [
        pytest.param(
            kind,
            fixture,
            marks=[
                pytest.mark.requirement(*ids),
                pytest.mark.needs(f"role:{role}", f"fixture:{fixture}"),
            ],
        )
        for kind, fixture, role, ids in rows
    ]


IDS = {
    "series": ("STATE-001", "STATE-002", "STATE-003", "STATE-004", "STATE-007"),
    "playlists": ("STATE-009", "STATE-010", "STATE-011", "STATE-012", "STATE-014"),
}


@pytest.mark.needs("admin")
@pytest.mark.parametrize(("kind", "fixture"), kind_params(IDS["series"], IDS["playlists"]))
def test_withdrawn_item_stays_listed_with_nulls_and_its_detail_is_404(
    client: DeliveryClient, admin: Any, fixture_id: Any, kind: str, fixture: str
) -> None:
    listed_id, nulls_id, at_id, detail_id, updated_id = IDS[kind]
    role, path, nulls = KINDS[kind]
    code = fixture_id(fixture)
    before = listed_when(client, kind, code, lambda i: i is not None and not is_withdrawn(i))
    expect(
        at_id,
        before is not None and before.get("withdrawn_at") is None,
        expected="active item with withdrawn_at null",
        actual=before,
        response=None,
    )
    since = server_time(client, kind)
    withdraw(admin, kind, code)
    after = expect_listed_withdrawn(
        listed_id, nulls_id, listed_when(client, kind, code, is_withdrawn), nulls, "still "
    )
    now = server_time(client, kind)
    at = after.get("withdrawn_at")
    expect(
        at_id,
        is_int(at) and since - 5 <= at <= now,
        expected=f"withdrawn_at in [{since}, {now}]",
        actual=at,
    )
    response = settle(
        lambda: client.get(f"{path}/{code}", role=role),
        lambda r: r.status_code == 404,
        EPISODE.catalog,
    ).value
    expect_error(detail_id, response, 404, Code.ENVELOPE, 4040)
    synced = listed_when(client, kind, code, is_withdrawn, updated_since=since - 1)
    expect(
        updated_id,
        synced is not None and synced.get("status") == "withdrawn",
        expected=f"listed as withdrawn with updated_since={since - 1}",
        actual=synced and synced.get("status"),
    )


@pytest.mark.needs("admin")
@pytest.mark.parametrize(
    ("kind", "fixture"), kind_params(("STATE-005", "STATE-006"), ("STATE-013", "STATE-006"))
)
def test_withdrawn_item_is_kept_30_days_then_gone(
    client: DeliveryClient, admin: Any, fixture_id: Any, kind: str, fixture: str
) -> None:
    """Kept 30 days, then gone: Limits > Other constants gives the stay as a fixed duration
    (docs/reading-of-the-spec.md, STATE-006), judged an hour after it ended."""
    code = fixture_id(fixture)
    kept = "STATE-005" if kind == "series" else "STATE-013"
    gone = "STATE-006"
    withdraw(admin, kind, code)
    admin.clock(advance=30 * DAY - 3600)
    item = listed_when(client, kind, code, is_withdrawn)
    expect(
        kept,
        item is not None and item.get("status") == "withdrawn",
        expected="listed 29 days 23 hours after",
        actual=item and item.get("status"),
    )
    admin.clock(advance=2 * 3600)
    expect(
        gone,
        listed_when(client, kind, code, lambda i: i is None) is None,
        expected="gone after 30 days and 1 hour",
        actual="still listed",
    )


@pytest.mark.needs("admin")
@pytest.mark.parametrize(("kind", "fixture"), kind_params(("STATE-021",), ("STATE-021",)))
def test_withdrawn_at_is_read_again_unchanged_days_later(
    client: DeliveryClient, admin: Any, fixture_id: Any, kind: str, fixture: str
) -> None:
    """A fact set once, read again later: the moment of the withdrawal does not move when the
    item is listed again a day later (States and transitions: `withdrawn_at` is set)."""
    code = fixture_id(fixture)
    withdraw(admin, kind, code)
    first = listed_when(client, kind, code, is_withdrawn)
    if first is None:
        pytest.skip("not exercised: the withdrawn item is not listed as withdrawn")
    admin.clock(advance=DAY)
    again = listed_when(client, kind, code, is_withdrawn)
    expect(
        "STATE-021",
        again is not None and again.get("withdrawn_at") == first.get("withdrawn_at"),
        expected=f"withdrawn_at still {first.get('withdrawn_at')!r} a day later",
        actual=again and again.get("withdrawn_at"),
    )


@pytest.mark.needs(f"role:{SERIES_ROLE}", "fixture:series_code_withdrawn")
@pytest.mark.requirement("STATE-001", "STATE-002", "STATE-004")
def test_seeded_withdrawn_series(client: DeliveryClient, fixture_id: Any) -> None:
    code = fixture_id("series_code_withdrawn")
    expect_seeded_withdrawn(client, "series", code, "STATE-001", "STATE-002", "STATE-004")


@pytest.mark.needs(f"role:{PLAYLIST_ROLE}", "fixture:playlist_code_withdrawn")
@pytest.mark.requirement("STATE-009", "STATE-010", "STATE-012")
def test_seeded_withdrawn_playlist(client: DeliveryClient, fixture_id: Any) -> None:
    code = fixture_id("playlist_code_withdrawn")
    expect_seeded_withdrawn(client, "playlists", code, "STATE-009", "STATE-010", "STATE-012")


@pytest.mark.needs(f"role:{PLAYLIST_ROLE}", "fixture:category_withdrawn")
@pytest.mark.requirement("STATE-015", "STATE-016")
def test_withdrawn_category_still_filters_and_lists_withdrawn(
    client: DeliveryClient, fixture_id: Any
) -> None:
    slug = fixture_id("category_withdrawn")
    pages = envelope_walk(client, "playlists", PLAYLIST_ROLE, "STATE-016", category=slug, limit=100)
    items = items_of(pages)
    active = [i.get("code") for i in items if i.get("status") != "withdrawn"]
    expect(
        "STATE-015",
        bool(items) and not active,
        expected="every playlist withdrawn",
        actual=active[:5] or "no items",
        response=pages[0].response,
    )


@pytest.mark.needs(f"role:{PLAYLIST_ROLE}", "fixture:category_withdrawn", "admin")
@pytest.mark.requirement("STATE-017")
def test_category_withdrawn_over_30_days_is_unknown_or_lists_no_active_playlist(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """docs/reading-of-the-spec.md (STATE-017): past 30 days the spec says nothing of the filter:
    404 4040 (no such Category) or a list of its playlists, all withdrawn (or none left), are both
    accepted."""
    admin.clock(advance=30 * DAY + 3600)
    slug = fixture_id("category_withdrawn")
    response = client.get("playlists", role=PLAYLIST_ROLE, params={"category": slug})
    if response.status_code != 200:
        expect_error("STATE-017", response, 404, Code.ENVELOPE, 4040)
        return
    pages = envelope_walk(client, "playlists", PLAYLIST_ROLE, "STATE-017", category=slug, limit=100)
    active = [i.get("code") for i in items_of(pages) if i.get("status") != "withdrawn"]
    expect(
        "STATE-017",
        not active,
        expected="404 4040, or no active playlist of the withdrawn Category",
        actual=f"active playlists listed: {active[:5]}",
        response=pages[0].response,
    )
