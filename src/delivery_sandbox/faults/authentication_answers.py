"""What the answer faults of authentication do (rows: `faults/authentication.py`, marked "answer"):
each bends the finished answer of one request, with the request and the whole sandbox at hand.

One hook, `bend_answer`, at the reply seam (control/front_faults.py: `reply_out`). An answer a
fault rebuilds is built by the serving code's own error builders (`http/errors.py`), and the
playback body's refusal by its own parser (`playback/request.py: parse`), both handed in at the
seam, so this module imports nothing above `faults/` (ARCHITECTURE.md: Import rules).

Spec sections: Authentication (order of checks, key, versions, scopes, organisation); Versioning;
Endpoints > GET /config; Errors > Every path.
"""

# The bend table holds one row a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from delivery_sandbox.faults import authentication as auth_faults

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["Errors", "bend_answer"]

NOT_SERVED = "2026-05-01"  # service_version_fallback_retired names it
BEARER = "Bearer "


class Errors(Protocol):
    """The error builders and messages of the serving code (http/errors.py, the module itself)."""

    MSG_NOT_FOUND: str
    MSG_KEY_INVALID: str
    MSG_SCOPE: str
    ORG_SUSPENDED: str
    APP_NOT_REGISTERED: str
    VIDEO_NOT_FOUND: str

    def flat(
        self,
        exchange: Any,
        faults: FaultSwitch,
        status: int,
        error: str,
        error_code: str | None = None,
    ) -> Any: ...

    def rate_limited(
        self, exchange: Any, faults: FaultSwitch, retry_after: int, limit: int, window: int
    ) -> Any: ...

    def unsupported_version(
        self,
        exchange: Any,
        faults: FaultSwitch,
        supported: list[str],
        latest: str,
        upgrade_to: str | None = None,
    ) -> Any: ...


Refusal = Callable[[bytes], Any]  # playback/request.py: parse (a malformed body's BodyError)


def _bearer_key(header: str | None) -> str | None:
    """The key of `Authorization: Bearer <key>`, exactly one space (http/headers.py: bearer_key)."""
    if header is None or not header.startswith(BEARER):
        return None
    key = header[len(BEARER) :]
    return None if not key or " " in key else key


@dataclass
class Seen:
    """One request and its answer, as the rows below read them, and the builders handed in."""

    sb: Server
    exchange: Any  # http/headers.py: Exchange
    reply: Any  # http/headers.py: Reply
    method: str
    parts: list[str]  # path segments after /v1/
    headers: dict[bytes, str]
    body: Any  # the answer's JSON, None when it has none
    errors: Errors
    parse: Refusal

    @property
    def endpoint(self) -> str:
        return self.parts[0] if self.parts else ""

    @property
    def key(self) -> str | None:
        return _bearer_key(self.headers.get(b"authorization"))

    def flat(self, status: int, error: str, error_code: str | None = None) -> None:
        self.reply = self.errors.flat(self.exchange, self.sb.faults, status, error, error_code)
        self.body = orjson.loads(self.reply.body)

    def replace(self, reply: Answer) -> None:
        self.reply, self.body = reply, orjson.loads(reply.body) if reply.body else None

    def set_version(self, version: str | None) -> None:
        found = self.sb.versions.usable(version or "")
        if found is not None:
            self.exchange.version, self.exchange.version_info = found.version, found


Bend = Callable[[Seen], None]


def _error(seen: Seen) -> str | None:
    body = seen.body
    return body.get("error") if isinstance(body, dict) else None


def _unsupported(seen: Seen) -> bool:
    return (
        seen.reply.status == 400
        and isinstance(seen.body, dict)
        and (seen.body.get("error_code") == "unsupported_version")
    )


def _status(seen: Seen, status: int) -> None:
    seen.reply.status = status


def _body_400_first(when: Callable[[Seen], bool]) -> Bend:
    """POST /playback answers the malformed-body 400 where `when` holds (the body read first)."""

    def bend(seen: Seen) -> None:
        if seen.method == "POST" and seen.endpoint == "playback" and when(seen):
            refusal = seen.parse(b"not json")  # the malformed body's refusal
            seen.flat(400, refusal.error, refusal.error_code)

    return bend


def _missing_key_403(seen: Seen) -> None:
    if (
        seen.endpoint == "config"
        and seen.reply.status == 401
        and b"authorization" not in (seen.headers)
    ):
        _status(seen, 403)


def _unknown_key_403(seen: Seen) -> None:
    key = seen.key
    if seen.endpoint == "catalog" and seen.reply.status == 401 and key is not None:
        _status(seen, 401 if key in seen.sb.accounts.keys else 403)


def _invalid_key_before_version(seen: Seen) -> None:
    key = seen.key
    record = seen.sb.accounts.keys.get(key) if key is not None else None
    invalid = key is not None and (record is None or record.revoked)
    if _unsupported(seen) and invalid and seen.endpoint in ("catalog", "config"):
        seen.flat(401, seen.errors.MSG_KEY_INVALID)


def _rate_limit_before_org(seen: Seen) -> None:
    caller = seen.exchange.caller
    if seen.endpoint != "catalog" or _error(seen) != seen.errors.ORG_SUSPENDED or caller is None:
        return
    refusal = seen.sb.limits.take_request(caller.org_id, "catalog", seen.sb.now())
    if refusal is not None:
        seen.replace(
            seen.errors.rate_limited(
                seen.exchange, seen.sb.faults, refusal.retry_after, refusal.limit, refusal.window
            )
        )


def _config_needs_metadata(seen: Seen) -> None:
    caller = seen.exchange.caller
    lacks = caller is not None and "metadata:read" not in caller.scopes
    if seen.endpoint == "config" and seen.reply.status == 200 and lacks:
        seen.flat(403, seen.errors.MSG_SCOPE)


def _keys_path_served(seen: Seen) -> None:
    if seen.endpoint == "keys" and seen.reply.status == 404:
        seen.reply.status, seen.body = 200, {"keys": []}


def _production_test_org(seen: Seen) -> None:
    if seen.endpoint == "config" and seen.reply.status == 200 and isinstance(seen.body, dict):
        key = seen.body.get("key")
        if isinstance(key, dict):
            key["test_organisation"] = True


def _config_suspended_forbidden(seen: Seen) -> None:
    if seen.endpoint == "config" and _error(seen) == seen.errors.ORG_SUSPENDED:
        seen.body["error"] = seen.errors.MSG_SCOPE


def _unsupported_error_null(seen: Seen) -> None:
    if _unsupported(seen):
        seen.body["error"] = None


def _unsupported_code_list(seen: Seen) -> None:
    if _unsupported(seen):
        seen.body["error_code"] = ["unsupported_version"]


def _app_not_registered_code(seen: Seen) -> None:
    if _error(seen) == seen.errors.APP_NOT_REGISTERED:
        seen.body["error_code"] = seen.errors.APP_NOT_REGISTERED


def _video_not_found_array(seen: Seen) -> None:
    if _error(seen) == seen.errors.VIDEO_NOT_FOUND:
        seen.body = [seen.body]


def _unknown_path_405(seen: Seen) -> None:
    body = seen.body if isinstance(seen.body, dict) else {}
    if seen.method != "GET" and seen.reply.status == 404 and body.get("error_code") == "not_found":
        seen.reply.status, seen.body = 405, None
        seen.reply.content_type = None
        seen.reply.headers.append((b"allow", b"GET"))


def _wrong_method_404_without_key(seen: Seen) -> None:
    if seen.reply.status == 405 and b"authorization" not in seen.headers:
        seen.flat(404, seen.errors.MSG_NOT_FOUND, "not_found")


def _videos_list_missing(seen: Seen) -> None:
    if seen.parts == ["videos"] and seen.reply.status == 200:
        seen.flat(404, seen.errors.MSG_NOT_FOUND, "not_found")


def _bare_host_query_dropped(seen: Seen) -> None:
    if seen.reply.status == 308:
        seen.reply.headers = [
            (k, v.split(b"?")[0] if k == b"location" else v) for k, v in seen.reply.headers
        ]


def _bare_host_307(seen: Seen) -> None:
    if seen.reply.status == 308 and seen.method != "GET":
        _status(seen, 307)


def _video_error_unversioned(seen: Seen) -> None:
    if seen.endpoint == "videos" and len(seen.parts) == 2 and seen.reply.status >= 400:
        seen.exchange.omit_version = True


def _latest_not_pin(seen: Seen) -> None:
    keyed = seen.exchange.caller is not None and seen.endpoint != "config"
    if b"service-version" not in seen.headers and keyed:
        seen.set_version(seen.sb.versions.latest)


def _pin_not_requested(seen: Seen) -> None:
    caller = seen.exchange.caller
    if b"service-version" in seen.headers and caller is not None and seen.endpoint == "catalog":
        seen.set_version(caller.pin)


def _fallback_retired(seen: Seen) -> None:
    """2026-05-01: retired in the extended version set, unknown in the spec's; served by neither."""
    if seen.exchange.caller is None and seen.reply.status >= 400:
        seen.exchange.version, seen.exchange.version_info = NOT_SERVED, None


def _retryable_503_bare(seen: Seen) -> None:
    if seen.reply.status == 503:
        seen.reply.headers = [(k, v) for k, v in seen.reply.headers if k != b"retry-after"]


def _last_page_cursor(seen: Seen) -> None:
    body = seen.body
    last = isinstance(body, dict) and "next_cursor" in body and body["next_cursor"] is None
    if seen.parts == ["catalog"] and seen.reply.status == 200 and last:
        body["next_cursor"] = "end"


def _config_without_first_version(seen: Seen) -> None:
    api = seen.body.get("api") if seen.endpoint == "config" and seen.reply.status == 200 else None
    if isinstance(api, dict) and isinstance(api.get("supported_versions"), list):
        api["supported_versions"] = [
            v for v in api["supported_versions"]
            if (v.get("version") if isinstance(v, dict) else v) != "2026-10-02"
        ]  # fmt: skip


def _header_moves_pin(seen: Seen) -> None:
    key, version = seen.key, seen.headers.get(b"service-version", "")
    record = seen.sb.accounts.keys.get(key) if key is not None else None
    usable = seen.sb.versions.usable(version) is not None
    if key is not None and record is not None and usable and seen.reply.status == 200:
        seen.sb.accounts.keys[key] = dataclasses.replace(record, pin=version)


def _current_pin_upgrade_to(seen: Seen) -> None:
    if _unsupported(seen) and seen.body.get("upgrade_to") is None and seen.key is not None:
        seen.body["upgrade_to"] = seen.sb.versions.latest


def _retired_pin_header_ignored(seen: Seen) -> None:
    caller, versions = seen.exchange.caller, seen.sb.versions
    header = b"service-version" in seen.headers
    retired = caller is not None and versions.usable(caller.pin) is None
    if retired and header and seen.reply.status == 200:
        seen.set_version(versions.latest)
        seen.replace(
            seen.errors.unsupported_version(
                seen.exchange, seen.sb.faults, versions.supported, versions.latest,
                upgrade_to=versions.latest,
            )
        )  # fmt: skip


def _config(dotted: str, value: Any) -> Bend:
    """/config reports `value` at `dotted` (a field the Config section fixes)."""
    *outer, last = dotted.split(".")

    def bend(seen: Seen) -> None:
        node = seen.body if seen.endpoint == "config" and seen.reply.status == 200 else None
        for name in outer:
            node = node.get(name) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node:
            node[last] = value

    return bend


def _no_key(seen: Seen) -> bool:
    return bool(seen.reply.status == 401)


def _scope_refused(seen: Seen) -> bool:
    return seen.reply.status == 403 and _error(seen) == seen.errors.MSG_SCOPE


def _org_refused(seen: Seen) -> bool:
    return seen.reply.status == 403 and _error(seen) == seen.errors.ORG_SUSPENDED


def _rate_limited(seen: Seen) -> bool:
    return seen.reply.status == 429 and isinstance(seen.body, dict) and "items" not in seen.body


# fault name -> its bend of the answer (every row of the block marked "answer", no other)
_BENDS: dict[str, Bend] = {
    "missing_key_403_on_config": _missing_key_403,
    "unknown_key_403_on_catalog": _unknown_key_403,
    "invalid_key_before_version": _invalid_key_before_version,
    "rate_limit_before_org": _rate_limit_before_org,
    "playback_body_before_limit": _body_400_first(_rate_limited),
    "playback_body_before_key": _body_400_first(_no_key),
    "playback_body_before_scope": _body_400_first(_scope_refused),
    "playback_body_before_org": _body_400_first(_org_refused),
    "config_needs_metadata_scope": _config_needs_metadata,
    "keys_path_served": _keys_path_served,
    "production_key_test_org": _production_test_org,
    "config_suspended_forbidden": _config_suspended_forbidden,
    "unsupported_version_error_null": _unsupported_error_null,
    "unsupported_version_code_list": _unsupported_code_list,
    "app_not_registered_with_error_code": _app_not_registered_code,
    "video_not_found_in_array": _video_not_found_array,
    "unknown_path_405": _unknown_path_405,
    "wrong_method_404_without_key": _wrong_method_404_without_key,
    "videos_list_missing": _videos_list_missing,
    "bare_host_query_dropped": _bare_host_query_dropped,
    "bare_host_307_for_writes": _bare_host_307,
    "video_errors_unversioned": _video_error_unversioned,
    "service_version_latest_not_pin": _latest_not_pin,
    "service_version_pin_not_requested": _pin_not_requested,
    "service_version_fallback_retired": _fallback_retired,
    "retryable_503_without_retry_after": _retryable_503_bare,
    "catalog_last_cursor_not_null": _last_page_cursor,
    "config_without_2026_10_02": _config_without_first_version,
    "version_header_moves_pin": _header_moves_pin,
    "current_pin_upgrade_to": _current_pin_upgrade_to,
    "retired_pin_header_ignored": _retired_pin_header_ignored,
    "config_status_stable": _config("api.status", "stable"),
    "config_path_version_v2": _config("api.path_version", "v2"),
    "config_version_header_other": _config("api.version_header", "X-Service-Version"),
    "config_window_30": _config("rate_limits.window_seconds", 30),
    "config_domains_string": _config("playback.domains", "a.example,b.example"),
    "config_grant_ttl_3600": _config("playback.grant_ttl_seconds", 3600),
    "config_manifest_ttl_1800": _config("playback.manifest_url_ttl_seconds", 1800),
    "config_batch_max_episodes_5": _config("playback.batch.max_episodes", 5),
    "config_subtitles_srt": _config("subtitles.format", "srt"),
    "config_deprecations_null": _config("deprecations", None),
}  # fmt: skip
if _BENDS.keys() != auth_faults.ANSWER_FAULTS:
    raise ImportError(
        f"answer faults without a bend or bends without a row: {sorted(_BENDS.keys() ^ auth_faults.ANSWER_FAULTS)}"
    )


def bend_answer(
    reply: Any, sb: Server, scope: dict[str, Any], exchange: Any, errors: Any, parse: Refusal
) -> Any:
    """Apply the switched-on answer faults; the answer to send (`reply`: http/headers.py
    `Reply`; `errors`: the module http/errors.py, read as `Errors` (a module's names outside its
    `__all__` do not count for a protocol, so it is taken as it is); `parse`:
    playback/request.py `parse`)."""
    on = sb.faults.on & _BENDS.keys()
    if not on:
        return reply
    try:
        body = orjson.loads(reply.body) if reply.body else None
    except orjson.JSONDecodeError:
        body = None
    path: list[str] = scope["path"].rstrip("/").split("/")
    parts = path[path.index("v1") + 1 :] if "v1" in path else path[1:]
    headers = {k.lower(): v.decode("latin-1") for k, v in scope["headers"]}
    seen = Seen(sb, exchange, reply, scope["method"], parts, headers, body, errors, parse)
    for name in sorted(on):
        _BENDS[name](seen)
    if seen.body is not body or body is not None:
        seen.reply.body = b"" if seen.body is None else orjson.dumps(seen.body)
    return seen.reply
