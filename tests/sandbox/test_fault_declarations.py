"""Each fault is declared once where it is defined (faults/switch.py: `declare`): its record
names the spec area it breaks and the seam it acts at, and a declaration that names a row the
table does not hold, or a seam that does not exist, is refused. The enum of fault names
(faults/names.py) is written from the table, never by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from delivery_sandbox.faults import names
from delivery_sandbox.faults.registry import FAULTS, names_source
from delivery_sandbox.faults.switch import SEAMS, declare

ROWS = (("one", ("GEN-001",), "first"), ("two", ("GEN-002",), "second"))


def test_every_fault_names_its_area_and_a_known_seam() -> None:
    assert all(fault.area for fault in FAULTS.values())
    assert {fault.seam for fault in FAULTS.values()} <= SEAMS


def test_the_enum_of_names_is_what_the_table_writes() -> None:
    written = Path(names.__file__).read_text(encoding="utf-8")
    assert written == names_source(), "rewrite it: python -m delivery_sandbox.faults.registry"
    assert [member.value for member in names.FaultName] == list(FAULTS)


def test_a_declaration_carries_its_slow_collateral_and_seam() -> None:
    one, two = declare(
        ROWS,
        area="General",
        seam="reply",
        seams={"two": "step"},
        slow=("two",),
        collateral={"one": (("GEN-003", "why"),)},
    )
    assert (one.seam, one.slow, one.collateral) == ("reply", False, (("GEN-003", "why"),))
    assert (two.seam, two.slow, two.collateral) == ("step", True, ())


@pytest.mark.parametrize(
    "declaration",
    [{"slow": ("three",)}, {"collateral": {"three": ()}}, {"seams": {"one": "nowhere"}}],
    ids=["slow", "collateral", "seam"],
)
def test_a_declaration_of_a_row_not_there_is_refused(declaration: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        declare(ROWS, area="General", seam="reply", **declaration)  # type: ignore[arg-type]
