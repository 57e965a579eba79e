"""The registry of named checks, and the way a test asserts a response against them.

A check is a plain function `(response) -> list[Violation]` registered with the requirement IDs
it proves. The response carries its `RequestContext` (operation, role, requested version, pin),
so a check needs nothing else.

    @register("cache_control", "HDR-014", "HDR-015")
    def cache_control(response): ...

    assert_conforms(response)                      # every cross-cutting check (COMMON)
    assert_conforms(response, CHECKS["no_cors"])   # only these
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from delivery_conformance.evidence import ledger
from delivery_conformance.evidence.assertions import raise_hard
from delivery_conformance.evidence.violation import Violation

if TYPE_CHECKING:
    from delivery_conformance.target.client import Response

__all__ = ["CHECKS", "Check", "CheckFunction", "assert_conforms", "register", "run_checks"]

CheckFunction = Callable[["Response"], list[Violation]]


@dataclass(frozen=True)
class Check:
    name: str
    requirements: tuple[str, ...]
    function: CheckFunction

    def __call__(self, response: Response) -> list[Violation]:
        return self.function(response)


CHECKS: dict[str, Check] = {}


def register(name: str, *requirement_ids: str) -> Callable[[CheckFunction], Check]:
    if not requirement_ids:
        raise ValueError(f"check {name!r} must name the requirements it proves")

    def decorate(function: CheckFunction) -> Check:
        if name in CHECKS:
            raise ValueError(f"check {name!r} registered twice")
        check = Check(name, tuple(requirement_ids), function)
        CHECKS[name] = check
        return check

    return decorate


def run_checks(response: Response, checks: Iterable[Check] | None = None) -> list[Violation]:
    chosen = CHECKS.values() if checks is None else checks
    found: list[Violation] = []
    for check in chosen:
        found.extend(check(response))
        ledger.record(check.requirements)
    return found


def assert_conforms(response: Response, *checks: Check) -> None:
    """Raise `ConformanceFailure` with every violation of `checks` (default: all registered);
    violations of `should` requirements are deferred, not raised (`raise_hard`)."""
    raise_hard(run_checks(response, checks or None))
