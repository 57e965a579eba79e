"""Open videos (spec: GET /videos, the frozen legacy path; Open video row; Limits: open video
links valid 1 hour, refresh before 45 minutes).

`VideoFeed` holds the rows of the last walk in memory only: their signed MP4 links are handed
to the caller as received, never written to the state, a log or an export (CLI-040). `rows(now)`
walks the list again once `now` reaches the earliest `refresh_before` of the walk minus
`Settings.video_refresh_margin`, so no link is played past its refresh time. Each link is
registered with the redactor.

`follow_videos` is a player that keeps the list current for a while: it asks the feed for rows
every `every` seconds (the feed walks again when due) and stops by itself after `seconds`; the
clock and the sleep are passed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.exceptions import BadResponse
from delivery_client.paging import walk_flat
from delivery_client.redact import redactor

__all__ = ["FollowResult", "VideoFeed", "VideoList", "fetch_videos", "follow_videos"]


@dataclass(frozen=True)
class VideoList:
    rows: tuple[dict[str, Any], ...] = field(repr=False)
    refresh_before: datetime | None  # the earliest of the walk's pages

    def refresh_due(self, now: datetime, margin: float) -> bool:
        return self.refresh_before is None or now >= self.refresh_before - timedelta(seconds=margin)


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BadResponse("refresh_before is not an ISO 8601 time") from None


def fetch_videos(client: DeliveryClient, collection: str | None = None) -> VideoList:
    params = {"collection": collection} if collection else {}
    rows: list[dict[str, Any]] = []
    times: list[datetime] = []
    for page in walk_flat(client, API_PREFIX + "videos", "rows", params):
        stamp = _instant(page.get("refresh_before"))
        if stamp is not None:
            times.append(stamp)
        for row in page["rows"]:
            if isinstance(row, dict):
                mp4 = row.get("mp4") if isinstance(row.get("mp4"), dict) else {}
                redactor.add(*(v for v in (mp4 or {}).values() if isinstance(v, str)))
                rows.append(row)
    return VideoList(tuple(rows), min(times, default=None))


class VideoFeed:
    """The current list, walked again when its refresh time comes (`now` passed in)."""

    def __init__(self, client: DeliveryClient, collection: str | None = None) -> None:
        self.client, self.collection = client, collection
        self._list: VideoList | None = None
        self.walks = 0

    def rows(self, now: datetime) -> tuple[dict[str, Any], ...]:
        margin = self.client.settings.video_refresh_margin
        if self._list is None or self._list.refresh_due(now, margin):
            self._list = fetch_videos(self.client, self.collection)
            self.walks += 1
        return self._list.rows


@dataclass(frozen=True)
class FollowResult:
    """What a follow did, in counts only (never a link)."""

    polls: int  # times the player asked for rows
    walks: int  # times the list was walked
    rows: int  # rows of the last walk
    collections: tuple[str, ...]


def follow_videos(
    feed: VideoFeed,
    seconds: float,
    every: float,
    now: Callable[[], datetime],
    sleep: Callable[[float], None],
) -> FollowResult:
    """Ask `feed` for rows at once and every `every` seconds until `seconds` have passed by
    `now`; at most one poll per `every` in that time, plus the first (bounded even when `sleep`
    does not move `now`)."""
    if seconds <= 0 or every <= 0:
        raise ValueError("seconds and every must be positive")
    start = now()
    rows: tuple[dict[str, Any], ...] = ()
    polls = 0
    for _ in range(math.floor(seconds / every) + 1):
        rows = feed.rows(now())
        polls += 1
        left = seconds - (now() - start).total_seconds()
        if left <= 0:
            break
        sleep(min(every, left))
    collections = tuple(sorted({str(r.get("collection")) for r in rows}))
    return FollowResult(polls, feed.walks, len(rows), collections)
