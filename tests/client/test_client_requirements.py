"""Every `role: client` requirement of spec/requirements.yaml is either named by a test of this
folder (in its function name, e.g. `..._cli_015_016`, or its docstring) or listed in
`delivery_client.requirements.NOT_APPLICABLE` with a reason; and nothing else is listed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

from delivery_client.requirements import NOT_APPLICABLE

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"(?<![A-Za-z])(gen|page|err|cfg|cat|play|cli)[_-](\d{3})((?:_\d{3})*)", re.I)


def client_ids() -> set[str]:
    data = yaml.safe_load((ROOT / "spec/requirements.yaml").read_text(encoding="utf-8"))
    rows = data["requirements"] if isinstance(data, dict) else data
    return {row["id"] for row in rows if row.get("role") == "client"}


def named_ids() -> set[str]:
    found: set[str] = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                texts = [node.name, ast.get_docstring(node) or ""]
                for text in texts:
                    for prefix, first, more in NAMED.findall(text):
                        for number in [first, *more.split("_")[1:]]:
                            found.add(f"{prefix.upper()}-{number}")
    return found


def test_every_client_requirement_is_tested_or_not_applicable_with_a_reason() -> None:
    wanted = client_ids()
    assert len(wanted) >= 60
    missing = sorted(wanted - named_ids() - set(NOT_APPLICABLE))
    assert missing == []


def test_not_applicable_lists_only_client_ids_with_a_real_reason() -> None:
    assert set(NOT_APPLICABLE) <= client_ids()
    assert all(len(reason.split()) >= 8 for reason in NOT_APPLICABLE.values())
    assert not set(NOT_APPLICABLE) & named_ids()  # one or the other, never both


def test_the_reader_expands_grouped_ids() -> None:
    assert {"CLI-015", "CLI-016", "CLI-017"} <= named_ids()
