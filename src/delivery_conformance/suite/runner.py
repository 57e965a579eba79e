"""Run the product suite programmatically and return its summary.

    summary = run_suite(RunOptions(target=Path("target.toml"), run_dir=Path("reports/x")))
    summary.exit_code(), summary.line()

It calls `pytest.main` on tests/conformance (and tests/properties unless disabled) with the
plugin, `--target` and a `ReportWriter` that writes results.json, report.html, spec.html and
junit.xml (our own, one case per requirement) into the run directory. The verdict is computed
from the events, never from pytest's text output.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from delivery_conformance.exceptions import HarnessFailure, UsageError
from delivery_conformance.reports.results import RunSummary
from delivery_conformance.reports.writer import ReportWriter
from delivery_conformance.resources import installed_suites_untouched, root, suite_pytest_args

__all__ = ["RunOptions", "has_tests", "run_suite", "suite_paths", "tests_root"]

DEFAULT_SEED = 20261002  # the generation seed of a run unless --seed says otherwise
PYTEST_USAGE_ERROR = 4
PYTEST_NO_TESTS = 5


@dataclass(frozen=True)
class RunOptions:
    target: Path
    run_dir: Path
    keyword: str | None = None
    requirements: tuple[str, ...] = ()
    properties: bool = True
    pacing: bool = True
    seed: int | None = None
    strict: bool = False
    expected_failures: Path | None = None  # the known-failure baseline (suite/expected_failures)
    min_coverage: float | None = None
    max_duration: float | None = None
    state_sequences: int | None = None  # the stateful exploration's budget (None: its default)
    from_sandbox: bool = False  # the target profile was written by the embedded sandbox
    workers: int = 1  # processes running scenarios at once (pytest-xdist; suite/distributed.py)
    tests_root: Path = field(default_factory=lambda: tests_root())
    extra_args: Sequence[str] = field(default_factory=tuple)


def tests_root() -> Path:
    """tests/ of the checkout, or of the bundle an installed wheel carries (see `resources`)."""
    return root() / "tests"


def has_tests(directory: Path) -> bool:
    return directory.is_dir() and any(directory.rglob("test_*.py"))


def suite_paths(options: RunOptions) -> list[Path]:
    paths = [options.tests_root / "conformance"]
    if options.properties:
        paths.append(options.tests_root / "properties")
    return [p for p in paths if has_tests(p)]


def pytest_args(options: RunOptions, paths: Sequence[Path]) -> list[str]:
    args = [str(p) for p in paths]
    args += suite_pytest_args(options.tests_root.parent)
    args += ["-q", "-p", "delivery_conformance.suite.plugin"]
    # httpx has imported anyio, whose pytest plugin can then no longer be rewritten: harmless.
    args += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    args += ["--target", str(options.target)]  # junit.xml comes from our ReportWriter
    if options.keyword:
        args += ["-k", options.keyword]
    for requirement_id in options.requirements:
        args += ["--requirement", requirement_id]
    if not options.pacing:
        args.append("--no-pacing")
    if options.from_sandbox:
        args.append("--target-from-sandbox")
    if options.strict:
        args.append("--conformance-strict")
    if options.expected_failures is not None:
        args += ["--expected-failures", str(options.expected_failures.resolve())]
    if options.min_coverage is not None:
        args += ["--min-coverage", str(options.min_coverage)]
    if options.max_duration is not None:
        args += ["--max-duration", str(options.max_duration)]
    if options.seed is not None:
        args += ["--conformance-seed", str(options.seed), "--hypothesis-seed", str(options.seed)]
    if options.state_sequences is not None:
        args += ["--state-sequences", str(options.state_sequences)]
    return args + list(options.extra_args)


@contextmanager
def worker_args(options: RunOptions) -> Iterator[list[str]]:
    """pytest-xdist's options for `options.workers` processes, with the folder they share."""
    if options.workers <= 1:
        yield []
        return
    shared = Path(tempfile.mkdtemp(prefix="delivery-run-"))
    try:
        # Two tests at a time per worker (xdist would hand each a quarter of its share up front):
        # behind the first phase's barrier, and beside scenarios of a minute, a worker with a pile
        # of queued tests would be the run's tail while the others idle.
        yield ["-p", "xdist", "-n", str(options.workers), "--dist", "load", "--maxschedchunk", "2",
               "--shared-state", str(shared)]  # fmt: skip
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def run_suite(options: RunOptions) -> RunSummary | None:
    """Run the suite; None when there is no test yet. Raises on a run that could not happen."""
    paths = suite_paths(options)
    if not paths:
        return None
    options.run_dir.mkdir(parents=True, exist_ok=True)
    writer = ReportWriter(options.run_dir, announce=False)
    with installed_suites_untouched(options.tests_root), worker_args(options) as workers:
        status = int(pytest.main(pytest_args(options, paths) + workers, plugins=[writer]))
    if writer.summary is None:
        if status == PYTEST_USAGE_ERROR:
            raise HarnessFailure("the suite could not start (pytest usage error, see above)")
        raise HarnessFailure(f"the suite stopped before it finished (pytest exit {status})")
    if not writer.summary.tests:
        if status == PYTEST_NO_TESTS and (options.keyword or options.requirements):
            raise UsageError("no test matches the selection (-k / --requirement)")
        if status != PYTEST_NO_TESTS:
            raise HarnessFailure(f"no test ran (pytest exit {status})")
    return writer.summary
