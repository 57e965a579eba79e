"""Faults that prove the coverage of rules no other fault breaks (issue 13).

spec: Endpoints > Paging and envelopes (the success envelope and its members). The rows join the
single table of `faults.py`; `mangle_reply` applies the body-level ones to a finished reply, so
no handler needs to know about them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from delivery_sandbox.faults import FaultSwitch
    from delivery_sandbox.headers import Reply

__all__ = ["COVERAGE_FAULT_ROWS", "HEADER_CHANGES", "mangle_headers", "mangle_reply"]

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
    ("missing_key_flat_error_code", ("CAT-070", "CFG-029", "PLAY-071"),
     "a flat 401 for a missing Authorization carries error_code unauthorized"),
    ("scope_flat_error_code", ("CAT-072", "PLAY-073"),
     "a flat 403 for a missing scope carries error_code forbidden"),
    ("malformed_version_served", ("VER-005",), "a Service-Version that is no date is served"),
    ("unknown_version_served", ("VER-004", "CAT-069", "CFG-028", "PLAY-070"),
     "an unknown dated Service-Version is served as the latest"),
    ("retired_version_served", ("VER-006",), "a retired Service-Version is served as the latest"),
    ("unsupported_version_in_envelope", ("ERR-007",),
     "unsupported_version on envelope endpoints is an envelope (code 4000)"),
    ("unsupported_version_no_latest", ("VER-007",), "unsupported_version without latest_version"),
    ("retired_pin_no_upgrade_to", ("VER-008",), "a retired pin's 400 without upgrade_to"),
    ("pin_checked_before_key", ("AUTH-012",),
     "a revoked key pinned to a retired version answers 400 instead of 401"),
    ("scope_checked_before_pin", ("AUTH-013",),
     "a key with a retired pin outside its scopes answers 403 instead of 400"),
    ("scope_checked_before_key", ("AUTH-014",),
     "a revoked key outside its scopes answers 403 instead of 401"),
    ("org_checked_before_scope", ("AUTH-015",),
     "a suspended organisation's key outside its scopes answers org_suspended"),
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
    "retry_after_missing_on_429": lambda h, status: _drop(b"retry-after")(h, status)
    if status == 429
    else h,
    "retry_after_http_date": lambda h, status: [
        (k, b"Wed, 21 Oct 2037 07:28:00 GMT" if k == b"retry-after" else v) for k, v in h
    ],
    "ratelimit_limit_everywhere": lambda h, status: h
    if status == 429
    else [*h, (b"x-ratelimit-limit", b"100")],
    "ratelimit_window_everywhere": lambda h, status: h
    if status == 429
    else [*h, (b"x-ratelimit-window", b"60")],
    "ratelimit_window_30": _set(b"x-ratelimit-window", b"30", only=429),
    "content_type_text": lambda h, status: [
        (k, b"text/plain" if k == b"content-type" else v) for k, v in h
    ],
    "allow_missing_on_405": _no_allow_on_405,
}
ENVELOPE_FAULTS = frozenset(row[0] for row in COVERAGE_FAULT_ROWS[:4])
SUCCESS_ENVELOPE = b'{"code":0,"message":"ok",'


def mangle_reply(reply: Reply, faults: FaultSwitch) -> None:
    """Apply the switched-on envelope faults to a success envelope, in place."""
    if ENVELOPE_FAULTS.isdisjoint(faults.on) or not reply.body.startswith(SUCCESS_ENVELOPE):
        return
    body = orjson.loads(reply.body)
    if faults.enabled("envelope_server_time_missing"):
        body.pop("server_time", None)
    if faults.enabled("envelope_code_string"):
        body["code"] = "0"
    if faults.enabled("envelope_message_wrong"):
        body["message"] = "OK"
    links = body.get("links")
    if faults.enabled("envelope_self_link_missing") and isinstance(links, dict) and "next" in links:
        links.pop("self", None)
    reply.body = orjson.dumps(body)


def mangle_headers(headers: Headers, status: int, faults: FaultSwitch) -> Headers:
    """The final header list with the switched-on header faults applied."""
    for name in faults.on & HEADER_CHANGES.keys():
        headers = HEADER_CHANGES[name](headers, status)
    return headers
