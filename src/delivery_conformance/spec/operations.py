"""The operation ids of spec/openapi.yaml (spec: Endpoints), defined once for the harness.

The endpoint table (`endpoints.py`), the error table (`error_table.py`), the checks, the client
and the property rules all name operations through `Operation`; a StrEnum, so a member equals the
id as it appears in the OpenAPI document and in reports.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Operation"]


class Operation(StrEnum):
    GET_CATALOG = "getCatalog"
    GET_CONFIG = "getConfig"
    LIST_CREATIVES = "listCreatives"
    GET_CREATIVE = "getCreative"
    GET_CREATIVE_FILE = "getCreativeFile"
    POST_PLAYBACK = "postPlayback"
    LIST_PLAYLISTS = "listPlaylists"
    GET_PLAYLIST = "getPlaylist"
    LIST_SERIES = "listSeries"
    GET_SERIES = "getSeries"
    LIST_VIDEOS = "listVideos"
    GET_VIDEO = "getVideo"
