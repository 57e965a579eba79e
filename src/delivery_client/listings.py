"""Series and playlists sync (spec: GET /series, GET /series/{code}, GET /playlists, GET
/playlists/{code}; Resources > Series detail, Playlist detail).

The list is walked whole (envelope pager, `links.next`); a detail is read only for an active item
whose `content_version` differs from the stored one (CLI-035). Tags are kept by `slug`, image
kinds and poster sources the client does not know are skipped (CLI-036). No link is stored:
series subtitle, image and poster links, playlist image and clip poster links (short-lived CDN
links; CLI-038) are dropped before the detail is written. One transaction per sync.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.paging import walk_envelope
from delivery_client.state import LISTINGS, State

__all__ = [
    "IMAGE_KINDS",
    "POSTER_SOURCES",
    "needs_detail",
    "sync_listing",
    "sync_playlists",
    "sync_series",
]

IMAGE_KINDS = frozenset({"poster_3_4", "cover_9_16", "hero_16_9", "title_treatment"})
POSTER_SOURCES = frozenset({"media_space", "wandura_cdn"})
_LINK_FIELDS = ("url", "expires_at")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _without_links(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in _LINK_FIELDS}


def _series_detail(data: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in data.items() if k not in ("images", "poster", "episodes", "tags")}
    kept["tags"] = {
        t["slug"]: t for t in _list(data.get("tags")) if isinstance(t, dict) and "slug" in t
    }
    kept["images"] = [
        _without_links(i)
        for i in _list(data.get("images"))
        if isinstance(i, dict) and i.get("kind") in IMAGE_KINDS
    ]
    kept["episodes"] = [
        {k: v for k, v in e.items() if k != "subtitles"}
        | {
            "subtitle_langs": [
                s.get("lang") for s in _list(e.get("subtitles")) if isinstance(s, dict)
            ]
        }
        for e in _list(data.get("episodes"))
        if isinstance(e, dict)
    ]
    return kept


def _media(item: Any) -> Any:
    """A playlist image or clip poster: unknown sources skipped, links dropped."""
    if not isinstance(item, dict) or item.get("source") not in POSTER_SOURCES:
        return None
    return _without_links(item)


def _playlist_detail(data: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in data.items() if k not in ("images", "clips")}
    kept["images"] = [media for media in map(_media, _list(data.get("images"))) if media]
    kept["clips"] = [
        {**clip, "poster": _media(clip.get("poster"))}
        for clip in _list(data.get("clips"))
        if isinstance(clip, dict)
    ]
    return kept


DETAILS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "series": _series_detail,
    "playlists": _playlist_detail,
}


def needs_detail(item: dict[str, Any], stored: tuple[Any, str | None, bool] | None) -> bool:
    """An active item's detail is read unless the stored one has the same `content_version`
    (GET /series: skip the detail call when it is equal; CLI-035)."""
    if item.get("status") != "active":
        return False
    unchanged = stored is not None and stored[1] == item.get("content_version") and stored[2]
    return not unchanged


def sync_listing(client: DeliveryClient, state: State, kind: str) -> tuple[int, int]:
    """(list items, detail calls) for `kind` in "series", "playlists"."""
    assert kind in LISTINGS
    stored = state.listing(kind)
    items: list[dict[str, Any]] = []
    for data in walk_envelope(client, API_PREFIX + kind, {"limit": 100}):
        items += [item for item in data["items"] if isinstance(item, dict) and "code" in item]
    details: dict[str, dict[str, Any] | None] = {}
    for item in items:
        code = str(item["code"])
        if not needs_detail(item, stored.get(code)):
            continue
        detail = client.request("GET", f"{API_PREFIX}{kind}/{code}").object().get("data")
        details[code] = DETAILS[kind](detail) if isinstance(detail, dict) else None
    with state.transaction() as db:
        for item in items:
            code, text = str(item["code"]), json.dumps(item, sort_keys=True)
            if code in details:
                db.execute(
                    f"INSERT OR REPLACE INTO {kind} VALUES (?, ?, ?, ?)",
                    (
                        code,
                        text,
                        json.dumps(details[code], sort_keys=True),
                        item.get("content_version"),
                    ),
                )
            else:
                db.execute(
                    f"INSERT INTO {kind} VALUES (?, ?, NULL, ?) "
                    "ON CONFLICT(code) DO UPDATE SET item = excluded.item",
                    (code, text, item.get("content_version")),
                )
    return len(items), len(details)


def sync_series(client: DeliveryClient, state: State) -> tuple[int, int]:
    return sync_listing(client, state, "series")


def sync_playlists(client: DeliveryClient, state: State) -> tuple[int, int]:
    return sync_listing(client, state, "playlists")
