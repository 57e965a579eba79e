"""Catalog sync flows (one walk, a bounded watch) and the config read.

Catalog (spec: Limits > Freshness, "Catalog paging"): the whole walk is fetched first; only a
complete walk is applied, in one transaction (CLI-045); a walk that fails part way applies
nothing. `watch` walks on a schedule of minutes (GET /catalog; CLI-048).
Config (GET /config): known fields read with defaults, unknown ones ignored (CFG-027).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from delivery_client.catalog import (
    WALKS_BEFORE_UNAVAILABLE,
    apply_walk,
    fetch_catalog,
    merge_pages,
    parse_pages,
)
from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.state import State

__all__ = ["MIN_POLL_INTERVAL", "CatalogSync", "read_config", "sync_catalog", "watch_catalog"]

MIN_POLL_INTERVAL = 60.0  # seconds: "a schedule of minutes" read as at most one walk a minute


@dataclass(frozen=True)
class CatalogSync:
    films_seen: int
    available: int
    unavailable: int
    complete: bool


def sync_catalog(client: DeliveryClient, state: State, *, paged: bool = False) -> CatalogSync:
    """One walk applied. A walk byte-identical to the last applied one (same digest) changes
    only the missed-walk counters, so it is applied as one UPDATE instead of a rewrite."""
    walks = int(state.meta("catalog_walks", "0") or 0) + 1
    known = state.meta("catalog_digest")
    pages, digest = fetch_catalog(client, paged=paged)  # raises unless every page answered
    if digest == known:
        seen, available, total = state.repeat_walk(walks, WALKS_BEFORE_UNAVAILABLE)
        return CatalogSync(seen, available, total - available, True)
    walk = merge_pages(parse_pages(pages))
    view = apply_walk(state.films(), walk)
    state.replace_films(view, walks, digest)
    available = sum(record.available for record in view.values())
    return CatalogSync(len(walk), available, len(view) - available, True)


def watch_catalog(
    client: DeliveryClient, state: State, walks: int, interval: float, *, paged: bool = False
) -> list[CatalogSync]:
    """`walks` catalog syncs, `interval` seconds apart but never closer than
    `MIN_POLL_INTERVAL` (GET /catalog: poll on a schedule of minutes; CLI-048)."""
    gap = max(interval, MIN_POLL_INTERVAL)
    results = []
    for walk in range(walks):
        if walk:
            client.sleep(gap)
        results.append(sync_catalog(client, state, paged=paged))
    return results


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
