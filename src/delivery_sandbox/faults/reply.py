"""The reply seam: the faults that bend a finished answer, and the entry points that apply every
spec area's faults of that seam.

`bend_answer_headers` bends the header list (http/headers.py: `send_reply`): the common headers
as the header rows of registry.py change them, then every header fault of the final list
(`bend_headers`); `bend_reply` the answer of a path (control/front_faults.py, once it is built):
first the rows of this module, then the faults of each spec area's module that act on an answer
(error formats and codes, catalog, creatives, resource fields, deprecation); `not_found_instead`
says when a wrong method is answered 404, `bend_request_id` bends the request id at the request
seam. This module's rows each name the one rule they break (spec sections: Common response
headers; Endpoints > Paging and envelopes; Authentication; Versioning; Resources and their
fields; Errors); they join the single table of `registry.py` from `coverage_rows.py`. The few
that change a decision act where it is made: the steps of the order of checks
(faults/authentication.py: `bend_step`) and playback (`playback.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults import catalog as catalog_faults
from delivery_sandbox.faults import creatives as creative_faults
from delivery_sandbox.faults import deprecation as deprecation_faults
from delivery_sandbox.faults import error_codes as error_code_faults
from delivery_sandbox.faults import error_formats as error_format_faults
from delivery_sandbox.faults import playback as playback_faults
from delivery_sandbox.faults import resource_fields as resource_field_faults
from delivery_sandbox.faults.names import FaultName

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Request
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = [
    "BODY_CHANGES",
    "HEADER_CHANGES",
    "bend_answer_headers",
    "bend_headers",
    "bend_reply",
    "bend_request_id",
    "not_found_instead",
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


def bend_reply(reply: Answer, faults: FaultSwitch, path: str, exchange: Request) -> None:
    """The reply seam: apply the switched-on faults that bend a finished answer of `path`, in
    place: those of this module's rows, then those of each spec area's module."""
    _bend_by_rows(reply, faults, path, exchange)
    _bend_by_area(reply, faults, path, exchange)


def _bend_by_rows(reply: Answer, faults: FaultSwitch, path: str, exchange: Request) -> None:
    """This module's body faults on a 200 JSON answer of `path` (after the playback ones)."""
    playback_faults.bend_reply(reply, faults, path, exchange)
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


def _caller_faults(reply: Answer, faults: FaultSwitch, path: str, exchange: Request) -> None:
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


# Rows of registry.py ("Headers and general rules") that bend the common headers of every answer
# (http/headers.py: `common_headers`), before the answer's own headers join them.
COMMON_FAULTS = frozenset(
    {
        FaultName.api_status_missing,
        FaultName.video_single_version_header,
        FaultName.service_version_missing,
        FaultName.cache_control_public,
        FaultName.cache_control_missing_on_422,
        FaultName.cors_header_sent,
        FaultName.cookie_set,
        FaultName.deprecation_headers_missing,
    }
)
DEPRECATION = (b"deprecation", b"sunset", b"link")


def bend_answer_headers(
    common: Headers, own: Headers, status: int, exchange: Request, faults: FaultSwitch
) -> Headers:
    """The header seam of the reply (http/headers.py: `send_reply`): the common headers with
    their faults applied, then the answer's own headers, then every header fault of the final
    list (`bend_headers`)."""
    if not faults.on:
        return common + own
    return bend_headers(_bend_common(common, status, exchange, faults) + own, status, faults)


def _bend_common(headers: Headers, status: int, exchange: Request, faults: FaultSwitch) -> Headers:
    """The common headers as the rows of COMMON_FAULTS change them: Service-API-Status or
    Service-Version left out, Service-Version on an answer that has none, Cache-Control public
    or (on a 422) left out, CORS and cookie headers added, the deprecation headers left out."""
    on = faults.on & COMMON_FAULTS
    if not on:
        return headers
    dropped: set[bytes] = set()
    if FaultName.api_status_missing in on:
        dropped.add(b"service-api-status")
    if FaultName.service_version_missing in on:
        dropped.add(b"service-version")
    if FaultName.deprecation_headers_missing in on:
        dropped.update(DEPRECATION)
    public = FaultName.cache_control_public in on
    if status == 422 and not public and FaultName.cache_control_missing_on_422 in on:
        dropped.add(b"cache-control")
    one_version = exchange.omit_version and FaultName.video_single_version_header in on
    one_version = one_version and b"service-version" not in dropped
    out: Headers = []
    for name, value in headers:
        if name in dropped:
            continue
        if name == b"cache-control" and FaultName.cache_control_public in on:
            value = b"public, max-age=60"
        elif name == b"service-request-id" and one_version:
            out.append((b"service-version", exchange.version.encode()))
        out.append((name, value))
    at = next((i for i, (name, _) in enumerate(out) if name in DEPRECATION), len(out))
    added = []
    if FaultName.cors_header_sent in on:
        added.append((b"access-control-allow-origin", b"*"))
    if FaultName.cookie_set in on:
        added.append((b"set-cookie", b"sandbox_session=1; Path=/"))
    return out[:at] + added + out[at:]


def bend_request_id(request_id: str, faults: FaultSwitch) -> str:
    """The Service-Request-Id an answer carries (header and error body alike), at the request
    seam: without its `req_` prefix, or the same for every request."""
    if faults.enabled(FaultName.request_id_bad_format):
        request_id = request_id.removeprefix("req_")
    if faults.enabled(FaultName.request_id_repeated):
        request_id = "req_" + "0" * 26
    return request_id


def not_found_instead(reply: Answer, exchange: Request, faults: FaultSwitch) -> bool:
    """Whether the answer is to be the flat 404 `not_found` instead (control/front_faults.py
    builds it): under `wrong_method_404`, a 405 to a wrong method on a real path."""
    routed = exchange.endpoint not in (None, "unknown")
    return reply.status == 405 and routed and faults.enabled(FaultName.wrong_method_404)


def bend_headers(headers: Headers, status: int, faults: FaultSwitch) -> Headers:
    """The final header list with the switched-on header faults applied (this module's rows,
    then the deprecation headers' faults)."""
    for name in faults.on & HEADER_CHANGES.keys():
        headers = HEADER_CHANGES[name](headers, status)
    return deprecation_faults.bend_headers(headers, status, faults)


# Roles that lose the last item of a list under `list_per_key`, and the lists they lose it from.
PER_KEY_LISTS = {"films_metadata": "series", "films_creatives": "creatives"}
PLAYBACK_REFILL_PER_SECOND = 180


def _bend_by_area(reply: Answer, faults: FaultSwitch, path: str, exchange: Request) -> None:
    """The faults of each spec area's module that bend an answer (errors, catalog, creatives,
    resource fields, deprecation), then the per-key list and the playback door rows."""
    error_format_faults.bend_error(reply, faults, path)
    error_code_faults.bend_error(reply, faults, path)
    catalog_faults.bend_reply(reply, faults, path, exchange)
    creative_faults.bend_reply(reply, faults, path, exchange)
    for bend in (resource_field_faults.bend_body, deprecation_faults.bend_body):
        bent = bend(reply.status, reply.body, faults, path)
        if bent is not None:
            reply.body = bent
    on = faults.on & {FaultName.list_per_key, FaultName.config_playback_door_per_second}
    if not on or reply.status != 200 or not reply.body:
        return
    body = bt.json_object(reply.body)
    if body is None:
        return
    endpoint = path.rsplit("/", 1)[-1]
    role = exchange.caller.role if exchange.caller is not None else None
    if FaultName.list_per_key in on and PER_KEY_LISTS.get(role or "") == endpoint:
        data = body.get("data")
        items = data.get("items") if isinstance(data, dict) else None
        if isinstance(items, list) and items:
            items.pop()
    if FaultName.config_playback_door_per_second in on and endpoint == "config":
        door = body.get("rate_limits", {}).get("doors", {}).get("playback")
        if isinstance(door, dict):
            door["limit"] = PLAYBACK_REFILL_PER_SECOND
    reply.body = orjson.dumps(body)
