"""What a retitle moves: a film's `metadata_version` and a playlist's `updated_at` change when
the item changes (the title is changed with the sandbox admin API).

spec: Resources > Film (`metadata_version`); Resources > Playlist list item and detail
(`updated_at`); Limits > Freshness (how long the change may take to show).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from json_support import at
from timing_support import CATALOG_AGE, settle

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.target.client import DeliveryClient, Response


def _retitle(
    admin: Any, action: str, read: Callable[[], Any], stamp: tuple[str, type], where: str
) -> tuple[Any, Response, dict[str, Any]]:
    """The item's `stamp` field (name, type) before, then the title changed with the sandbox
    admin `action` (docs/sandbox.md > Admin API) and the item read again (`read`) until the new
    title shows: the catalog and the other metadata endpoints are up to 30 s old (GET /catalog;
    Limits > Freshness). Not exercised when the item has no such stamp, or when the new title does
    not show in `where` within those 30 s."""
    _, before = read()
    value = before.get(stamp[0])
    if not isinstance(value, stamp[1]):
        pytest.skip(NOT_EXERCISED_PREFIX + f"the {where} item has no {stamp[0]} to compare")
    title = f"{before.get('title') or 'Item'} (retitled)"
    admin.call("POST", action, {"title": title})
    seen = settle(read, lambda pair: pair[1].get("title") == title, CATALOG_AGE)
    response, after = seen.value
    if not seen.settled:
        pytest.skip(
            NOT_EXERCISED_PREFIX
            + f"the new title does not show in the {where} in {CATALOG_AGE:g} s"
        )
    return value, response, after


def _film(client: DeliveryClient, film_id: str) -> tuple[Response, dict[str, Any]]:
    response = client.get("catalog", role="films")
    expect_status("CAT-001", response, 200, expected="200 for GET /catalog")
    films = at(response.json_body(), "films")
    found = [f for f in films or [] if isinstance(f, dict) and f.get("id") == film_id]
    return response, found[0] if found else {}


@pytest.mark.needs("admin", "role:films", "fixture:film_id")
@pytest.mark.requirement("CAT-082")
def test_metadata_version_moves_when_the_metadata_changes(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """spec: Resources > Film (`metadata_version` changes when the metadata changes). The
    title is changed with the sandbox admin action `films/{id}/retitle` (docs/sandbox.md > Admin
    API)."""
    film_id = fixture_id("film_id")
    read = partial(_film, client, film_id)
    version, response, after = _retitle(
        admin, f"films/{film_id}/retitle", read, ("metadata_version", str), "catalog"
    )
    expect(
        "CAT-082",
        after.get("metadata_version") != version,
        expected="a metadata_version other than the one before the title changed",
        actual=f"unchanged {version!r}",
        response=response,
    )


def _playlist(client: DeliveryClient, code: str) -> tuple[Response, dict[str, Any]]:
    response = client.get(f"playlists/{code}", role="videos")
    expect_status("PLS-026", response, 200, expected=f"200 for playlist {code}")
    data = at(response.json_body(), "data")
    return response, data if isinstance(data, dict) else {}


@pytest.mark.needs("admin", "role:videos", "fixture:playlist_code")
@pytest.mark.requirement("PLS-045")
def test_a_playlist_that_changes_moves_its_updated_at(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """spec: Resources > Playlist list item and detail (`updated_at`: the last change), read with
    Endpoints > GET /playlists (`updated_since` syncs rely on it). The title is changed with the
    sandbox admin action `playlists/{code}/retitle` (docs/sandbox.md > Admin API)."""
    code = fixture_id("playlist_code")
    read = partial(_playlist, client, code)
    stamp, response, after = _retitle(
        admin, f"playlists/{code}/retitle", read, ("updated_at", int), "playlist"
    )
    moved = after.get("updated_at")
    expect(
        "PLS-045",
        isinstance(moved, int) and moved > stamp,
        expected=f"updated_at later than {stamp} once the playlist changed",
        actual=moved,
        response=response,
    )
