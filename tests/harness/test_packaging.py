"""Packaging habits: one version, load libraries as an optional extra, a licence and a changelog.

The version is written once (`delivery_conformance.__version__`); pyproject.toml reads it and the
sandbox and the reference client take theirs from the installed distribution. Locust, gevent and
matplotlib live in the `[load]` extra, so no command a conformance user runs may import them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import delivery_client.client
import delivery_conformance

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LOAD_LIBRARIES = ("locust", "gevent", "matplotlib")
# Every entry point of the distribution plus the sandbox app a conformance run starts.
COMMAND_MODULES = (
    "delivery_conformance.cli",
    "delivery_sandbox.cli",
    "delivery_sandbox.app",
    "delivery_client.cli",
)


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_version_is_written_once_and_read_everywhere_else() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "delivery_conformance.__version__"}
    written = delivery_conformance.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", written)
    assert version("delivery-conformance") == written  # the installed metadata agrees
    # The harness self-tests meet the sandbox only as a process (test_architecture.py).
    sandbox = subprocess.run(
        [sys.executable, "-c", "import delivery_sandbox; print(delivery_sandbox.__version__)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert sandbox.stdout.strip() == written, sandbox.stderr[-2000:]
    assert delivery_client.client.USER_AGENT.removeprefix("delivery-client/") == written
    literal = re.compile(r"""__version__\s*=\s*["']\d+\.\d+|delivery-client/\d""")
    for package in ("delivery_sandbox", "delivery_client"):
        for path in (ROOT / "src" / package).rglob("*.py"):
            assert not literal.search(path.read_text(encoding="utf-8")), path


def test_load_libraries_are_an_optional_extra() -> None:
    base = _names(PYPROJECT["project"]["dependencies"])
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert base.isdisjoint(LOAD_LIBRARIES)
    assert set(LOAD_LIBRARIES) <= _names(extras["load"])
    assert "dev" in extras


def test_no_command_imports_a_load_library() -> None:
    """Importing every command (and the sandbox app) leaves Locust, gevent and matplotlib out."""
    script = (
        "import importlib, json, sys\n"
        f"for name in {COMMAND_MODULES!r}: importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {LOAD_LIBRARIES!r}"
        " or m.startswith('delivery_conformance.load'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []


def test_licence_matches_the_declared_one() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_changelog_has_an_unreleased_section_and_the_current_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings[0] == "Unreleased"
    assert any(h.startswith(f"{delivery_conformance.__version__} - ") for h in headings)
    assert "Keep a Changelog" in text
