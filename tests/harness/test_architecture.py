"""The import rules of ARCHITECTURE.md (> Import rules), enforced by reading every module's
imports with `ast` (including `importlib.import_module("...")` and `__import__("...")` calls
with a literal name). Nothing is imported to find out."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}

# Layer -> (files, forbidden first-party packages, third-party allowed, or None for "any").
SANDBOX_THIRD_PARTY = {"starlette", "uvicorn", "orjson", "uvloop", "httptools"}
HARNESS_THIRD_PARTY = {
    "httpx", "httpcore", "yaml", "jsonschema", "referencing", "pytest", "_pytest", "pluggy",
    "jinja2", "markupsafe", "markdown_it",
    "schemathesis", "hypothesis", "locust", "gevent", "matplotlib", "uvicorn",
}  # fmt: skip
# Inside the harness, some libraries belong to one kind of module only.
RUNNER_ONLY = {"pytest", "_pytest", "pluggy", "schemathesis", "hypothesis"}
RUNNER_MODULES = ("plugin.py", "runner.py", "report.py", "checks/", "properties/", "killrate")
LOAD_ONLY = {"locust", "gevent", "matplotlib"}
PROXY_ONLY = {"uvicorn"}  # the referee proxy's server (certify/proxy.py) and nothing else


def imported_names(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def modules(*parts: str) -> list[Path]:
    base = ROOT.joinpath(*parts)
    return sorted(base.rglob("*.py")) if base.is_dir() else []


def top(name: str) -> str:
    return name.split(".")[0]


def broken(files: list[Path], forbidden: set[str]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in imported_names(path)
        if top(name) in forbidden
    ]


def test_the_sandbox_never_imports_the_harness_tests_or_loadtests() -> None:
    files = modules("src", "delivery_sandbox")
    assert files, "no sandbox module found"
    assert broken(files, {"delivery_conformance", "tests", "loadtests"}) == []


def test_the_sandbox_uses_only_the_standard_library_starlette_uvicorn_and_orjson() -> None:
    allowed = STDLIB | SANDBOX_THIRD_PARTY | {"delivery_sandbox"}
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in modules("src", "delivery_sandbox")
        for line, name in imported_names(path)
        if top(name) not in allowed
    ]
    assert found == []


def test_the_harness_never_imports_the_sandbox_not_even_embedded() -> None:
    files = modules("src", "delivery_conformance")
    assert ROOT / "src/delivery_conformance/embedded.py" in files
    assert broken(files, {"delivery_sandbox", "tests", "loadtests"}) == []


def test_the_harness_uses_only_its_allowed_libraries_where_they_belong() -> None:
    allowed = STDLIB | HARNESS_THIRD_PARTY | {"delivery_conformance"}
    problems = []
    for path in modules("src", "delivery_conformance"):
        relative = path.relative_to(ROOT / "src/delivery_conformance").as_posix()
        for line, name in imported_names(path):
            where = f"{path.relative_to(ROOT)}:{line} imports {name}"
            if top(name) not in allowed:
                problems.append(where)
            elif top(name) in RUNNER_ONLY and not relative.startswith(RUNNER_MODULES):
                problems.append(where + " (runner and checks only)")
            elif top(name) in LOAD_ONLY and not relative.startswith("load/"):
                problems.append(where + " (load modules only)")
            elif top(name) in PROXY_ONLY and relative != "certify/proxy.py":
                problems.append(where + " (certify/proxy.py only)")
    assert problems == []


@pytest.mark.parametrize("suite", ["tests/conformance", "tests/properties", "loadtests"])
def test_the_product_suites_reach_a_target_only_over_http(suite: str) -> None:
    assert broken(modules(*suite.split("/")), {"delivery_sandbox"}) == []


def test_the_sandbox_self_tests_never_import_the_harness() -> None:
    assert broken(modules("tests", "sandbox"), {"delivery_conformance"}) == []


def test_the_harness_self_tests_start_the_sandbox_only_as_a_process() -> None:
    assert broken(modules("tests", "harness"), {"delivery_sandbox"}) == []


def test_the_import_reader_sees_dynamic_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import importlib\nimportlib.import_module('delivery_sandbox.app')\n"
        "__import__('delivery_sandbox')\nfrom delivery_sandbox import cli\n",
        encoding="utf-8",
    )
    names = [name for _, name in imported_names(module)]
    assert names.count("delivery_sandbox") == 2 and "delivery_sandbox.app" in names


def test_the_reference_client_uses_only_the_standard_library_and_httpx() -> None:
    files = modules("src", "delivery_client")
    assert files, "no delivery_client module found"
    allowed = STDLIB | {"httpx", "delivery_client"}
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in imported_names(path)
        if top(name) not in allowed
    ]
    assert found == []


def test_the_sandbox_and_the_harness_never_import_the_reference_client() -> None:
    files = modules("src", "delivery_sandbox") + modules("src", "delivery_conformance")
    assert broken(files, {"delivery_client"}) == []


def test_the_client_self_tests_reach_the_sandbox_only_as_a_process() -> None:
    assert broken(modules("tests", "client"), {"delivery_sandbox", "delivery_conformance"}) == []


def test_client_certification_runs_clients_as_commands_and_the_sandbox_only_embedded() -> None:
    """certify/ may use the harness's checks, results and reports; it never imports the sandbox
    or the reference client (partners' clients run as shell commands from the plan), and it
    reaches the sandbox only through embedded.py."""
    files = modules("src", "delivery_conformance", "certify")
    assert files, "no certify module found"
    assert broken(files, {"delivery_sandbox", "delivery_client", "tests", "loadtests"}) == []
    starts = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        for line, name in imported_names(path)
        if name in ("subprocess",) and path.name not in ("runner.py",)
    ]
    assert starts == []
