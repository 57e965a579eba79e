"""What the spec says a generated request must get: the judge of the property tests (pure).

Schemathesis generates requests, valid and invalid; "any 4xx" is not good enough as a verdict.
`expected_answer` reads the request that was sent (query, path, body) and returns, from the spec's
error tables, the set of answers it may get (spec: Errors > Catalog; Series and playlists;
Creatives list, single read and file; Open videos; Playback, whole request), with the
requirement IDs that say so:

- an input the spec calls invalid must get exactly its documented refusal (bad `limit` on the
  creatives list: 422 code 4220; on the catalog: 400 `invalid_request`; on open videos: 400 with
  no code; bad `updated_since` on creatives: 4221; foreign cursor on creatives: 4222 ...);
- a valid input must not get a validation refusal nor a status the tables do not list for the
  operation (a 500 on `GET /creatives?limit=37` is a broken contract, not "a server error").

Answers that can come whatever the input (429 `rate_limited`, 503 transient codes, documented
"not found" answers for ids that exist or not) are always allowed. Where our reading of a value
is ambiguous (a `+5` limit, an upper-case UUID, a repeated parameter) the rule stays silent.
The value rules follow the decisions in spec/requirements.yaml (CRE-029, SER-042, PLS-039).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from delivery_conformance.spec.endpoints import SUCCESS_REQUIREMENT
from delivery_conformance.spec.error_table import codes_for, rows_for
from delivery_conformance.spec.operations import Operation

__all__ = [
    "SUCCESS_REQUIREMENT",
    "SUCCESS_STATUSES",
    "Expectation",
    "Reading",
    "expected_answer",
    "read_limit",
    "read_slug",
    "read_updated_since",
    "read_uuid",
]

Answer = tuple[int, str | int | None]


class Reading(Enum):
    VALID = "valid"
    INVALID = "invalid"
    UNCLEAR = "unclear"  # our reading of the spec does not decide: no verdict on this value


# spec: Endpoints (each operation's success answer); GET /creatives/{id}/file answers 302, or
# 200 with `redirect=0`.
SUCCESS_STATUSES: Mapping[str, frozenset[int]] = {
    Operation.GET_CREATIVE_FILE: frozenset({200, 302}),
}

_DIGITS = re.compile(r"[0-9]+")
_LENIENT_INT = re.compile(r"\s*[+-]?\s*[0-9]+\s*")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_UUID_ANY_CASE = re.compile(_UUID.pattern, re.IGNORECASE)
# Decision (PLS-039): the spec gives no slug grammar. Lower-case letters and digits with single
# inner hyphens, up to 50 characters, is a slug by every reading; a value with a character a URL
# path segment must escape (RFC 3986: anything but letters, digits and `-._~`) is one by none.
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SLUG_LENGTH = 50
_URL_SAFE = re.compile(r"[A-Za-z0-9._~-]+")


def read_limit(value: str, high: int) -> Reading:
    """A whole number from 1 to `high`; an empty value is no number (CAT-067, CRE-055)."""
    if _DIGITS.fullmatch(value):
        return Reading.VALID if 1 <= int(value) <= high else Reading.INVALID
    if _LENIENT_INT.fullmatch(value):
        digits = re.sub(r"[^0-9-]", "", value)
        number = int(digits) if digits not in ("", "-") else 0
        return Reading.INVALID if number < 1 or number > high else Reading.UNCLEAR
    return Reading.INVALID


def read_updated_since(value: str, bounded: bool = True) -> Reading:
    """Epoch seconds: 1 to 11 decimal digits, nothing else (decisions CRE-029, SER-042). Only
    GET /creatives writes the 11-digit bound (`bounded`); on series and playlists 12 digits or
    more may get either answer."""
    if not _DIGITS.fullmatch(value):
        return Reading.INVALID
    if len(value) <= 11:
        return Reading.VALID
    return Reading.INVALID if bounded else Reading.UNCLEAR


def read_slug(value: str) -> Reading:
    """A slug (decision PLS-039); URL-safe values outside the plain form, and an empty value
    (which a server may take for an omitted filter), get no verdict."""
    if len(value) <= _SLUG_LENGTH and _SLUG.fullmatch(value):
        return Reading.VALID
    return Reading.UNCLEAR if value == "" or _URL_SAFE.fullmatch(value) else Reading.INVALID


def read_uuid(value: str) -> Reading:
    if _UUID.fullmatch(value):
        return Reading.VALID
    return Reading.UNCLEAR if _UUID_ANY_CASE.fullmatch(value) else Reading.INVALID


@dataclass(frozen=True)
class ParamRule:
    """One query or path parameter: how to read it, the refusal when invalid, the IDs."""

    name: str
    kind: str  # limit:<high> | updated_since[:11] | cursor | slug | uuid
    refusal: Answer
    refused_by: str  # requirement: an invalid value gets `refusal`
    accepted_by: str  # requirement: a valid value does not get a validation refusal


def _limit(op_high: int, refusal: Answer, refused: str, accepted: str) -> ParamRule:
    return ParamRule("limit", f"limit:{op_high}", refusal, refused, accepted)


_BAD_CATALOG: Answer = (400, "invalid_request")
_VIDEO_400: Answer = (400, None)

# spec: Errors (validation rows), one entry per parameter the spec constrains.
PARAMS: Mapping[str, tuple[ParamRule, ...]] = {
    Operation.GET_CATALOG: (
        _limit(200, _BAD_CATALOG, "CAT-067", "CAT-060"),
        ParamRule("cursor", "cursor", _BAD_CATALOG, "CAT-068", "CAT-060"),
    ),
    Operation.LIST_CREATIVES: (
        _limit(100, (422, 4220), "CRE-054", "CRE-030"),
        ParamRule("updated_since", "updated_since:11", (422, 4221), "CRE-056", "CRE-029"),
        ParamRule("cursor", "cursor", (422, 4222), "CRE-057", "CRE-033"),
    ),
    Operation.LIST_SERIES: (
        _limit(100, (422, 4220), "SER-041", "SER-029"),
        ParamRule("updated_since", "updated_since", (422, 4220), "SER-042", "SER-042"),
        ParamRule("cursor", "cursor", (422, 4220), "SER-043", "SER-031"),
    ),
    Operation.LIST_PLAYLISTS: (
        _limit(100, (422, 4220), "PLS-036", "PLS-021"),
        ParamRule("updated_since", "updated_since", (422, 4220), "PLS-037", "PLS-037"),
        ParamRule("cursor", "cursor", (422, 4220), "PLS-038", "PLS-023"),
        ParamRule("category", "slug", (422, 4220), "PLS-039", "PLS-019"),
    ),
    Operation.LIST_VIDEOS: (
        _limit(200, _VIDEO_400, "VID-019", "VID-008"),
        ParamRule("cursor", "cursor", _VIDEO_400, "VID-018", "VID-009"),
    ),
    Operation.GET_CREATIVE: (ParamRule("id", "uuid", (404, 4040), "CRE-051", "CRE-034"),),
    Operation.GET_CREATIVE_FILE: (ParamRule("id", "uuid", (404, 4040), "CRE-052", "CRE-039"),),
    Operation.GET_VIDEO: (ParamRule("id", "uuid", _VIDEO_400, "VID-020", "VID-014"),),
}

# SUCCESS_REQUIREMENT (spec/endpoints.py): the requirement a valid request of each operation
# breaks when it gets an undocumented answer.


@dataclass(frozen=True)
class Expectation:
    """The answers a request may get, and the requirements that decide it."""

    allowed: frozenset[Answer]
    requirements: tuple[str, ...]
    refused: bool  # True: the request is invalid and must be refused as listed
    forbidden: frozenset[Answer] = frozenset()

    def admits(self, status: int, code: str | int | None) -> bool:
        """Refused input: exactly a listed answer. Valid input: a listed status, with any code
        but a validation refusal (new error codes are additive, spec: Versioning item 3)."""
        if status < 400:
            code = None
        if self.refused:
            return (status, code) in self.allowed
        statuses = {answer[0] for answer in self.allowed}
        return status in statuses and (status, code) not in self.forbidden


def _read(
    rule: ParamRule, value: str, issued_cursors: frozenset[str], unclear_cursors: frozenset[str]
) -> Reading:
    if rule.kind.startswith("limit:"):
        return read_limit(value, int(rule.kind.split(":")[1]))
    if rule.kind.startswith("updated_since"):
        return read_updated_since(value, bounded=rule.kind.endswith(":11"))
    if rule.kind == "slug":
        return read_slug(value)
    if rule.kind == "uuid":
        return read_uuid(value)
    if value in issued_cursors:
        return Reading.VALID
    return Reading.UNCLEAR if value in unclear_cursors else Reading.INVALID


def _always_allowed(operation_id: str, validation: frozenset[Answer]) -> frozenset[Answer]:
    """Every documented answer of the operation except its validation refusals."""
    answers: set[Answer] = set()
    for row in rows_for(operation_id):
        if (row.status, row.code) in validation or row.status in (401, 405):
            continue
        if row.status == 403 and row.code in (None, 4030, 4031, "org_suspended"):
            continue  # key and organisation are good: these refusals are not due
        if row.status == 400 and row.code == "unsupported_version":
            continue
        answers.add((row.status, row.code))
    for status in SUCCESS_STATUSES.get(operation_id, frozenset({200})):
        answers.add((status, None))
    return frozenset(answers)


def _playback(body: Any) -> Expectation | None:
    """spec: Errors > Playback (whole request): no episode named at all is a 400 with no code."""
    if isinstance(body, dict) and any(
        name in body for name in ("episode_id", "film_ref", "episode_no", "episodes", "next")
    ):
        return None
    allowed = {(400, None), (429, "rate_limited"), (503, "service_unavailable")}
    if isinstance(body, dict) and "next" in body:
        allowed.add((400, "invalid_request"))
    rule = "PLAY-069" if isinstance(body, dict) else "PLAY-068"
    return Expectation(frozenset(allowed), (rule,), refused=True)


def expected_answer(
    operation_id: str,
    query: Mapping[str, Sequence[str]],
    path_params: Mapping[str, str],
    *,
    body: Any = None,
    issued_cursors: frozenset[str] = frozenset(),
    unclear_cursors: frozenset[str] = frozenset(),
) -> Expectation | None:
    """The answers due to a request sent with a good key and no version header (None: no rule).

    `query` is the query as sent (every value of every name); `issued_cursors` are the cursors
    this operation has handed out so far in the run for the same filters (a cursor it never
    issued is foreign); `unclear_cursors` it issued for other filters (no verdict on those).
    """
    if operation_id == Operation.POST_PLAYBACK:
        return _playback(body)
    rules = PARAMS.get(operation_id, ())
    # A 404 refusal (a non-UUID creative id) is also the answer to a valid id naming nothing,
    # so it never tells a refused value from an accepted one.
    validation = frozenset(rule.refusal for rule in rules if rule.refusal[0] != 404)
    refusals: set[Answer] = set()
    refused_by: list[str] = []
    accepted_by: list[str] = []
    for rule in rules:
        values = [path_params[rule.name]] if rule.name in path_params else query.get(rule.name)
        if values is None:
            continue
        if len(values) != 1:
            return None  # a repeated parameter: the spec does not say which one counts
        reading = _read(rule, values[0], issued_cursors, unclear_cursors)
        if reading is Reading.UNCLEAR:
            return None
        if reading is Reading.INVALID:
            refusals.add(rule.refusal)
            refused_by.append(rule.refused_by)
        else:
            accepted_by.append(rule.accepted_by)
    transient = {(429, "rate_limited")} | {
        (row.status, row.code) for row in rows_for(operation_id) if row.status == 503
    }
    if refusals:
        # The spec does not order the checks of two parameters: a well-formed filter naming
        # nothing (404) may be answered before a bad cursor or limit is looked at.
        allowed = refusals | transient
        if any(name in query for name in ("category", "collection")) and not any(
            rule.name in ("category", "collection") and rule.refused_by in refused_by
            for rule in rules
        ):
            allowed |= {(r.status, r.code) for r in rows_for(operation_id) if r.status == 404}
        return Expectation(frozenset(allowed), tuple(refused_by), refused=True)
    requirements = tuple(dict.fromkeys(accepted_by)) or (SUCCESS_REQUIREMENT[operation_id],)
    return Expectation(
        _always_allowed(operation_id, validation), requirements, refused=False, forbidden=validation
    )


def documented(operation_id: str, status: int) -> bool:
    """Whether the spec lists this status for the operation at all (codes may be added)."""
    success = SUCCESS_STATUSES.get(operation_id, frozenset({200}))
    return status in success or bool(codes_for(operation_id, status))
