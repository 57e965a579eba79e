"""The fault record and the switch: what every fault module and every seam names, and nothing
of the fault modules themselves, so the modules that define faults import it and `registry.py`
imports them (no circle).

`Fault` is one row of the catalogue (`registry.FAULTS`), declared once where the fault is
defined (`declare`): its name, the requirement IDs it breaks, a summary, the spec area it
breaks, the seam it acts at, what it breaks beside its own IDs (each with the reason), and
whether its proof waits out a bound. The seams (`SEAMS`): `reply` bends a finished answer
(faults/reply.py), `request` the request as it comes in, `step` is a hook at one step of the
pipeline or one decision of a handler (an endpoint's steps: faults/steps.py; authentication's:
faults/authentication.py), `admin` bends an admin action (faults/freshness.py: `admin_action`).

`FaultSwitch` is the set of faults switched on in one sandbox: code asks
`sb.faults.enabled(FaultName.<name>)`, and a module keeps what it derives from the switched-on
set in `memo`, so no module caches anything keyed by a sandbox. A name the switch does not know
is refused with `UnknownFault`; the known names are the members of `FaultName`, which
`registry.py` keeps in step with its table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from delivery_sandbox.faults.names import FaultName

__all__ = ["SEAMS", "Collateral", "Fault", "FaultSwitch", "UnknownFault", "declare"]

_KNOWN = frozenset(str(name) for name in FaultName)
SEAMS = frozenset({"reply", "request", "step", "admin"})
Collateral = tuple[tuple[str, str], ...]  # (requirement ID, why it breaks too)


@dataclass(frozen=True)
class Fault:
    name: str
    requirements: tuple[str, ...]
    summary: str
    # Caught by a load campaign only (tests/harness/test_load_smoke.py proves it); the kill rate
    # of the conformance suite leaves it out.
    load_only: bool = False
    # Requirements this fault legitimately breaks too, each with the reason: (ID, why). The
    # kill rate's blame precision counts a failure of these as exact, of any other ID as not.
    collateral: tuple[tuple[str, str], ...] = ()
    # Proven only by waiting out a freshness bound (faults/freshness.py): `make test` runs its
    # targeted kill rate in processes of their own beside the main one
    # (tests/harness/killrate_support.py).
    slow: bool = False
    # The spec area it breaks and the seam it acts at (SEAMS); not part of the served catalogue.
    area: str = ""
    seam: str = ""


def declare(
    rows: Iterable[tuple[str, tuple[str, ...], str]],
    *,
    area: str,
    seam: str,
    seams: Mapping[str, str] | None = None,
    slow: Iterable[str] = (),
    collateral: Mapping[str, Collateral] | None = None,
    load_only: bool = False,
) -> tuple[Fault, ...]:
    """The records of a table of rows (name, IDs, summary) that break one spec `area`: each
    acts at `seam` (or the one `seams` names for it), waits out a bound when named in `slow`,
    and breaks its `collateral` beside its own IDs. A name in `seams`, `slow` or `collateral`
    that is no row of the table is refused, so a typo cannot drop a declaration."""
    table = tuple(rows)
    names = {name for name, _, _ in table}
    slow_names, extra, own = frozenset(slow), dict(collateral or {}), dict(seams or {})
    stray = (slow_names | extra.keys() | own.keys()) - names
    unknown_seams = ({seam} | set(own.values())) - SEAMS
    if stray or unknown_seams:
        raise ValueError(f"not a row here: {sorted(stray)}; no such seam: {sorted(unknown_seams)}")
    return tuple(
        Fault(
            name,
            ids,
            summary,
            load_only=load_only,
            collateral=extra.get(name, ()),
            slow=name in slow_names,
            area=area,
            seam=own.get(name, seam),
        )
        for name, ids, summary in table
    )


class UnknownFault(ValueError):
    """A fault name that is not in the catalogue."""


class FaultSwitch:
    """The faults switched on in one sandbox, and what modules derive from them."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._on: frozenset[FaultName] = frozenset()
        self._memo: dict[str, Any] = {}
        self.only(names)

    @staticmethod
    def _checked(names: Iterable[str]) -> frozenset[FaultName]:
        wanted = frozenset(names)
        unknown = sorted(wanted - _KNOWN)
        if unknown:
            raise UnknownFault(", ".join(unknown))
        return frozenset(FaultName(name) for name in wanted)

    def enabled(self, fault: FaultName) -> bool:
        return fault in self._on

    def _set(self, on: frozenset[FaultName]) -> None:
        if on != self._on:
            self._on = on
            self._memo.clear()

    def only(self, names: Iterable[str]) -> None:
        self._set(self._checked(names))

    def switch(self, enable: Iterable[str] = (), disable: Iterable[str] = ()) -> None:
        on, off = self._checked(enable), self._checked(disable)
        self._set((self._on | on) - off)

    @property
    def on(self) -> frozenset[FaultName]:
        return self._on

    def memo(self, key: str, build: Callable[[frozenset[FaultName]], Any]) -> Any:
        """`build(on)` once per switch state: derived policies live as long as the state."""
        if key not in self._memo:
            self._memo[key] = build(self._on)
        return self._memo[key]
