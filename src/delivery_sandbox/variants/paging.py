"""Variants at the `store` seam: where a page of a list is cut (spec: Paging and envelopes, "stop
when the next cursor is null, never because a page is short or empty"; GET /playlists, a full
page always carries a cursor; GET /videos, a page can be short or empty while more follow).

`PagePolicy.window` is the one rule every paged list follows (catalog with `limit` or a cursor,
creatives, series, playlists, videos): from row `start` of `total`, with `limit`, which rows the
page serves and whether a cursor follows. The default cuts `limit` rows and gives a cursor only
when rows follow and the page is not empty (a full playlists page always gets one):

- `short_pages`: about half of `limit` rows a page (`limit` 1 stays 1);
- `empty_pages`: the second page of a walk is empty with a cursor to the same place, and a walk
  ends on an empty page with a null cursor (the last page with rows gets a cursor).

`empty_pages` has to remember where a walk is, so its cursors carry one more value after the
position of the last row (`join`, `split`); the other policies leave positions as they are, so
the default cursors are byte for byte the same. Pure: no clock, no sandbox state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["FULL_PAGES", "PagePolicy", "Window", "page_policy"]

AFTER_EMPTY = 2  # the page number carried once the walk's empty page has been served


@dataclass(frozen=True, slots=True)
class Window:
    """Rows `start` to `stop` (excluded) are served; `next_state` None: no cursor follows."""

    stop: int
    next_state: int | None


@dataclass(frozen=True, slots=True)
class PagePolicy:
    short: bool = False
    empty: bool = False

    def window(
        self, start: int, total: int, limit: int, state: int = 0, full_page_cursor: bool = False
    ) -> Window:
        """The page from row `start` of `total` at `limit`; `state` is what the cursor carried
        (0 on a first page)."""
        if self.empty and state == 1 and start < total:
            return Window(start, AFTER_EMPTY)  # an empty page in the middle of the walk
        size = max(1, (limit + 1) // 2) if self.short else limit
        stop = min(start + size, total)
        served = stop - start
        more = stop < total or (full_page_cursor and served == limit)
        if self.empty and served and stop == total:
            more = True  # the walk ends on an empty page
        if not served or not more:
            return Window(stop, None)
        return Window(stop, min(state + 1, AFTER_EMPTY) if self.empty else 0)

    def join(self, position: list[Any], state: int) -> list[Any]:
        """The position a cursor carries (with the walk's state under `empty_pages`)."""
        return [*position, state] if self.empty else position

    def split(self, position: list[Any]) -> tuple[list[Any], int] | None:
        """(position, state) out of a cursor's value; None when it holds no state it should."""
        if not self.empty:
            return position, 0
        if not position or not isinstance(position[-1], int) or isinstance(position[-1], bool):
            return None
        state = position[-1]
        return (position[:-1], state) if 0 <= state <= AFTER_EMPTY else None


FULL_PAGES = PagePolicy()


def page_policy(variants: VariantSet) -> PagePolicy:
    if not (variants.enabled(VariantName.short_pages) or variants.enabled(VariantName.empty_pages)):
        return FULL_PAGES
    return PagePolicy(
        short=variants.enabled(VariantName.short_pages),
        empty=variants.enabled(VariantName.empty_pages),
    )
