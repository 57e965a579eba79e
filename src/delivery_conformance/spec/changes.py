"""The change catalogue (spec/changes.yaml) as data: each change the spec names, with the
consequences it states, and the name of the generated scenario that judges each consequence.

Read by the generated scenarios (tests/conformance/changes_support.py) and by the kill rate's
proof that every consequence has a fault its scenario catches (killrate/proofs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from delivery_conformance.resources import spec_path
from delivery_conformance.spec.files import parse_yaml

__all__ = ["GENERATED_TEST", "Change", "Consequence", "load_changes"]

# The generated scenario: one test per consequence, its parameter id `Change.test_id` gives.
GENERATED_TEST = "test_changes.py::test_a_change_has_each_consequence_the_spec_states"


@dataclass(frozen=True)
class Consequence:
    requirement: str
    view: str
    effect: str  # moves | stays | gone | matches
    field: str = ""
    other: str = ""  # matches: "view.field" the value must equal, read at the same time

    @property
    def label(self) -> str:
        what = f"{self.field} {self.effect}" if self.field else self.effect
        return f"{self.view} {what}".replace(" ", "_")


@dataclass(frozen=True)
class Change:
    name: str
    section: str
    admin: str = ""
    body: dict[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    bound: float = 30.0
    landed: dict[str, dict[str, Any]] = field(default_factory=dict)
    consequences: tuple[Consequence, ...] = ()
    scenarios: tuple[str, ...] = ()  # requirement IDs whose hand-written scenarios make it

    def test_id(self, consequence: Consequence) -> str:
        """The parameter id of the generated test of one consequence."""
        return f"{self.name}:{consequence.requirement}:{consequence.label}"


def load_changes() -> list[Change]:
    rows = parse_yaml(spec_path("changes.yaml").read_text(encoding="utf-8"))["changes"]
    return [
        Change(
            name=row["name"],
            section=row["section"],
            admin=row.get("admin", ""),
            body=row.get("body") or {},
            needs=tuple(row.get("needs") or ()),
            bound=float(row.get("bound", 30)),
            landed=row.get("landed") or {},
            consequences=tuple(Consequence(**c) for c in row.get("consequences") or ()),
            scenarios=tuple(row.get("scenarios") or ()),
        )
        for row in rows
    ]
