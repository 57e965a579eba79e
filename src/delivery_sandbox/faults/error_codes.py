"""Faults of the error codes: codes and headers of error answers, bent after the answer is built
(at the reply seam, `bend_error`; the outage 503 at the outage step, `bend_outage`). A row that names several rules breaks one rule
the spec states in several places (the error tables of each endpoint).

Spec sections: Errors > Every path, Catalog, Config, Playback, Series and playlists, Creatives,
Open videos; Limits (the 429s near the playback ceiling).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["FAULTS", "FAULT_ROWS", "bend_error", "bend_outage"]

Body = dict[str, Any]
When = Callable[[int, list[str], Body], bool]  # status, path parts, body


def _endpoint(parts: list[str]) -> str:
    """The endpoint family of a path: the segment after /v1/ (`catalog`, `series`...)."""
    return parts[parts.index("v1") + 1] if "v1" in parts and parts[-1] != "v1" else ""


def _flat(name: str, status: int, code: str | None = None) -> When:
    return lambda s, p, b: (
        s == status and _endpoint(p) == name and (code is None or b.get("error_code") == code)
    )


def _envelope(name: str, status: int, code: int, detail: bool | None = None) -> When:
    def when(s: int, p: list[str], b: Body) -> bool:
        if s != status or _endpoint(p) != name or b.get("code") != code:
            return False
        return detail is None or (p[-1] != name) == detail

    return when


def _set(**values: Any) -> Callable[[Body], None]:
    return lambda body: body.update(values)


def _drop(name: str) -> Callable[[Body], None]:
    return lambda body: body.pop(name, None)


def _items_429_without_retry(body: Body) -> None:
    for item in body.get("items") or []:
        if isinstance(item, dict) and item.get("status") == 429:
            item.pop("retry_after", None)


def _batch_with_429(s: int, p: list[str], b: Body) -> bool:
    items = b.get("items")
    return s == 200 and _endpoint(p) == "playback" and isinstance(items, list)


def _unknown_path(s: int, p: list[str], b: Body) -> bool:
    return s == 404 and b.get("error_code") == "not_found"


def _playback_plain_400(s: int, p: list[str], b: Body) -> bool:
    return s == 400 and _endpoint(p) == "playback" and "error_code" not in b


# name -> (rules, summary, when, change to the body, header change or None)
_ROWS: tuple[tuple[str, str, str, When, Callable[[Body], None], bytes | None], ...] = (
    ("batch_429_item_without_retry_after", "PLAY-090 LIM-040", "batch items refused 429 carry no retry_after", _batch_with_429, _items_429_without_retry, None),
    ("prefetch_shed_without_retry_after", "LIM-038 PLAY-075", "a whole-request 429 prefetch_shed has no Retry-After", lambda s, p, b: s == 429 and b.get("reason") == "prefetch_shed", lambda b: None, b"retry-after"),
    ("catalog_429_code_wrong", "CAT-074", "GET /catalog's 429 has error_code too_many_requests", _flat("catalog", 429), _set(error_code="too_many_requests"), None),
    ("config_429_code_wrong", "CFG-032", "GET /config's 429 has error_code too_many_requests", _flat("config", 429), _set(error_code="too_many_requests"), None),
    ("videos_429_code_wrong", "VID-028", "the open videos' 429 has error_code too_many_requests", _flat("videos", 429), _set(error_code="too_many_requests"), None),
    ("unknown_path_code_wrong", "ERR-012 ERR-013 ERR-014", "an unknown path's 404 has error_code no_such_path", _unknown_path, _set(error_code="no_such_path"), None),
    ("playback_400_with_error_code", "PLAY-009 PLAY-010 PLAY-068 PLAY-069", "playback 400s without a code carry error_code invalid_request", _playback_plain_400, _set(error_code="invalid_request"), None),
    ("playback_404_not_found", "PLAY-085 PLAY-086 PLAY-087", "playback 404 not_ready answered as not_found", _flat("playback", 404, "not_ready"), _set(error_code="not_found"), None),
    ("playback_500_with_error_code", "PLAY-076", "a playback 500 carries error_code internal_error", _flat("playback", 500), _set(error_code="internal_error"), None),
    ("videos_400_with_error_code", "VID-018 VID-020", "the open videos' 400s carry error_code invalid_request", lambda s, p, b: s == 400 and _endpoint(p) == "videos" and "error_code" not in b and b.get("error") != "unsupported_version", _set(error_code="invalid_request"), None),
    ("creatives_cursor_4220", "CRE-057", "an invalid creatives cursor answers 4220, not 4222", _envelope("creatives", 422, 4222), _set(code=4220), None),
    ("series_cursor_4222", "SER-043", "a foreign series cursor answers 4222, not 4220", _envelope("series", 422, 4220), _set(code=4222), None),
    ("creative_file_4030", "CRE-049", "a file refused for ended rights answers 4030, not 4032", _envelope("creatives", 403, 4032), _set(code=4030), None),
    ("creative_file_404_4044", "CRE-052", "the file endpoint's 404 has code 4044", lambda s, p, b: _envelope("creatives", 404, 4040, True)(s, p, b) and p[-1] == "file", _set(code=4044), None),
    ("playlist_detail_404_4044", "PLS-027 STATE-012", "a playlist detail's 404 has code 4044", _envelope("playlists", 404, 4040, True), _set(code=4044), None),
    ("series_detail_404_4044", "SER-033", "a series detail's 404 has code 4044", _envelope("series", 404, 4040, True), _set(code=4044), None),
    ("playlists_list_404_4044", "STATE-017", "GET /playlists' 404 (unknown category) has code 4044", _envelope("playlists", 404, 4040, False), _set(code=4044), None),
    ("catalog_limit_code_wrong", "CAT-067", "a bad catalog limit answers error_code bad_limit", lambda s, p, b: _flat("catalog", 400, "invalid_request")(s, p, b), _set(error_code="bad_limit"), None),
    ("provider_timeout_retry_after_5", "PLAY-094", "a video provider timeout's 503 has Retry-After: 5", _flat("playback", 503, "service_unavailable"), lambda b: None, b"retry-after:5"),
)  # fmt: skip
FAULT_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = tuple(
    (name, tuple(rules.split()), summary) for name, rules, summary, _, _, _ in _ROWS
)
_RATE_LIMITED = (("ERR-006", "ERR-006 wants error_code rate_limited on every 429, this one too"),)
FAULTS = declare(
    FAULT_ROWS,
    area="Errors",
    seam="reply",
    collateral={
        "prefetch_shed_without_retry_after": (
            ("HDR-024", "the 429 it strips is a 429, and HDR-024 wants Retry-After on every 429"),
        ),
        "catalog_429_code_wrong": _RATE_LIMITED,
        "config_429_code_wrong": _RATE_LIMITED,
        "videos_429_code_wrong": _RATE_LIMITED,
        "videos_400_with_error_code": (
            ("VID-016", "a slug sent as the id is refused by the same 400, now with an error_code"),
        ),
    },
)
_BY_NAME = {row[0]: row[3:] for row in _ROWS}


def bend_error(reply: Answer, faults: FaultSwitch, path: str) -> None:
    """Apply the switched-on faults of these rows to the answer, in place."""
    on = faults.on & _BY_NAME.keys()
    if not on or not reply.body:
        return
    body: Any = bt.json_object(reply.body)
    if body is None:
        return
    parts = path.rstrip("/").split("/")
    for name in sorted(on):
        when, change, header = _BY_NAME[name]
        if not when(reply.status, parts, body):
            continue
        change(body)
        if header is not None:
            key, _, value = header.partition(b":")
            reply.headers = [(k, v) for k, v in reply.headers if k != key]
            if value:
                reply.headers.append((key, value))
    reply.body = orjson.dumps(body)


A = TypeVar("A")  # http/headers.py: Reply


def bend_outage(reply: A, envelope: bool, internal: Callable[[], A], faults: FaultSwitch) -> A:
    """The retryable 503 of an area that is out (control/outages.py, the outage step), as two
    faults bend it (rows: registry.py > Outages): an envelope endpoint answers 500 5000
    (`internal`, outage_envelope_500); a flat one leaves out Retry-After
    (outage_retry_after_missing)."""
    on = faults.on
    if envelope and FaultName.outage_envelope_500 in on:
        return internal()
    if not envelope and FaultName.outage_retry_after_missing in on:
        seen: Any = reply
        seen.headers = [(name, value) for name, value in seen.headers if name != b"retry-after"]
    return reply
