"""GET /playlists and GET /playlists/{code} (spec: GET /playlists; Resources > Playlist list
item, Playlist detail; States and transitions > Playlist; Errors > Series and playlists).

For video partners only: an organisation that licenses films gets 403 4032. The whole library is
listed with `granted`; withdrawn playlists stay 30 days. A full page always carries a cursor.
Not granted: `media` null, clips not ready and without a video id. Faults act at the named steps
of the step seam (faults/steps.py: `bend`), one call each: a films organisation refused, the
query refused, the Category filter, the list query, a playlist's withdrawal, a list item, the
full page's cursor, a detail as built.
"""

from __future__ import annotations

import hashlib
from typing import Any

from delivery_sandbox.endpoints import cursors, listing
from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http import errors
from delivery_sandbox.http.headers import Call, Exchange, Reply
from delivery_sandbox.state.accounts import Caller, OrgKind
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.state.store import WITHDRAWN_LISTED, Clip, Playlist

__all__ = ["handle_list", "handle_one", "playlist_detail"]

PATH = "/api/delivery/v1/playlists"
CDN_TTL = 3600  # spec: Limits > Other constants, playlist image link
SHORT_CLIP_MS = 30_000


def _media_name(code: str, position: int) -> str:
    """The media playlist of a position: `<code>`, then `<code>-2`... by blocks of 100. (PLS-008)"""
    n = (position - 1) // listing.PLAYLIST_SIZE + 1
    return code if n == 1 else f"{code}-{n}"


def _image(space: str | None, granted: bool, uri: str, now: int) -> dict[str, Any]:
    """An image or poster: media-space reference when granted, else a `wandura_cdn` link valid an
    hour.

    Requirements: PLS-009, PLS-010, PLS-011.
    """
    if granted:
        return {
            "source": "media_space",
            "url": None,
            "expires_at": None,
            "space": space,
            "uri": f"space://{space}/{uri}",
        }
    expires = now + CDN_TTL
    sig = hashlib.sha256(f"{uri}:{expires}".encode()).hexdigest()[:20]
    return {
        "source": "wandura_cdn",
        "url": f"https://cdn.delivery.sandbox/{uri}?exp={expires}&sig={sig}",
        "expires_at": expires,
        "space": None,
        "uri": None,
    }


def _clip(
    clip: Clip, position: int, code: str, space: str | None, granted: bool, now: int
) -> dict[str, Any]:
    """One clip in playlist order; granted copies have a format by duration, ungranted ones no
    video.

    Requirements: PLS-012, PLS-013, PLS-014, PLS-015, PLS-016, PLS-044.
    """
    fmt = None
    if granted:
        fmt = "mp4" if clip.duration_ms is not None and clip.duration_ms < SHORT_CLIP_MS else "hls"
    name = _media_name(code, position) if granted else None
    return {
        "position": position,
        "id": clip.id,
        "title": clip.title,
        "description": clip.description,
        "duration_ms": clip.duration_ms,
        "muscle_groups": list(clip.muscle_groups),
        "equipment": list(clip.equipment),
        "difficulty": clip.difficulty,
        "kcal_est": clip.kcal_est,
        "order_code": clip.order_code,
        "poster": _image(space, granted, f"clips/{clip.id}.jpg", now) if clip.has_poster else None,
        "ready": granted,
        "vid": f"{space}:clip:{clip.id}" if granted else None,
        "format": fmt,
        "playlist_id": f"{space}:pl:{name}" if name else None,
        "playlist_name": name,
    }


def _granted(sb: Sandbox, caller: Caller, playlist: Playlist) -> bool:
    """Whether the organisation is licensed for the playlist. (PLS-003)"""
    return playlist.code in sb.store.playlist_grants.get(caller.org_id, frozenset())


def playlist_detail(sb: Sandbox, caller: Caller, playlist: Playlist, now: int) -> dict[str, Any]:
    """The playlist detail for one caller; `metadata_version` is the same for every reader.

    Requirements: PLS-005, PLS-006, PLS-007, PLS-008, PLS-016.
    """
    space = caller.organisation.space
    granted = _granted(sb, caller, playlist)
    category = sb.store.categories[playlist.category]
    count = len(playlist.clips)
    names = [_media_name(playlist.code, p) for p in range(1, count + 1, listing.PLAYLIST_SIZE)]
    media = {
        "space": space,
        "playlist_id": f"{space}:pl:{playlist.code}",
        "playlist_name": playlist.code,
        "playlists": [{"id": f"{space}:pl:{n}", "name": n} for n in names],
    }
    data: dict[str, Any] = {
        "code": playlist.code,
        "title": playlist.title,
        "status": "active",
        "description": playlist.description,
        "category": {"slug": category.slug, "name": category.name},
        "group": {"code": playlist.group[0], "title": playlist.group[1]}
        if playlist.group
        else None,
        "updated_at": playlist.updated_at,
        "metadata_version": playlist.metadata_version,
        "granted": granted,
        "media": media if granted else None,
        "images": [
            {"kind": "cover", **_image(space, granted, f"playlists/{playlist.code}.jpg", now)}
        ],
        "clips": [
            _clip(sb.store.clips[cid], i, playlist.code, space, granted, now)
            for i, cid in enumerate(playlist.clips, start=1)
        ],
    }
    data = bend(sb, "playlists.detail", data, media=media, org_id=caller.org_id)
    stable = {k: v for k, v in data.items() if k not in ("images", "clips")}
    stable["clips"] = [(c["id"], c["ready"], c["vid"]) for c in data["clips"]]
    data["content_version"] = listing.content_hash(stable)
    return data


def _item(sb: Sandbox, caller: Caller, playlist: Playlist, now: int) -> dict[str, Any]:
    """One list item; `content_version` and `clip_count` agree with the detail.

    Requirements: PLS-001, PLS-002, PLS-003, PLS-004, PLS-024.

    Requirements: STATE-009, STATE-010, STATE-011, STATE-014.
    """
    withdrawn_at = bend(
        sb, "playlists.withdrawn_at", sb.store.playlist_withdrawn_at(playlist), playlist=playlist
    )
    category = sb.store.categories[playlist.category]
    active = withdrawn_at is None
    return {
        "code": playlist.code,
        "status": "active" if active else "withdrawn",
        "title": playlist.title,
        "category": {"slug": category.slug, "name": category.name},
        "group": {"code": playlist.group[0], "title": playlist.group[1]}
        if playlist.group
        else None,
        "clip_count": len(playlist.clips) if active else None,
        "granted": _granted(sb, caller, playlist),
        "updated_at": playlist.updated_at
        if active
        else max(playlist.updated_at, withdrawn_at or 0),
        "content_version": playlist_detail(sb, caller, playlist, now)["content_version"]
        if active
        else None,
        "withdrawn_at": withdrawn_at,
    }


def _error(sb: Sandbox, exchange: Exchange, status: int, code: int, message: str) -> Reply:
    """An error of the playlists family, in the envelope format. (PLS-043)"""
    return errors.envelope(exchange, sb.faults, status, code, message, sb.now())


def _film_org(sb: Sandbox, caller: Caller) -> bool:
    """An organisation that licenses films gets 403 4032 on both playlist endpoints.

    Requirements: PLS-033, PLS-034.
    """
    refused = caller.organisation.kind is OrgKind.FILMS
    return bend(sb, "playlists.film_org_refused", refused)


async def handle_list(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /playlists: the whole library, oldest change first, filtered by category and
    `updated_since`.

    Requirements: PAGE-001, PAGE-002, PAGE-009, PAGE-010, PAGE-011, PLS-017, PLS-018, PLS-019,
    PLS-020, PLS-021, PLS-022, PLS-023, PLS-033, PLS-035, PLS-036, PLS-037, PLS-038, PLS-039,
    PLS-049 (a cursor resumes after the last item of its page), STATE-021 (`withdrawn_at` is
    the moment of the withdrawal, on every read).

    Requirements: STATE-013, STATE-016, STATE-017.
    """
    if _film_org(sb, caller):
        return _error(sb, exchange, 403, 4032, errors.MSG_FILM_ORG)
    query, now = call.query, int(sb.now())
    limit = listing.parse_limit(query.get("limit"), *listing.PAGE_LIMITS["playlists"])
    since = listing.parse_epoch(query.get("updated_since"), sb.readings.list_since_digits)
    category = query.get("category")
    slug = sb.readings.category_slug  # docs/reading-of-the-spec.md (PLS-039)
    bad_category = category is not None and not (len(category) <= 100 and slug.match(category))
    refused: Reply | None = bend(  # the query step
        sb,
        "playlists.query",
        None,
        since=since,
        bad_category=bad_category,
        internal=lambda: errors.envelope(
            exchange, sb.faults, 500, 5000, "internal error", sb.now()
        ),
        no_category=lambda: _error(sb, exchange, 404, 4040, errors.MSG_NO_CATEGORY),
    )
    if refused is not None:
        return refused
    if limit is None or since is False or bad_category:
        return _error(sb, exchange, 422, 4220, errors.MSG_INVALID_REQUEST)
    if category is not None and not bend(
        sb, "playlists.category_usable", sb.store.category_usable(category, now), slug=category
    ):
        return _error(sb, exchange, 404, 4040, errors.MSG_NO_CATEGORY)
    scope = cursors.Scope(sb.cursor_secret, "playlists", f"u={since}&c={category}")
    resumed = listing.resume(scope, sb.paging, query.get("cursor"))
    if resumed is False:
        return _error(sb, exchange, 422, 4220, errors.MSG_CURSOR)
    after, state = resumed
    query_read = bend(sb, "playlists.list_query", (limit, since, after, category))
    limit, since, after, category = query_read
    key = ("playlists", caller, now // 30)
    rows = sb.cache.get(key)
    if rows is None:
        rows = []
        for playlist in sb.store.playlists.values():
            withdrawn_at = sb.store.playlist_withdrawn_at(playlist)
            if withdrawn_at is None or now - withdrawn_at < WITHDRAWN_LISTED:
                item = _item(sb, caller, playlist, now)
                rows.append(bend(sb, "playlists.item", item, playlist=playlist))
        rows.sort(key=listing.by_update)
        sb.cache[key] = rows
    rows = [
        r
        for r in rows
        if (category is None or r["category"]["slug"] == category)
        and (since is None or r["updated_at"] > since)
    ]
    page = listing.paginate(
        rows,
        listing.by_update,
        limit,
        after,
        scope,
        full_page_cursor=bend(sb, "playlists.full_page_cursor", True),
        paging=sb.paging,
        state=state,
    )
    kept = ("updated_since", "limit", "category")
    links = listing.list_links(f"{exchange.base_url}{PATH}", query, kept, page.next_cursor)
    return Reply(
        200, listing.ok_envelope({"items": page.rows, "next_cursor": page.next_cursor}, now, links)
    )


async def handle_one(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /playlists/{code}: any playlist of the library, granted or not; gone or unknown is the
    same 4040.

    Requirements: PLS-025, PLS-026, PLS-027, PLS-034.

    Requirements: STATE-012.
    """
    if _film_org(sb, caller):
        return _error(sb, exchange, 403, 4032, errors.MSG_FILM_ORG)
    code, now = call.params["code"], int(sb.now())
    playlist = sb.store.playlists.get(code)
    if playlist is None or sb.store.playlist_withdrawn_at(playlist) is not None:
        return _error(sb, exchange, 404, 4040, errors.MSG_NO_PLAYLIST)
    data = playlist_detail(sb, caller, playlist, now)
    return Reply(200, listing.ok_envelope(data, now, {"self": f"{exchange.base_url}{PATH}/{code}"}))
