"""Faults of the deprecation headers (`bend_headers`, at the header step of the reply seam), and
a few body rules of tickets and `/config` that change with them (`bend_body`).

Spec sections: Common response headers (`Deprecation`, `Sunset`, `Link`); Versioning (the
deprecations list); Endpoints > POST /playback (the batch shape, `next`).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["FAULTS", "FAULT_ROWS", "bend_body", "bend_headers"]

Headers = list[tuple[bytes, bytes]]
A_TUESDAY_NOON = b"@1790078400"  # not a midnight, so not any version's deprecation date


def _everywhere(headers: Headers, status: int) -> Headers:
    if status != 200 or any(k == b"deprecation" for k, _ in headers):
        return headers
    return [*headers, (b"deprecation", b"@1790035200")]


def _on_errors(headers: Headers, status: int) -> Headers:
    return [*headers, (b"deprecation", b"@1790035200")] if status >= 400 else headers


def _replace(name: bytes, value: bytes) -> Callable[[Headers, int], Headers]:
    return lambda headers, status: [(k, value if k == name else v) for k, v in headers]


def _drop(name: bytes) -> Callable[[Headers, int], Headers]:
    return lambda headers, status: [(k, v) for k, v in headers if k != name]


HEADER_CHANGES: dict[str, Callable[[Headers, int], Headers]] = {
    "deprecation_on_current_version": _everywhere,
    "deprecation_on_errors": _on_errors,
    "deprecation_date_wrong": _replace(b"deprecation", A_TUESDAY_NOON),
    "sunset_iso_date": _replace(b"sunset", b"2027-04-01"),
    "deprecation_link_missing": _drop(b"link"),
    "sunset_without_deprecation": _drop(b"deprecation"),
}


def bend_headers(headers: Headers, status: int, faults: FaultSwitch) -> Headers:
    """The final header list with the switched-on deprecation faults applied."""
    for name in sorted(faults.on & HEADER_CHANGES.keys()):
        headers = HEADER_CHANGES[name](headers, status)
    return headers


def _single_shape(body: bt.Body) -> None:
    items = body.get("items")
    if isinstance(items, list) and len(items) == 1 and isinstance(items[0], dict):
        item = dict(items[0])
        item.pop("request", None)
        item.pop("status", None)
        body.clear()
        body.update(item)


def _prefetch_reversed(body: bt.Body) -> None:
    items = body.get("items")
    if isinstance(items, list) and len(items) > 2:
        items[1:] = items[:0:-1]


def _deprecations_empty(body: bt.Body) -> None:
    versions = bt.rows(bt.api(body), "supported_versions")
    if any(v.get("deprecated_at") for v in versions):
        body["deprecations"] = []


BLOCK: tuple[bt.Row, ...] = (
    ("next_tickets_reversed", "PLAY-036", "the tickets added by next come in reverse episode order", bt.at("playback"), _prefetch_reversed),
    ("deprecations_empty", "VER-014", "/config deprecations empty while a version is deprecated", bt.at("config"), _deprecations_empty),
)  # fmt: skip
# Rows whose change is a header (HEADER_CHANGES) or a batch reshaped (named in BODY_FAULTS).
HOOK_ROWS: tuple[FaultRow, ...] = fault_rows("""
batch_of_one_single_shape      | PLAY-027 PLAY-035 | a batch of one item (next 0 included) is answered in the single shape
deprecation_on_current_version | HDR-016           | Deprecation on every 200 without one
deprecation_on_errors          | HDR-019           | Deprecation on every error answer
deprecation_date_wrong         | HDR-018           | Deprecation names a time that is no midnight
sunset_iso_date                | HDR-021           | Sunset given as an ISO date
deprecation_link_missing       | HDR-022 HDR-023   | no Link header with the deprecation headers
sunset_without_deprecation     | HDR-020           | Sunset sent without Deprecation
""")
FAULT_ROWS = HOOK_ROWS + bt.rows_of(BLOCK)
FAULTS = declare(FAULT_ROWS, area="Common response headers (deprecation); Versioning", seam="reply")
BODY_FAULTS = bt.table_of(BLOCK) | {"batch_of_one_single_shape": (bt.at("playback"), _single_shape)}


def bend_body(status: int, body: bytes, faults: FaultSwitch, path: str) -> bytes | None:
    """The 200 JSON body of `path` with the switched-on body faults of these rows applied, or None."""
    return bt.apply_table(BODY_FAULTS, status, body, faults, path)
