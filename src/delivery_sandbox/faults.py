"""Deliberate deviations from the spec, one rule each (ARCHITECTURE: Faults).

`FAULTS` is the single table: name -> requirement IDs it breaks and a one-line summary.
The harness learns it from `GET /_sandbox/faults`. Code asks `sandbox.faults.enabled(name)`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["FAULTS", "Fault", "FaultSwitch", "UnknownFault"]


@dataclass(frozen=True)
class Fault:
    name: str
    requirements: tuple[str, ...]
    summary: str


class UnknownFault(ValueError):
    """A fault name that is not in `FAULTS`."""


_TABLE: tuple[Fault, ...] = ()

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _TABLE}


def register(*faults: Fault) -> None:
    """Add rows to the table (used by modules that own their faults)."""
    for fault in faults:
        if fault.name in FAULTS:
            raise ValueError(f"duplicate fault {fault.name}")
        FAULTS[fault.name] = fault


class FaultSwitch:
    """The faults switched on in one sandbox."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._on: frozenset[str] = frozenset()
        self.only(names)

    @staticmethod
    def _checked(names: Iterable[str]) -> frozenset[str]:
        wanted = frozenset(names)
        unknown = sorted(wanted - FAULTS.keys())
        if unknown:
            raise UnknownFault(", ".join(unknown))
        return wanted

    def enabled(self, name: str) -> bool:
        return name in self._on

    def only(self, names: Iterable[str]) -> None:
        self._on = self._checked(names)

    def switch(self, enable: Iterable[str] = (), disable: Iterable[str] = ()) -> None:
        on, off = self._checked(enable), self._checked(disable)
        self._on = (self._on | on) - off

    @property
    def on(self) -> frozenset[str]:
        return self._on

    def catalogue(self) -> list[dict[str, object]]:
        return [
            {
                "name": f.name,
                "requirements": list(f.requirements),
                "summary": f.summary,
                "enabled": f.name in self._on,
            }
            for f in FAULTS.values()
        ]
