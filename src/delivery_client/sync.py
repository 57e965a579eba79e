"""Sync flows that tie a walk to the local state (catalog, series) and the config read.

Catalog (spec: Limits > Freshness, "Catalog paging"): the whole walk is fetched first; only a
complete walk is applied, in one transaction (CLI-045). With the broken variant
`withdraw_only_after_complete_walk=False`, a walk that failed part way is applied as if it were
complete (its missing films count as missed).
Series (GET /series, Series detail): the stored `content_version` is compared with the list item
and the detail is read only when it changed (CLI-035); tags are kept by `slug`, image kinds the
client does not know are skipped (CLI-036), and subtitle, image and poster links are not stored.
Config (GET /config): known fields read with defaults, unknown ones ignored (CFG-027).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from delivery_client.catalog import Walk, apply_walk, fetch_catalog, merge_pages, parse_pages
from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.exceptions import ClientError
from delivery_client.paging import walk_envelope, walk_flat
from delivery_client.state import State

__all__ = [
    "IMAGE_KINDS",
    "CatalogSync",
    "read_config",
    "sync_catalog",
    "sync_series",
    "watch_catalog",
]

IMAGE_KINDS = frozenset({"poster_3_4", "cover_9_16", "hero_16_9", "title_treatment"})


@dataclass(frozen=True)
class CatalogSync:
    films_seen: int
    available: int
    unavailable: int
    complete: bool


def _partial_walk(client: DeliveryClient, paged: bool) -> tuple[Walk, bool]:
    """The broken variant: keep the pages that answered before the failure."""
    pages: list[dict[str, Any]] = []
    try:
        if client.policy.prefer_unpaged and not paged:
            pages.append(client.request("GET", API_PREFIX + "catalog").object())
        else:
            limit = {"limit": client.policy.page_size}
            pages.extend(walk_flat(client, API_PREFIX + "catalog", "films", limit))
    except ClientError:
        return merge_pages(pages, client.policy), False
    return merge_pages(pages, client.policy), True


def sync_catalog(client: DeliveryClient, state: State, *, paged: bool = False) -> CatalogSync:
    """One walk applied. A walk byte-identical to the last applied one (same digest) changes
    only the missed-walk counters, so it is applied as one UPDATE instead of a rewrite."""
    policy = client.policy
    walks = int(state.meta("catalog_walks", "0") or 0) + 1
    digest: str | None = None
    if policy.withdraw_only_after_complete_walk:
        known = state.meta("catalog_digest")
        pages, digest = fetch_catalog(client, paged=paged)
        if digest == known:
            seen, available, total = state.repeat_walk(walks, policy.walks_before_unavailable)
            return CatalogSync(seen, available, total - available, True)
        walk, complete = merge_pages(parse_pages(pages), policy), True
    else:
        walk, complete = _partial_walk(client, paged)
    view = apply_walk(state.films(), walk, policy)
    state.replace_films(view, walks, digest)
    available = sum(record.available for record in view.values())
    return CatalogSync(len(walk), available, len(view) - available, complete)


def watch_catalog(
    client: DeliveryClient, state: State, walks: int, interval: float, *, paged: bool = False
) -> list[CatalogSync]:
    """`walks` catalog syncs, `interval` seconds apart but never closer than the policy's
    `min_poll_interval` (GET /catalog: poll on a schedule of minutes; CLI-048)."""
    gap = max(interval, client.policy.min_poll_interval)
    results = []
    for walk in range(walks):
        if walk:
            client.sleep(gap)
        results.append(sync_catalog(client, state, paged=paged))
    return results


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _series_detail(data: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in data.items() if k not in ("images", "poster", "episodes", "tags")}
    tags = _list(data.get("tags"))
    kept["tags"] = {t["slug"]: t for t in tags if isinstance(t, dict) and "slug" in t}
    images = _list(data.get("images"))
    kept["image_kinds"] = sorted(
        {i["kind"] for i in images if isinstance(i, dict) and i.get("kind") in IMAGE_KINDS}
    )
    episodes = _list(data.get("episodes"))
    kept["episodes"] = [
        {k: v for k, v in e.items() if k != "subtitles"}
        | {
            "subtitle_langs": [
                s.get("lang") for s in e.get("subtitles") or [] if isinstance(s, dict)
            ]
        }
        for e in episodes
        if isinstance(e, dict)
    ]
    return kept


def sync_series(client: DeliveryClient, state: State) -> tuple[int, int]:
    """(list items, detail calls)."""
    stored = state.series()
    items: list[dict[str, Any]] = []
    for data in walk_envelope(client, API_PREFIX + "series", {"limit": 100}):
        items += [item for item in data["items"] if isinstance(item, dict) and "code" in item]
    details: dict[str, dict[str, Any] | None] = {}
    for item in items:
        code, version = str(item["code"]), item.get("content_version")
        old = stored.get(code)
        unchanged = old is not None and old[1] == version and old[2]
        if item.get("status") != "active" or (unchanged and client.policy.skip_unchanged_series):
            continue
        body = client.request("GET", f"{API_PREFIX}series/{code}").object()
        detail = body.get("data")
        details[code] = _series_detail(detail) if isinstance(detail, dict) else None
    with state.transaction() as db:
        for item in items:
            code = str(item["code"])
            if code in details:
                detail = details[code]
                db.execute(
                    "INSERT OR REPLACE INTO series VALUES (?, ?, ?, ?)",
                    (
                        code,
                        json.dumps(item, sort_keys=True),
                        json.dumps(detail, sort_keys=True),
                        item.get("content_version"),
                    ),
                )
            else:
                db.execute(
                    "INSERT INTO series VALUES (?, ?, NULL, ?) ON CONFLICT(code) DO UPDATE SET "
                    "item = excluded.item",
                    (code, json.dumps(item, sort_keys=True), item.get("content_version")),
                )
    return len(items), len(details)


def read_config(client: DeliveryClient) -> dict[str, Any]:
    """The known parts of GET /config, each with a default when missing."""
    body = client.request("GET", API_PREFIX + "config").object()

    def part(name: str) -> dict[str, Any]:
        value = body.get(name)
        return value if isinstance(value, dict) else {}

    api, key, limits = part("api"), part("key"), part("rate_limits")
    doors = limits.get("doors") if isinstance(limits.get("doors"), dict) else {}
    return {
        "api_version": api.get("version"),
        "pinned_version": api.get("pinned_version"),
        "latest_version": api.get("latest_version"),
        "scopes": sorted(s for s in key.get("scopes") or [] if isinstance(s, str)),
        "test_organisation": key.get("test_organisation") is True,
        "window_seconds": limits.get("window_seconds", 60),
        "limits": {
            name: door.get("limit")
            for name, door in sorted((doors or {}).items())
            if isinstance(door, dict)
        },
        "deprecations": len(body.get("deprecations") or []),
    }
