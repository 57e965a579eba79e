"""The change catalogue (spec/changes.yaml) held to the spec and to the requirements.

Every field the spec gives a rule over time (never changes, stable, immutable, a hash of
something, when something last changed) and every row of the States table has a fact naming
the requirements that judge it; every requirement, change and view the catalogue names exists;
every generated consequence is a test of the suite.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
import yaml

from delivery_conformance.resources import root, spec_path
from delivery_conformance.spec.requirements import load_requirements

OVER_TIME = re.compile(r"never chang|\bstable\b|immutable|hash of|last changed", re.IGNORECASE)
EFFECTS = {"moves", "stays", "gone", "matches"}


def catalogue() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(spec_path("changes.yaml").read_text("utf-8"))
    return loaded


def spec_facts() -> set[tuple[str, str]]:
    """(table heading, first cell) of every row of the spec that states a rule over time: a
    field row of Resources and their fields, or an object row of the States table."""
    found: set[tuple[str, str]] = set()
    heading = ""
    for line in spec_path("delivery-api-v1.md").read_text("utf-8").splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("| `") and OVER_TIME.search(line):
            first = line.split("|")[1].strip().split(",")[0].strip().strip("`")
            found.add((heading, first))
        elif heading == "States and transitions" and "30 days" in line:
            found.add((heading, line.split("|")[1].strip()))
    return found


def test_every_rule_over_time_of_the_spec_has_its_fact() -> None:
    listed = {(fact["where"], fact["field"]) for fact in catalogue()["facts"]}
    facts = spec_facts()
    assert len(facts) >= 15  # the reading of the spec's tables still finds them
    assert sorted(facts - listed) == []
    assert sorted(listed - facts) == []  # no fact names a row the spec does not have


def _changes_support(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(root() / "tests" / "conformance"))
    return importlib.import_module("changes_support")


def test_every_requirement_change_and_view_named_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    ids = set(load_requirements())
    data = catalogue()
    names = {change["name"] for change in data["changes"]}
    views = _changes_support(monkeypatch)
    named: list[str] = []
    for change in data["changes"]:
        named += change.get("scenarios", [])
        for rule in change.get("consequences", []):
            named.append(rule["requirement"])
            assert rule["effect"] in EFFECTS, rule
            assert rule["view"] in views.VIEWS, rule
            assert (rule["effect"] == "matches") == bool(rule.get("other")), rule
            assert rule["effect"] == "gone" or rule.get("field"), rule
        assert set(change.get("landed", {})) <= set(views.VIEWS), change["name"]
        assert change.get("consequences") or change.get("scenarios"), change["name"]
    for fact in data["facts"]:
        named += fact["requirements"]
        assert set(fact.get("changes", [])) <= names, fact
    assert sorted(set(named) - ids) == []


def test_every_generated_consequence_is_a_test_with_its_requirement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    params = _changes_support(monkeypatch).consequences()
    rows = [
        (c["name"], r["requirement"])
        for c in catalogue()["changes"]
        for r in c.get("consequences", [])
    ]
    assert len(rows) >= 20 and len(params) == len(rows)
    for param, (change, requirement) in zip(params, rows, strict=True):
        marks = {m.name: m.args for m in param.marks}
        assert marks["requirement"] == (requirement,) and "admin" not in marks["needs"]
        assert param.id.startswith(f"{change}:{requirement}:")
    source = (root() / "tests" / "conformance" / "test_changes.py").read_text("utf-8")
    assert '@pytest.mark.parametrize(("change", "consequence"), consequences())' in source
