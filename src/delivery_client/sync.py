"""Catalog sync flows (one walk, a bounded watch) and the config read.

Catalog (spec: Limits > Freshness, "Catalog paging"): the whole walk is fetched first; only a
complete walk is applied, in one transaction (CLI-045). With the broken variant
`withdraw_only_after_complete_walk=False`, a walk that failed part way is applied as if it were
complete (its missing films count as missed).
Config (GET /config): known fields read with defaults, unknown ones ignored (CFG-027).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from delivery_client.catalog import Walk, apply_walk, fetch_catalog, merge_pages, parse_pages
from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.exceptions import ClientError
from delivery_client.paging import walk_flat
from delivery_client.state import State

__all__ = ["CatalogSync", "read_config", "sync_catalog", "watch_catalog"]


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
