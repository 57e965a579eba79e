"""Which requirements a test actually judged, whatever its outcome.

A test stops at its first failed assertion, but the checks it ran before (and every check of one
`assert_conforms` call) judged their requirements. The plugin opens a ledger per test; `expect`
and `run_checks` write to it; the verdict then counts a requirement judged in a failed test as
exercised (passed unless a violation names it), so one defect never hides the others.

    ledger.begin(); ...; ledger.checked() -> frozenset of IDs
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["begin", "checked", "record"]

_checked: set[str] = set()


def begin() -> None:
    _checked.clear()


def record(requirement_ids: Iterable[str]) -> None:
    _checked.update(requirement_ids)


def checked() -> frozenset[str]:
    return frozenset(_checked)
