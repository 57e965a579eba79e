"""`--requirement` selectors: exact IDs or shell-style patterns (`CAT-*`, `PLAY-01?`).

    select(["CAT-*", "PLAY-012"], known_ids) -> the matching IDs, in file order

A selector that matches no known ID is a usage error (exit 2) with a did-you-mean line, so a
typo never turns into a run that selects nothing and says nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from delivery_conformance.exceptions import UsageError

__all__ = ["matches", "select"]

WILDCARDS = frozenset("*?[")


def matches(requirement_id: str, selectors: Iterable[str]) -> bool:
    return any(fnmatchcase(requirement_id, s.upper()) for s in selectors)


def select(selectors: Sequence[str], known: Iterable[str]) -> list[str]:
    known = list(known)
    chosen: list[str] = []
    for selector in selectors:
        pattern = selector.strip().upper()
        found = [rid for rid in known if fnmatchcase(rid, pattern)]
        if not found:
            raise UsageError(_nothing(selector, pattern, known))
        chosen += [rid for rid in found if rid not in chosen]
    return chosen


def _nothing(selector: str, pattern: str, known: list[str]) -> str:
    if WILDCARDS & set(pattern):
        prefixes = sorted({rid.split("-")[0] for rid in known})
        return (
            f"--requirement {selector!r} matches no requirement ID "
            f"(prefixes: {', '.join(prefixes)}; e.g. 'CAT-*', 'PLAY-01*')"
        )
    close = difflib.get_close_matches(pattern, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"--requirement names an unknown ID {selector!r}{hint}"
