"""requirements.lock matches pyproject.toml, and this environment was installed from it.

The lock pins every package of the project's ranges (runtime, `dev` and `load`) with hashes, so
the same commit gives the same verdict next month (`make install` installs from it, `make lock`
recomputes it: docs/install.md > Pinned dependencies: requirements.lock). Proved here: every
dependency pyproject.toml names is in the lock at a version its range admits; the lock names no
direct dependency pyproject.toml has dropped; every pin carries hashes; and the packages of this
environment are the lock's versions (what `make install` and CI installed), for every pin whose
marker applies here.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ ;\\]+)(?: ; ([^\\]+?))? \\$")
DIRECT = "delivery-conformance (pyproject.toml)"


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = [*project["dependencies"]]
    for extra in ("dev", "load"):
        texts += project["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


def pins() -> dict[str, tuple[Version, str | None, list[str]]]:
    """name -> (version, marker, the lines of its block: hashes and `via` notes)."""
    found: dict[str, tuple[Version, str | None, list[str]]] = {}
    current: list[str] = []
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            current = []
            name, version, marker = match.groups()
            found[canonicalize_name(name)] = (Version(version), marker, current)
        elif line.startswith("    "):
            current.append(line.strip())
    return found


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    locked = pins()
    problems = []
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        if name not in locked:
            problems.append(f"{requirement}: not in requirements.lock (run `make lock`)")
        elif not requirement.specifier.contains(locked[name][0], prereleases=True):
            problems.append(f"{requirement}: the lock pins {locked[name][0]} (run `make lock`)")
    assert problems == []


def test_the_lock_names_no_direct_dependency_pyproject_dropped() -> None:
    direct = {name for name, (_, _, block) in pins().items() if any(DIRECT in b for b in block)}
    assert direct == {canonicalize_name(r.name) for r in declared()}


def test_every_pin_carries_hashes() -> None:
    locked = pins()
    assert len(locked) > 50
    unhashed = [name for name, (_, _, block) in locked.items()
                if not any(b.startswith("--hash=sha256:") for b in block)]  # fmt: skip
    assert unhashed == []


def test_this_environment_was_installed_from_the_lock() -> None:
    differ = []
    for name, (version, marker, _) in pins().items():
        if marker and not Marker(marker).evaluate():
            continue
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            differ.append(f"{name}: locked {version}, not installed")
            continue
        if installed != version:
            differ.append(f"{name}: locked {version}, installed {installed}")
    assert differ == [], "reinstall with `make install` (rm .venv first)"
