"""Small expectations and parameter lists that every area of the suite uses.

Each helper takes the requirement ID it charges as its first argument, so the ID still stands
in the scenario's own source (where the traceability scan and a reader find it); the helper only
spares the scenario the wording of the finding.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from json_support import body_of

from delivery_conformance.checks import expect
from delivery_conformance.checks.schema import expect_schema
from delivery_conformance.target.client import Response

__all__ = [
    "each_requirement",
    "expect_answered",
    "expect_between",
    "expect_equal",
    "expect_header",
    "expect_object",
    "expect_rows_follow",
    "expect_served_by",
    "expect_without",
]


def each_requirement(table: Iterable[str]) -> list[Any]:
    """One pytest param per requirement ID of a table (its keys), each marked with its ID."""
    return [pytest.param(rid, marks=pytest.mark.requirement(rid)) for rid in table]


def expect_equal(
    requirement_id: str,
    actual: object,
    due: object,
    *,
    what: str = "",
    expected: object = None,
    response: Response | None,
) -> None:
    """`actual == due`; the finding shows `expected` (by default "<what> <due>") against
    `actual`."""
    shown = (f"{what} {due}" if what else due) if expected is None else expected
    expect(requirement_id, actual == due, expected=shown, actual=actual, response=response)


def expect_object(
    requirement_id: str, response: Response, value: object, *, expected: object
) -> None:
    """A 200 whose `value` (the body, or a member of it) is a JSON object."""
    expect(
        requirement_id,
        response.status_code == 200 and isinstance(value, dict),
        expected=expected,
        actual=response.status_code,
        response=response,
    )


def expect_between(
    requirement_id: str,
    value: Any,
    low: Any,
    high: Any = None,
    *,
    expected: str,
    response: Response | None = None,
) -> None:
    """`low <= value`, and `value <= high` when a high bound is given (counts, ranges)."""
    expect(
        requirement_id,
        low <= value and (high is None or value <= high),
        expected=expected,
        actual=value,
        response=response,
    )


def expect_header(
    requirement_id: str, response: Response, name: str, due: object, *, expected: object = None
) -> None:
    """The answer's header `name` reads `due` (absent: None); the finding names the header."""
    shown = f"{name}: {due}" if expected is None else expected
    expect_equal(requirement_id, response.headers.get(name), due, expected=shown, response=response)


def _expect_status_and(
    requirement_id: str, response: Response, status: int, holds: bool, seen: object, expected: str
) -> None:
    """The answer has `status` and `holds`; the finding shows the status and `seen`."""
    expect(
        requirement_id,
        response.status_code == status and holds,
        expected=expected,
        actual=f"{response.status_code} {seen}",
        response=response,
    )


def expect_served_by(
    requirement_id: str, response: Response, version: object, *, expected: str
) -> None:
    """A 200 whose Service-Version names `version`."""
    served = response.headers.get("service-version")
    _expect_status_and(requirement_id, response, 200, served == version, served, expected)


def expect_without(
    requirement_id: str,
    response: Response,
    member: str,
    *,
    status: int | None = None,
    error: str | None = None,
    expected: str,
) -> None:
    """The body has no `member` (and, when given, this status and this flat `error`)."""
    body = body_of(response)
    expect(
        requirement_id,
        member not in body
        and (status is None or response.status_code == status)
        and (error is None or body.get("error") == error),
        expected=expected,
        actual=f"{response.status_code} {body}",
        response=response,
    )


def expect_answered(
    requirement_id: str,
    response: Response,
    status: int,
    member: str,
    code: object,
    *,
    why: str = "",
) -> None:
    """The answer has this status and its body this value in `member` (`error`, `error_code`,
    `code`); the finding shows both as they came. `why` says what the rule awaits."""
    seen = body_of(response).get(member)
    _expect_status_and(
        requirement_id, response, status, seen == code, repr(seen), f"{status} {code}{why}"
    )


def expect_rows_follow(
    requirement_id: str,
    rows: Iterable[Any],
    schema: str,
    fields: tuple[str, ...],
    *,
    where: str,
    response: Response,
) -> None:
    """Every row of a list follows the `fields` of its schema table (`where[i]` names the row)."""
    for index, row in enumerate(rows):
        expect_schema(
            requirement_id, row, schema, fields=fields, where=f"{where}[{index}]", response=response
        )
