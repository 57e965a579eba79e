"""A wheel built from this repository runs the whole conformance suite on its own.

Once per session: the sources a build reads are copied to a temporary folder, `python -m build
--no-isolation` makes the sdist and, from it, the wheel (so MANIFEST.in and setup.py are both
proven), and the wheel goes into a fresh virtual environment. That environment gets the
third-party dependencies from this project's .venv through a `.pth` line (installing them from
an index would take minutes), but none of the tool's own files: `delivery_conformance` and
`delivery_sandbox` are importable there only from the wheel (the checkout is reached through
an editable `.pth` that a `.pth` line does not process). Then `delivery-conformance run` from an
empty folder must start the embedded sandbox, run the suite from the wheel's bundle and pass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "spec", "src")
SUITES = ("tests/conformance", "tests/properties")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".hypothesis")
BUILD_TIMEOUT = 120
RUN_TIMEOUT = 150
MIN_TESTS = 1000

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class FreshVenv:
    python: Path
    site_packages: Path

    @property
    def bin(self) -> Path:
        return self.python.parent


def clean_env() -> dict[str, str]:
    """The caller's environment minus anything that would put the checkout on sys.path, and
    minus PYTHONDONTWRITEBYTECODE, which would hide writes into site-packages."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSAFEPATH", "PYTHONDONTWRITEBYTECODE"}
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PYTEST")}


def run(command: list[str], *, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip
    return done


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("wheel-source")
    for name in (*BUILD_INPUTS, *SUITES):
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=IGNORED)
        else:
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, source / name)
    out = tmp_path_factory.mktemp("dist")
    done = run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
               cwd=source, timeout=BUILD_TIMEOUT)  # fmt: skip
    assert done.returncode == 0, (
        "the build failed (the build tools come from `pip install -e '.[dev]'`):\n"
        + done.stdout[-3000:] + done.stderr[-3000:]
    )  # fmt: skip
    (built,) = out.glob("delivery_conformance-*.whl")
    assert list(out.glob("delivery_conformance-*.tar.gz")), "no sdist was built"
    return built


@pytest.fixture(scope="session")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    home = tmp_path_factory.mktemp("venv") / "venv"
    done = run([sys.executable, "-m", "venv", "--without-pip", str(home)], cwd=home.parent,
               timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    python = home / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                  cwd=home, timeout=30).stdout.strip()  # fmt: skip
    site_packages = Path(purelib)
    dependencies = sysconfig.get_paths()["purelib"]  # this project's .venv: third parties only
    (site_packages / "_project_dependencies.pth").write_text(dependencies + "\n")
    done = run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                "--no-index", "--quiet", str(wheel)], cwd=home, timeout=BUILD_TIMEOUT)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return FreshVenv(python, site_packages)


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_the_wheel_carries_the_spec_and_every_suite_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    bundle = "delivery_conformance/_bundle/"
    for spec in ("openapi.yaml", "requirements.yaml", "delivery-api-v1.md"):
        assert bundle + "spec/" + spec in names
    for suite in SUITES:
        expected = {
            bundle + str(p.relative_to(ROOT)) for p in (ROOT / suite).rglob("*.py")
            if "__pycache__" not in p.parts
        }  # fmt: skip
        assert expected and expected <= names, sorted(expected - names)
    assert "delivery_sandbox/__main__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "spec/"))], "top-level data folders"


def test_the_installed_tool_uses_only_the_wheel_files(
    fresh_venv: FreshVenv, tmp_path: Path
) -> None:
    code = (
        "import delivery_conformance, delivery_sandbox\n"
        "from delivery_conformance import resources\n"
        "print(delivery_conformance.__file__); print(delivery_sandbox.__file__)\n"
        "print(resources.root()); print(resources.spec_path('requirements.yaml'))\n"
    )
    done = run([str(fresh_venv.python), "-c", code], cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4
    for line in lines:
        assert Path(line).is_relative_to(fresh_venv.site_packages), line
        assert not Path(line).is_relative_to(ROOT), line
    assert Path(lines[2]).name == "_bundle"


def test_installed_run_from_an_empty_folder_passes_the_whole_suite(
    fresh_venv: FreshVenv, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    before = files_under(fresh_venv.site_packages)
    started = time.monotonic()
    done = run([str(fresh_venv.bin / "delivery-conformance"), "run", "--no-properties",
                "--report-dir", "reports"], cwd=empty, timeout=RUN_TIMEOUT)  # fmt: skip
    elapsed = time.monotonic() - started
    output = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, output
    assert "CONFORMING" in done.stdout, output
    runs = [p for p in (empty / "reports").glob("*/results.json") if p.parent.name != "latest"]
    (results,) = runs
    run_info = json.loads(results.read_text())["run"]
    tests = run_info["tests"]
    assert tests["passed"] > MIN_TESTS, tests
    assert tests["failed"] == tests["error"] == tests["not exercised"] == 0, tests
    assert run_info["exit_code"] == 0 and run_info["verdict_word"] == "CONFORMING", run_info
    written = files_under(fresh_venv.site_packages) - before
    assert not written, f"the run wrote into site-packages: {sorted(written)[:5]}"
    assert {p.name for p in empty.iterdir()} == {"reports"}, "the run wrote outside --report-dir"
    assert elapsed < RUN_TIMEOUT


def test_installed_run_on_two_workers_passes_and_writes_nothing_installed(
    fresh_venv: FreshVenv, tmp_path: Path
) -> None:
    """The worker processes import the bundled suites too: no bytecode lands beside them."""
    before = files_under(fresh_venv.site_packages)
    done = run([str(fresh_venv.bin / "delivery-conformance"), "run", "--no-properties",
                "--workers", "2", "-k", "test_catalog_paging or test_withdrawal",
                "--report-dir", "reports"], cwd=tmp_path, timeout=RUN_TIMEOUT)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "workers: 2 (--workers)" in done.stdout
    written = files_under(fresh_venv.site_packages) - before
    assert not written, f"the run wrote into site-packages: {sorted(written)[:5]}"


@pytest.fixture
def broken_install(fresh_venv: FreshVenv) -> Iterator[Path]:
    """The fresh install with its bundle moved away (and put back afterwards)."""
    bundle = fresh_venv.site_packages / "delivery_conformance" / "_bundle"
    aside = bundle.with_name("_bundle_aside")
    bundle.rename(aside)
    try:
        yield fresh_venv.bin / "delivery-conformance"
    finally:
        aside.rename(bundle)


def test_an_install_without_its_bundle_exits_3_in_one_line(
    broken_install: Path, tmp_path: Path
) -> None:
    done = run([str(broken_install), "run", "--no-properties", "--report-dir", "r"],
               cwd=tmp_path, timeout=60)  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "spec and the suites are missing" in lines[0]
