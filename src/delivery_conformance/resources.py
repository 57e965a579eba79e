"""Where the tool's own files are: the spec documents and the product suites.

    spec_path("openapi.yaml")    spec/: openapi.yaml, requirements.yaml, delivery-api-v1.md
    suite_dir("conformance")     tests/: conformance, properties
    suite_pytest_args()          how pytest must run those suites (rootdir, ini options)
    installed_suites_untouched(tests_root)   around pytest.main: no bytecode beside installed files

Two layouts give the same tree (`spec/` and `tests/` under one root):

    installed   <site-packages>/delivery_conformance/_bundle/   copied there when the wheel is
                built (setup.py, `build_py`); a wheel carries no checkout
    checkout    the repository that holds this package under src/ (editable install, or src on
                sys.path), recognised by its marker files, never by counting parent folders

The bundle wins when it is there, so an installed copy never reads a checkout it happens to sit
in (a virtual environment inside the repository); a checkout counts only if this very package
lives in its `src/`, so a wheel never mixes its code with another tree's suites.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from delivery_conformance.exceptions import HarnessFailure

__all__ = [
    "BUNDLE",
    "MARKERS",
    "SPEC_FILES",
    "SUITES",
    "find_root",
    "installed_suites_untouched",
    "root",
    "spec_path",
    "suite_dir",
    "suite_pytest_args",
]

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLE = "_bundle"  # the package-data folder the wheel build fills
SPEC_FILES = ("openapi.yaml", "requirements.yaml", "changes.yaml", "delivery-api-v1.md")
SUITES = ("conformance", "properties")
# Both must exist under one folder for it to be a root (checkout or bundle).
MARKERS = ("spec/requirements.yaml", "tests/conformance/conftest.py")

# The pytest settings the suites rely on, given on the command line because an installed run
# has no pyproject.toml to read them from (the same values as [tool.pytest.ini_options]).
FILTERWARNINGS = (
    "error",
    "ignore::DeprecationWarning:locust.*",
    "ignore::DeprecationWarning:gevent.*",
)


def _is_root(folder: Path) -> bool:
    return all((folder / marker).is_file() for marker in MARKERS)


def find_root(package_dir: Path = PACKAGE_DIR) -> Path | None:
    """The bundle beside the package, else the checkout whose src/ holds it, else None."""
    bundle = package_dir / BUNDLE
    if _is_root(bundle):
        return bundle
    for folder in package_dir.parents:
        if _is_root(folder) and package_dir.is_relative_to(folder / "src"):
            return folder
    return None


@functools.cache
def root() -> Path:
    found = find_root()
    if found is None:
        raise HarnessFailure(
            f"the spec and the suites are missing: no {BUNDLE}/ in {PACKAGE_DIR} and no source "
            "checkout around it (reinstall delivery-conformance from a wheel built with setup.py)"
        )
    return found


def spec_path(name: str) -> Path:
    """A file of the spec folder (see SPEC_FILES)."""
    return root() / "spec" / name


def suite_dir(name: str) -> Path:
    """A product suite folder (see SUITES)."""
    return root() / "tests" / name


def suite_pytest_args(base: Path | None = None) -> list[str]:
    """rootdir and ini options for a pytest run of the suites, the same in both layouts.

    `-c os.devnull` keeps pytest from picking up a stray ini file above site-packages or the
    working directory; the cache plugin is off so nothing is written next to installed files.
    """
    folder = str(base if base is not None else root())
    args = ["--rootdir", folder, "--confcutdir", folder, "-c", os.devnull]
    args += ["-p", "no:cacheprovider", "-ra", "--strict-markers", "--strict-config"]
    args += ["-o", "xfail_strict=true", "-o", "filterwarnings=" + "\n".join(FILTERWARNINGS)]
    return args


NO_BYTECODE = "PYTHONDONTWRITEBYTECODE"


@contextmanager
def installed_suites_untouched(tests_root: Path) -> Iterator[None]:
    """While pytest runs suites from an installed bundle, no bytecode is written: pytest caches
    each test module it rewrites in a __pycache__ beside it, which would be inside site-packages.
    A checkout's suites keep pytest's cache as usual."""
    installed = tests_root.resolve().is_relative_to(PACKAGE_DIR / BUNDLE)
    before = sys.dont_write_bytecode
    before_env = os.environ.get(NO_BYTECODE)
    sys.dont_write_bytecode = before or installed
    if installed:  # the worker processes of `run --workers N` too
        os.environ[NO_BYTECODE] = "1"
    try:
        yield
    finally:
        sys.dont_write_bytecode = before
        if before_env is None:
            os.environ.pop(NO_BYTECODE, None)
        else:
            os.environ[NO_BYTECODE] = before_env
