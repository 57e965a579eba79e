"""GET /creatives, /creatives/{id}, /creatives/{id}/file (spec: GET /creatives and following;
Resources > Creative record; Errors > Creatives).

Envelope family. The list is ordered by `updated_at` then id, `updated_since` is strictly after,
cursors are bound to `updated_since`. The file answers 302 to a keyless link valid 15 minutes,
or with `redirect=0` the link as JSON. Faults act at the named steps of the step seam
(faults/steps.py: `bend`), one call each: a record, the limit read and accepted, `updated_since`,
the rows a page is cut from, a miss, the file as JSON.
"""

from __future__ import annotations

import uuid
from typing import Any

from delivery_sandbox.endpoints import cursors
from delivery_sandbox.endpoints.listing import (
    PAGE_LIMITS,
    list_links,
    ok_envelope,
    paginate,
    parse_epoch,
    parse_limit,
    resume,
)
from delivery_sandbox.endpoints.share import download_link, export_rights_active
from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http import errors
from delivery_sandbox.http.headers import Call, Exchange, Reply
from delivery_sandbox.state.accounts import ORGANISATIONS, Caller
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.state.store import Creative

__all__ = ["creative_record", "handle_file", "handle_list", "handle_one"]

PATH = "/api/delivery/v1/creatives"
MAX_LIMIT, DEFAULT_LIMIT = PAGE_LIMITS["creatives"]
ASPECTS = {"reels_9x16": "9:16", "feed_4x5": "4:5", "square_1x1": "1:1"}
TARGET = {"width": 1080, "height": 1920, "fps": 30, "codec": "h264"}


def creative_record(sb: Sandbox, creative: Creative, base_url: str) -> dict[str, Any]:
    """One creative record, the same in the list and the single read; its only media link is
    `final.file_url`.

    Requirements: CRE-001, CRE-002, CRE-003, CRE-004, CRE-005, CRE-006, CRE-007, CRE-008, CRE-009,
    CRE-010, CRE-011, CRE-012, CRE-013, CRE-014, CRE-015, CRE-016, CRE-017, CRE-018, CRE-019,
    CRE-020, CRE-021, CRE-022, CRE-025, CRE-035.

    Requirements: CRE-064.
    """
    store = sb.store
    film = store.films.get(creative.film_id) if creative.film_id else None
    scenes = [dict(scene) for scene in creative.scenes]
    duration = sum(s["duration_ms"] for s in scenes) if scenes else 15_000
    ready = creative.final_ready
    link = (
        f"{base_url}/api/c/{creative.share_token}.mp4" if ready and creative.share_token else None
    )
    record = {
        "links": {"self": f"{base_url}{PATH}/{creative.id}"},
        "schema_version": 1,
        "creative_id": creative.id,
        "creative_code": creative.code,
        "name": creative.name,
        "status": creative.status,
        "created_at": creative.created_at,
        "approved_at": creative.approved_at,
        "updated_at": creative.updated_at,
        "org": {"slug": ORGANISATIONS[creative.org_id].slug},
        "created_by": creative.created_by,
        "film": (
            {
                "code": film.code,
                "title": film.title,
                "language": film.language,
                "genres": list(film.genres),
            }
            if film
            else None
        ),
        "episodes": list(creative.episodes),
        "placement": creative.placement,
        "aspect": ASPECTS.get(creative.placement or ""),
        "duration_ms": duration,
        "scenes": scenes,
        "hook": {"action": scenes[0]["action"], "line": scenes[0]["line"]} if scenes else None,
        "formula": {"name": creative.formula} if creative.formula else None,
        "rights": {"ends_at": creative.rights_ends_at},
        "lineage": {"parent_creative_id": creative.parent_id},
        "final": {
            "ready": ready,
            "file_url": link if creative.id not in sb.store.revoked_links else None,
            "target": dict(TARGET),
        },
    }
    return bend(sb, "creatives.record", record, link=link)


def _env_error(
    sb: Sandbox,
    exchange: Exchange,
    status: int,
    code: int,
    message: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> Reply:
    """An error of the creatives family, in the envelope format. (CRE-062)"""
    return errors.envelope(exchange, sb.faults, status, code, message, sb.now(), headers)


async def handle_list(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /creatives: the organisation's approved or pushed creatives by (`updated_at`, id), paged.

    Requirements: CRE-026, CRE-027, CRE-028, CRE-029, CRE-030, CRE-031, CRE-032, CRE-033, CRE-054,
    CRE-055, CRE-056, CRE-057, PAGE-001, PAGE-002, PAGE-009, PAGE-010, PAGE-011.

    Requirements: FRESH-021.
    """
    query, now = call.query, sb.now()
    raw_limit, default = bend(sb, "creatives.limit_query", (query.get("limit"), DEFAULT_LIMIT))
    limit = parse_limit(raw_limit, MAX_LIMIT, default)
    if limit is None:
        return _env_error(sb, exchange, 422, 4220, errors.MSG_LIMIT)
    if bend(sb, "creatives.limit_fails", False, limit=limit, highest=MAX_LIMIT):
        return errors.flat(exchange, sb.faults, 500, "internal error")
    since = bend(sb, "creatives.since", parse_epoch(query.get("updated_since")))
    if since is False:
        return _env_error(sb, exchange, 422, 4221, errors.MSG_UPDATED_SINCE)
    scope = cursors.Scope(sb.cursor_secret, "creatives", f"u={since}")
    resumed = resume(scope, sb.paging, query.get("cursor"))
    if resumed is False:
        return _env_error(sb, exchange, 422, 4222, errors.MSG_CURSOR)
    after, state = resumed
    rows = [
        c
        for c in sb.store.creatives.values()
        if c.org_id == caller.org_id and c.visible and (since is None or c.updated_at > since)
    ]
    rows.sort(key=lambda c: (c.updated_at, c.id))
    page = paginate(
        bend(
            sb,
            "creatives.listed",
            rows,
            org_id=caller.org_id,
            since=since,
            after=after,
            limit=limit,
        ),
        lambda c: [c.updated_at, c.id],
        limit,
        after,
        scope,
        paging=sb.paging,
        state=state,
    )
    self_query = {k: v for k, v in query.items() if k in ("updated_since", "limit", "cursor")}
    links = list_links(
        f"{exchange.base_url}{PATH}", self_query, ("updated_since", "limit"), page.next_cursor
    )
    data = {
        "items": [creative_record(sb, c, exchange.base_url) for c in page.rows],
        "next_cursor": page.next_cursor,
    }
    return Reply(200, ok_envelope(data, now, links))


def _find(sb: Sandbox, caller: Caller, raw: str) -> Creative | None:
    """The caller's visible creative by UUID; a foreign, hidden or malformed id is not found.

    Requirements: CRE-036, CRE-050, CRE-051, CRE-052.
    """
    try:
        key = str(uuid.UUID(raw))
    except ValueError:
        return None
    if key != raw.lower():
        return None
    creative = sb.store.creatives.get(key)
    if creative is None or creative.org_id != caller.org_id or not creative.visible:
        return None
    return creative


async def handle_one(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /creatives/{id}: the record in an envelope with `links.self`, else 4040.

    Requirements: CRE-034, CRE-036, CRE-050, CRE-051.
    """
    creative = _find(sb, caller, call.params["id"])
    if creative is None:
        status, code = bend(
            sb, "creatives.miss", (404, 4040), org_id=caller.org_id, raw=call.params["id"]
        )
        return _env_error(sb, exchange, status, code, errors.MSG_NO_CREATIVE)
    record = creative_record(sb, creative, exchange.base_url)
    return Reply(200, ok_envelope(record, sb.now(), {"self": record["links"]["self"]}))


async def handle_file(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /creatives/{id}/file: 302 to a keyless link valid 15 minutes, or the link as JSON with
    `redirect=0`.

    Requirements: CRE-037, CRE-039, CRE-040, CRE-041, CRE-049, CRE-052, CRE-053, CRE-061.
    """
    creative, now = _find(sb, caller, call.params["id"]), sb.now()
    if creative is None:
        return _env_error(sb, exchange, 404, 4040, errors.MSG_NO_CREATIVE)
    if not export_rights_active(sb, creative, now):
        return _env_error(sb, exchange, 403, 4032, errors.MSG_RIGHTS_ENDED)
    if not creative.final_ready:
        return _env_error(sb, exchange, 409, 4090, errors.MSG_FINAL_NOT_READY)
    if creative.link_failure:
        return _env_error(sb, exchange, 503, 5032, errors.MSG_LINK_FAILED, [(b"retry-after", b"2")])
    url, expires = download_link(sb, exchange.base_url, creative, now)
    redirect = call.query.get("redirect")
    if bend(sb, "creatives.file_as_json", redirect == "0", redirect=redirect):
        links = {"self": f"{exchange.base_url}{PATH}/{creative.id}/file?redirect=0"}
        return Reply(200, ok_envelope({"url": url, "expires_at": expires}, now, links))
    return Reply(302, b"", [(b"location", url.encode())], content_type=None)
