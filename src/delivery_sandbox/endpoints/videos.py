"""GET /videos and GET /videos/{id}, the frozen legacy feed (spec: GET /videos; Resources > Open
video row; Errors > Open videos).

Flat family. Rows in collection order with signed MP4 links valid 1 hour (`refresh_before` at
45 minutes); videos not ready are skipped, so a page can be short or empty while more follow.
Without `collection`, the rows of every granted collection, one collection after the other, a
collection that cannot be read left out (our reading). The 200 of the single read carries no
`Service-Version`. Faults act at the named steps of the step seam (faults/steps.py: `bend`), one
call each: a bad `limit`, the rows walked and the page size, the rows shown, the id read, the
video served.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import orjson

from delivery_sandbox.endpoints import cursors
from delivery_sandbox.endpoints.listing import iso, list_links, parse_limit
from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http import errors
from delivery_sandbox.http.headers import Call, Exchange, Reply
from delivery_sandbox.state.accounts import Caller
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.state.store import Collection, Video

__all__ = ["handle_list", "handle_one", "video_row"]

PATH = "/api/delivery/v1/videos"
MAX_LIMIT, DEFAULT_LIMIT = 200, 50
LINK_TTL, REFRESH = 3600, 2700  # spec: Limits > Other constants, open video links
MSG_BAD_QUERY = "limit must be 1 to 200 and cursor one this endpoint issued"
MSG_BAD_ID = "id is not a UUID"


def _link(sb: Sandbox, video: Video, rendition: str, expires: int) -> str:
    """A signed rendition link valid until the response's `expires_at`. (VID-005)"""
    sig = hashlib.sha256(
        sb.cursor_secret + f"{video.id}:{rendition}:{expires}".encode()
    ).hexdigest()
    return f"https://media.delivery.sandbox/open/{video.id}/{rendition}.mp4?exp={expires}&sig={sig[:32]}"


def video_row(
    sb: Sandbox, video: Video, collection: str, position: int, now: int
) -> dict[str, Any]:
    """One open video row, the same shape in the list and the single read: the documented
    fields and no other (the open video endpoints are frozen).

    Requirements: VID-001, VID-002, VID-003, VID-004, VID-005, VID-013.
    """
    expires = now + LINK_TTL
    return {
        "id": video.id,
        "slug": video.slug,
        "title": video.title,
        "order_code": video.order_code,
        "collection": collection,
        "position": position,
        "duration_ms": video.duration_ms,
        "muscle_groups": list(video.muscle_groups),
        "equipment": list(video.equipment),
        "difficulty": video.difficulty,
        "kcal_est": video.kcal_est,
        "mp4": {
            "p480": _link(sb, video, "480", expires),
            "p720": _link(sb, video, "720", expires) if video.has_720 else None,
        },
    }


def _playable(video: Video) -> bool:
    """Ready and not archived: the only videos either endpoint serves. (VID-012, VID-027)"""
    return video.ready and not video.archived


def _bad(sb: Sandbox, exchange: Exchange, message: str) -> Reply:
    """400, flat, no `error_code`: bad `limit`, bad cursor or an `id` that is not a UUID.

    Requirements: VID-018, VID-019, VID-020.
    """
    return errors.flat(exchange, sb.faults, 400, message)


def _read_failed(sb: Sandbox, exchange: Exchange) -> Reply:
    """500, flat, no `error_code`, when a collection or video cannot be read. (VID-029)"""
    return errors.flat(exchange, sb.faults, 500, errors.MSG_READ_FAILED)


async def handle_list(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /videos: granted collections in collection order, paged by opaque cursors.

    Requirements: PAGE-001, PAGE-002, VID-006, VID-007, VID-008, VID-009, VID-010, VID-011, VID-012,
    VID-018, VID-019, VID-026.
    """
    query, now = call.query, int(sb.now())
    limit = parse_limit(query.get("limit"), MAX_LIMIT, DEFAULT_LIMIT)
    if limit is None:
        return bend(  # the query step
            sb,
            "videos.bad_limit",
            _bad(sb, exchange, MSG_BAD_QUERY),
            coded=lambda: errors.flat(exchange, sb.faults, 400, MSG_BAD_QUERY, "invalid_request"),
        )
    wanted = query.get("collection")
    binding = f"c={wanted}"
    start, state = 0, 0
    if "cursor" in query:
        decoded = cursors.decode(sb.cursor_secret, "videos", binding, query["cursor"])
        resumed = None if decoded is None else sb.paging.split(decoded)
        if resumed is None or len(resumed[0]) != 1 or not isinstance(resumed[0][0], int):
            return _bad(sb, exchange, MSG_BAD_QUERY)
        start, state = resumed[0][0], resumed[1]
    granted = sb.store.granted_collections(caller.org_id)
    chosen: list[Collection]
    if wanted is None:
        chosen = [c for c in granted if not c.broken]
    else:
        chosen = [c for c in granted if c.code == wanted]
        if not chosen:
            return errors.flat(exchange, sb.faults, 404, errors.COLLECTION_NOT_FOUND)
    if any(c.broken for c in chosen):
        return _read_failed(sb, exchange)
    sequence = [(c.code, i, vid) for c in chosen for i, vid in enumerate(c.videos, start=1)]
    sequence, limit = bend(sb, "videos.list", (sequence, limit), wanted=wanted, granted=granted)
    cut = sb.paging.window(start, len(sequence), limit, state)
    window = sequence[start : cut.stop]
    videos = sb.store.videos
    shown = bend(sb, "videos.listed", [r for r in window if _playable(videos[r[2]])], window=window)
    rows = [video_row(sb, videos[vid], code, pos, now) for code, pos, vid in shown]
    next_cursor = None
    if cut.next_state is not None:
        position = sb.paging.join([cut.stop], cut.next_state)
        next_cursor = cursors.encode(sb.cursor_secret, "videos", binding, position)
    body = {
        "rows": rows,
        "next_cursor": next_cursor,
        "expires_at": iso(now + LINK_TTL),
        "refresh_before": iso(now + REFRESH),
        "links": list_links(
            f"{exchange.base_url}{PATH}", query, ("collection", "limit"), next_cursor
        ),
    }
    return Reply(200, orjson.dumps(body))


async def handle_one(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /videos/{id}: the UUID only, the first granted collection, no `Service-Version` on 200.

    Requirements: HDR-004, VID-014, VID-015, VID-016, VID-017, VID-020, VID-027.
    """
    raw, now = bend(sb, "videos.id", call.params["id"]), int(sb.now())
    try:
        video_id = str(uuid.UUID(raw))
    except ValueError:
        return _bad(sb, exchange, MSG_BAD_ID)
    if video_id != raw.lower():
        return _bad(sb, exchange, MSG_BAD_ID)
    video = sb.store.videos.get(video_id)
    homes = [
        (c.code, c.videos.index(video_id) + 1)
        for c in sb.store.granted_collections(caller.org_id)
        if video_id in c.videos
    ]
    playable = video is not None and bend(sb, "videos.served", _playable(video), video=video)
    if video is None or not homes or not playable:
        return errors.flat(exchange, sb.faults, 404, errors.VIDEO_NOT_FOUND)
    if video.broken:
        return _read_failed(sb, exchange)
    code, position = homes[0]
    body = {
        "row": video_row(sb, video, code, position, now),
        "collections": [c for c, _ in homes],
        "expires_at": iso(now + LINK_TTL),
        "refresh_before": iso(now + REFRESH),
    }
    exchange.omit_version = True
    return Reply(200, orjson.dumps(body))
