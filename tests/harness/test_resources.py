"""`resources` finds the spec and the suites in a wheel's bundle or in the checkout that holds
the package, by marker files; nothing in src/ derives a folder by counting parents."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from delivery_conformance import resources
from delivery_conformance.exceptions import HarnessFailure

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())


def make_root(folder: Path) -> Path:
    for marker in resources.MARKERS:
        (folder / marker).parent.mkdir(parents=True, exist_ok=True)
        (folder / marker).write_text("")
    return folder


def test_in_this_checkout_the_root_is_the_repository() -> None:
    assert resources.root() == ROOT
    assert resources.spec_path("openapi.yaml") == ROOT / "spec" / "openapi.yaml"
    assert resources.suite_dir("conformance") == ROOT / "tests" / "conformance"
    for name in resources.SPEC_FILES:
        assert resources.spec_path(name).is_file(), name


def test_the_bundle_beside_the_package_wins_over_a_checkout_around_it(tmp_path: Path) -> None:
    checkout = make_root(tmp_path / "repo")
    package = checkout / "src" / "delivery_conformance"
    package.mkdir(parents=True)
    assert resources.find_root(package) == checkout
    bundle = make_root(package / resources.BUNDLE)
    assert resources.find_root(package) == bundle


def test_a_checkout_counts_only_if_the_package_lives_in_its_src(tmp_path: Path) -> None:
    checkout = make_root(tmp_path / "repo")
    installed = checkout / ".venv" / "lib" / "site-packages" / "delivery_conformance"
    installed.mkdir(parents=True)
    assert resources.find_root(installed) is None


def test_a_folder_with_one_marker_only_is_not_a_root(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "requirements.yaml").write_text("")
    package = tmp_path / "src" / "delivery_conformance"
    package.mkdir(parents=True)
    assert resources.find_root(package) is None


def test_no_root_is_a_one_line_harness_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resources, "find_root", lambda: None)
    resources.root.cache_clear()
    try:
        with pytest.raises(HarnessFailure, match="spec and the suites are missing") as caught:
            resources.root()
        assert caught.value.exit_code == 3 and "\n" not in str(caught.value)
    finally:
        resources.root.cache_clear()


def test_the_suite_settings_are_given_on_the_command_line() -> None:
    args = resources.suite_pytest_args(Path("/x"))
    assert args[args.index("--rootdir") + 1] == "/x" and "-c" in args
    assert "--strict-markers" in args and "no:cacheprovider" in args
    overrides = [args[i + 1] for i, a in enumerate(args) if a == "-o"]
    assert "xfail_strict=true" in overrides
    assert any(o.startswith("filterwarnings=error\n") for o in overrides)


def test_no_module_of_src_counts_parent_folders() -> None:
    pattern = re.compile(r"\.parents\[\d+\]|\.parent\.parent")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


def test_no_bytecode_is_written_while_installed_suites_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    bundle_tests = resources.PACKAGE_DIR / resources.BUNDLE / "tests"
    with resources.installed_suites_untouched(bundle_tests):
        assert sys.dont_write_bytecode is True
    assert sys.dont_write_bytecode is False
    with resources.installed_suites_untouched(ROOT / "tests"):
        assert sys.dont_write_bytecode is False  # a checkout keeps pytest's cache
