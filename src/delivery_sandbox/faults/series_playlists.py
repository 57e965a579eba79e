"""Faults of series and playlists (detail fields, list filters and paging, envelope error
codes), and of the counters their reads spend.

Spec sections: Resources and their fields > Series, Playlist detail; Endpoints > GET /series,
GET /playlists; Errors > Series and playlists (envelope).

Hooks: `bend_reply` (the reply seam, control/front_faults.py: it sees the query, so an error
row can tell a bad `limit` from a forged `cursor`); at the step seam (faults/steps.py: `bend`),
one call each: `bend_list` (the list handlers of series.py and playlists.py, after the query
is validated), `film_org_refused`, `playlists_query`, `full_page_cursor`, `bend_playlist`
(endpoints/playlists.py), `series_state`, `series_listed`, `series_since`, `detail_served`
(endpoints/series.py).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults import withdrawal as withdrawal_faults
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Request, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = [
    "FAULTS", "FAULT_ROWS",
    "bend_list",
    "bend_playlist",
    "bend_reply",
    "counter_key",
    "detail_served",
    "film_org_refused",
    "full_page_cursor",
    "playlists_query",
    "series_listed",
    "series_since",
    "series_state",
    "unlicensed_state",
]  # fmt: skip

Query = dict[str, str]


def _field(name: str, value: Any) -> Callable[[bt.Body], None]:
    """Set one member of `data` (a detail answer) to a value of the wrong type or set."""
    return lambda body: bt.data(body).update({name: value}) if bt.data(body) else None


def _first(rows: str, name: str, value: Any) -> Callable[[bt.Body], None]:
    """Set one member of the first item of `data.<rows>`."""

    def change(body: bt.Body) -> None:
        found = bt.rows(bt.data(body), rows)
        if found:
            found[0][name] = value

    return change


def _append(rows: str, item: bt.Body) -> Callable[[bt.Body], None]:
    def change(body: bt.Body) -> None:
        data = bt.data(body)
        if data:
            data[rows] = [*bt.rows(data, rows), dict(item)]

    return change


def _media_playlist_renamed(body: bt.Body) -> None:
    playlists = bt.rows(bt.data(body).get("media") or {}, "playlists")
    if playlists:
        playlists[0]["name"] = f"{playlists[0].get('name')}-1"


def _video_door(body: bt.Body) -> None:
    doors = bt.doors(body)
    if doors:
        doors["video"] = {"limit": 10800, "unit": "requests"}


def _doors_one_above(body: bt.Body) -> None:
    for door in bt.doors(body).values():
        if isinstance(door, dict) and isinstance(door.get("limit"), int):
            door["limit"] += 1


_SERIES, _PLAYLIST = bt.detail("series"), bt.detail("playlists")
_BAD_IMAGE = {
    "kind": "cover",
    "source": "media_space",
    "url": None,
    "expires_at": None,
    "space": 5,
    "uri": None,
}
_BAD_PERSON = {"name": "Extra", "role": None, "description": None, "avatar_url": None}
_RELATIVE_IMAGE = {
    "kind": "poster_3_4",
    "lang": None,
    "url": "/img/poster.jpg",
    "width": None,
    "height": None,
}

BLOCK: tuple[bt.Row, ...] = (
    ("series_film_status_number", "SER-003", "the series detail film_status is a number", _SERIES, _field("film_status", 3)),
    ("series_tier_number", "SER-004", "the series detail tier is a number", _SERIES, _field("tier", 1)),
    ("series_updated_at_iso", "SER-005", "the series detail updated_at is an ISO string", _SERIES, _field("updated_at", "2026-01-01T00:00:00Z")),
    ("series_language_number", "SER-007", "the series detail language is a number", _SERIES, _field("language", 7)),
    ("series_synopsis_i18n_string", "SER-008", "the series detail synopsis_i18n is a string", _SERIES, _field("synopsis_i18n", "synopsis")),
    ("series_genres_string", "SER-009", "the series detail genres is one string", _SERIES, _field("genres", "drama")),
    ("series_poster_without_url", "SER-010", "the series detail poster is an object without url", _SERIES, _field("poster", {"href": "https://example.invalid/p.jpg"})),
    ("series_content_rating_number", "SER-011", "the series detail content_rating is the number 13", _SERIES, _field("content_rating", 13)),
    ("series_person_role_null", "SER-013", "a series person has role null", _SERIES, _append("people", _BAD_PERSON)),
    ("series_image_url_relative", "SER-014", "a series image url is a relative path", _SERIES, _append("images", _RELATIVE_IMAGE)),
    ("series_trailer_string", "SER-016", "the series detail trailer is a string", _SERIES, _field("trailer", "trailer")),
    ("series_metadata_time_iso", "SER-018", "the series metadata_updated_at is an ISO string", _SERIES, _field("metadata_updated_at", "2026-01-01T00:00:00Z")),
    ("series_media_playlist_misnamed", "SER-020", "the first media playlist of a series is named <code>-1", _SERIES, _media_playlist_renamed),
    ("series_episode_ready_string", "SER-022", "a series episode's ready is the string yes", _SERIES, _first("episodes", "ready", "yes")),
    ("playlist_description_number", "PLS-005", "the playlist detail description is a number", _PLAYLIST, _field("description", 0)),
    ("playlist_image_space_number", "PLS-009", "a playlist image has a numeric space", _PLAYLIST, _append("images", _BAD_IMAGE)),
    ("config_video_door_listed", "LIM-008", "/config lists the single-video counter as a door", bt.at("config"), _video_door),
    ("config_doors_one_above", "LIM-009", "/config doors report one more than the organisation's limit", bt.at("config"), _doors_one_above),
    ("playlist_clip_difficulty_number", "PLS-013", "a playlist clip has difficulty 3 (a number)", _PLAYLIST, _first("clips", "difficulty", 3)),
)  # fmt: skip
BODY_FAULTS = bt.table_of(BLOCK)


# -- answers bent with the query in hand ---------------------------------------------------------
# name -> (rules, summary, endpoint, status, code the answer has, query member it needs, new code)
_CODES: tuple[tuple[str, tuple[str, ...], str, str, int, object, str | None, object], ...] = (
    ("series_version_code_wrong", ("SER-036",), "series answer an unknown version with error_code version_unsupported", "series", 400, "unsupported_version", None, "version_unsupported"),
    ("playlists_version_code_wrong", ("PLS-028",), "playlists answer an unknown version with error_code version_unsupported", "playlists", 400, "unsupported_version", None, "version_unsupported"),
    ("series_no_key_4011", ("SER-037",), "series answer a missing key with 4011", "series", 401, 4010, None, 4011),
    ("playlists_no_key_4011", ("PLS-029",), "playlists answer a missing key with 4011", "playlists", 401, 4010, None, 4011),
    ("series_scope_4033", ("SER-039",), "series answer a key without metadata:read with 4033", "series", 403, 4030, None, 4033),
    ("playlists_scope_4033", ("PLS-031",), "playlists answer a key without metadata:read with 4033", "playlists", 403, 4030, None, 4033),
    ("series_suspended_4030", ("SER-040",), "series answer a suspended organisation with 4030", "series", 403, 4031, None, 4030),
    ("playlists_suspended_4030", ("PLS-032",), "playlists answer a suspended organisation with 4030", "playlists", 403, 4031, None, 4030),
    ("series_limit_4221", ("SER-041",), "GET /series answers a bad limit with 4221", "series", 422, 4220, "limit", 4221),
    ("playlists_limit_4221", ("PLS-036",), "GET /playlists answers a bad limit with 4221", "playlists", 422, 4220, "limit", 4221),
    ("playlists_cursor_4221", ("PLS-038",), "GET /playlists answers a forged cursor with 4221", "playlists", 422, 4220, "cursor", 4221),
)  # fmt: skip
_BY_CODE = {row[0]: row[3:] for row in _CODES}
# Rows bent inside the list handlers (`bend_list`) or as a whole answer (`_whole`).
HOOK_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("playlists_unknown_category_empty", ("PLS-035",), "GET /playlists answers an unknown category with an empty page, not 404"),
    ("playlists_codes_lowercase_at_100", ("PLS-002",), "playlist codes come lowercase in pages of 100"),
    ("playlist_clip_ids_per_read", ("PLS-014",), "playlist clips get fresh ids on every read"),
    ("series_limit_one_gives_two", ("SER-029",), "GET /series answers limit=1 with two items"),
    ("playlists_limit_one_gives_two", ("PLS-021",), "GET /playlists answers limit=1 with two items"),
    ("series_updated_since_ignored", ("SER-028",), "GET /series ignores a valid updated_since"),
    ("playlists_updated_since_ignored", ("PLS-020",), "GET /playlists ignores a valid updated_since"),
    ("playlists_category_ignored", ("PLS-019",), "GET /playlists ignores a known category"),
    ("series_cursor_repeats_last", ("SER-031",), "the series cursor resumes at the last item of the page it ends"),
    ("playlists_cursor_repeats_last", ("PLS-049",), "the playlists cursor resumes at the last item of the page it ends"),
    ("series_content_version_per_read", ("SER-006",), "the series content_version changes on every read"),
    ("series_null_member_404", ("SER-034",), "a series whose detail holds a null member answers 404 4040"),
    ("limits_counted_per_key", ("LIM-001",), "rate counters kept per key: a second key of the organisation draws from a fresh counter"),
    ("metadata_lists_own_counter", ("LIM-021",), "GET /series and GET /playlists (list and detail) count on counters of their own, not the catalog counter"),
    ("creative_file_own_counter", ("LIM-023",), "GET /creatives/{id}/file counts on a counter of its own"),
    ("video_single_on_list_counter", ("LIM-027",), "GET /videos/{id} counts on the GET /videos counter"),
    ("series_unlicensed_listed", ("SER-026",), "GET /series lists series the organisation holds no licence for as active"),
)  # fmt: skip
FAULT_ROWS = bt.rows_of(BLOCK) + tuple((n, r, s) for n, r, s, *_ in _CODES) + HOOK_ROWS
FAULTS = declare(
    FAULT_ROWS,
    area="Series and playlists",
    seam="reply",
    seams=dict.fromkeys((name for name, _, _ in HOOK_ROWS), "step"),
    # Proven only once a Freshness bound has passed (30 s, 60 s).
    slow=(
        "series_content_version_per_read",
        "playlist_clip_ids_per_read",
        "series_null_member_404",
    ),
)


# Hook rows `_bend` applies to a whole answer (the others bend the list handlers' query).
_WHOLE = {FaultName.playlists_unknown_category_empty, FaultName.playlists_codes_lowercase_at_100, FaultName.playlist_clip_ids_per_read, FaultName.series_content_version_per_read, FaultName.series_null_member_404}  # fmt: skip


def _endpoint(path: str) -> tuple[str, bool]:
    """(`series`/`playlists`/..., whether it is a detail path) of an API path."""
    parts = path.rstrip("/").split("/")
    if "v1" not in parts or parts[-1] == "v1":
        return "", False
    at = parts.index("v1") + 1
    return parts[at], len(parts) > at + 1


def _query(scope: dict[str, Any]) -> Query:
    raw = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    return {k: v[-1] for k, v in raw.items()}


def _empty_page(body: bt.Body, exchange: Request) -> bt.Body:
    links = {"self": f"{exchange.base_url}/api/delivery/v1/playlists", "next": None}
    data: bt.Body = {"items": [], "next_cursor": None}
    return {
        "code": 0,
        "message": "ok",
        "data": data,
        "server_time": body.get("server_time"),
        "links": links,
    }


def _read_number(faults: FaultSwitch) -> int:
    """1, 2, 3... one per call while the switched-on set stays the same."""
    return int(next(faults.memo("reads_13", lambda on: itertools.count(1))))


def _series_detail(body: bt.Body, faults: FaultSwitch, exchange: Request) -> bt.Body:
    data = bt.data(body)
    if FaultName.series_null_member_404 in faults.on and None in data.values():
        found = {"code": 4040, "message": "no such series", "server_time": body.get("server_time")}
        return found | {"request_id": exchange.request_id}
    if FaultName.series_content_version_per_read in faults.on and data:
        data["content_version"] = f"{data.get('content_version')}-{_read_number(faults)}"
    return body


def _fresh_clip_ids(body: bt.Body, faults: FaultSwitch) -> None:
    read = _read_number(faults)
    for i, clip in enumerate(bt.rows(bt.data(body), "clips")):
        clip["id"] = str(uuid.UUID(int=(read << 20) + i, version=4))


def _bend(
    body: bt.Body, status: int, faults: FaultSwitch, path: str, query: Query, exchange: Request
) -> bt.Body:
    on = faults.on
    endpoint, detail = _endpoint(path)
    code = body.get("code") if "code" in body else body.get("error_code")
    for name in sorted(on & _BY_CODE.keys()):
        where, due, had, needs, new = _BY_CODE[name]
        if (
            endpoint == where
            and status == due
            and code == had
            and (needs is None or needs in query)
        ):
            body["code" if isinstance(new, int) else "error_code"] = new
    if endpoint == "series" and detail and status == 200:
        return _series_detail(body, faults, exchange)
    if endpoint != "playlists" or status not in (200, 404):
        return body
    if (
        FaultName.playlists_unknown_category_empty in on
        and status == 404
        and not detail
        and "category" in query
    ):
        return _empty_page(body, exchange)
    if (
        FaultName.playlists_codes_lowercase_at_100 in on
        and not detail
        and query.get("limit") == "100"
    ):
        for item in bt.rows(bt.data(body), "items"):
            item["code"] = str(item.get("code")).lower()
    if FaultName.playlist_clip_ids_per_read in on and status == 200 and detail:
        _fresh_clip_ids(body, faults)
    return body


def bend_reply(
    reply: Answer, faults: FaultSwitch, scope: dict[str, Any], exchange: Request
) -> None:
    """Apply the switched-on faults of these rows to the answer of the request `scope`, in place."""
    path = scope.get("path", "")
    bent = bt.apply_table(BODY_FAULTS, reply.status, reply.body, faults, path)
    if bent is not None:
        reply.body = bent
    if not faults.on & (_BY_CODE.keys() | _WHOLE) or not reply.body:
        return
    try:
        body = orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        return
    if isinstance(body, dict):
        new = _bend(body, reply.status, faults, path, _query(scope), exchange)
        if new is not body:
            reply.status = 200 if new.get("code") == 0 else 404
        reply.body = orjson.dumps(new)


_LIMIT_ONE = {
    "series": FaultName.series_limit_one_gives_two,
    "playlists": FaultName.playlists_limit_one_gives_two,
}
_REPEATS_LAST = {
    "series": FaultName.series_cursor_repeats_last,
    "playlists": FaultName.playlists_cursor_repeats_last,
}
_SINCE = {
    "series": FaultName.series_updated_since_ignored,
    "playlists": FaultName.playlists_updated_since_ignored,
}


ListQuery = tuple[int, int | None, list[Any] | None, str | None]


def bend_list(sb: Server, query: ListQuery, *, endpoint: str) -> ListQuery:
    """(limit, updated_since, cursor position, category) of a validated list query of
    `endpoint` (series or playlists), as the switched-on list faults read them. A cursor
    position whose code loses its last letter sorts just before the row it named, so the next
    page starts with that row again."""
    limit, since, after, category = query
    faults = sb.faults
    if limit == 1 and faults.enabled(_LIMIT_ONE[endpoint]):
        limit = 2
    if faults.enabled(_SINCE[endpoint]):
        since = None
    if faults.enabled(FaultName.playlists_category_ignored):
        category = None
    if after and faults.enabled(_REPEATS_LAST[endpoint]):
        after = [*after[:-1], str(after[-1])[:-1]]
    return limit, since, after, category


def bend_playlist(
    sb: Server, data: dict[str, Any], *, media: dict[str, Any], org_id: str
) -> dict[str, Any]:
    """A playlist detail as built, before its content_version (the playlist detail step): the
    `media` of a playlist not granted shown (playlist_ungranted_media_shown), the
    metadata_version per organisation (playlist_metadata_version_per_org)."""
    on = sb.faults.on
    if FaultName.playlist_ungranted_media_shown in on:
        data["media"] = media
    if FaultName.playlist_metadata_version_per_org in on:
        data["metadata_version"] = f"{data['metadata_version']}-{org_id}"
    return data


def film_org_refused(sb: Server, refused: bool) -> bool:
    """An organisation that licenses films is refused the playlists, unless
    playlists_open_to_film_orgs."""
    return refused and not sb.faults.enabled(FaultName.playlists_open_to_film_orgs)


A = TypeVar("A")  # http/headers.py: Reply


def playlists_query(
    sb: Server,
    refusal: A | None,
    *,
    since: int | bool | None,
    bad_category: bool,
    internal: Callable[[], A],
    no_category: Callable[[], A],
) -> A | None:
    """The answer two property-test faults give a GET /playlists query (the query step), else
    `refusal` (None): 500 for an updated_since past 2038-01-19 (playlists_since_2038_500),
    404 4040 for a malformed category (playlists_bad_category_404)."""
    faults = sb.faults
    if since and since > 2**31 - 1 and faults.enabled(FaultName.playlists_since_2038_500):
        return internal()
    if bad_category and faults.enabled(FaultName.playlists_bad_category_404):
        return no_category()
    return refusal


def full_page_cursor(sb: Server, cursor: bool) -> bool:
    """A full last page of playlists carries a cursor (the paging step); none under
    playlists_full_page_without_cursor."""
    return cursor and not sb.faults.enabled(FaultName.playlists_full_page_without_cursor)


SeriesState = tuple[str, int, int | None]  # status, updated_at, withdrawn_at


def series_state(
    sb: Server, state: SeriesState | None, *, org_id: str, film: Any, now: float, listing: bool
) -> SeriesState | None:
    """A series' (status, updated_at, withdrawn_at) for the organisation (the series state step):
    `Store.series_state` (`state`) as the withdrawal faults bend it (faults/withdrawal.py), and
    in the list a series not licensed shown active (series_unlicensed_listed)."""
    faults = sb.faults
    state = withdrawal_faults.series_state(faults, sb.store, org_id, film, now, state)
    if listing and state is None:
        return unlicensed_state(faults, film.code, film.updated_at)
    return state


def series_listed(sb: Server, listed: bool, *, active: bool) -> bool:
    """A series that is not active is listed (its withdrawal shown for 30 days); not under
    series_withdrawn_unlisted (the list row step)."""
    return listed and (active or not sb.faults.enabled(FaultName.series_withdrawn_unlisted))


def series_since(sb: Server, since: int | bool | None) -> int | bool | None:
    """GET /series's parsed updated_since; 0 refused (False) under series_since_zero_refused,
    a property test's fault (the query step)."""
    zero = since is not False and since == 0
    if zero and sb.faults.enabled(FaultName.series_since_zero_refused):
        return False
    return since


def detail_served(sb: Server, served: bool) -> bool:
    """GET /series/{code} serves an active series; a withdrawn one too under
    series_withdrawn_detail_served (the served step)."""
    return served or sb.faults.enabled(FaultName.series_withdrawn_detail_served)


def unlicensed_state(
    faults: FaultSwitch, code: str | None, updated_at: int
) -> tuple[str, int, None] | None:
    """The list state of a series the organisation holds no licence for: none, or active under
    `series_unlicensed_listed`."""
    if code is None or not faults.enabled(FaultName.series_unlicensed_listed):
        return None
    return ("active", updated_at, None)


_OWN_COUNTER = {
    FaultName.metadata_lists_own_counter: ("series", "series_one", "playlists", "playlist"),
    FaultName.creative_file_own_counter: ("creative_file",),
}


def counter_key(
    faults: FaultSwitch, org_id: str, role: str, endpoint: str, counter: str
) -> tuple[str, str]:
    """(whose counter, which counter) a request draws from: the organisation's `counter`, or
    under these faults a counter of the key, of the endpoint, or of the video list. A
    counter kept under another name than the organisation's gets the default limit, as a
    counter the organisation's override never reaches would."""
    if faults.enabled(FaultName.limits_counted_per_key):
        return f"{org_id}/{role}", counter
    for fault, endpoints in _OWN_COUNTER.items():
        if endpoint in endpoints and faults.enabled(fault):
            return f"{org_id}/{endpoint}", counter
    if counter == "video" and faults.enabled(FaultName.video_single_on_list_counter):
        return org_id, "videos"
    return org_id, counter
