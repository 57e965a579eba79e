"""Faults of the scope matrix.
Each fault moves one cell of the scope table: a scope that no longer opens an endpoint it should,
or one that opens an endpoint it must not, so the one rule of that cell fails and nothing else;
the clean sandbox is unchanged.

Spec section: Authentication (the scope table, `videos:read` for a key bound to an app,
`webhooks:manage` granting nothing); Endpoints (the scope column).

Hook: `weighed_scopes` (the scope step of auth.py, through faults/authentication.py:
`bend_step`): the scopes the step weighs for one endpoint.
"""

# The fault table holds one row a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Caller
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["FAULTS", "FAULT_ROWS", "weighed_scopes"]

When = Callable[["Caller"], bool]


def _holds(scope: str) -> When:
    return lambda caller: scope in caller.scopes


def _lacks(scope: str) -> When:
    return lambda caller: scope not in caller.scopes


def _bound(caller: Caller) -> bool:
    return caller.app_id is not None


SERIES = ("series", "series_one")
PLAYLISTS = ("playlists", "playlist")
CREATIVES = ("creatives", "creative", "creative_file")
VIDEOS = ("videos", "video")

# name, rule, endpoints (auth.Endpoint.name), which callers, scope gained (+) or lost (-), summary
_ROWS: tuple[tuple[str, str, tuple[str, ...], When, str, str], ...] = (
    ("series_need_playback_scope", "AUTH-022", SERIES, _lacks("playback"), "-metadata:read", "GET /series and /series/{code} refuse a key without playback (metadata:read alone no longer opens them)"),
    ("playlists_need_playback_scope", "AUTH-023", PLAYLISTS, _lacks("playback"), "-metadata:read", "GET /playlists and /playlists/{code} refuse a key without playback: a video partner gets 4030"),
    ("metadata_opens_creatives", "AUTH-024", CREATIVES, _holds("metadata:read"), "+creatives:export", "metadata:read opens the creatives endpoints"),
    ("playback_needs_metadata_scope", "AUTH-025", ("playback",), _lacks("metadata:read"), "-playback", "POST /playback refuses a key without metadata:read (playback alone no longer opens it)"),
    ("playback_opens_series", "AUTH-026", SERIES, _holds("playback"), "+metadata:read", "the playback scope opens GET /series and /series/{code}"),
    ("creative_file_needs_metadata_scope", "AUTH-027", ("creative_file",), _lacks("metadata:read"), "-creatives:export", "GET /creatives/{id}/file refuses a key without metadata:read"),
    ("creatives_opens_catalog", "AUTH-028", ("catalog",), _holds("creatives:export"), "+metadata:read", "the creatives:export scope opens GET /catalog"),
    ("bound_key_refused_on_video", "AUTH-029", ("video",), _bound, "-videos:read", "GET /videos/{id} refuses the videos:read of a key bound to an app"),
    ("metadata_opens_videos", "AUTH-030", VIDEOS, _holds("metadata:read"), "+videos:read", "metadata:read stands in for videos:read on the videos endpoints"),
    ("webhooks_opens_catalog", "AUTH-032", ("catalog",), _holds("webhooks:manage"), "+metadata:read", "the webhooks:manage scope opens GET /catalog"),
)  # fmt: skip
FAULT_ROWS: tuple[FaultRow, ...] = tuple(
    (name, (rule,), summary) for name, rule, _, _, _, summary in _ROWS
)
FAULTS = declare(FAULT_ROWS, area="Authentication (scopes)", seam="step")
_BENDS = {
    FaultName(name): (endpoints, when, change) for name, _, endpoints, when, change, _ in _ROWS
}


def weighed_scopes(faults: FaultSwitch, endpoint: str, caller: Caller) -> frozenset[str]:
    """The caller's scopes as the scope step weighs them for `endpoint`, with these
    switched-on faults applied (each adds or takes one scope for some endpoints and callers)."""
    scopes = caller.scopes
    for name in faults.on & _BENDS.keys():
        endpoints, when, change = _BENDS[name]
        if endpoint in endpoints and when(caller):
            sign, scope = change[0], change[1:]
            scopes = scopes | {scope} if sign == "+" else scopes - {scope}
    return scopes
