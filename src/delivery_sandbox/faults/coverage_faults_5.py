"""Fifth block of coverage faults (issue 13; README: Requirement proofs): one field, value or
order of a 200 body bent so the one rule naming it fails, as in `coverage_faults_3.py`.

Spec sections: Resources and their fields (Film, Episode, Series list item, Playlist list item);
States and transitions (withdrawn items); Endpoints (GET /config, GET /playlists, paging).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from delivery_sandbox.faults.coverage_faults_3 import (
    Body,
    Row,
    _data,
    _episodes,
    _films,
    _is,
    _rows,
    _tickets,
    apply_table,
    rows_of,
    table_of,
)

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch

__all__ = ["BODY_FAULTS_5", "COVERAGE_FAULT_ROWS_5", "mangle_body_5"]

ENVELOPE_LISTS = ("series", "playlists", "creatives")


def _items(body: Body) -> list[Body]:
    return _rows(_data(body), "items")


def _withdrawn(field: str, value: object) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        for item in _items(body):
            if item.get("status") == "withdrawn":
                item[field] = value

    return change


def _first_active(field: str, value: object) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        for item in _items(body):
            if item.get("status") == "active":
                item[field] = value
                return

    return change


def _placeholder_films(body: Body) -> set[str]:
    return {str(r.get("film_id")) for r in _episodes(body) if r.get("status") == "planned"}


def _completed_with_placeholders(body: Body) -> None:
    planned = _placeholder_films(body)
    for film in _films(body):
        if film.get("id") in planned:
            film["is_completed"] = True


def _unplanned_with_placeholders(body: Body) -> None:
    planned = _placeholder_films(body)
    for film in _films(body):
        if film.get("id") in planned:
            film["planned_episodes"] = None
            film["is_completed"] = None
            return


def _manifest_elsewhere(body: Body) -> None:
    for ticket in _tickets(body):
        link = ticket.get("manifest_url")
        if isinstance(link, str) and "://" in link:
            scheme, rest = link.split("://", 1)
            ticket["manifest_url"] = f"{scheme}://play.elsewhere.test/{rest.partition('/')[2]}"


def _protection_short(body: Body) -> None:
    playback = body.get("playback")
    listed = playback.get("protection") if isinstance(playback, dict) else None
    if isinstance(listed, list) and len(listed) > 1:
        listed.pop()


def _next_link_resized(body: Body) -> None:
    links = body.get("links")
    if isinstance(links, dict) and isinstance(links.get("next"), str):
        links["next"] += "&limit=1"


def _granted_only(body: Body) -> None:
    data = _data(body)
    if isinstance(data.get("items"), list):
        data["items"] = [i for i in _items(body) if i.get("granted") is not False]


def _envelope_list(parts: list[str]) -> bool:
    return parts[-1] in ENVELOPE_LISTS


BLOCK_5: tuple[Row, ...] = (
    ("series_item_version_number", "SER-023", "an active series list item's content_version is a number", _is("series"), _first_active("content_version", 5)),
    ("playlist_item_status_number", "PLS-001", "an active playlist list item's status is a number", _is("playlists"), _first_active("status", 1)),
    ("series_withdrawn_keeps_version", "STATE-002", "withdrawn series list items keep a content_version", _is("series"), _withdrawn("content_version", "0" * 24)),
    ("playlist_withdrawn_keeps_count", "STATE-010", "withdrawn playlist list items keep a clip_count", _is("playlists"), _withdrawn("clip_count", 3)),
    ("playlist_withdrawn_listed_inactive", "STATE-009", "withdrawn playlists listed with status inactive", _is("playlists"), _withdrawn("status", "inactive")),
    ("catalog_completed_with_placeholders", "CAT-020", "films with placeholder rows say is_completed true", _is("catalog"), _completed_with_placeholders),
    ("catalog_unplanned_with_placeholders", "CAT-051", "a film with placeholder rows has planned_episodes null", _is("catalog"), _unplanned_with_placeholders),
    ("config_deprecations_missing", "CFG-001", "/config without deprecations", _is("config"), lambda b: b.pop("deprecations", None)),
    ("config_protection_short", "CFG-036", "playback.protection leaves out a level tickets carry", _is("config"), _protection_short),
    ("ticket_manifest_elsewhere", "CFG-035", "manifest links on a host /config does not list", _is("playback"), _manifest_elsewhere),
    ("envelope_next_link_resized", "PAGE-011", "links.next asks a page of one item", _envelope_list, _next_link_resized),
    ("playlists_granted_only", "PLS-017", "GET /playlists leaves out playlists not granted", _is("playlists"), _granted_only),
)  # fmt: skip

COVERAGE_FAULT_ROWS_5 = rows_of(BLOCK_5)
BODY_FAULTS_5 = table_of(BLOCK_5)


def mangle_body_5(status: int, body: bytes, faults: FaultSwitch, path: str) -> bytes | None:
    """The 200 JSON body of `path` with this block's switched-on faults applied, or None."""
    return apply_table(BODY_FAULTS_5, status, body, faults, path)
