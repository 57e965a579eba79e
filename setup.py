"""Build step: copy the spec and the product suites into the wheel as package data.

The metadata lives in pyproject.toml; this file only adds one thing to `build_py`. The spec
files (spec/*.yaml, spec/*.md) and the suites (tests/conformance, tests/properties) stay where
they are in the repository and are copied to `delivery_conformance/_bundle/` in the build
folder, so a wheel (`pip wheel .`, `python -m build`, `pip install .`) carries them and
`delivery_conformance.resources` finds them there. An editable install copies nothing: the
package then reads the checkout itself. MANIFEST.in puts the same files in the sdist, so a
wheel built from the sdist gets them too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLE = Path("delivery_conformance", "_bundle")
SPEC_PATTERNS = ("*.yaml", "*.md")
SUITES = ("conformance", "properties")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")


def bundle_sources() -> list[tuple[Path, Path]]:
    """(source, destination relative to the build folder) for every file of the bundle."""
    pairs = [
        (path, BUNDLE / "spec" / path.name)
        for pattern in SPEC_PATTERNS
        for path in sorted((HERE / "spec").glob(pattern))
    ]
    for suite in SUITES:
        folder = HERE / "tests" / suite
        pairs += [
            (path, BUNDLE / "tests" / suite / path.relative_to(folder))
            for path in sorted(folder.rglob("*.py"))
            if "__pycache__" not in path.parts
        ]
    return pairs


class BuildPyWithBundle(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the checkout is read in place (resources.find_root)
        pairs = bundle_sources()
        missing = [name for name in ("requirements.yaml", "openapi.yaml")
                   if not any(dest.name == name for _, dest in pairs)]  # fmt: skip
        if missing or not any("conformance" in dest.parts for _, dest in pairs):
            raise SystemExit(f"setup.py: the bundle is incomplete (missing {missing or 'suites'})")
        for source, relative in pairs:
            target = Path(self.build_lib) / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            self.copy_file(str(source), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            outputs += [str(Path(self.build_lib) / dest) for _, dest in bundle_sources()]
        return outputs


setup(cmdclass={"build_py": BuildPyWithBundle})
