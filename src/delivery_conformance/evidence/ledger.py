"""Which requirements a test actually judged, whatever its outcome.

A test stops at its first failed assertion, but the checks it ran before (and every check of one
`assert_conforms` call) judged their requirements. The plugin opens a ledger per test; `expect`
and `run_checks` write to it; the verdict then counts a requirement judged in a failed test as
exercised (passed unless a violation names it), so one defect never hides the others.

    ledger.begin(); ...; ledger.checked() -> frozenset of IDs

A broken `should` never stops the assertions after it: the plugin names the should-level IDs
once (`soften`), and a violation of one of them (or one of severity warning) is kept here
(`defer`) instead of raised; the plugin adds what was deferred to the test's findings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from delivery_conformance.evidence.violation import Violation

__all__ = ["begin", "checked", "defer", "deferred", "is_soft", "record", "soften"]

_checked: set[str] = set()
_deferred: list[Violation] = []
_soft: set[str] = set()


def begin() -> None:
    _checked.clear()
    _deferred.clear()


def soften(requirement_ids: Iterable[str]) -> None:
    """The requirements whose violations are kept, not raised (the `should` ones)."""
    _soft.clear()
    _soft.update(requirement_ids)


def is_soft(requirement_id: str) -> bool:
    return requirement_id in _soft


def defer(found: Violation) -> None:
    _deferred.append(found)


def deferred() -> tuple[Violation, ...]:
    return tuple(_deferred)


def record(requirement_ids: Iterable[str]) -> None:
    _checked.update(requirement_ids)


def checked() -> frozenset[str]:
    return frozenset(_checked)
