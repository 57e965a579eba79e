"""Typed failures: a `Violation` names the requirement it breaks, what was due and what came.

Scenarios and checks never fail with a bare string. A check returns violations; a test raises
them with `ConformanceFailure` (an `AssertionError`, so pytest shows it as a failed test and the
plugin reads the typed violations back from the exception object, never from its text).
`evidence/assertions.py` raises them (or defers a `should` rule's) and records what was judged:

    expect("PLAY-012", body["protection"] == "private-encrypted",
           expected="protection private-encrypted", actual=body["protection"], response=response)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from delivery_conformance.evidence.exchange import Exchange

if TYPE_CHECKING:
    from delivery_conformance.target.client import Response

__all__ = ["ConformanceFailure", "Severity", "Violation", "violation"]


class Severity(Enum):
    ERROR = "error"  # a MUST is broken
    WARNING = "warning"  # a SHOULD is broken


# The fields a violation stores as given, in the order its dictionary lists them.
_TEXT_FIELDS = ("requirement_id", "title", "expected", "actual")


@dataclass(frozen=True)
class Violation:
    requirement_id: str
    title: str
    expected: str
    actual: str
    exchange: Exchange | None = None
    severity: Severity = Severity.ERROR

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _TEXT_FIELDS} | {
            "severity": self.severity.value,
            "exchange": self.exchange.to_dict() if self.exchange else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Violation:
        exchange = data.get("exchange")
        return cls(
            **{name: data[name] for name in _TEXT_FIELDS},
            exchange=Exchange.from_dict(exchange) if exchange else None,
            severity=Severity(data.get("severity", "error")),
        )

    def line(self) -> str:
        where = f" [{self.exchange.summary()}]" if self.exchange else ""
        head = f"{self.requirement_id} {self.title}"
        return f"{head}: expected {self.expected}; got {self.actual}{where}"


class ConformanceFailure(AssertionError):
    """Raised in a test when the target broke the contract; carries the typed violations."""

    def __init__(self, violations: Iterable[Violation]) -> None:
        self.violations = tuple(violations)
        super().__init__("\n".join(v.line() for v in self.violations))


def violation(
    requirement_id: str,
    title: str,
    *,
    expected: object,
    actual: object,
    response: Response | None = None,
    severity: Severity = Severity.ERROR,
) -> Violation:
    return Violation(
        requirement_id=requirement_id,
        title=title,
        expected=str(expected),
        actual=actual if isinstance(actual, str) else repr(actual),
        exchange=response.exchange if response is not None else None,
        severity=severity,
    )
