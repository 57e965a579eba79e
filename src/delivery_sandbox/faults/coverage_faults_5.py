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

from delivery_sandbox.faults import body_tables as bt

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch

__all__ = ["BODY_FAULTS_5", "COVERAGE_FAULT_ROWS_5", "mangle_body_5"]

ENVELOPE_LISTS = ("series", "playlists", "creatives")


def _items(body: bt.Body) -> list[bt.Body]:
    return bt.rows(bt.data(body), "items")


def _withdrawn(field: str, value: object) -> Callable[[bt.Body], None]:
    def change(body: bt.Body) -> None:
        for item in _items(body):
            if item.get("status") == "withdrawn":
                item[field] = value

    return change


def _first_active(field: str, value: object) -> Callable[[bt.Body], None]:
    def change(body: bt.Body) -> None:
        for item in _items(body):
            if item.get("status") == "active":
                item[field] = value
                return

    return change


def _placeholder_films(body: bt.Body) -> set[str]:
    return {str(r.get("film_id")) for r in bt.episodes(body) if r.get("status") == "planned"}


def _completed_with_placeholders(body: bt.Body) -> None:
    planned = _placeholder_films(body)
    for film in bt.films(body):
        if film.get("id") in planned:
            film["is_completed"] = True


def _unplanned_with_placeholders(body: bt.Body) -> None:
    planned = _placeholder_films(body)
    for film in bt.films(body):
        if film.get("id") in planned:
            film["planned_episodes"] = None
            film["is_completed"] = None
            return


def _manifest_elsewhere(body: bt.Body) -> None:
    for ticket in bt.tickets(body):
        link = ticket.get("manifest_url")
        if isinstance(link, str) and "://" in link:
            scheme, rest = link.split("://", 1)
            ticket["manifest_url"] = f"{scheme}://play.elsewhere.test/{rest.partition('/')[2]}"


def _protection_short(body: bt.Body) -> None:
    playback = body.get("playback")
    listed = playback.get("protection") if isinstance(playback, dict) else None
    if isinstance(listed, list) and len(listed) > 1:
        listed.pop()


def _next_link_resized(body: bt.Body) -> None:
    links = body.get("links")
    if isinstance(links, dict) and isinstance(links.get("next"), str):
        links["next"] += "&limit=1"


def _granted_only(body: bt.Body) -> None:
    data = bt.data(body)
    if isinstance(data.get("items"), list):
        data["items"] = [i for i in _items(body) if i.get("granted") is not False]


def _envelope_list(parts: list[str]) -> bool:
    return parts[-1] in ENVELOPE_LISTS


BLOCK_5: tuple[bt.Row, ...] = (
    ("series_item_version_number", "SER-023", "an active series list item's content_version is a number", bt.at("series"), _first_active("content_version", 5)),
    ("playlist_item_status_number", "PLS-001", "an active playlist list item's status is a number", bt.at("playlists"), _first_active("status", 1)),
    ("series_withdrawn_keeps_version", "STATE-002", "withdrawn series list items keep a content_version", bt.at("series"), _withdrawn("content_version", "0" * 24)),
    ("playlist_withdrawn_keeps_count", "STATE-010", "withdrawn playlist list items keep a clip_count", bt.at("playlists"), _withdrawn("clip_count", 3)),
    ("playlist_withdrawn_listed_inactive", "STATE-009", "withdrawn playlists listed with status inactive", bt.at("playlists"), _withdrawn("status", "inactive")),
    ("catalog_completed_with_placeholders", "CAT-020", "films with placeholder rows say is_completed true", bt.at("catalog"), _completed_with_placeholders),
    ("catalog_unplanned_with_placeholders", "CAT-051", "a film with placeholder rows has planned_episodes null", bt.at("catalog"), _unplanned_with_placeholders),
    ("config_deprecations_missing", "CFG-001", "/config without deprecations", bt.at("config"), lambda b: b.pop("deprecations", None)),
    ("config_protection_short", "CFG-036", "playback.protection leaves out a level tickets carry", bt.at("config"), _protection_short),
    ("ticket_manifest_elsewhere", "CFG-035", "manifest links on a host /config does not list", bt.at("playback"), _manifest_elsewhere),
    ("envelope_next_link_resized", "PAGE-011", "links.next asks a page of one item", _envelope_list, _next_link_resized),
    ("playlists_granted_only", "PLS-017", "GET /playlists leaves out playlists not granted", bt.at("playlists"), _granted_only),
)  # fmt: skip

COVERAGE_FAULT_ROWS_5 = bt.rows_of(BLOCK_5)
BODY_FAULTS_5 = bt.table_of(BLOCK_5)


def mangle_body_5(status: int, body: bytes, faults: FaultSwitch, path: str) -> bytes | None:
    """The 200 JSON body of `path` with this block's switched-on faults applied, or None."""
    return bt.apply_table(BODY_FAULTS_5, status, body, faults, path)
