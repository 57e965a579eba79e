"""Faults of the error formats: error answers bent after they are built (at the reply seam,
`bend_error`), one rule (or one rule restated in several sections) each; and the error body
seam, `bend_error_body` (http/errors.py, as every error body is built), where the error-format
rows of registry.py act (`request_id` echoed, the envelope code, `X-RateLimit-Limit` on a 429).

Spec sections: Errors > Formats (envelope errors without `data`; every 429 flat); Errors >
Open videos (`request_id` in the body); Errors > Playback (a 503 `not_ready` has no
`Retry-After`); Limits (a 429 carries `Retry-After` in whole seconds of at least 1 and
`X-RateLimit-Window: 60`).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["FAULTS", "FAULT_ROWS", "bend_error", "bend_error_body"]

ENVELOPE_PATHS = ("series", "playlists", "creatives")

FAULT_ROWS: tuple[FaultRow, ...] = fault_rows("""
envelope_error_with_data             | ERR-008 CRE-062 SER-047 PLS-043         | envelope error bodies carry data: null
videos_error_without_request_id      | VID-031                                 | open video error bodies lack request_id
ratelimit_envelope_on_envelope_paths | ERR-006 LIM-029 CRE-058 SER-044 PLS-040 | a 429 of series, playlists or creatives is an envelope (code 4290)
retry_after_zero_on_429              | LIM-030                                 | Retry-After: 0 on a 429
ratelimit_window_120                 | LIM-032 HDR-029 LIM-011                 | X-RateLimit-Window: 120 on a 429
not_ready_503_retry_after            | PLAY-093                                | a 503 not_ready carries Retry-After: 1
""")
FAULTS = declare(
    FAULT_ROWS,
    area="Errors > Formats",
    seam="reply",
    collateral={
        "videos_error_without_request_id": (
            ("HDR-013", "HDR-013 wants request_id in every error body, the open videos' too"),
        ),
        "ratelimit_envelope_on_envelope_paths": (
            ("ERR-001", "the envelope it sends has no `error` string, which the flat 429 due has"),
        ),
    },
)
NAMES = frozenset(row[0] for row in FAULT_ROWS)


def _set_header(reply: Answer, name: bytes, value: bytes) -> None:
    reply.headers = [(k, v) for k, v in reply.headers if k != name] + [(name, value)]


def _in_envelope_area(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return any(p in ENVELOPE_PATHS for p in parts[-2:])


def bend_error(reply: Answer, faults: FaultSwitch, path: str) -> None:
    """Apply the switched-on faults of these rows to an error answer (status 400 and above)."""
    on = faults.on & NAMES
    if not on or reply.status < 400:
        return
    if reply.status == 429:
        if FaultName.retry_after_zero_on_429 in on:
            _set_header(reply, b"retry-after", b"0")
        if FaultName.ratelimit_window_120 in on:
            _set_header(reply, b"x-ratelimit-window", b"120")
    if not reply.body:
        return
    body: Any = bt.json_object(reply.body)
    if body is None:
        return
    envelope = isinstance(body.get("code"), int) and "message" in body
    if FaultName.envelope_error_with_data in on and envelope:
        body["data"] = None
    if FaultName.videos_error_without_request_id in on and "/videos" in path and not envelope:
        body.pop("request_id", None)
    shaped = reply.status == 429 and _in_envelope_area(path) and not envelope
    if FaultName.ratelimit_envelope_on_envelope_paths in on and shaped:
        body = {"code": 4290, "message": "rate limited", "server_time": 0,
                "request_id": body.get("request_id")}  # fmt: skip
    not_ready = reply.status == 503 and body.get("error_code") == "not_ready"
    if FaultName.not_ready_503_retry_after in on and not_ready:
        _set_header(reply, b"retry-after", b"1")
    reply.body = orjson.dumps(body)


Headers = list[tuple[bytes, bytes]]
# Rows of registry.py that act as an error body is built (`bend_error_body`).
BODY_SEAM_FAULTS = frozenset(
    {
        FaultName.request_id_not_echoed,
        FaultName.envelope_code_mismatch,
        FaultName.ratelimit_limit_missing,
    }
)


def bend_error_body(
    faults: FaultSwitch, form: str, body: dict[str, Any], headers: Headers
) -> Headers:
    """The error body seam: bend an error body of format `form` ("flat" or "envelope") in
    place as it is built, and return its headers: no `request_id` echoed, an envelope code
    whose first three digits are not the status, a 429 without `X-RateLimit-Limit`."""
    on = faults.on & BODY_SEAM_FAULTS
    if not on:
        return headers
    if FaultName.envelope_code_mismatch in on and form == "envelope":
        code = body["code"]
        body["code"] = code + 1000 if code < 5000 else code - 1000
    if FaultName.request_id_not_echoed in on:
        body.pop("request_id", None)
    if FaultName.ratelimit_limit_missing in on:
        return [(k, v) for k, v in headers if k != b"x-ratelimit-limit"]
    return headers
