"""Faults that prove the coverage of rules no other fault breaks (README: Requirement proofs).

Each row names the one rule it breaks (spec sections: Common response headers; Endpoints >
Paging and envelopes; Authentication; Versioning; Resources and their fields; Errors). The rows
join the single table of `registry.py` (from `coverage_rows.py`). Most act on a finished reply,
so no handler knows them:
`mangle_headers` bends the header list (`headers.send_reply`), `mangle_reply` the body of a 200
by path (`app.py`). The few that change a decision (order of checks, version lookup, reuse,
licence timeout) sit where the decision is made (`auth.py`, `playback.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.coverage_faults_7 import mangle_headers_7
from delivery_sandbox.faults.coverage_faults_12 import mangle_reply_12
from delivery_sandbox.faults.names import FaultName

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch
    from delivery_sandbox.http.headers import Exchange, Reply

__all__ = [
    "BODY_CHANGES",
    "HEADER_CHANGES",
    "mangle_headers",
    "mangle_reply",
]

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
    FaultName.api_status_not_beta: _set(b"service-api-status", b"stable"),
    FaultName.service_version_not_a_date: lambda h, status: [
        (k, b"v1" if k == b"service-version" else v) for k, v in h
    ],
    FaultName.request_id_missing: _drop(b"service-request-id"),
    FaultName.cache_control_missing: _drop(b"cache-control"),
    FaultName.retry_after_missing_on_429: lambda h, status: (
        _drop(b"retry-after")(h, status) if status == 429 else h
    ),
    FaultName.retry_after_http_date: lambda h, status: [
        (k, b"Wed, 21 Oct 2037 07:28:00 GMT" if k == b"retry-after" else v) for k, v in h
    ],
    FaultName.ratelimit_limit_everywhere: lambda h, status: (
        h if status == 429 else [*h, (b"x-ratelimit-limit", b"100")]
    ),
    FaultName.ratelimit_window_everywhere: lambda h, status: (
        h if status == 429 else [*h, (b"x-ratelimit-window", b"60")]
    ),
    FaultName.ratelimit_window_30: _set(b"x-ratelimit-window", b"30", only=429),
    FaultName.content_type_text: lambda h, status: [
        (k, b"text/plain" if k == b"content-type" else v) for k, v in h
    ],
    FaultName.allow_missing_on_405: _no_allow_on_405,
}
ENVELOPE_FAULTS = frozenset(
    {
        FaultName.envelope_server_time_missing,
        FaultName.envelope_code_string,
        FaultName.envelope_message_wrong,
        FaultName.envelope_self_link_missing,
    }
)
SUCCESS_ENVELOPE = b'{"code":0,"message":"ok",'


def mangle_reply(reply: Reply, faults: FaultSwitch, path: str, exchange: Exchange) -> None:
    """Apply the switched-on body faults to a 200 JSON answer of `path`, in place."""
    mangle_reply_12(reply, faults, path, exchange)  # the twelfth block: playback, open videos
    if BODY_FAULTS.isdisjoint(faults.on) or reply.status != 200 or not reply.body:
        return
    if faults.on & CALLER_FAULTS:
        _caller_faults(reply, faults, path, exchange)
        if reply.status != 200:
            return
    body = bt.json_object(reply.body)
    if body is None:
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
    if FaultName.envelope_server_time_missing in on:
        body.pop("server_time", None)
    if FaultName.envelope_code_string in on:
        body["code"] = "0"
    if FaultName.envelope_message_wrong in on:
        body["message"] = "OK"
    links = body.get("links")
    if FaultName.envelope_self_link_missing in on and isinstance(links, dict) and "next" in links:
        links.pop("self", None)


def _first(items: Any) -> dict[str, Any]:
    return items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}


PLAY_LINK = "https://play.delivery.sandbox/m.m3u8"


def _catalog_play_link(body: dict[str, Any]) -> None:
    _first(body.get("episodes")).update(manifest_url=PLAY_LINK)


def _playlist_play_link(body: dict[str, Any]) -> None:
    _first(bt.data(body).get("items")).update(manifest_url=PLAY_LINK)


def _scope_extra(body: dict[str, Any]) -> None:
    body.get("key", {}).get("scopes", []).append("webhooks:manage")


def _api_version_wrong(body: dict[str, Any]) -> None:
    body.get("api", {}).update(version="2026-01-01")


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
    for item in bt.data(body).get("items") or []:
        if isinstance(item, dict) and item.get("content_version"):
            item["content_version"] = "0" * 24


def _later_download(body: dict[str, Any]) -> None:
    data = bt.data(body)
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
    for clip in bt.data(body).get("clips") or []:
        if isinstance(clip, dict) and clip.get("ready") is True and clip.get("vid") is not None:
            clip["vid"] = None
            return


def _split_at_120(body: dict[str, Any]) -> None:
    for clip in bt.data(body).get("clips") or []:
        if isinstance(clip, dict) and 100 < (clip.get("position") or 0) <= 120:
            clip["playlist_name"] = bt.data(body).get("code")


def _playlist_detail(path: str, endpoint: str) -> bool:
    parts = path.split("/")
    return len(parts) >= 2 and parts[-2] == "playlists"


def _is(name: str) -> Callable[[str, str], bool]:
    return lambda path, endpoint: endpoint == name


BODY_CHANGES: dict[str, tuple[Callable[[str, str], bool], Callable[[dict[str, Any]], None]]] = {
    FaultName.catalog_carries_manifest_url: (_is("catalog"), _catalog_play_link),
    FaultName.poster_expiry_30_minutes: (_is("catalog"), _later_poster),
    FaultName.catalog_slug_duplicate: (_is("catalog"), _duplicate_slug),
    FaultName.catalog_two_main_tags: (_is("catalog"), _two_main_tags),
    FaultName.catalog_support_before_lead: (_is("catalog"), _support_first),
    FaultName.config_limit_doubled: (_is("config"), _door_doubled),
    FaultName.config_scopes_extra: (_is("config"), _scope_extra),
    FaultName.config_api_version_wrong: (_is("config"), _api_version_wrong),
    FaultName.playlist_list_carries_playback_link: (_is("playlists"), _playlist_play_link),
    FaultName.series_item_content_version_stale: (_is("series"), _stale),
    FaultName.playlist_item_content_version_stale: (_is("playlists"), _stale),
    FaultName.download_link_30_minutes: (_is("file"), _later_download),
    FaultName.vid_ready_without_vid: (_is("catalog"), _unready_video),
    FaultName.poster_host_outside_domains: (_is("catalog"), _poster_elsewhere),
    FaultName.ready_clip_without_vid: (_playlist_detail, _clip_without_video),
    FaultName.playlist_split_at_120: (_playlist_detail, _split_at_120),
}
CALLER_FAULTS = frozenset(
    {
        FaultName.catalog_per_key,
        FaultName.metadata_version_per_read,
        FaultName.not_granted_playlist_404,
    }
)
BODY_FAULTS = ENVELOPE_FAULTS | BODY_CHANGES.keys() | CALLER_FAULTS


def _caller_faults(reply: Reply, faults: FaultSwitch, path: str, exchange: Exchange) -> None:
    """Faults that need the caller or the request: GEN-004, CAT-029, PLS-025."""
    body = orjson.loads(reply.body)
    role = exchange.caller.role if exchange.caller is not None else None
    if path.endswith("/catalog") and isinstance(body, dict):
        films, episodes = body.get("films") or [], body.get("episodes") or []
        if faults.enabled(FaultName.catalog_per_key) and role == "films_metadata" and films:
            gone = films.pop()["id"]
            body["episodes"] = [e for e in episodes if e.get("film_id") != gone]
        if faults.enabled(FaultName.metadata_version_per_read):
            for film in films:
                if film.get("metadata_version"):
                    film["metadata_version"] = exchange.request_id[-16:]
    parts = path.split("/")
    detail = len(parts) >= 2 and parts[-2] == "playlists"
    data = body.get("data") if isinstance(body, dict) else None
    ungranted = isinstance(data, dict) and data.get("granted") is False
    if faults.enabled(FaultName.not_granted_playlist_404) and detail and ungranted:
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
