"""The endpoint table: operation name, method, path, rate counter and error format of each endpoint.

spec: Endpoints (method, path, scope); Limits (counter per endpoint); Errors > Formats (flat for
catalog, playback, config and videos; envelope for creatives, series and playlists). One table,
read by the client (pacing), the checks (which error format is due) and the scenarios.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from delivery_conformance.spec.error_table import ErrorFormat
from delivery_conformance.spec.operations import Operation

__all__ = [
    "API_PREFIX",
    "ENDPOINTS",
    "SUCCESS_REQUIREMENT",
    "SUCCESS_SHAPE",
    "Endpoint",
    "ErrorFormat",
    "match_endpoint",
    "match_path",
]

API_PREFIX = "/api/delivery/v1/"  # every path of the API starts here


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
        return _path_pattern(self.template)


@functools.cache
def _path_pattern(template: str) -> re.Pattern[str]:
    body = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(template))
    return re.compile(re.escape(API_PREFIX.rstrip("/")) + body)


FLAT, ENVELOPE = ErrorFormat.FLAT, ErrorFormat.ENVELOPE
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(Operation.GET_CATALOG, "GET", "/catalog", "catalog", FLAT, "metadata:read"),
    Endpoint(Operation.GET_CONFIG, "GET", "/config", "config", FLAT, None),
    Endpoint(
        Operation.LIST_CREATIVES, "GET", "/creatives", "creatives", ENVELOPE, "creatives:export"
    ),
    Endpoint(
        Operation.GET_CREATIVE, "GET", "/creatives/{id}", "creatives", ENVELOPE, "creatives:export"
    ),
    Endpoint(
        Operation.GET_CREATIVE_FILE,
        "GET",
        "/creatives/{id}/file",
        "creatives",
        ENVELOPE,
        "creatives:export",
    ),
    Endpoint(Operation.POST_PLAYBACK, "POST", "/playback", "playback", FLAT, "playback"),
    Endpoint(Operation.LIST_PLAYLISTS, "GET", "/playlists", "catalog", ENVELOPE, "metadata:read"),
    Endpoint(
        Operation.GET_PLAYLIST, "GET", "/playlists/{code}", "catalog", ENVELOPE, "metadata:read"
    ),
    Endpoint(Operation.LIST_SERIES, "GET", "/series", "catalog", ENVELOPE, "metadata:read"),
    Endpoint(Operation.GET_SERIES, "GET", "/series/{code}", "catalog", ENVELOPE, "metadata:read"),
    Endpoint(Operation.LIST_VIDEOS, "GET", "/videos", "videos", FLAT, "videos:read"),
    Endpoint(Operation.GET_VIDEO, "GET", "/videos/{id}", "video", FLAT, "videos:read"),
)

# The requirement that states each operation's success answer (status and body shape): a 2xx
# answer whose body cannot be read breaks this one rule, whichever scenario read it.
SUCCESS_REQUIREMENT: Mapping[str, str] = {
    Operation.GET_CATALOG: "CAT-059",
    Operation.GET_CONFIG: "CFG-001",
    Operation.LIST_CREATIVES: "CRE-032",
    Operation.GET_CREATIVE: "CRE-034",
    Operation.GET_CREATIVE_FILE: "CRE-039",
    Operation.POST_PLAYBACK: "PLAY-069",
    Operation.LIST_SERIES: "SER-030",
    Operation.GET_SERIES: "SER-032",
    Operation.LIST_PLAYLISTS: "PLS-023",
    Operation.GET_PLAYLIST: "PLS-026",
    Operation.LIST_VIDEOS: "VID-009",
    Operation.GET_VIDEO: "VID-014",
}
# The requirement that gives each operation's success body its shape: the same, but for POST
# /playback, whose body shape is PLAY-001 while an answer outside its documented ones breaks
# PLAY-069.
SUCCESS_SHAPE: Mapping[str, str] = {**SUCCESS_REQUIREMENT, Operation.POST_PLAYBACK: "PLAY-001"}


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
