"""Verdict words and exit codes: the one table every command, report and document reads.

    Verdict.PARTIAL.word == "PARTIAL"; Verdict.PARTIAL.exit_code == 4

Precedence when several apply to one run (first wins): interrupted, violations found (or, with
`--strict`, warnings), harness error, timed out, partial, conforming with warnings, conforming.
A run that found violations says so even when it also stopped early: the finding is certain.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["EXIT_USAGE", "Verdict", "markdown_table"]


class Verdict(Enum):
    CONFORMING = ("CONFORMING", 0, "every selected requirement was exercised and none failed")
    WARNINGS = (
        "CONFORMING WITH WARNINGS",
        0,
        "no unlisted `must` failed; a `should` was not met or an --expected-failures entry "
        "held (exit 1 with --strict, listed ones excepted)",
    )
    VIOLATIONS = (
        "VIOLATIONS FOUND",
        1,
        "at least one requirement failed, a finding no rule names, or an expired "
        "--expected-failures entry",
    )
    USAGE = ("USAGE ERROR", 2, "bad arguments, a broken profile, a selection that matches nothing")
    HARNESS = (
        "HARNESS ERROR",
        3,
        "the target is unreachable, too slow or answers garbage, or the tool itself failed",
    )
    PARTIAL = (
        "PARTIAL",
        4,
        "no violation, but some selected requirements were not exercised (missing role, fixture, "
        "admin API or test organisation); --min-coverage accepts a known partial profile",
    )
    PARTIAL_ACCEPTED = (
        "PARTIAL, ACCEPTED",
        0,
        "as PARTIAL, with the exercised share at or above --min-coverage PCT",
    )
    TIMED_OUT = (
        "TIMED OUT",
        5,
        "the run reached --max-duration; the report covers what ran before the stop",
    )
    INTERRUPTED = ("INTERRUPTED", 130, "SIGINT or SIGTERM; the report covers what ran before it")

    def __init__(self, word: str, exit_code: int, meaning: str) -> None:
        self.word = word
        self.exit_code = exit_code
        self.meaning = meaning


EXIT_USAGE = Verdict.USAGE.exit_code


def markdown_table() -> str:
    """The README's exit-code table, generated from this one (a self-test keeps them equal)."""
    rows = ["| Code | Verdict | Meaning |", "|---|---|---|"]
    rows += [f"| {v.exit_code} | {v.word} | {v.meaning} |" for v in Verdict]
    return "\n".join(rows)
