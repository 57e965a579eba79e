"""GET /series and GET /series/{code} (spec: GET /series; Resources > Series; States and
transitions > Series; Errors > Series and playlists).

A series is a film with a code. Its state for an organisation comes from the licence and from
take-downs (`Store.series_state`): active, or withdrawn and listed for 30 days with
`content_version` and `episode_count` null. The detail of anything not active is 404 4040.
Faults act at the named steps of the step seam (faults/steps.py: `bend`), one call each: a
series' state, a series listed, `updated_since`, the list query, the detail served.
"""

from __future__ import annotations

from typing import Any

from delivery_sandbox.endpoints import cursors, listing
from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http import errors
from delivery_sandbox.http.headers import Call, Exchange, Reply
from delivery_sandbox.state.accounts import Caller
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.state.store import Film, LicenceState, Store
from delivery_sandbox.variants.catalogue import VariantName

__all__ = ["handle_list", "handle_one", "series_detail"]

PATH = "/api/delivery/v1/series"
CACHE_SECONDS = 30
IMAGE_KINDS = ("poster_3_4", "cover_9_16", "hero_16_9", "title_treatment")


def series_detail(sb: Sandbox, caller: Caller, film: Film, updated_at: int) -> dict[str, Any]:
    """The series detail of a film: its metadata, media playlists of 100 and published episodes.

    Requirements: SER-001, SER-002, SER-003, SER-004, SER-005, SER-006, SER-007, SER-008, SER-009,
    SER-010, SER-011, SER-012, SER-013, SER-014, SER-015, SER-016, SER-017, SER-018, SER-019,
    SER-020, SER-021, SER-022, SER-034, SER-048 (the film's `metadata_updated_at`, moved by
    every metadata change), SER-049 (`content_version` hashes the whole answer).
    """
    store, space = sb.store, caller.organisation.space
    code = str(film.code)
    episodes = store.episodes_of(film.id)
    playlists = [
        {
            "id": f"{space or 'shared'}:pl:{code}" + (f"-{n}" if n > 1 else ""),
            "name": code + (f"-{n}" if n > 1 else ""),
        }
        for n in range(1, (len(episodes) + listing.PLAYLIST_SIZE - 1) // listing.PLAYLIST_SIZE + 1)
    ]
    poster = next((i for i in film.images if i["kind"] == "cover_9_16"), None)
    data: dict[str, Any] = {
        "code": code,
        "status": "active",
        "film_status": film.film_status,
        "tier": film.tier,
        "updated_at": updated_at,
        "language": film.language,
        "default_lang": film.default_lang,
        "title_i18n": film.title_i18n,
        "synopsis_short_i18n": film.synopsis_short_i18n,
        "synopsis_i18n": film.synopsis_i18n,
        "genres": list(film.genres),
        "poster": {"url": poster["url"]} if poster else None,
        "content_rating": film.content_rating,
        "is_completed": film.is_completed,
        "release_date": film.release_date,
        "planned_episodes": film.planned_episodes,
        "tags": list(film.tags),
        "people": list(film.people),
        "images": [i for i in film.images if i["kind"] in IMAGE_KINDS],
        "trailer": {"vid": f"shared:{film.trailer_vid}"}
        if film.trailer_vid and not space
        else None,
        "metadata_version": film.metadata_version,
        "metadata_updated_at": film.metadata_updated_at,
        "media": {
            "space": space or "shared",
            "playlist_name": code,
            "playlist_id": playlists[0]["id"] if playlists else None,
            "playlists": playlists,
        },
        "episodes": [
            {
                "ep_number": e.episode_no,
                "vid": e.vid_for(space),
                "ready": bool(e.vid_ready) and e.vid is not None,
                "title_i18n": e.title_i18n,
                "duration_sec": None if e.duration_ms is None else e.duration_ms // 1000,
                "subtitles": [
                    {"lang": lang, "url": store.subtitle_url(e, lang)} for lang in e.subtitles
                ],
                "updated_at": e.updated_at,
            }
            for e in episodes
        ],
    }
    data["content_version"] = listing.content_hash(data)
    return data


def scheduled_state(
    store: Store, org_id: str, film: Film, now: float
) -> tuple[str, int, None] | None:
    """The legal variant `series_status_grows`: a series whose licence starts later is listed
    with the new status `scheduled` (Series list item: "more may be added"); not streamable yet,
    so its detail stays 404 4040 and its `content_version` null."""
    licence = store.licences.get((org_id, film.id))
    if licence is None or film.code is None or not film.published:
        return None
    if licence.state is not LicenceState.ACTIVE or now >= licence.starts_at:
        return None
    return ("scheduled", max(film.updated_at, licence.changed_at), None)


def _state(
    sb: Sandbox, caller: Caller, film: Film, now: float, *, listing: bool
) -> tuple[str, int, int | None] | None:
    """A series' (status, updated_at, withdrawn_at) for the caller's organisation, in the list
    or the detail (the series state step); None: the organisation may not see it."""
    state = sb.store.series_state(caller.org_id, film, now)
    return bend(
        sb, "series.state", state, org_id=caller.org_id, film=film, now=now, listing=listing
    )


def _rows(sb: Sandbox, caller: Caller, now: float) -> list[dict[str, Any]]:
    """List items of the series the organisation may stream (withdrawn ones for 30 days), oldest
    change first.

    Requirements: SER-023, SER-024, SER-025, SER-026, SER-027.

    Requirements: STATE-001, STATE-002, STATE-003.
    """
    rows = []
    for film in sb.store.films.values():
        state = _state(sb, caller, film, now, listing=True)
        if state is None and sb.variants.enabled(VariantName.series_status_grows):
            state = scheduled_state(sb.store, caller.org_id, film, now)
        if state is None:
            continue
        status, updated_at, withdrawn_at = state
        active = status == "active"
        counted = active or status == "scheduled"  # published episodes, whatever the licence
        if not bend(sb, "series.listed", True, active=active):
            continue
        rows.append(
            {
                "code": film.code,
                "status": status,
                "updated_at": updated_at,
                "content_version": series_detail(sb, caller, film, updated_at)["content_version"]
                if active
                else None,
                "episode_count": len(sb.store.episodes_of(film.id)) if counted else None,
                "withdrawn_at": withdrawn_at,
                "film_status": film.film_status,
                "tier": film.tier,
            }
        )
    rows.sort(key=listing.by_update)
    return rows


def _error(sb: Sandbox, exchange: Exchange, status: int, code: int, message: str) -> Reply:
    """An error of the series family, in the envelope format. (SER-047)"""
    return errors.envelope(exchange, sb.faults, status, code, message, sb.now())


async def handle_list(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /series: 422 4220 for a bad query, then a page of items after `updated_since`.

    Requirements: PAGE-001, PAGE-002, PAGE-009, PAGE-010, PAGE-011, SER-028, SER-029, SER-030,
    SER-031, SER-041, SER-042, SER-043.
    """
    query, now = call.query, sb.now()
    limit = listing.parse_limit(query.get("limit"), *listing.PAGE_LIMITS["series"])
    since = listing.parse_epoch(query.get("updated_since"), sb.readings.list_since_digits)
    since = bend(sb, "series.since", since)
    scope = cursors.Scope(sb.cursor_secret, "series", f"u={since}")
    resumed = listing.resume(scope, sb.paging, query.get("cursor"))
    if limit is None or since is False:
        return _error(sb, exchange, 422, 4220, errors.MSG_INVALID_REQUEST)
    if resumed is False:
        return _error(sb, exchange, 422, 4220, errors.MSG_CURSOR)
    after, state = resumed
    limit, since, after, _ = bend(sb, "series.list_query", (limit, since, after, None))
    key = ("series", caller, int(now // CACHE_SECONDS))
    rows = sb.cache.get(key)
    if rows is None:
        rows = sb.cache[key] = _rows(sb, caller, now)
    if since is not None:
        rows = [r for r in rows if r["updated_at"] > since]
    page = listing.paginate(
        rows, listing.by_update, limit, after, scope, paging=sb.paging, state=state
    )
    kept = ("updated_since", "limit")
    links = listing.list_links(f"{exchange.base_url}{PATH}", query, kept, page.next_cursor)
    data = {"items": page.rows, "next_cursor": page.next_cursor}
    return Reply(200, listing.ok_envelope(data, now, links))


async def handle_one(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /series/{code}: the detail of an active series the caller may stream, else the same 4040.

    Requirements: SER-032, SER-033.

    Requirements: STATE-004.
    """
    code, now = call.params["code"], sb.now()
    film = sb.store.film_by_code(code)
    state = None if film is None else _state(sb, caller, film, now, listing=False)
    served = state is not None and bend(sb, "series.detail_served", state[0] == "active")
    if film is None or state is None or not served:
        return _error(sb, exchange, 404, 4040, errors.MSG_NO_SERIES)
    data = series_detail(sb, caller, film, state[1])
    return Reply(200, listing.ok_envelope(data, now, {"self": f"{exchange.base_url}{PATH}/{code}"}))
