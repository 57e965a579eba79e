"""The import rules of ARCHITECTURE.md (> Import rules), enforced by reading every module's
imports with `ast` (including `importlib.import_module("...")` and `__import__("...")` calls
with a literal name). Nothing is imported to find out.

Three kinds of rule: between packages (the sandbox never imports the harness, ...), between the
folders of one package (each folder imports only the folders below it, FOLDER_RULES), and no
import cycle between the modules of a package. Folder rules and cycles count what runs: an
import under `if TYPE_CHECKING:` names a type and executes nothing, so it is left out there.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}

# Layer -> (files, forbidden first-party packages, third-party allowed, or None for "any").
SANDBOX_THIRD_PARTY = {"starlette", "uvicorn", "orjson", "uvloop", "httptools", "brotli"}
HARNESS_THIRD_PARTY = {
    "httpx", "httpcore", "yaml", "jsonschema", "referencing", "pytest", "_pytest", "pluggy",
    "jinja2", "markupsafe", "markdown_it",
    "schemathesis", "hypothesis", "locust", "gevent", "matplotlib", "uvicorn",
}  # fmt: skip
# Inside the harness, some libraries belong to one kind of module only.
RUNNER_ONLY = {"pytest", "_pytest", "pluggy", "schemathesis", "hypothesis"}
RUNNER_MODULES = ("plugin.py", "suite/", "reports/writer.py", "checks/", "properties/", "killrate/")
LOAD_ONLY = {"locust", "gevent", "matplotlib"}
PROXY_ONLY = {"uvicorn"}  # the referee proxy's server (certify/proxy.py) and nothing else


def _imports(path: Path, *, runtime: bool, types: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every import statement and `import_module`/`__import__` call; with
    `runtime`, for `from a import b` also `a.b`, and none under `if TYPE_CHECKING:` unless
    `types` (an import that names a type only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if runtime
        and not types
        and isinstance(node, ast.If)
        and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            if runtime:
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def imported_names(path: Path) -> list[tuple[int, str]]:
    return _imports(path, runtime=False)


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
    assert ROOT / "src/delivery_conformance/target/embedded.py" in files
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


def _names(
    tmp_path: Path, source: str, reader: Callable[[Path], list[tuple[int, str]]]
) -> list[str]:
    """The module names `reader` (imported_names, runtime_imports) finds in a one-file module."""
    module = tmp_path / "m.py"
    module.write_text(source, encoding="utf-8")
    return [name for _, name in reader(module)]


DYNAMIC_IMPORTS = (
    "import importlib\nimportlib.import_module('delivery_sandbox.app')\n"
    "__import__('delivery_sandbox')\nfrom delivery_sandbox import cli\n"
)
TYPE_ONLY_IMPORTS = (
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from x.y import Z\n"
    "from x.w import V\n"
)


def test_the_import_reader_sees_dynamic_imports(tmp_path: Path) -> None:
    names = _names(tmp_path, DYNAMIC_IMPORTS, imported_names)
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


# Folder rules, one row per folder: the first-party folders it may import (besides itself and
# the package's base modules). Modules at the top of a package that are not base modules are
# its front: entry points that may import anything, and that no folder imports.
SANDBOX_BASE: frozenset[str] = frozenset({"__init__"})
SANDBOX_FOLDERS: dict[str, frozenset[str]] = {
    "faults": frozenset(),
    "variants": frozenset(),
    "http": frozenset({"faults", "variants"}),
    "playback": frozenset({"faults", "http", "variants"}),
    "state": frozenset({"faults", "http", "playback", "variants"}),
    "endpoints": frozenset({"faults", "http", "playback", "state", "variants"}),
    "control": frozenset({"faults", "http", "playback", "state", "variants"}),
}
HARNESS_BASE: frozenset[str] = frozenset({"__init__", "exceptions", "verdict", "resources"})
_BELOW_SUITE = frozenset({"spec", "evidence", "target", "checks", "reports", "suite"})
HARNESS_FOLDERS: dict[str, frozenset[str]] = {
    "spec": frozenset(),
    "evidence": frozenset({"spec"}),
    "target": frozenset({"spec", "evidence"}),
    "checks": frozenset({"spec", "evidence", "target"}),
    "reports": frozenset({"spec", "evidence"}),
    "suite": frozenset({"spec", "evidence", "target", "checks", "reports"}),
    "properties": _BELOW_SUITE,
    "killrate": _BELOW_SUITE,
    "certify": _BELOW_SUITE,
    "load": frozenset({"spec", "target"}),
}
PACKAGES = {
    "delivery_sandbox": (SANDBOX_BASE, SANDBOX_FOLDERS),
    "delivery_conformance": (HARNESS_BASE, HARNESS_FOLDERS),
}


def runtime_imports(path: Path) -> list[tuple[int, str]]:
    """`imported_names` without the imports under `if TYPE_CHECKING:`; for `from a import b`
    also `a.b`, which is the module imported when b is a submodule."""
    return _imports(path, runtime=True)


def package_modules(package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module of a package under src/."""
    found = {}
    for path in modules("src", package):
        parts = path.relative_to(ROOT / "src").with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def every_import(path: Path) -> list[tuple[int, str]]:
    """`runtime_imports` with the imports under `if TYPE_CHECKING:` too."""
    return _imports(path, runtime=True, types=True)


def import_graph(
    package: str, reader: Callable[[Path], list[tuple[int, str]]] = runtime_imports
) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports when it runs (`reader`:
    `every_import` for those that only name a type too)."""
    mods = package_modules(package)
    return {
        name: {target for _, target in reader(path) if target in mods and target != name}
        for name, path in mods.items()
    }


def place(package: str, module: str) -> tuple[str, str]:
    """(kind, name): ("folder", "http"), ("base", "exceptions") or ("front", "app")."""
    base, _ = PACKAGES[package]
    parts = module.split(".")[1:] or ["__init__"]
    path = ROOT / "src" / package / parts[0]
    if len(parts) > 1 or path.is_dir():
        return "folder", parts[0]
    return ("base" if parts[0] in base else "front"), parts[0]


def folder_problems(package: str) -> list[str]:
    _, folders = PACKAGES[package]
    problems = []
    for module, targets in sorted(import_graph(package).items()):
        kind, name = place(package, module)
        for target in sorted(targets):
            target_kind, target_name = place(package, target)
            if target_kind == "front" and kind != "front":
                problems.append(f"{module} imports the front module {target}")
            elif target_kind == "folder" and kind == "base":
                problems.append(f"base module {module} imports {target}")
            elif target_kind == "folder" and kind == "folder" and target_name != name:
                allowed = folders.get(name)
                if allowed is None:
                    problems.append(f"{module}: folder {name}/ has no row in the folder rules")
                elif target_name not in allowed:
                    problems.append(f"{module} imports {target} ({name}/ -> {target_name}/)")
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_folder_imports_only_the_folders_below_it(package: str) -> None:
    assert folder_problems(package) == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_folder_of_a_package_has_a_rule(package: str) -> None:
    _, folders = PACKAGES[package]
    present = {p.name for p in (ROOT / "src" / package).iterdir() if (p / "__init__.py").exists()}
    assert present == set(folders)


@pytest.mark.parametrize("package", ["delivery_sandbox", "delivery_conformance", "delivery_client"])
def test_no_import_cycle_between_the_modules_of_a_package(package: str) -> None:
    graph = import_graph(package)
    assert len(graph) > 10
    assert cycles(graph) == []


def test_the_sandbox_has_no_import_cycle_not_even_through_a_type() -> None:
    """The fault modules name the switch (faults/switch.py) and the seam types
    (faults/seams.py), never the registry that assembles them, so no circle closes through
    a type-only import either."""
    assert cycles(import_graph("delivery_sandbox", every_import)) == []


def test_the_fault_layer_imports_nothing_above_it_not_even_for_a_type() -> None:
    """faults/ is the bottom of the sandbox: what it acts on at a seam (an answer, a request,
    the sandbox, the store) it names through faults/seams.py, so no import of it runs back up
    to http/, state/, playback/ or the front."""
    upward = [
        f"{module} imports {target}"
        for module, targets in sorted(import_graph("delivery_sandbox", every_import).items())
        if place("delivery_sandbox", module) == ("folder", "faults")
        for target in sorted(targets)
        if place("delivery_sandbox", target) != ("folder", "faults")
        and target != "delivery_sandbox"
    ]
    assert upward == []


# The fault layer: faults/, and the front's fault seams (control/front_faults.py), which app.py
# calls. Serving code reaches it only through these named seams, at most a dozen.
FAULT_LAYER = ("delivery_sandbox.faults.", "delivery_sandbox.control.front_faults")
FAULT_SEAMS = {
    "faults.steps.bend": "a step of an endpoint (endpoints/*.py)",
    "faults.freshness.admin_action": "an admin action (control/admin.py)",
    "faults.registry.catalogue": "the catalogue GET /_sandbox/faults shows (control/admin.py)",
    "faults.authentication.bend_step": "a step of authentication (auth.py)",
    "faults.error_formats.bend_error_body": "an error body (http/errors.py)",
    "faults.reply.bend_answer_headers": "the common headers (http/headers.py)",
    "faults.limits.bend_policies": "the cores' policies (state/context.py)",
    "faults.error_codes.bend_outage": "an outage's answer (control/outages.py)",
    "faults.catalog.simulation_rules": "a simulated answer (playback/simulate.py)",
    "control.front_faults.request_in": "the request in (app.py)",
    "control.front_faults.refused": "a request authentication refused (app.py)",
    "control.front_faults.reply_out": "the reply out (app.py)",
}


def _top_level(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def layer_functions() -> dict[str, set[str]]:
    """Fault-layer module -> the functions it defines or takes from another fault-layer module."""
    mods = {
        m: p for m, p in package_modules("delivery_sandbox").items() if m.startswith(FAULT_LAYER)
    }
    trees = {m: _top_level(p) for m, p in mods.items()}
    found = {
        m: {n.name for n in t.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        for m, t in trees.items()
    }
    for _ in range(2):  # a name passed on through one more module
        for m, tree in trees.items():
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module in found:
                    taken = {a.asname or a.name for a in node.names if a.name in found[node.module]}
                    found[m] |= taken
    return found


def fault_calls(path: Path, functions: dict[str, set[str]]) -> dict[str, list[int]]:
    """Fault-layer function (module.name, without the package) -> the lines of `path` that name
    it, through an imported name or a module imported under any alias."""
    tree = _top_level(path)
    named: dict[str, str] = {}  # local name -> fault-layer function
    aliases: dict[str, str] = {}  # local name -> fault-layer module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                local, whole = alias.asname or alias.name, f"{node.module}.{alias.name}"
                if alias.name in functions.get(node.module, ()):
                    named[local] = whole
                elif whole in functions:
                    aliases[local] = whole
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in functions and alias.asname:
                    aliases[alias.asname] = alias.name
    found: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Name) and node.id in named:
            target = named[node.id]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id)
            if module is not None and node.attr in functions[module]:
                target = f"{module}.{node.attr}"
        if target is not None:
            found.setdefault(target.removeprefix("delivery_sandbox."), []).append(node.lineno)
    return found


def test_serving_code_reaches_the_fault_layer_only_through_a_dozen_named_seams() -> None:
    """Outside the fault layer, the sandbox names its functions only at the seams of
    FAULT_SEAMS (faults act at a few named seams, at most a dozen): one call per
    step of an endpoint through `faults.steps.bend`, one per admin action through
    `faults.freshness.admin_action`, and so on. The switch itself (`FaultSwitch`: on, only,
    switch) is a class, not a seam, and is not counted."""
    functions = layer_functions()
    used: dict[str, list[str]] = {}
    for module, path in sorted(package_modules("delivery_sandbox").items()):
        if module.startswith(FAULT_LAYER):
            continue
        for name, lines in fault_calls(path, functions).items():
            used.setdefault(name, []).extend(f"{path.relative_to(ROOT)}:{n}" for n in lines)
    assert len(FAULT_SEAMS) <= 12
    assert {n: w for n, w in used.items() if n not in FAULT_SEAMS} == {}
    assert set(used) == set(FAULT_SEAMS), "a seam no serving code names: drop it from the list"


def test_the_seam_reader_sees_a_call_through_an_alias_and_an_imported_name(
    tmp_path: Path,
) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from delivery_sandbox.faults import steps as seam\n"
        "from delivery_sandbox.faults.freshness import admin_action\n"
        "seam.bend(sb, 'catalog.film_row', row)\nadmin_action(sb, 'revoke', role='x')\n"
        "seam.POINTS\n",
        encoding="utf-8",
    )
    found = fault_calls(module, layer_functions())
    assert found == {"faults.steps.bend": [3], "faults.freshness.admin_action": [4]}


def test_the_cycle_finder_finds_a_cycle_and_the_folder_rule_a_wrong_way_import() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert place("delivery_sandbox", "delivery_sandbox.http.errors") == ("folder", "http")
    assert place("delivery_sandbox", "delivery_sandbox.app") == ("front", "app")
    assert place("delivery_conformance", "delivery_conformance.verdict") == ("base", "verdict")
    assert "faults" not in SANDBOX_FOLDERS["faults"] and "http" not in SANDBOX_FOLDERS["faults"]


def test_type_only_imports_are_left_out_of_the_graph(tmp_path: Path) -> None:
    names = _names(tmp_path, TYPE_ONLY_IMPORTS, runtime_imports)
    assert "x.y" not in names and "x.w" in names and "x.w.V" in names
    every = _names(tmp_path, TYPE_ONLY_IMPORTS, every_import)
    assert "x.y" in every and "x.y.Z" in every and "x.w.V" in every


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
