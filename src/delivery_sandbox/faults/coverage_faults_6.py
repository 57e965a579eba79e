"""Sixth block of coverage faults (issue 13; README: Requirement proofs): error answers bent
after they are built, one rule (or one rule restated in several sections) each.

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

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch
    from delivery_sandbox.http.headers import Reply

__all__ = ["COVERAGE_FAULT_ROWS_6", "mangle_error_6"]

ENVELOPE_PATHS = ("series", "playlists", "creatives")

COVERAGE_FAULT_ROWS_6: tuple[FaultRow, ...] = fault_rows("""
envelope_error_with_data             | ERR-008 CRE-062 SER-047 PLS-043         | envelope error bodies carry data: null
videos_error_without_request_id      | VID-031                                 | open video error bodies lack request_id
ratelimit_envelope_on_envelope_paths | ERR-006 LIM-029 CRE-058 SER-044 PLS-040 | a 429 of series, playlists or creatives is an envelope (code 4290)
retry_after_zero_on_429              | LIM-030                                 | Retry-After: 0 on a 429
ratelimit_window_120                 | LIM-032 HDR-029 LIM-011                 | X-RateLimit-Window: 120 on a 429
not_ready_503_retry_after            | PLAY-093                                | a 503 not_ready carries Retry-After: 1
""")
NAMES = frozenset(row[0] for row in COVERAGE_FAULT_ROWS_6)


def _set_header(reply: Reply, name: bytes, value: bytes) -> None:
    reply.headers = [(k, v) for k, v in reply.headers if k != name] + [(name, value)]


def _in_envelope_area(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return any(p in ENVELOPE_PATHS for p in parts[-2:])


def mangle_error_6(reply: Reply, faults: FaultSwitch, path: str) -> None:
    """Apply this block's switched-on faults to an error answer (status 400 and above)."""
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
