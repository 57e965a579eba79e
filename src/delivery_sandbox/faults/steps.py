"""The step seam of the endpoints: one function, `bend`, and the table of its named points.

A handler computes the honest value of a step (a row as built, a decision, a page size, the
refusal it would give) and hands it to `bend` under the point's name, with what the step's
hook needs beside it as keywords: `row = bend(sb, "catalog.film_row", row)`. With no fault
switched on, `bend` returns the value at once; otherwise the point's hook, kept in the module
of the spec area it breaks, returns the value as the switched-on faults bend it. Every hook
has the one shape `hook(sb, value, **context) -> value`. A point that is not in the table is
a KeyError (tests/sandbox/test_fault_seams.py finds every point the serving code names in it).

The pipeline's other seams: authentication's steps (faults/authentication.py: `bend_step`),
the request in, a refusal and the reply out (control/front_faults.py), the cores' policies
(faults/limits.py: `bend_policies`), an admin action (faults/freshness.py: `admin_action`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from delivery_sandbox.faults import catalog, config, creatives, limits, playback, withdrawal
from delivery_sandbox.faults import series_playlists as series

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Server

__all__ = ["POINTS", "bend"]

V = TypeVar("V")
Hook = Callable[..., Any]  # (sb, value, **context) -> value

POINTS: dict[str, Hook] = {
    # GET /catalog (endpoints/catalog.py)
    "catalog.films": catalog.films,  # the licensed films listed, and their order
    "catalog.film_row": catalog.film_row,  # one film row as built
    "catalog.episode_rows": catalog.episode_rows,  # one film's episode rows, in order
    "catalog.bad_cursor_refused": catalog.bad_cursor_refused,  # a cursor not issued is refused
    "catalog.page_size": catalog.page_size,  # the films of one page
    "catalog.next_cursor": catalog.next_cursor,  # the page's next_cursor
    # GET /config (endpoints/config.py)
    "config.body": config.bend_body,  # the /config object as built
    # GET /creatives, /creatives/{id}, /creatives/{id}/file (endpoints/creatives.py)
    "creatives.record": creatives.bend_record,  # one creative record as built
    "creatives.limit_query": creatives.limit_read,  # the raw `limit` and its default
    "creatives.limit_fails": creatives.limit_fails,  # a valid limit answered 500
    "creatives.since": creatives.since,  # the parsed `updated_since`
    "creatives.listed": creatives.listed,  # the creatives a page is cut from
    "creatives.miss": creatives.miss,  # (status, code) of an id not found
    "creatives.file_as_json": creatives.file_as_json,  # the file answered as JSON, not a 302
    # the share link of a creative (endpoints/share.py)
    "share.link": creatives.share_link,  # (revoked, rights open, download link ttl)
    # GET /videos, /videos/{id} (endpoints/videos.py)
    "videos.bad_limit": playback.bad_limit,  # the answer to a bad `limit`
    "videos.list": playback.video_list,  # (the rows walked, the page size)
    "videos.listed": playback.videos_listed,  # the rows of a page shown
    "videos.id": playback.video_id,  # the id the single read looks up
    "videos.served": playback.video_served,  # the single read serves the video
    # GET /series, /series/{code} (endpoints/series.py)
    "series.state": series.series_state,  # (status, updated_at, withdrawn_at) of a series
    "series.listed": series.series_listed,  # a series with a state is listed
    "series.since": series.series_since,  # the parsed `updated_since`
    "series.list_query": partial(
        series.bend_list, endpoint="series"
    ),  # (limit, since, cursor position, category)
    "series.detail_served": series.detail_served,  # the detail serves the series
    # GET /playlists, /playlists/{code} (endpoints/playlists.py)
    "playlists.film_org_refused": series.film_org_refused,  # a films organisation refused
    "playlists.query": series.playlists_query,  # the query's refusal (None: none)
    "playlists.category_usable": withdrawal.category_usable,  # the Category filter usable
    "playlists.list_query": partial(
        series.bend_list, endpoint="playlists"
    ),  # (limit, since, cursor position, category)
    "playlists.withdrawn_at": withdrawal.playlist_withdrawn_at,  # a playlist's withdrawal
    "playlists.item": withdrawal.playlist_item,  # one list item as built
    "playlists.full_page_cursor": series.full_page_cursor,  # a full last page has a cursor
    "playlists.detail": series.bend_playlist,  # a detail before its content_version
    # POST /playback (endpoints/playback.py)
    "playback.org_suspended": playback.org_suspended,  # the organisation seen suspended
    "playback.simulation_rules": catalog.bent_rules,  # how a simulated answer is counted
    "playback.gate": limits.gate,  # the refusal before the body (None: none)
    "playback.malformed_cost": limits.malformed_cost,  # tickets a malformed body costs
    "playback.refused_cost": limits.refused_cost,  # tickets the refused items cost
    "playback.reuse_cost": limits.reuse_cost,  # tickets a reused ticket costs
    "playback.ticket_decision": limits.ticket_decision,  # one ticket's admission
    "playback.items": playback.bend_items,  # the (item, answer) pairs rendered
}


def bend(sb: Server, point: str, value: V, /, **context: Any) -> V:
    """`value` at the step `point`, as the switched-on faults bend it (at once with none on)."""
    if not sb.faults.on:
        return value
    bent: V = POINTS[point](sb, value, **context)
    return bent
