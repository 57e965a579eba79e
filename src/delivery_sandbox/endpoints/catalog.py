"""GET /catalog (spec: GET /catalog; Resources > Film, Episode; Errors > Catalog).

Films with a current licence, by `display_order`; for each, its published episodes plus one
placeholder row per planned episode not yet published, grouped by film and sorted by
`episode_no`. Without `limit` and `cursor`: everything, `films` and `episodes` only
(docs/reading-of-the-spec.md (CAT-059)). Paged: `next_cursor` and `links.next`; each page carries
all episodes of its films. Bodies are cached per (organisation, version, page) for up to 30 s (spec:
Freshness). Faults act at the named steps of the step seam (faults/steps.py: `bend`), one call
each: the films listed, a film row, a film's episode rows, a cursor refused, the page size and
the next cursor.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

import orjson

from delivery_sandbox.endpoints import cursors, listing
from delivery_sandbox.endpoints.listing import iso
from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http import errors
from delivery_sandbox.http.headers import Call, Exchange, Reply
from delivery_sandbox.state.accounts import Caller
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.state.store import Episode, Film

__all__ = ["episode_rows", "film_row", "handle", "parse_limit"]

PATH = "/api/delivery/v1/catalog"
MAX_LIMIT = 200
CURSOR_PAGE = 50
CACHE_SECONDS = 30
COVER_TTL = 600  # at most 15 minutes (spec: Episode, poster_signed_url)
MATERIAL_TTL = 3600


def parse_limit(raw: str | None, high: int) -> int | bool | None:
    """The limit (None when absent), or False when it is not a whole number from 1 to `high`.

    Requirements: CAT-060, CAT-067.
    """
    if raw is None:
        return None
    value = listing.parse_limit(raw, high, high)
    return False if value is None else value


def _sign(text: str, expires: int) -> str:
    return hashlib.sha256(f"{text}:{expires}".encode()).hexdigest()[:20]


def film_row(sb: Sandbox, film: Film, space: str | None, now: int) -> dict[str, Any]:
    """One film of `films[]`, every field of the Film table; catalog rows never carry a playback
    link.

    Requirements: CAT-001, CAT-002, CAT-003, CAT-004, CAT-006, CAT-007, CAT-008, CAT-009, CAT-011,
    CAT-012, CAT-013, CAT-014, CAT-015, CAT-016, CAT-017, CAT-018, CAT-019, CAT-021, CAT-022,
    CAT-023, CAT-024, CAT-025, CAT-026, CAT-027, CAT-028, CAT-029, CAT-030, CAT-031, CAT-032,
    CAT-054.
    """
    expires = now + MATERIAL_TTL
    row: dict[str, Any] = {
        "id": film.id,
        "title": film.title,
        "slug": film.slug,
        "synopsis_short": film.synopsis_short,
        "synopsis_full": film.synopsis_full,
        "genres": list(film.genres),
        "language": film.language,
        "poster_url": film.poster_url,
        "status": "published",
        "display_order": film.display_order,
        "planned_episodes": film.planned_episodes,
        "free_until_episode": film.free_until_episode,
        "audience": film.audience,
        "form": film.form,
        "setting": film.setting,
        "code": film.code,
        "title_i18n": film.title_i18n,
        "synopsis_short_i18n": film.synopsis_short_i18n,
        "synopsis_i18n": film.synopsis_i18n,
        "content_rating": film.content_rating,
        "is_completed": film.is_completed,
        "release_date": film.release_date,
        "default_lang": film.default_lang,
        "tags": list(film.tags),
        "people": list(film.people),
        "trailer": {"vid": film.trailer_vid} if film.trailer_vid else None,
        "metadata_version": film.metadata_version,
        "metadata_updated_at": _iso(film.metadata_updated_at),
        "images": list(film.images),
        "materials": [
            {
                "kind": kind,
                "title": f"{film.title} {kind}",
                "mid": f"{space or 'shared'}:m:{film.slug}:{kind}",
                "url": f"https://media.delivery.sandbox/{space or 'shared'}/{film.slug}/{kind}.jpg"
                f"?exp={expires}&sig={_sign(film.slug + kind, expires)}",
                "expires_at": expires,
                "store_uri": f"store://{space or 'shared'}/{film.slug}/{kind}.jpg",
                "width": 1080,
                "height": 1920 if kind == "cover_9_16" else 1440,
            }
            for kind in film.materials
        ],
    }
    return bend(sb, "catalog.film_row", row)


def _iso(epoch: int | None) -> str | None:
    return None if epoch is None else iso(epoch)


def _episode(episode: Episode, space: str | None, now: int) -> dict[str, Any]:
    """A published row of `episodes[]`; the signed cover lives at most 15 minutes on a playback
    domain.

    Requirements: CAT-036, CAT-037, CAT-038, CAT-039, CAT-040, CAT-041, CAT-042, CAT-043, CAT-044,
    CAT-045, CAT-046, CAT-047, CAT-048, CAT-049, CAT-053, CAT-079, CAT-080.
    """
    vid = episode.vid_for(space)
    signed = episode.has_cover and vid is not None
    expires = now + COVER_TTL
    return {
        "id": episode.id,
        "film_id": episode.film_id,
        "episode_no": episode.episode_no,
        "title": episode.title,
        "synopsis": episode.synopsis,
        "duration_ms": episode.duration_ms,
        "poster_uri": f"store://covers/{episode.vid}.jpg" if episode.has_cover else None,
        "poster_url": episode.poster_url,
        "poster_signed_url": (
            f"https://play.delivery.sandbox/covers/{vid}.jpg?exp={expires}"
            f"&sig={_sign(str(vid), expires)}"
            if signed
            else None
        ),
        "poster_store_uri": f"store://{space or 'shared'}/covers/{episode.vid}.jpg"
        if signed
        else None,
        "poster_expires_at": expires if signed else None,
        "vid": vid,
        "vid_ready": episode.vid_ready,
        "status": "published",
        "stream_ready": episode.stream_ready,
        "title_i18n": episode.title_i18n,
        "subtitles": [{"lang": lang} for lang in episode.subtitles],
    }


def _placeholder(film: Film, episode_no: int) -> dict[str, Any]:
    """A placeholder row (`planned`): no id, no video, no subtitles, never streams.

    Requirements: CAT-036, CAT-046, CAT-050.
    """
    return {
        "id": None,
        "film_id": film.id,
        "episode_no": episode_no,
        "title": None,
        "synopsis": None,
        "duration_ms": None,
        "poster_uri": None,
        "poster_url": None,
        "poster_signed_url": None,
        "poster_store_uri": None,
        "poster_expires_at": None,
        "vid": None,
        "vid_ready": False,
        "status": "planned",
        "stream_ready": False,
        "title_i18n": {},
        "subtitles": [],
    }


def episode_rows(sb: Sandbox, film: Film, space: str | None, now: int) -> list[dict[str, Any]]:
    """Published episodes and placeholders of one film, by `episode_no`.

    Requirements: CAT-020, CAT-033, CAT-034, CAT-035, CAT-051, CAT-052.
    """
    published = sb.store.episodes_of(film.id)
    rows = [(e.episode_no, _episode(e, space, now)) for e in published]
    if film.planned_episodes:
        numbers = {e.episode_no for e in published}
        rows += [
            (no, _placeholder(film, no))
            for no in range(1, film.planned_episodes + 1)
            if no not in numbers
        ]
    rows.sort(key=lambda pair: pair[0])
    return bend(sb, "catalog.episode_rows", [row for _, row in rows])


def _films(sb: Sandbox, caller: Caller, now: float) -> list[Film]:
    """The organisation's films with a current licence, by `display_order`.

    Requirements: CAT-010, CAT-055, CAT-056, CAT-057, CAT-058, GEN-004.

    Requirements: CAT-081.
    """
    films = sb.store.licensed_films(caller.org_id, now)
    return bend(sb, "catalog.films", films, org_id=caller.org_id, now=now)


def _page(sb: Sandbox, caller: Caller, films: list[Film], now: int) -> dict[str, Any]:
    """`films` and the episodes of exactly those films. (CAT-064)"""
    space = caller.organisation.space
    episodes: list[dict[str, Any]] = []
    for film in films:
        episodes += episode_rows(sb, film, space, now)
    return {"films": [film_row(sb, f, space, now) for f in films], "episodes": episodes}


def _bad_request(sb: Sandbox, exchange: Exchange) -> Reply:
    """400 `invalid_request` for a bad `limit` or a cursor this endpoint did not issue.

    Requirements: CAT-067, CAT-068.
    """
    return errors.flat(exchange, sb.faults, 400, errors.MSG_INVALID_REQUEST, "invalid_request")


def build(
    sb: Sandbox, exchange: Exchange, caller: Caller, limit: int | None, cursor: str | None
) -> bytes | None:
    """The whole catalog unpaged, or one page with `next_cursor` and `links.next`.

    Requirements: CAT-059, CAT-060, CAT-061, CAT-062, CAT-063, CAT-065, CAT-068, PAGE-001, PAGE-002.

    Requirements: FRESH-019.
    """
    now = int(sb.now())
    films = _films(sb, caller, now)
    if limit is None and cursor is None:
        return orjson.dumps(_page(sb, caller, films, now) | sb.readings.unpaged_extra())
    start, state, position = 0, 0, None
    if cursor is not None:
        decoded = cursors.decode(sb.cursor_secret, "catalog", "", cursor)
        resumed = None if decoded is None else sb.paging.split(decoded)
        if resumed is None or len(resumed[0]) != 2:
            if bend(sb, "catalog.bad_cursor_refused", True):
                return None
            resumed = None
        if resumed is not None:
            position, state = resumed
            after = (position[0], position[1])
            start = next(
                (i for i, f in enumerate(films) if (f.display_order, f.id) > after), len(films)
            )
    size = bend(sb, "catalog.page_size", CURSOR_PAGE if limit is None else limit, limit=limit)
    window = sb.paging.window(start, len(films), size, state)
    page = films[start : window.stop]
    body = _page(sb, caller, page, now)
    next_cursor = None
    if window.next_state is not None:
        last = [page[-1].display_order, page[-1].id] if page else position
        next_cursor = cursors.encode(
            sb.cursor_secret, "catalog", "", sb.paging.join(list(last or []), window.next_state)
        )
    next_cursor = bend(sb, "catalog.next_cursor", next_cursor)
    link = None
    if next_cursor is not None:
        link = f"{exchange.base_url}{PATH}?cursor={quote(next_cursor)}"
        if limit is not None:
            link += f"&limit={limit}"
    body["next_cursor"] = next_cursor
    body["links"] = {"next": link}
    return orjson.dumps(body)


async def handle(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /catalog: bodies cached at most 30 s per organisation, version and page.

    Requirements: FRESH-001, FRESH-003, FRESH-019.
    """
    limit = parse_limit(call.query.get("limit"), MAX_LIMIT)
    if limit is False:
        return _bad_request(sb, exchange)
    cursor = call.query.get("cursor")
    size = limit if isinstance(limit, int) else None
    key = (
        "catalog",
        caller.org_id,
        caller.organisation.space,
        exchange.base_url,
        size,
        cursor,
        int(sb.now() // CACHE_SECONDS),
    )
    found = sb.cache.get(key)
    if found is None:
        found = build(sb, exchange, caller, size, cursor)
        if found is None:
            return _bad_request(sb, exchange)
        sb.cached(key, lambda: found)
    return Reply(200, found)
