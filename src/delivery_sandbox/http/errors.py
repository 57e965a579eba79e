"""The two error formats and the shared error table (spec: Errors > Formats).

Flat: `error`, `error_code` (when there is one), extra fields, `request_id`.
Envelope: `code` (four digits, the first three the HTTP status), `message`, `server_time`,
`request_id`, and no `data`.
One helper per format; the messages are named constants; `PROBLEMS` maps the errors shared by
every endpoint to both formats. Every error body goes through `_error`, the one seam where the
faults of the error formats bend a body as it is built (faults/error_formats.py:
`bend_error_body`).
"""

from __future__ import annotations

from enum import Enum, StrEnum, auto
from typing import TYPE_CHECKING, Any

import orjson

from delivery_sandbox.faults.error_formats import bend_error_body
from delivery_sandbox.http.headers import Exchange, Reply

if TYPE_CHECKING:
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["PROBLEMS", "Family", "Problem", "envelope", "flat", "problem"]

# Messages (for logs only; clients never parse them).
MSG_NOT_FOUND = "no such resource under /api/delivery/v1/"
MSG_AUTH_MISSING = "missing Authorization header: send 'Bearer <API key>'"
MSG_KEY_INVALID = "API key unknown or revoked"
MSG_SCOPE = "the key lacks the scope this endpoint needs"
MSG_UNVERIFIABLE = "the key could not be verified in time; retry"
MSG_UNAVAILABLE = "temporarily unavailable; retry with backoff"
MSG_RATE_LIMITED = "rate limit reached for this counter; retry after Retry-After"
MSG_UNSUPPORTED_VERSION = "unknown or retired API version"
MSG_INVALID_REQUEST = "invalid query parameter"
MSG_FILM_ORG = "the organisation licenses films; use the series endpoints"
MSG_NO_CATEGORY = "no such category"
MSG_NO_SERIES = "no such series"
MSG_NO_PLAYLIST = "no such playlist"
MSG_NO_CREATIVE = "no such creative"
MSG_LIMIT = "limit out of range"
MSG_UPDATED_SINCE = "updated_since must be epoch seconds"
MSG_CURSOR = "cursor not issued by this endpoint"
MSG_CATEGORY = "category must be a slug"
MSG_RIGHTS_ENDED = "rights_ended"
MSG_FINAL_NOT_READY = "final_not_ready"
MSG_LINK_FAILED = "download link could not be prepared; retry"
MSG_READ_FAILED = "could not be read; retry with backoff"
ORG_SUSPENDED = "org_suspended"
APP_NOT_REGISTERED = "app_not_registered"
COLLECTION_NOT_FOUND = "collection_not_found"
VIDEO_NOT_FOUND = "video_not_found"

RETRY_AFTER_UNAVAILABLE = b"1"


class Family(Enum):
    """The error format of an endpoint family."""

    FLAT = "flat"
    ENVELOPE = "envelope"


class Problem(StrEnum):
    """Errors every endpoint can answer before its own logic runs."""

    AUTH_MISSING = auto()
    KEY_INVALID = auto()
    SCOPE_MISSING = auto()
    ORG_SUSPENDED = auto()
    KEY_UNVERIFIABLE = auto()
    UNAVAILABLE = auto()


# Problem -> (status, error, error_code) in the flat format.
FLAT_PROBLEMS: dict[Problem, tuple[int, str, str | None]] = {
    Problem.AUTH_MISSING: (401, MSG_AUTH_MISSING, None),
    Problem.KEY_INVALID: (401, MSG_KEY_INVALID, None),
    Problem.SCOPE_MISSING: (403, MSG_SCOPE, None),
    Problem.ORG_SUSPENDED: (403, ORG_SUSPENDED, None),
    Problem.KEY_UNVERIFIABLE: (503, MSG_UNVERIFIABLE, "service_unavailable"),
    Problem.UNAVAILABLE: (503, MSG_UNAVAILABLE, "service_unavailable"),
}

# Problem -> (status, code, message) in the envelope format.
ENVELOPE_PROBLEMS: dict[Problem, tuple[int, int, str]] = {
    Problem.AUTH_MISSING: (401, 4010, MSG_AUTH_MISSING),
    Problem.KEY_INVALID: (401, 4011, MSG_KEY_INVALID),
    Problem.SCOPE_MISSING: (403, 4030, MSG_SCOPE),
    Problem.ORG_SUSPENDED: (403, 4031, ORG_SUSPENDED),
    Problem.KEY_UNVERIFIABLE: (503, 5031, MSG_UNVERIFIABLE),
    Problem.UNAVAILABLE: (503, 5030, MSG_UNAVAILABLE),
}

PROBLEMS = {Family.FLAT: FLAT_PROBLEMS, Family.ENVELOPE: ENVELOPE_PROBLEMS}

RETRYABLE = {Problem.KEY_UNVERIFIABLE, Problem.UNAVAILABLE}


def flat(
    exchange: Exchange,
    faults: FaultSwitch,
    status: int,
    error: str,
    error_code: str | None = None,
    headers: list[tuple[bytes, bytes]] | None = None,
    **extra: Any,
) -> Reply:
    """A flat error body (spec: Errors > Formats, flat).

    Requirements: ERR-001, ERR-002, ERR-003, ERR-004, ERR-005, HDR-013, VID-031.
    """
    body: dict[str, Any] = {"error": error}
    if error_code is not None:
        body["error_code"] = error_code
    body.update(extra)
    body["request_id"] = exchange.request_id
    return _error(faults, "flat", status, body, headers)


def envelope(
    exchange: Exchange,
    faults: FaultSwitch,
    status: int,
    code: int,
    message: str,
    now: float,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> Reply:
    """An envelope error body (spec: Errors > Formats, envelope).

    Requirements: CRE-062, ERR-008, ERR-009, HDR-013, PLS-043, SER-047.
    """
    body: dict[str, Any] = {
        "code": code,
        "message": message,
        "server_time": int(now),
        "request_id": exchange.request_id,
    }
    return _error(faults, "envelope", status, body, headers)


def _error(
    faults: FaultSwitch,
    form: str,
    status: int,
    body: dict[str, Any],
    headers: list[tuple[bytes, bytes]] | None,
) -> Reply:
    """The error answer of a built body: the error formats' faults bend it here, once."""
    bent = bend_error_body(faults, form, body, headers if headers is not None else [])
    return Reply(status, orjson.dumps(body), bent)


def problem(
    exchange: Exchange, faults: FaultSwitch, family: Family, which: Problem, now: float
) -> Reply:
    """One of the shared errors in the endpoint's own format.

    Requirements: AUTH-021, CRE-059, CRE-060, HDR-025, PLS-041, PLS-042, SER-045, SER-046.
    """
    headers = [(b"retry-after", RETRY_AFTER_UNAVAILABLE)] if which in RETRYABLE else []
    if family is Family.ENVELOPE:
        status, code, message = ENVELOPE_PROBLEMS[which]
        return envelope(exchange, faults, status, code, message, now, headers)
    status, error, error_code = FLAT_PROBLEMS[which]
    return flat(exchange, faults, status, error, error_code, headers)


def rate_limited(
    exchange: Exchange, faults: FaultSwitch, retry_after: int, limit: int, window: int
) -> Reply:
    """429, always flat, with Retry-After and X-RateLimit-* (spec: Limits, behaviour 1).

    Requirements: CRE-058, ERR-006, HDR-024, HDR-026, HDR-027, HDR-028, HDR-029, HDR-030, PLS-040,
    SER-044.

    Requirements: LIM-029, LIM-030, LIM-031, LIM-032.
    """
    headers = [
        (b"retry-after", str(retry_after).encode()),
        (b"x-ratelimit-limit", str(limit).encode()),
        (b"x-ratelimit-window", str(window).encode()),
    ]
    return flat(exchange, faults, 429, MSG_RATE_LIMITED, "rate_limited", headers)


def unsupported_version(
    exchange: Exchange,
    faults: FaultSwitch,
    supported: list[str],
    latest: str,
    upgrade_to: str | None = None,
) -> Reply:
    """400 `unsupported_version`, flat on every endpoint (spec: Versioning 2).

    Requirements: ERR-007, VER-007, VER-008, VER-009.
    """
    extra: dict[str, Any] = {"supported_versions": supported, "latest_version": latest}
    if upgrade_to is not None:
        extra["upgrade_to"] = upgrade_to
    return flat(exchange, faults, 400, MSG_UNSUPPORTED_VERSION, "unsupported_version", **extra)
