"""Faults of the withdrawal of series, playlists and Categories. Each fault bends one rule of a withdrawal (how long a withdrawn
item stays listed, its `updated_at`, what withdraws it, what a withdrawn Category does to its
playlists and as a filter), so the one rule that names it fails; the clean sandbox is unchanged.

Spec section: States and transitions (the Series, Playlist and Category rows).

Hooks: `series_state` (through faults/series_playlists.py: `series_state`, where
endpoints/series.py reads a series' state for the list and the detail); at the step seam
(faults/steps.py: `bend`), `playlist_withdrawn_at` and `playlist_item` (endpoints/playlists.py,
where a list item is built and kept), `category_usable` (endpoints/playlists.py, the Category
filter).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Record, Server, Store
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["FAULTS", "FAULT_ROWS", "category_usable", "playlist_item",
           "playlist_withdrawn_at", "series_state"]  # fmt: skip

FAULT_ROWS: tuple[FaultRow, ...] = fault_rows("""
series_taken_down_listed_forever     | STATE-006 | a series taken down stays listed as withdrawn past 30 days
series_withdrawal_keeps_updated_at   | STATE-007 | withdrawing a series leaves its updated_at as it was
series_licence_change_ignored        | STATE-008 | a licence ended or suspended after the seed leaves its series active
playlist_withdrawal_keeps_updated_at | STATE-014 | withdrawing a playlist leaves its updated_at as it was
category_withdrawal_not_inherited    | STATE-015 | playlists of a withdrawn Category are listed as active
withdrawn_category_filter_404        | STATE-016 | a withdrawn Category answers 404 as a filter at once
""")
FAULTS = declare(
    FAULT_ROWS,
    area="States and transitions",
    seam="step",
    # Proven only once a Freshness bound has passed (30 s, 60 s).
    slow=(
        "playlist_withdrawal_keeps_updated_at", "series_taken_down_listed_forever",
        "series_licence_change_ignored", "series_withdrawal_keeps_updated_at",
    ),
)  # fmt: skip


SeriesState = tuple[str, int, int | None]  # status, updated_at, withdrawn_at


def series_state(faults: FaultSwitch, store: Store, org_id: str, film: Record, now: float,
                 state: SeriesState | None) -> SeriesState | None:  # fmt: skip
    """`state` (`Store.series_state`) with the switched-on series faults applied."""
    taken_down = store.series_takedowns.get(film.code or "")
    if (
        state is None
        and taken_down is not None
        and faults.enabled(FaultName.series_taken_down_listed_forever)
    ):
        state = store.series_state(org_id, film, taken_down)  # as on the day of the take-down
    if state is None or state[0] != "withdrawn":
        return state
    if (
        faults.enabled(FaultName.series_licence_change_ignored)
        and taken_down is None
        and (f"{org_id}/{film.id}" in store.changed_licences())
    ):
        return ("active", film.updated_at, None)
    if faults.enabled(FaultName.series_withdrawal_keeps_updated_at):
        return (state[0], film.updated_at, state[2])
    return state


def playlist_withdrawn_at(sb: Server, withdrawn_at: int | None, *, playlist: Record
                          ) -> int | None:  # fmt: skip
    """`withdrawn_at` (`Store.playlist_withdrawn_at`), blind to the Category's withdrawal under
    its fault."""
    if not sb.faults.enabled(FaultName.category_withdrawal_not_inherited):
        return withdrawn_at
    marks = (playlist.withdrawn_at, sb.store.playlist_withdrawals.get(playlist.code))
    return min((m for m in marks if m is not None), default=None)


def playlist_item(sb: Server, item: dict[str, Any], *, playlist: Record) -> dict[str, Any]:
    """A playlist list item, its `updated_at` left as before the withdrawal under its fault."""
    if item["status"] == "withdrawn" and sb.faults.enabled(
        FaultName.playlist_withdrawal_keeps_updated_at
    ):
        item["updated_at"] = playlist.updated_at
    return item


def category_usable(sb: Server, usable: bool, *, slug: str) -> bool:
    """`usable` (`Store.category_usable`), false for every withdrawn Category under its fault."""
    category = sb.store.categories.get(slug)
    if (
        category is not None
        and category.withdrawn_at is not None
        and sb.faults.enabled(FaultName.withdrawn_category_filter_404)
    ):
        return False
    return usable
