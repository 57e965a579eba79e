"""The endpoint table: operation name, method, path, rate counter and error format of each endpoint.

spec: Endpoints (method, path, scope); Limits (counter per endpoint); Errors > Formats (flat for
catalog, playback, config and videos; envelope for creatives, series and playlists). One table,
read by the client (pacing), the checks (which error format is due) and the scenarios.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "API_PREFIX","ENDPOINTS", "Endpoint", "ErrorFormat", "match_endpoint", "match_path"]

API_PREFIX = "/api/delivery/v1/"  # every path of the API starts here


class ErrorFormat(Enum):
    FLAT = "flat"
    ENVELOPE = "envelope"


@dataclass(frozen=True)
class Endpoint:
    operation: str
    method: str
    template: str
    counter: str
    error_format: ErrorFormat
    scope: str | None

    @property
    def pattern(self) -> re.Pattern[str]:
        body = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(self.template))
        return re.compile(re.escape(API_PREFIX.rstrip("/")) + body)


FLAT, ENVELOPE = ErrorFormat.FLAT, ErrorFormat.ENVELOPE
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("getCatalog", "GET", "/catalog", "catalog", FLAT, "metadata:read"),
    Endpoint("getConfig", "GET", "/config", "config", FLAT, None),
    Endpoint("listCreatives", "GET", "/creatives", "creatives", ENVELOPE, "creatives:export"),
    Endpoint("getCreative", "GET", "/creatives/{id}", "creatives", ENVELOPE, "creatives:export"),
    Endpoint(
        "getCreativeFile", "GET", "/creatives/{id}/file", "creatives", ENVELOPE, "creatives:export"
    ),
    Endpoint("postPlayback", "POST", "/playback", "playback", FLAT, "playback"),
    Endpoint("listPlaylists", "GET", "/playlists", "catalog", ENVELOPE, "metadata:read"),
    Endpoint("getPlaylist", "GET", "/playlists/{code}", "catalog", ENVELOPE, "metadata:read"),
    Endpoint("listSeries", "GET", "/series", "catalog", ENVELOPE, "metadata:read"),
    Endpoint("getSeries", "GET", "/series/{code}", "catalog", ENVELOPE, "metadata:read"),
    Endpoint("listVideos", "GET", "/videos", "videos", FLAT, "videos:read"),
    Endpoint("getVideo", "GET", "/videos/{id}", "video", FLAT, "videos:read"),
)


def match_path(path: str) -> Endpoint | None:
    """The endpoint whose path matches, whatever the method (None: not a real path)."""
    path = path.split("?", 1)[0]
    for endpoint in ENDPOINTS:
        if endpoint.pattern.fullmatch(path):
            return endpoint
    return None


def match_endpoint(method: str, path: str) -> Endpoint | None:
    """The endpoint for this method and path (None: unknown path or wrong method)."""
    endpoint = match_path(path)
    if endpoint is None or endpoint.method != method.upper():
        return None
    return endpoint
