"""Shared by the property tests: requirement IDs per operation, failures as typed violations."""

from __future__ import annotations

from collections.abc import Iterator

from schemathesis.core.failures import Failure

from delivery_conformance.checks import CHECKS, ConformanceFailure, Violation
from delivery_conformance.properties import ContractViolation, PropertySettings
from delivery_conformance.properties.rules import PARAMS, SUCCESS_REQUIREMENT

__all__ = ["as_conformance_failure", "requirements_for"]


def requirements_for(operation_id: str) -> tuple[str, ...]:
    """Every requirement a generated response of this operation is judged on."""
    ids: list[str] = []
    for check in CHECKS.values():
        ids.extend(check.requirements)
    for rule in PARAMS.get(operation_id, ()):
        ids += [rule.refused_by, rule.accepted_by]
    ids += [SUCCESS_REQUIREMENT[operation_id], "VER-013"]
    return tuple(dict.fromkeys(ids))


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def as_conformance_failure(
    error: BaseException, settings: PropertySettings, nodeid: str
) -> BaseException:
    """Our checks' failures become one `ConformanceFailure` (typed, with requirement IDs);
    Schemathesis's own failures stay as they are, beside it. Both carry the replay command."""
    ours: list[Violation] = []
    theirs: list[Exception] = []
    for leaf in _leaves(error):
        if isinstance(leaf, ContractViolation):
            ours.append(leaf.violation)
        elif isinstance(leaf, Failure | Exception):
            theirs.append(leaf)
    found: list[Exception] = ([ConformanceFailure(ours)] if ours else []) + theirs
    result: BaseException = found[0] if len(found) == 1 else ExceptionGroup("property test", found)
    result.add_note(
        f"Replay: {settings.replay_hint()} .venv/bin/pytest -p no:cacheprovider '{nodeid}'"
    )
    return result
