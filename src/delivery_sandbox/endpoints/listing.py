"""Shared pieces of the listing endpoints (spec: Paging and envelopes; Limits > Other constants).

Query parsing for `limit`, `updated_since` and `cursor`, the success envelope, keyset paging
over sorted rows, content hashes and ISO times. Pure: `now` is passed in.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeVar
from urllib.parse import urlencode

import orjson

from delivery_sandbox.endpoints import cursors
from delivery_sandbox.variants.paging import FULL_PAGES, PagePolicy

__all__ = [
    "PAGE_LIMITS",
    "PLAYLIST_SIZE",
    "Page",
    "PageLimit",
    "by_update",
    "content_hash",
    "iso",
    "list_links",
    "ok_envelope",
    "paginate",
    "parse_epoch",
    "parse_limit",
    "resume",
]

T = TypeVar("T")
MAX_EPOCH_DIGITS = 11


def iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(int(epoch), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PageLimit(NamedTuple):
    """What `limit` a list takes: 1 to `high`, `default` when the query leaves it out."""

    high: int
    default: int


# list -> its `limit` (spec: the query tables of GET /series, /playlists, /creatives, /videos)
PAGE_LIMITS: dict[str, PageLimit] = {
    "series": PageLimit(100, 50),
    "playlists": PageLimit(100, 50),
    "creatives": PageLimit(100, 50),
    "videos": PageLimit(200, 50),
}
PLAYLIST_SIZE = 100  # episodes or clips per media playlist of a series or playlist (SER, PLS)


def parse_limit(raw: str | None, high: int, default: int) -> int | None:
    """A whole number from 1 to `high` (default when absent); None when invalid. `limit=` is 0.

    Requirements: CRE-030, CRE-054, CRE-055, PLS-021, SER-029.
    """
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit():
        return None
    value = int(raw)
    return value if 1 <= value <= high else None


def parse_epoch(raw: str | None, digits: int = MAX_EPOCH_DIGITS) -> int | bool | None:
    """Epoch seconds of up to `digits` digits (11); None when absent; False when invalid.

    Requirements: CRE-029, CRE-056, PLS-037, SER-042.
    """
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > digits:
        return False
    return int(raw)


def content_hash(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]


def ok_envelope(data: Any, now: float, links: dict[str, Any]) -> bytes:
    """The success envelope: `{code: 0, message: "ok", data, server_time, links}`.

    Requirements: PAGE-005, PAGE-006, PAGE-007, PAGE-008.
    """
    return orjson.dumps(
        {"code": 0, "message": "ok", "data": data, "server_time": int(now), "links": links}
    )


@dataclass(frozen=True)
class Page:
    rows: list[Any]
    next_cursor: str | None


def by_update(row: Mapping[str, Any]) -> list[Any]:
    """The keyset order of the series and playlists lists: `updated_at`, then `code`."""
    return [row["updated_at"], row["code"]]


def paginate(
    rows: Sequence[T],
    key: Callable[[T], list[Any]],
    limit: int,
    after: list[Any] | None,
    scope: cursors.Scope,
    full_page_cursor: bool = False,
    paging: PagePolicy = FULL_PAGES,
    state: int = 0,
) -> Page:
    """Rows after the position `after` (rows sorted by `key`), `limit` of them, cut where
    `paging` says (`state`: what the cursor carried besides the position; variants/paging.py).

    `full_page_cursor`: a full page always carries a cursor, even when nothing follows.

    Requirements: PAGE-001, PAGE-002, PAGE-010, PLS-022.
    """
    start = 0
    if after is not None:
        start = next((i for i, row in enumerate(rows) if key(row) > after), len(rows))
    window = paging.window(start, len(rows), limit, state, full_page_cursor)
    page = list(rows[start : window.stop])
    if window.next_state is None:
        return Page(page, None)
    last = key(page[-1]) if page else list(after or [])
    return Page(page, scope.encode(paging.join(last, window.next_state)))


def resume(
    scope: cursors.Scope, paging: PagePolicy, cursor: str | None
) -> tuple[list[Any] | None, int] | Literal[False]:
    """(position, state) a list page resumes from: (None, 0) for a first page, False for a
    cursor of another listing, edited by hand, or without the state `paging` gives its cursors."""
    after = scope.resume_after(cursor)
    if after is None or after is False:
        return after if after is False else (None, 0)
    resumed = paging.split(after)
    return False if resumed is None else resumed


def list_links(
    base: str, query: Mapping[str, str], kept: Collection[str], next_cursor: str | None
) -> dict[str, str | None]:
    """`links` of a list answer (spec: Paging and envelopes), the one rule of every list: `self`
    repeats the request's query; `next` keeps the filters named in `kept` and adds the cursor,
    or is null on the last page."""
    keep = {k: v for k, v in query.items() if k in kept}
    return {
        "self": f"{base}?{urlencode(query)}" if query else base,
        "next": f"{base}?{urlencode({**keep, 'cursor': next_cursor})}" if next_cursor else None,
    }
