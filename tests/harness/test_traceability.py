"""Requirement IDs trace from spec/requirements.yaml to the sandbox code and to a check.

For every server requirement the project marks covered (some test of tests/conformance or
tests/properties names it in a `requirement` marker) and that has no `untestable:` reason:

  sandbox   its ID is cited in a docstring or a comment of the sandbox code that implements it
            (seed data counts: it lives in seed.py and store.py). Fault modules do not count:
            their tables name the rule a fault breaks, not the code that keeps it.
  check     a scenario, check or property can charge it: the ID is written as a whole string
            outside a marker (`expect("X-001", ...)`, a table row), as delivery_conformance.proofs
            reads it. IDs marked but charged nowhere are listed in UNCHARGED with the reason.

So a reader goes requirements.yaml -> `grep X-001 src/delivery_sandbox` -> the check by one ID.
The covered set comes from pytest's own collection of the suites (markers are often built from
tables, so reading the source would miss them); collecting takes a few seconds.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

from delivery_conformance.killrate.proofs import scan
from delivery_conformance.resources import suite_pytest_args
from delivery_conformance.spec.requirements import Requirement, Role, load_requirements

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SANDBOX = ROOT / "src" / "delivery_sandbox"
SUITES = [ROOT / "tests" / "conformance", ROOT / "tests" / "properties"]
CHECKS = [
    *SUITES,
    ROOT / "src" / "delivery_conformance" / "checks",
    ROOT / "src" / "delivery_conformance" / "properties",
]
REQUIREMENT_ID = re.compile(r"\b[A-Z]{2,6}-\d{3}\b")

# Marked by a test but charged by no check: ID -> why (this list may only shrink).
UNCHARGED: dict[str, str] = {}

# A pytest plugin, loaded into the collecting process, that writes every marked ID to a file.
DUMP_PLUGIN = """
import json, os

def pytest_collection_finish(session):
    ids = sorted({i for item in session.items for m in item.iter_markers("requirement")
                  for i in m.args})
    with open(os.environ["TRACE_MARKED_IDS"], "w", encoding="utf-8") as out:
        json.dump({"tests": len(session.items), "ids": ids}, out)
"""


def cited_ids(source: str) -> set[str]:
    """IDs written in the docstrings and comments of a module (string literals do not count)."""
    found: set[str] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found |= set(REQUIREMENT_ID.findall(token.string))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                found |= set(REQUIREMENT_ID.findall(docstring))
    return found


def sandbox_citations() -> dict[str, set[str]]:
    """ID -> the sandbox modules (paths under src/delivery_sandbox) that cite it."""
    where: dict[str, set[str]] = {}
    for path in sorted(SANDBOX.rglob("*.py")):
        if "fault" in path.name:
            continue
        module = path.relative_to(SANDBOX).as_posix()
        for rid in cited_ids(path.read_text(encoding="utf-8")):
            where.setdefault(rid, set()).add(module)
    return where


@pytest.fixture(scope="module")
def requirements() -> dict[str, Requirement]:
    return load_requirements()


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Every ID named by a `requirement` marker of a collected test of the product suites."""
    work = tmp_path_factory.mktemp("trace")
    (work / "trace_marked_ids.py").write_text(textwrap.dedent(DUMP_PLUGIN), encoding="utf-8")
    out = work / "marked.json"
    env = {
        **os.environ,
        "TRACE_MARKED_IDS": str(out),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(work), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "trace_marked_ids"]
    command += suite_pytest_args(ROOT) + [str(s) for s in SUITES]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0 and out.is_file(), done.stdout[-3000:] + done.stderr[-2000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["tests"] > 500, f"only {data['tests']} tests collected"
    return set(data["ids"])


@pytest.fixture(scope="module")
def covered(requirements: dict[str, Requirement], marked: set[str]) -> set[str]:
    unknown = marked - requirements.keys()
    assert not unknown, f"markers name IDs missing from requirements.yaml: {sorted(unknown)}"
    return {
        rid
        for rid in marked
        if requirements[rid].role is Role.SERVER and requirements[rid].untestable is None
    }


def test_citations_come_from_docstrings_and_comments_only() -> None:
    source = '''
"""Module (GEN-001)."""
RULES = {"x": "CAT-002"}  # CAT-003 in a comment

def handle():
    """Handler.

    Requirements: PLAY-012, PLAY-013.
    """
    return "PLAY-014"
'''
    assert cited_ids(source) == {"GEN-001", "CAT-003", "PLAY-012", "PLAY-013"}


def test_every_covered_server_requirement_is_cited_in_the_sandbox(
    requirements: dict[str, Requirement], covered: set[str]
) -> None:
    where = sandbox_citations()
    missing = sorted(covered - where.keys())
    server = [r for r in requirements.values() if r.role is Role.SERVER]
    exempt = sum(1 for r in server if r.untestable is not None)
    modules = {m for rid in covered for m in where.get(rid, ())}
    print(
        f"\nserver requirements {len(server)} ({exempt} untestable, exempt); covered by a "
        f"marker {len(covered)}; cited in the sandbox {len(covered) - len(missing)}/"
        f"{len(covered)} across {len(modules)} modules"
    )
    assert not missing, f"{len(missing)} covered IDs cited nowhere in the sandbox: {missing}"


def test_every_id_the_sandbox_cites_exists(requirements: dict[str, Requirement]) -> None:
    """A typo in a citation would send a reader nowhere."""
    unknown = {rid: sorted(m) for rid, m in sandbox_citations().items() if rid not in requirements}
    assert not unknown, f"IDs cited in the sandbox but not in requirements.yaml: {unknown}"


def test_every_covered_server_requirement_is_charged_by_a_check(covered: set[str]) -> None:
    _, charged = scan(CHECKS)
    uncharged = covered - charged
    print(
        f"\ncharged by a check, scenario or property: {len(covered & charged)}/{len(covered)}; "
        f"marked only: {sorted(uncharged)}"
    )
    assert uncharged == set(UNCHARGED), (
        f"marked but charged by no check: {sorted(uncharged - set(UNCHARGED))}; "
        f"charged now, leave UNCHARGED: {sorted(set(UNCHARGED) - uncharged)}"
    )
