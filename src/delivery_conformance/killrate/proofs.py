"""Which server requirements the suite can prove it charges (issue 13). Pure: no I/O but reading
the source files it is given.

A server requirement counts as
  proven          when the suite can charge it (static: a scenario, check or property names it
                  outside a `requirement` marker, which is how a violation is charged to a rule)
                  and a sandbox fault that declares it made the targeted kill rate fail with a
                  violation charged to it (dynamic: the fault's `failing_ids` hold it);
  unobservable    when `spec/requirements.yaml` gives an `untestable:` reason;
  not yet proven  otherwise: no test names it, no code charges it, no fault declares it, or the
                  fault that declares it was caught under other IDs only.

    marked, charged = scan([Path("tests/conformance"), ...])
    figures = judge(load_requirements(), marked, charged, killrate_json["faults"])
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delivery_conformance.spec.changes import GENERATED_TEST, Change, load_changes
from delivery_conformance.spec.requirements import Requirement, Role

__all__ = ["ChangeRowProofs", "Proofs", "change_row_proofs", "dynamic_proofs", "judge", "scan"]

REQUIREMENT_ID = re.compile(r"[A-Z]{2,6}-\d{3}")


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _ids_in(node: ast.AST) -> Iterable[tuple[int, str]]:
    for inner in ast.walk(node):
        value = inner.value if isinstance(inner, ast.Constant) else None
        if isinstance(value, str) and REQUIREMENT_ID.fullmatch(value):
            yield id(inner), value


def scan_source(source: str) -> tuple[set[str], set[str]]:
    """(IDs named by `requirement` markers, IDs written anywhere else as a whole string).

    A whole-string ID outside a marker is a rule a violation is charged to: the first argument
    of `expect`/`violation`/`Violation`, an ID handed to a helper that charges it, or a row of
    a table of rules. Docstrings and comments never match (an ID inside prose is not whole).
    """
    tree = ast.parse(source)
    marked: set[str] = set()
    in_markers: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) == "requirement":
            for key, rid in _ids_in(node):
                in_markers.add(key)
                marked.add(rid)
    charged = {rid for key, rid in _ids_in(tree) if key not in in_markers}
    return marked | _parametrized(tree), charged


def _parametrized(tree: ast.Module) -> set[str]:
    """IDs of the module-level tables a `parametrize` call reads: each row becomes a test marked
    with its ID (`pytest.param(r, marks=pytest.mark.requirement(r)) for r in RULES`), a marker
    whose argument is a name and so holds no whole-string ID of its own. A table handed to a
    scenario factory whose result the module binds as a test (`test_x = rows_scenario(ROWS)`)
    counts the same: the factory parametrizes the test with it. So does an ID written inside a
    `parametrize` call itself (rows built in place, or handed to a helper that marks them)."""
    tables: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            tables |= {t.id: node.value for t in targets if isinstance(t, ast.Name)}
    calls: list[ast.AST] = [
        call
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and _call_name(call) == "parametrize"
    ]
    factories: list[ast.AST] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and any(isinstance(t, ast.Name) and t.id.startswith("test_") for t in node.targets)
    ]
    fed = {
        name.id
        for reader in calls + factories
        for name in ast.walk(reader)
        if isinstance(name, ast.Name) and name.id in tables
    }
    inline = {rid for call in calls for _, rid in _ids_in(call)}
    return inline | {rid for name in fed for _, rid in _ids_in(tables[name])}


# The file of the generated scenarios: its tests come from spec/changes.yaml, one per consequence.
GENERATED = GENERATED_TEST.partition("::")[0]


def catalogue_ids() -> set[str]:
    """The requirements the consequences of the change catalogue (spec/changes.yaml) name: the
    generated scenarios mark each test with its consequence's requirement and charge it."""
    return {rule.requirement for change in load_changes() for rule in change.consequences}


@dataclass(frozen=True)
class ChangeRowProofs:
    """Each consequence of the change catalogue, by the test id of its generated scenario."""

    proven: dict[str, str]  # test id -> the first fault whose run that test failed, exactly
    not_yet_proven: tuple[str, ...]  # test ids no fault's run has seen fail

    def figures(self) -> str:
        total = len(self.proven) + len(self.not_yet_proven)
        return (
            f"change catalogue: {len(self.proven)}/{total} consequences failed by a fault of "
            "their own requirement with exact blame"
        )


def change_row_proofs(
    changes: Iterable[Change], faults: Iterable[Mapping[str, Any]]
) -> ChangeRowProofs:
    """A consequence is proven when a fault that declares its requirement was caught with exact
    blame and its generated scenario is among the tests that caught it (`caught_by`)."""
    requirement_of = {
        change.test_id(rule): rule.requirement for change in changes for rule in change.consequences
    }
    catching: dict[str, str] = {}
    for fault in faults:
        if not (fault.get("caught") and fault.get("exact_blame")):
            continue
        declared = set(fault.get("requirement_ids", ()))
        for test in fault.get("caught_by", ()):
            head, _, param = str(test).partition("[")
            test_id = param.removesuffix("]")
            if head.endswith(GENERATED_TEST) and requirement_of.get(test_id) in declared:
                catching.setdefault(test_id, str(fault["name"]))
    return ChangeRowProofs(
        {i: catching[i] for i in requirement_of if i in catching},
        tuple(i for i in requirement_of if i not in catching),
    )


def scan(paths: Iterable[Path]) -> tuple[set[str], set[str]]:
    """`scan_source` over every `.py` file under `paths` (files or folders); the generated
    scenarios of the change catalogue add the requirements of its consequences."""
    marked: set[str] = set()
    charged: set[str] = set()
    for path in paths:
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            more_marked, more_charged = scan_source(file.read_text(encoding="utf-8"))
            if file.name == GENERATED:
                more_marked, more_charged = (
                    more_marked | catalogue_ids(),
                    more_charged | catalogue_ids(),
                )
            marked |= more_marked
            charged |= more_charged
    return marked, charged


def dynamic_proofs(faults: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Requirement ID -> the first fault (kill-rate row) that declares it and was charged to it."""
    proven: dict[str, str] = {}
    for fault in faults:
        if not fault.get("caught"):
            continue
        failing = set(fault.get("failing_ids", ()))
        for rid in fault.get("requirement_ids", ()):
            if rid in failing:
                proven.setdefault(rid, str(fault["name"]))
    return proven


@dataclass(frozen=True)
class Proofs:
    proven: dict[str, str]  # ID -> fault that proves it
    unobservable: dict[str, str]  # ID -> reason
    not_yet_proven: dict[str, str]  # ID -> what is missing

    def figures(self) -> str:
        return (
            f"server requirements: {len(self.proven)} proven, "
            f"{len(self.unobservable)} unobservable with a reason, "
            f"{len(self.not_yet_proven)} not yet proven"
        )


def judge(
    requirements: Mapping[str, Requirement],
    marked: set[str],
    charged: set[str],
    faults: Iterable[Mapping[str, Any]],
) -> Proofs:
    """Sort every server requirement into proven / unobservable / not yet proven (see above)."""
    rows = list(faults)
    declared = {rid for row in rows for rid in row.get("requirement_ids", ())}
    dynamic = dynamic_proofs(rows)
    proven: dict[str, str] = {}
    unobservable: dict[str, str] = {}
    pending: dict[str, str] = {}
    for rid, requirement in sorted(requirements.items()):
        if requirement.role is not Role.SERVER:
            continue
        if requirement.untestable:
            unobservable[rid] = requirement.untestable
        elif rid not in marked:
            pending[rid] = "no test names it"
        elif rid not in charged:
            pending[rid] = "no check or scenario charges it"
        elif rid not in declared:
            pending[rid] = "no sandbox fault declares it"
        elif rid not in dynamic:
            pending[rid] = "its fault was not charged to it"
        else:
            proven[rid] = dynamic[rid]
    return Proofs(proven, unobservable, pending)
