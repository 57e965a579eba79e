"""Walks of paged lists, one page at a time (spec: Endpoints > Paging and envelopes; Errors >
Retry policy (client side): "walk pages one at a time").

- Flat lists (catalog, videos): the next page asks with `cursor` = the previous `next_cursor`,
  byte for byte (never built, decoded or re-encoded); the walk stops only when it is null.
- Envelope lists (creatives, series, playlists): follow `links.next` until it is null.
- A cursor (or next link) seen twice in one walk is a loop: `BadResponse`, never a hang.
Each walk is a generator: the next request is sent only after the caller took the page.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import httpx

from delivery_client.client import DeliveryClient
from delivery_client.exceptions import BadResponse
from delivery_client.policy import BACKGROUND, RetryProfile

__all__ = ["walk_envelope", "walk_flat"]


def _next_cursor(holder: Mapping[str, Any]) -> str | None:
    cursor = holder.get("next_cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise BadResponse(f"next_cursor is a {type(cursor).__name__}, not a string or null")
    return cursor


def walk_flat(
    client: DeliveryClient,
    path: str,
    items_key: str,
    params: Mapping[str, Any] | None = None,
    profile: RetryProfile = BACKGROUND,
    digest: Any = None,
    raw: list[bytes] | None = None,
) -> Generator[dict[str, Any], None, None]:
    """Yield each page (a JSON object) of a flat cursor list; `digest` (a hashlib object), when
    given, is fed every page's raw body, and `raw` collects the raw bodies."""
    max_pages = client.settings.max_pages
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(max_pages):
        query = dict(params or {})
        if cursor is not None:
            query["cursor"] = cursor
        reply = client.request("GET", path, params=query, profile=profile)
        if digest is not None:
            digest.update(reply.content)
        if raw is not None:
            raw.append(reply.content)
        page = reply.object()
        items = page.get(items_key)
        if not isinstance(items, list):
            raise BadResponse(f"{path}: `{items_key}` is not an array")
        yield page
        cursor = _next_cursor(page)
        if cursor is None:  # never because a page is short or empty
            return
        if cursor in seen:
            raise BadResponse(f"{path}: the same cursor came back twice (a looping walk)")
        seen.add(cursor)
    raise BadResponse(f"{path}: more than {max_pages} pages; walk stopped")


def walk_envelope(
    client: DeliveryClient,
    path: str,
    params: Mapping[str, Any] | None = None,
    profile: RetryProfile = BACKGROUND,
    pinned: Mapping[str, Any] | None = None,
) -> Generator[dict[str, Any], None, None]:
    """Yield the `data` of each page of an envelope list. `pinned` query values are kept on
    every page even if a `links.next` dropped them (the creatives `updated_since`)."""
    max_pages = client.settings.max_pages
    seen: set[str] = set()
    target: str = path
    query: dict[str, Any] | None = {**(params or {}), **(pinned or {})}
    for _ in range(max_pages):
        body = client.request("GET", target, params=query, profile=profile).object()
        data = body.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            raise BadResponse(f"{path}: the envelope has no `data.items` array")
        yield data
        links = body.get("links")
        following = links.get("next") if isinstance(links, dict) else None
        cursor = _next_cursor(data)
        if following is None or cursor is None:  # never because a page is short or empty
            return
        if not isinstance(following, str):
            raise BadResponse(f"{path}: links.next is not a string or null")
        if following in seen:
            raise BadResponse(f"{path}: the same next link came back twice (a looping walk)")
        seen.add(following)
        url = httpx.URL(following)
        target, query = str(url.copy_merge_params(dict(pinned)) if pinned else url), None
    raise BadResponse(f"{path}: more than {max_pages} pages; walk stopped")
