"""Named outages: a data store the sandbox pretends it cannot read in time (spec: Errors >
Catalog, Config, Series and playlists, Creatives; Common response headers, `Retry-After`).

An outage is not a fault: the answers are the spec's own 503 rows, switched on through the admin
API (`POST /_sandbox/outages {"area": ..., "on": true}`) so that clients and the suite can meet
them. The check runs after authentication and the rate-limit step (the request is counted, as a
read that timed out would be) and before the endpoint's own logic.
"""

from __future__ import annotations

from delivery_sandbox.faults import error_codes as error_faults
from delivery_sandbox.http import errors
from delivery_sandbox.http.errors import Problem
from delivery_sandbox.http.headers import Exchange, Reply
from delivery_sandbox.state.context import Sandbox

__all__ = ["AREAS", "ENDPOINT_AREAS", "reply_for"]

# area -> what the outage makes unreadable (docs/sandbox.md > Admin API).
AREAS: dict[str, str] = {
    "catalog": "GET /catalog: 503 service_unavailable (catalog not read in time)",
    "config": "GET /config: 503 service_unavailable (configuration not read in time)",
    "series": "GET /series, /series/{code}: 503 5030",
    "playlists": "GET /playlists, /playlists/{code}: 503 5030",
    "creatives": "GET /creatives, /creatives/{id}, /file and share links: 503 5030",
    "licences": "POST /playback: licence and episode checks time out, per-ticket 503 (PLAY-095)",
}

# Endpoint name (auth.Endpoint.name) -> area.
ENDPOINT_AREAS: dict[str, str] = {
    "catalog": "catalog",
    "config": "config",
    "series": "series",
    "series_one": "series",
    "playlists": "playlists",
    "playlist": "playlists",
    "creatives": "creatives",
    "creative": "creatives",
    "creative_file": "creatives",
}


def reply_for(
    sb: Sandbox, endpoint: str, family: errors.Family, exchange: Exchange
) -> Reply | None:
    """The endpoint's retryable 503 (flat `service_unavailable` or envelope 5030, with
    `Retry-After`) while its area is out; None otherwise.

    Requirements: CAT-076, CFG-034, CRE-059, HDR-025, PLS-041, SER-045.
    """
    area = ENDPOINT_AREAS.get(endpoint)
    if area is None or area not in sb.outages:
        return None
    faults, now = sb.faults, sb.now()
    reply = errors.problem(exchange, faults, family, Problem.UNAVAILABLE, now)
    return error_faults.bend_outage(  # the outage step
        reply,
        family is errors.Family.ENVELOPE,
        lambda: errors.envelope(exchange, faults, 500, 5000, errors.MSG_UNAVAILABLE, now),
        faults,
    )
