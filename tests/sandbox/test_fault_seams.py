"""The endpoints' step seam (faults/steps.py: `bend`) and the admin-action seam
(faults/freshness.py: `admin_action`): every point and action the serving code names is in its
table, every entry of the table is named somewhere, a name not in the table is refused, and with
no fault on a step hands its value back untouched."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from delivery_sandbox.faults.freshness import ACTIONS, admin_action
from delivery_sandbox.faults.steps import POINTS, bend
from delivery_sandbox.state.context import Settings, build_sandbox

SRC = Path(__file__).resolve().parents[2] / "src" / "delivery_sandbox"


def _named(function: str) -> dict[str, list[str]]:
    """The literal second argument of every call of `function` in the sandbox's serving code
    (outside faults/) -> where; a name that is not a literal is listed as `?`."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "faults":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function:
                name = node.args[1] if len(node.args) > 1 else None
                value = name.value if isinstance(name, ast.Constant) else "?"
                found.setdefault(str(value), []).append(f"{path.name}:{node.lineno}")
    return found


@pytest.mark.parametrize(("function", "table"), [("bend", POINTS), ("admin_action", ACTIONS)])
def test_every_named_point_is_in_its_table_and_every_entry_is_named(
    function: str, table: dict[str, object]
) -> None:
    named = _named(function)
    assert named, f"no call of {function} found"
    assert {name: where for name, where in named.items() if name not in table} == {}
    assert set(table) - set(named) == set()


def test_a_point_not_in_the_table_is_refused_once_a_fault_is_on() -> None:
    sb = build_sandbox(Settings(faults=("catalog_display_order_string",)))
    with pytest.raises(KeyError):
        bend(sb, "catalog.no_such_point", 1)
    with pytest.raises(KeyError):
        admin_action(sb, "no_such_action")


def test_with_no_fault_on_a_step_hands_its_value_back_untouched() -> None:
    sb = build_sandbox(Settings())
    row = {"display_order": 3}
    assert bend(sb, "catalog.film_row", row) is row and row == {"display_order": 3}


def test_a_switched_on_fault_bends_its_step_and_no_other() -> None:
    sb = build_sandbox(Settings(faults=("catalog_display_order_string",)))
    assert bend(sb, "catalog.film_row", {"display_order": 3}) == {"display_order": "3"}
    assert bend(sb, "catalog.next_cursor", "c1") == "c1"
    assert bend(sb, "catalog.page_size", 7, limit=7) == 7
