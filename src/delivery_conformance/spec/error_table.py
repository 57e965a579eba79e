"""Every documented error answer of the Delivery API v1, one row per operation.

Written by hand from the spec (spec: Errors, every sub-table: Every path, Catalog, Series and
playlists, Playback whole request and per ticket, Config, Creatives, Open videos), and expanded so
that each row names one operation. It is deliberately not derived from ``spec/openapi.yaml``: a
self-test compares the two, so a slip on either side shows.

A row says: this operation may answer this status with this code, in this body format. ``code``
is a string for flat bodies, an integer for envelope bodies, ``None`` when the spec gives no code.
Where the code lives (``error_code``, the whole ``error`` string, or the envelope ``code``) follows
from the code itself (see ``ErrorRow.code_field``).

Checks and property tests use the table to judge negative cases: an answer whose
(status, code) pair is not in ``rows_for(operation)`` is undocumented for that operation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from delivery_conformance.spec.operations import Operation

__all__ = [
    "ALL_OPERATIONS",
    "ERROR_TABLE",
    "STRING_CODES_IN_ERROR",
    "UNKNOWN_PATH",
    "CodeField",
    "ErrorFormat",
    "ErrorRow",
    "Scope",
    "codes_for",
    "rows_for",
    "statuses_for",
]


class ErrorFormat(StrEnum):
    """Body format of an error answer (spec: Errors > Formats)."""

    FLAT = "flat"
    ENVELOPE = "envelope"
    EMPTY = "empty"


class CodeField(StrEnum):
    """Where the machine code of an error answer is carried."""

    ERROR_CODE = "error_code"  # flat body, `error_code`
    ERROR = "error"  # flat body without `error_code`: the whole `error` string is the code
    ENVELOPE_CODE = "code"  # envelope body, four-digit `code`
    NONE = "none"  # no code at all (status only)


class Scope(StrEnum):
    """Playback distinguishes refusals of the whole request from refusals of one ticket."""

    REQUEST = "request"
    TICKET = "ticket"  # top level of a single request, or one `items[]` entry of a batch


# The operation ids of spec/openapi.yaml (spec: Endpoints), in the order of the enum.
ALL_OPERATIONS: tuple[str, ...] = tuple(Operation)
Op = Operation

# Pseudo operation: a path under /api/delivery/v1/ that is no endpoint (spec: Errors > Every path).
UNKNOWN_PATH = "*unknown-path*"

# Codes that some 4xx answers carry in `error` (compared as the whole string), with no
# `error_code` (spec: Errors > Formats).
STRING_CODES_IN_ERROR: frozenset[str] = frozenset(
    {"org_suspended", "app_not_registered", "collection_not_found", "video_not_found"}
)


@dataclass(frozen=True)
class ErrorRow:
    """One documented error answer of one operation."""

    operation_id: str
    status: int
    code: str | int | None
    format: ErrorFormat
    when: str
    scope: Scope = Scope.REQUEST
    # True: the spec says Retry-After is sent; False: the spec says it is not; None: silent.
    retry_after: bool | None = None

    @property
    def code_field(self) -> CodeField:
        if self.code is None:
            return CodeField.NONE
        if isinstance(self.code, int):
            return CodeField.ENVELOPE_CODE
        if self.code in STRING_CODES_IN_ERROR:
            return CodeField.ERROR
        return CodeField.ERROR_CODE


FLAT = ErrorFormat.FLAT
ENVELOPE = ErrorFormat.ENVELOPE
TICKET = Scope.TICKET


def _row(
    ops: Iterable[str],
    status: int,
    code: str | int | None,
    fmt: ErrorFormat,
    when: str,
    *,
    scope: Scope = Scope.REQUEST,
    retry_after: bool | None = None,
) -> tuple[ErrorRow, ...]:
    return tuple(ErrorRow(op, status, code, fmt, when, scope, retry_after) for op in ops)


_PB = (Op.POST_PLAYBACK,)
_CAT = (Op.GET_CATALOG,)
_CFG = (Op.GET_CONFIG,)
_PLAYLISTS = (Op.LIST_PLAYLISTS, Op.GET_PLAYLIST)
_SERIES_PLAYLISTS = (Op.LIST_SERIES, Op.GET_SERIES, Op.LIST_PLAYLISTS, Op.GET_PLAYLIST)
_CREATIVES = (Op.LIST_CREATIVES, Op.GET_CREATIVE, Op.GET_CREATIVE_FILE)
_SINGLE_AND_FILE = (Op.GET_CREATIVE, Op.GET_CREATIVE_FILE)
_VIDEOS = (Op.LIST_VIDEOS, Op.GET_VIDEO)

# spec: Errors > Every path
_EVERY_PATH = (
    ErrorRow(UNKNOWN_PATH, 404, "not_found", FLAT, "path under the API root that is no endpoint"),
    *_row(ALL_OPERATIONS, 405, None, ErrorFormat.EMPTY, "other method on this path"),
)

# spec: Errors > Catalog
_CATALOG = (
    *_row(_CAT, 400, "invalid_request", FLAT, "bad limit (not 1..200) or foreign cursor"),
    *_row(_CAT, 400, "unsupported_version", FLAT, "version header or pin unknown/retired"),
    *_row(_CAT, 401, None, FLAT, "no Authorization, or key unknown or revoked"),
    *_row(_CAT, 403, None, FLAT, "key without metadata:read"),
    *_row(_CAT, 403, "org_suspended", FLAT, "organisation suspended"),
    *_row(_CAT, 429, "rate_limited", FLAT, "catalog counter spent", retry_after=True),
    *_row(
        _CAT,
        503,
        "service_unavailable",
        FLAT,
        "key or catalog not checked/read in time",
        retry_after=True,
    ),
)

# spec: Errors > Series and playlists (envelope; 400 and 429 stay flat)
_SERIES_AND_PLAYLISTS = (
    *_row(_SERIES_PLAYLISTS, 400, "unsupported_version", FLAT, "version unknown or retired"),
    *_row(_SERIES_PLAYLISTS, 401, 4010, ENVELOPE, "no Authorization header"),
    *_row(_SERIES_PLAYLISTS, 401, 4011, ENVELOPE, "key unknown or revoked"),
    *_row(_SERIES_PLAYLISTS, 403, 4030, ENVELOPE, "key without metadata:read"),
    *_row(_SERIES_PLAYLISTS, 403, 4031, ENVELOPE, "organisation suspended"),
    *_row(_PLAYLISTS, 403, 4032, ENVELOPE, "film organisation: use series"),
    *_row([Op.LIST_PLAYLISTS], 404, 4040, ENVELOPE, "category unknown"),
    *_row([Op.GET_SERIES], 404, 4040, ENVELOPE, "series unknown or not streamable by the caller"),
    *_row([Op.GET_PLAYLIST], 404, 4040, ENVELOPE, "playlist unknown or out of the library"),
    *_row([Op.LIST_SERIES], 422, 4220, ENVELOPE, "bad limit, updated_since or cursor"),
    *_row([Op.LIST_PLAYLISTS], 422, 4220, ENVELOPE, "bad limit, updated_since, cursor or category"),
    *_row(_SERIES_PLAYLISTS, 429, "rate_limited", FLAT, "catalog counter spent", retry_after=True),
    *_row(_SERIES_PLAYLISTS, 503, 5030, ENVELOPE, "temporarily unavailable"),
    *_row(_SERIES_PLAYLISTS, 503, 5031, ENVELOPE, "key not verified in time", retry_after=True),
)

# spec: Errors > Playback (whole request, then per ticket)
_PLAYBACK = (
    *_row(_PB, 400, None, FLAT, "body not JSON, or no episode_id / film_ref+episode_no"),
    *_row(_PB, 400, "invalid_request", FLAT, "lone device value, or malformed batch"),
    *_row(_PB, 400, "invalid_device_info", FLAT, "device value empty-looking or short"),
    *_row(_PB, 400, "unsupported_version", FLAT, "version unknown or retired"),
    *_row(_PB, 401, None, FLAT, "no Authorization, or key unknown or revoked"),
    *_row(_PB, 403, None, FLAT, "key without playback"),
    *_row(
        _PB,
        429,
        "rate_limited",
        FLAT,
        "no ticket admitted; reason prefetch_shed when prefetch paused",
        retry_after=True,
    ),
    *_row(_PB, 500, None, FLAT, "unexpected failure; body carries request_id"),
    *_row(_PB, 503, "service_unavailable", FLAT, "key not verified in time", retry_after=True),
    *_row(_PB, 403, "not_entitled", FLAT, "no streaming right now", scope=TICKET),
    *_row(_PB, 404, "not_ready", FLAT, "episode unknown/unpublished/unready", scope=TICKET),
    *_row(_PB, 409, "sdk_required", FLAT, "encrypted, no device values", scope=TICKET),
    *_row(_PB, 429, "rate_limited", FLAT, "item not admitted", scope=TICKET),
    *_row(_PB, 502, None, FLAT, "stream not prepared or token not signed", scope=TICKET),
    *_row(
        _PB,
        503,
        "not_ready",
        FLAT,
        "no playable version now",
        scope=TICKET,
        retry_after=False,
    ),
    *_row(
        _PB,
        503,
        "service_unavailable",
        FLAT,
        "provider slow, ticket not issuable now, or licence not checked in time",
        scope=TICKET,
    ),
)

# spec: Errors > Config
_CONFIG = (
    *_row(_CFG, 400, "unsupported_version", FLAT, "version unknown or retired"),
    *_row(_CFG, 401, None, FLAT, "no Authorization, or key unknown or revoked"),
    *_row(_CFG, 403, "org_suspended", FLAT, "organisation suspended"),
    *_row(_CFG, 429, "rate_limited", FLAT, "config counter spent", retry_after=True),
    *_row(_CFG, 503, "service_unavailable", FLAT, "key or configuration not read in time"),
)

# spec: Errors > Creatives list, single read and file (envelope; 400 and 429 stay flat)
_CREATIVES_ROWS = (
    *_row(_CREATIVES, 400, "unsupported_version", FLAT, "version unknown or retired"),
    *_row(_CREATIVES, 401, 4010, ENVELOPE, "no Authorization header"),
    *_row(_CREATIVES, 401, 4011, ENVELOPE, "key unknown or revoked"),
    *_row(_CREATIVES, 403, 4030, ENVELOPE, "key without creatives:export"),
    *_row(_CREATIVES, 403, 4031, ENVELOPE, "organisation suspended"),
    *_row([Op.GET_CREATIVE_FILE], 403, 4032, ENVELOPE, "rights_ended: export rights over"),
    *_row(_SINGLE_AND_FILE, 404, 4040, ENVELOPE, "no such creative, or id not a UUID"),
    *_row([Op.GET_CREATIVE_FILE], 409, 4090, ENVELOPE, "final_not_ready: file still rendering"),
    *_row([Op.LIST_CREATIVES], 422, 4220, ENVELOPE, "limit not an integer 1..100 (empty is 0)"),
    *_row([Op.LIST_CREATIVES], 422, 4221, ENVELOPE, "updated_since not epoch seconds"),
    *_row([Op.LIST_CREATIVES], 422, 4222, ENVELOPE, "cursor not valid"),
    *_row(_CREATIVES, 429, "rate_limited", FLAT, "creatives counter spent", retry_after=True),
    *_row(_CREATIVES, 503, 5030, ENVELOPE, "feed or creative data unavailable for now"),
    *_row(_CREATIVES, 503, 5031, ENVELOPE, "key not verified in time", retry_after=True),
    *_row([Op.GET_CREATIVE_FILE], 503, 5032, ENVELOPE, "download link not prepared"),
)

# spec: Errors > Open videos (flat)
_VIDEOS_ROWS = (
    *_row([Op.LIST_VIDEOS], 400, None, FLAT, "foreign cursor, or limit not an integer 1..200"),
    *_row([Op.GET_VIDEO], 400, None, FLAT, "id not a UUID"),
    *_row(_VIDEOS, 400, "unsupported_version", FLAT, "version unknown or retired"),
    *_row(_VIDEOS, 401, None, FLAT, "no Authorization, or key unknown or revoked"),
    *_row(_VIDEOS, 403, None, FLAT, "key without videos:read"),
    *_row(_VIDEOS, 403, "app_not_registered", FLAT, "key bound to no app"),
    *_row(_VIDEOS, 403, "org_suspended", FLAT, "organisation suspended"),
    *_row([Op.LIST_VIDEOS], 404, "collection_not_found", FLAT, "collection unknown or not granted"),
    *_row([Op.GET_VIDEO], 404, "video_not_found", FLAT, "video unknown, not granted or unplayable"),
    *_row(_VIDEOS, 429, "rate_limited", FLAT, "videos or video counter spent", retry_after=True),
    *_row(_VIDEOS, 500, None, FLAT, "could not be read; retry with backoff"),
    *_row(_VIDEOS, 503, "service_unavailable", FLAT, "key not verified in time", retry_after=True),
)

ERROR_TABLE: tuple[ErrorRow, ...] = (
    *_EVERY_PATH,
    *_CATALOG,
    *_SERIES_AND_PLAYLISTS,
    *_PLAYBACK,
    *_CONFIG,
    *_CREATIVES_ROWS,
    *_VIDEOS_ROWS,
)


def rows_for(operation_id: str) -> tuple[ErrorRow, ...]:
    """Every documented error row of one operation (or of ``UNKNOWN_PATH``)."""
    return tuple(row for row in ERROR_TABLE if row.operation_id == operation_id)


def statuses_for(operation_id: str) -> frozenset[int]:
    """The error statuses one operation may answer."""
    return frozenset(row.status for row in rows_for(operation_id))


def codes_for(operation_id: str, status: int) -> frozenset[str | int | None]:
    """The codes documented for one (operation, status); ``None`` stands for "no code"."""
    return frozenset(row.code for row in rows_for(operation_id) if row.status == status)
