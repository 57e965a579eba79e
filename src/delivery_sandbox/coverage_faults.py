"""Faults that prove the coverage of rules no other fault breaks (README: Requirement proofs).

Each row names the one rule it breaks (spec sections: Common response headers; Endpoints >
Paging and envelopes; Authentication; Versioning; Resources and their fields; Errors). The rows
join the single table of `faults.py`. Most act on a finished reply, so no handler knows them:
`mangle_headers` bends the header list (`headers.send_reply`), `mangle_reply` the body of a 200
by path (`app.py`). The few that change a decision (order of checks, version lookup, reuse,
licence timeout) sit where the decision is made (`auth.py`, `playback.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from delivery_sandbox.coverage_faults_7 import mangle_headers_7

if TYPE_CHECKING:
    from delivery_sandbox.faults import FaultSwitch
    from delivery_sandbox.headers import Exchange, Reply

__all__ = [
    "BODY_CHANGES",
    "COVERAGE_FAULT_ROWS",
    "HEADER_CHANGES",
    "mangle_headers",
    "mangle_reply",
]

COVERAGE_FAULT_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("envelope_server_time_missing", ("PAGE-005",), "success envelopes leave out server_time"),
    ("envelope_code_string", ("PAGE-006",), 'success envelopes carry code "0" (a string)'),
    ("envelope_message_wrong", ("PAGE-007",), 'success envelopes carry message "OK"'),
    ("envelope_self_link_missing", ("PAGE-009",), "list envelopes have no links.self"),
    ("api_status_not_beta", ("HDR-002",), "Service-API-Status: stable"),
    ("service_version_not_a_date", ("HDR-006",), "Service-Version: v1 (not a date)"),
    ("request_id_missing", ("HDR-011",), "no Service-Request-Id header"),
    ("cache_control_missing", ("HDR-014",), "no Cache-Control header"),
    ("retry_after_missing_on_429", ("HDR-024",), "a 429 without Retry-After"),
    ("retry_after_http_date", ("HDR-026",), "Retry-After given as an HTTP date"),
    ("ratelimit_limit_everywhere", ("HDR-028",), "X-RateLimit-Limit outside a 429 too"),
    ("ratelimit_window_everywhere", ("HDR-030",), "X-RateLimit-Window outside a 429 too"),
    ("ratelimit_window_30", ("HDR-029",), "X-RateLimit-Window: 30 on a 429"),
    ("content_type_text", ("GEN-005",), "JSON bodies labelled text/plain"),
    ("allow_missing_on_405", ("ERR-016",), "a 405 without Allow"),
    (
        "missing_key_flat_error_code",
        ("CAT-070", "CFG-029", "PLAY-071"),
        "a flat 401 for a missing Authorization carries error_code unauthorized",
    ),
    (
        "scope_flat_error_code",
        ("CAT-072", "PLAY-073"),
        "a flat 403 for a missing scope carries error_code forbidden",
    ),
    ("malformed_version_served", ("VER-005",), "a Service-Version that is no date is served"),
    (
        "unknown_version_served",
        ("VER-004", "CAT-069", "CFG-028", "PLAY-070"),
        "an unknown dated Service-Version is served as the latest",
    ),
    ("retired_version_served", ("VER-006",), "a retired Service-Version is served as the latest"),
    (
        "unsupported_version_in_envelope",
        ("ERR-007",),
        "unsupported_version on envelope endpoints is an envelope (code 4000)",
    ),
    ("unsupported_version_no_latest", ("VER-007",), "unsupported_version without latest_version"),
    ("retired_pin_no_upgrade_to", ("VER-008",), "a retired pin's 400 without upgrade_to"),
    ("catalog_carries_manifest_url", ("CAT-054",), "a catalog episode carries a manifest_url"),
    ("poster_expiry_30_minutes", ("CAT-044",), "poster_expires_at 30 minutes after the response"),
    ("catalog_slug_duplicate", ("CAT-005",), "two films share a slug"),
    ("catalog_two_main_tags", ("CAT-023",), "every tag of a film is_main"),
    ("catalog_support_before_lead", ("CAT-025",), "people listed support before lead"),
    ("config_limit_doubled", ("CFG-017",), "/config reports twice the config limit"),
    ("config_scopes_extra", ("CFG-011",), "/config key.scopes names a scope the key lacks"),
    ("config_api_version_wrong", ("CFG-004",), "/config api.version differs from the header"),
    (
        "playlist_list_carries_playback_link",
        ("PLS-024",),
        "a playlist item has a manifest_url",
    ),
    (
        "series_item_content_version_stale",
        ("SER-024",),
        "a series item's content_version stale",
    ),
    (
        "playlist_item_content_version_stale",
        ("PLS-004",),
        "a playlist list item's content_version stale",
    ),
    ("download_link_30_minutes", ("CRE-040",), "redirect=0 download links expire after 30 minutes"),
    (
        "reuse_skips_organisation_check",
        ("PLAY-066",),
        "while tickets are kept for reuse, a suspended organisation is served its old ticket",
    ),
    ("catalog_per_key", ("GEN-004",), "the films_metadata key sees one film fewer"),
    ("metadata_version_per_read", ("CAT-029",), "metadata_version changes on every read"),
    ("not_granted_playlist_404", ("PLS-025",), "a playlist not granted answers 404 4040"),
    ("request_id_repeated", ("HDR-031",), "every response carries the same Service-Request-Id"),
    ("vid_ready_without_vid", ("CAT-079",), "a catalog row with vid_ready true has vid null"),
    ("poster_host_outside_domains", ("CAT-080",), "poster links on a host /config does not list"),
    ("ready_clip_without_vid", ("PLS-044",), "a ready playlist clip has vid null"),
    ("playlist_split_at_120", ("PLS-008",), "clips 101 to 120 stay in the first media playlist"),
    (
        "licence_timeout_refused",
        ("PLAY-095",),
        "a licence check that times out answers 403 entitlement_not_found instead of 503",
    ),
    (
        "pin_checked_before_key",
        ("AUTH-012",),
        "a revoked key pinned to a retired version answers 400 instead of 401",
    ),
    (
        "scope_checked_before_pin",
        ("AUTH-013",),
        "a key with a retired pin outside its scopes answers 403 instead of 400",
    ),
    (
        "scope_checked_before_key",
        ("AUTH-014",),
        "a revoked key outside its scopes answers 403 instead of 401",
    ),
    (
        "org_checked_before_scope",
        ("AUTH-015",),
        "a suspended organisation's key outside its scopes answers org_suspended",
    ),
    (
        "unknown_key_flat_error_code",
        ("CAT-071", "PLAY-072", "CFG-030", "VID-022"),
        "a flat 401 for an unknown or revoked key carries error_code unauthorized",
    ),
    (
        "unknown_key_envelope_4010",
        ("CRE-046", "SER-038", "PLS-030"),
        "an envelope 401 for an unknown or revoked key carries code 4010 instead of 4011",
    ),
    (
        "unverifiable_key_401",
        ("AUTH-021", "CAT-075", "PLAY-077", "CFG-033", "CRE-060", "SER-046", "PLS-042", "VID-030"),
        "a key that cannot be verified in time is refused 401 instead of 503",
    ),
)
# Header faults: name -> what it does to the final header list of an answer of that status.
Headers = list[tuple[bytes, bytes]]


def _drop(name: bytes) -> Callable[[Headers, int], Headers]:
    return lambda headers, status: [(k, v) for k, v in headers if k != name]


def _set(name: bytes, value: bytes, only: int | None = None) -> Callable[[Headers, int], Headers]:
    def change(headers: Headers, status: int) -> Headers:
        if only is not None and status != only:
            return headers
        return [(k, v) for k, v in headers if k != name] + [(name, value)]

    return change


def _no_allow_on_405(headers: Headers, status: int) -> Headers:
    return [(k, v) for k, v in headers if not (status == 405 and k == b"allow")]


HEADER_CHANGES: dict[str, Callable[[Headers, int], Headers]] = {
    "api_status_not_beta": _set(b"service-api-status", b"stable"),
    "service_version_not_a_date": lambda h, status: [
        (k, b"v1" if k == b"service-version" else v) for k, v in h
    ],
    "request_id_missing": _drop(b"service-request-id"),
    "cache_control_missing": _drop(b"cache-control"),
    "retry_after_missing_on_429": lambda h, status: (
        _drop(b"retry-after")(h, status) if status == 429 else h
    ),
    "retry_after_http_date": lambda h, status: [
        (k, b"Wed, 21 Oct 2037 07:28:00 GMT" if k == b"retry-after" else v) for k, v in h
    ],
    "ratelimit_limit_everywhere": lambda h, status: (
        h if status == 429 else [*h, (b"x-ratelimit-limit", b"100")]
    ),
    "ratelimit_window_everywhere": lambda h, status: (
        h if status == 429 else [*h, (b"x-ratelimit-window", b"60")]
    ),
    "ratelimit_window_30": _set(b"x-ratelimit-window", b"30", only=429),
    "content_type_text": lambda h, status: [
        (k, b"text/plain" if k == b"content-type" else v) for k, v in h
    ],
    "allow_missing_on_405": _no_allow_on_405,
}
ENVELOPE_FAULTS = frozenset(
    {
        "envelope_server_time_missing",
        "envelope_code_string",
        "envelope_message_wrong",
        "envelope_self_link_missing",
    }
)
SUCCESS_ENVELOPE = b'{"code":0,"message":"ok",'


def mangle_reply(reply: Reply, faults: FaultSwitch, path: str, exchange: Exchange) -> None:
    """Apply the switched-on body faults to a 200 JSON answer of `path`, in place."""
    if BODY_FAULTS.isdisjoint(faults.on) or reply.status != 200 or not reply.body:
        return
    if faults.on & CALLER_FAULTS:
        _caller_faults(reply, faults, path, exchange)
        if reply.status != 200:
            return
    try:
        body = orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        return
    if not isinstance(body, dict):
        return
    on = faults.on & BODY_FAULTS
    if reply.body.startswith(SUCCESS_ENVELOPE):
        _envelope(body, on)
    endpoint = path.rsplit("/", 1)[-1]
    for name in on:
        change = BODY_CHANGES.get(name)
        if change is not None and change[0](path, endpoint):
            change[1](body)
    reply.body = orjson.dumps(body)


def _envelope(body: dict[str, Any], on: frozenset[str]) -> None:
    if "envelope_server_time_missing" in on:
        body.pop("server_time", None)
    if "envelope_code_string" in on:
        body["code"] = "0"
    if "envelope_message_wrong" in on:
        body["message"] = "OK"
    links = body.get("links")
    if "envelope_self_link_missing" in on and isinstance(links, dict) and "next" in links:
        links.pop("self", None)


def _first(items: Any) -> dict[str, Any]:
    return items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}


def _data(body: dict[str, Any]) -> dict[str, Any]:
    data = body.get("data")
    return data if isinstance(data, dict) else {}


def _later_poster(body: dict[str, Any]) -> None:
    for row in body.get("episodes") or []:
        if isinstance(row.get("poster_expires_at"), int):
            row["poster_expires_at"] += 900


def _duplicate_slug(body: dict[str, Any]) -> None:
    films = body.get("films") or []
    if len(films) >= 2:
        films[1]["slug"] = films[0]["slug"]


def _two_main_tags(body: dict[str, Any]) -> None:
    for tag in _first(body.get("films")).get("tags") or []:
        tag["is_main"] = True


def _support_first(body: dict[str, Any]) -> None:
    film = _first(body.get("films"))
    if isinstance(film.get("people"), list):
        film["people"].reverse()


def _door_doubled(body: dict[str, Any]) -> None:
    door = body.get("rate_limits", {}).get("doors", {}).get("config", {})
    if isinstance(door.get("limit"), int):
        door["limit"] *= 2


def _stale(body: dict[str, Any]) -> None:
    for item in _data(body).get("items") or []:
        if isinstance(item, dict) and item.get("content_version"):
            item["content_version"] = "0" * 24


def _later_download(body: dict[str, Any]) -> None:
    data = _data(body)
    if isinstance(data.get("expires_at"), int):
        data["expires_at"] += 900


def _unready_video(body: dict[str, Any]) -> None:
    for row in body.get("episodes") or []:
        if row.get("vid_ready") is True and row.get("vid") is not None:
            row["vid"] = None
            return


def _poster_elsewhere(body: dict[str, Any]) -> None:
    for row in body.get("episodes") or []:
        link = row.get("poster_signed_url")
        if isinstance(link, str) and "://" in link:
            scheme, rest = link.split("://", 1)
            row["poster_signed_url"] = f"{scheme}://img.elsewhere.test/{rest.partition('/')[2]}"


def _clip_without_video(body: dict[str, Any]) -> None:
    for clip in _data(body).get("clips") or []:
        if isinstance(clip, dict) and clip.get("ready") is True and clip.get("vid") is not None:
            clip["vid"] = None
            return


def _split_at_120(body: dict[str, Any]) -> None:
    for clip in _data(body).get("clips") or []:
        if isinstance(clip, dict) and 100 < (clip.get("position") or 0) <= 120:
            clip["playlist_name"] = _data(body).get("code")


def _playlist_detail(path: str, endpoint: str) -> bool:
    parts = path.split("/")
    return len(parts) >= 2 and parts[-2] == "playlists"


def _is(name: str) -> Callable[[str, str], bool]:
    return lambda path, endpoint: endpoint == name


BODY_CHANGES: dict[str, tuple[Callable[[str, str], bool], Callable[[dict[str, Any]], None]]] = {
    "catalog_carries_manifest_url": (
        _is("catalog"),
        lambda b: _first(b.get("episodes")).update(
            manifest_url="https://play.delivery.sandbox/m.m3u8"
        ),
    ),
    "poster_expiry_30_minutes": (_is("catalog"), _later_poster),
    "catalog_slug_duplicate": (_is("catalog"), _duplicate_slug),
    "catalog_two_main_tags": (_is("catalog"), _two_main_tags),
    "catalog_support_before_lead": (_is("catalog"), _support_first),
    "config_limit_doubled": (_is("config"), _door_doubled),
    "config_scopes_extra": (
        _is("config"),
        lambda b: b.get("key", {}).get("scopes", []).append("webhooks:manage"),
    ),
    "config_api_version_wrong": (
        _is("config"),
        lambda b: b.get("api", {}).update(version="2026-01-01"),
    ),
    "playlist_list_carries_playback_link": (
        _is("playlists"),
        lambda b: _first(_data(b).get("items")).update(
            manifest_url="https://play.delivery.sandbox/m.m3u8"
        ),
    ),
    "series_item_content_version_stale": (_is("series"), _stale),
    "playlist_item_content_version_stale": (_is("playlists"), _stale),
    "download_link_30_minutes": (_is("file"), _later_download),
    "vid_ready_without_vid": (_is("catalog"), _unready_video),
    "poster_host_outside_domains": (_is("catalog"), _poster_elsewhere),
    "ready_clip_without_vid": (_playlist_detail, _clip_without_video),
    "playlist_split_at_120": (_playlist_detail, _split_at_120),
}
CALLER_FAULTS = frozenset(
    {"catalog_per_key", "metadata_version_per_read", "not_granted_playlist_404"}
)
BODY_FAULTS = ENVELOPE_FAULTS | BODY_CHANGES.keys() | CALLER_FAULTS


def _caller_faults(reply: Reply, faults: FaultSwitch, path: str, exchange: Exchange) -> None:
    """Faults that need the caller or the request: GEN-004, CAT-029, PLS-025."""
    body = orjson.loads(reply.body)
    role = exchange.caller.role if exchange.caller is not None else None
    if path.endswith("/catalog") and isinstance(body, dict):
        films, episodes = body.get("films") or [], body.get("episodes") or []
        if faults.enabled("catalog_per_key") and role == "films_metadata" and films:
            gone = films.pop()["id"]
            body["episodes"] = [e for e in episodes if e.get("film_id") != gone]
        if faults.enabled("metadata_version_per_read"):
            for film in films:
                if film.get("metadata_version"):
                    film["metadata_version"] = exchange.request_id[-16:]
    parts = path.split("/")
    detail = len(parts) >= 2 and parts[-2] == "playlists"
    data = body.get("data") if isinstance(body, dict) else None
    ungranted = isinstance(data, dict) and data.get("granted") is False
    if faults.enabled("not_granted_playlist_404") and detail and ungranted:
        reply.status = 404
        body = {
            "code": 4040,
            "message": "no such playlist",
            "server_time": body.get("server_time"),
            "request_id": exchange.request_id,
        }
    reply.body = orjson.dumps(body)


def mangle_headers(headers: Headers, status: int, faults: FaultSwitch) -> Headers:
    """The final header list with the switched-on header faults applied."""
    for name in faults.on & HEADER_CHANGES.keys():
        headers = HEADER_CHANGES[name](headers, status)
    return mangle_headers_7(headers, status, faults)  # the seventh block's header faults
