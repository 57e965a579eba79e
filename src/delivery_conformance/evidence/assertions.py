"""How a scenario asserts a requirement: `expect` records the requirement as judged in the
ledger (evidence/ledger.py) and raises a `ConformanceFailure` when it is not met; `raise_hard`
raises the violations of binding rules and defers the others to the ledger.

The values they raise are evidence/violation.py's; this module sits above both, so neither
imports the other back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from delivery_conformance.evidence import ledger
from delivery_conformance.evidence.violation import (
    ConformanceFailure,
    Severity,
    Violation,
    violation,
)

if TYPE_CHECKING:
    from delivery_conformance.target.client import Response

__all__ = ["expect", "expect_status", "raise_hard"]


def raise_hard(violations: Iterable[Violation]) -> None:
    """Raise `ConformanceFailure` with the violations of binding rules; keep the others.

    A violation of a `should` requirement (see `ledger.soften`) or of severity warning is
    deferred to the ledger, so the assertions after it still run and judge their own rules.
    """
    hard: list[Violation] = []
    for found in violations:
        if found.severity is Severity.WARNING or ledger.is_soft(found.requirement_id):
            ledger.defer(found)
        else:
            hard.append(found)
    if hard:
        raise ConformanceFailure(hard)


def expect(
    requirement_id: str,
    condition: bool,
    *,
    expected: object,
    actual: object,
    response: Response | None = None,
    title: str | None = None,
) -> None:
    """Raise `ConformanceFailure` for `requirement_id` unless `condition` holds (a `should`
    requirement's violation is deferred instead: see `raise_hard`)."""
    ledger.record((requirement_id,))
    if not condition:
        title = title or f"{requirement_id} not met"
        found = violation(
            requirement_id, title, expected=expected, actual=actual, response=response
        )
        raise_hard([found])


def expect_status(requirement_id: str, response: Response, status: int, *, expected: str) -> None:
    """`expect` that the answer has exactly this status (the status itself shown when not)."""
    expect(
        requirement_id,
        response.status_code == status,
        expected=expected,
        actual=response.status_code,
        response=response,
    )
