"""The kill rate: does the suite catch every fault of the target's fault catalogue?

    report = run_killrate(KillRateOptions(mode=Mode.TARGETED, run_dir=Path("reports/killrate/x")))
    report.rate, report.ok()

One embedded sandbox (or a target whose admin API has the fault switch); the catalogue is read
from `GET /_sandbox/faults`, never imported. One pytest session runs the suite once per *cycle*:
first the clean runs (no fault), then one cycle per fault, switched on alone through the admin
API (`cycle.py` parametrises the tests by cycle and switches between them). A fault is
caught when, with it on, at least one test fails with a violation naming one of the fault's
requirement IDs; failures naming other IDs are recorded as caught elsewhere. Failures of tests
that also failed in a clean run are not evidence and do not count.

Modes (what runs per fault): `targeted`, only the tests whose requirement markers name one of
the fault's IDs; `full`, the whole suite (a fault caught only by an unrelated test shows too);
`properties`, the property tests alone.

The verdict logic (`judge.py`: `judge_fault`, `judge_clean_run`) is pure; events go to consumers
(`report.py` writes killrate.json and killrate.md, and prints progress).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from delivery_conformance.exceptions import HarnessFailure, UsageError
from delivery_conformance.killrate.cycle import FaultCycle
from delivery_conformance.killrate.judge import (
    Consumer,
    KillRate,
    KillRunFinished,
    KillRunStarted,
    Mode,
    catalogue_rows,
    select_faults,
)
from delivery_conformance.resources import installed_suites_untouched, suite_pytest_args
from delivery_conformance.suite.runner import has_tests, tests_root
from delivery_conformance.target.admin import AdminClient
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import TargetProfile, load_profile

__all__ = ["KillRateOptions", "run_killrate"]

TEST_TIMEOUT = 120  # seconds per test: a fault that makes a test hang must not hang the run


@dataclass(frozen=True)
class KillRateOptions:
    run_dir: Path
    mode: Mode = Mode.TARGETED
    faults: tuple[str, ...] = ()  # empty: the whole catalogue
    clean_runs: int = 3
    properties: bool = True  # in targeted and full mode: include tests/properties
    target: Path | None = None  # a profile with an [admin] fault switch; None: embedded sandbox
    tests_root: Path = field(default_factory=lambda: tests_root())
    extra_args: tuple[str, ...] = field(default_factory=tuple)


def suite_paths(options: KillRateOptions) -> list[Path]:
    names = {
        Mode.PROPERTIES: ["properties"],
        Mode.FULL: ["conformance", "properties"],
        Mode.TARGETED: ["conformance", "properties"],
    }[options.mode]
    if not options.properties and options.mode is not Mode.PROPERTIES:
        names = ["conformance"]
    return [options.tests_root / n for n in names if has_tests(options.tests_root / n)]


def _admin_for(profile: TargetProfile) -> AdminClient:
    if profile.admin is None:
        raise UsageError("the target profile has no [admin] table: no fault switch")
    origin = urlsplit(profile.admin.url)
    transport = DeliveryClient(replace(profile, base_url=f"{origin.scheme}://{origin.netloc}"))
    return AdminClient(profile.admin, transport)


KILLRATE_STATE_SEQUENCES = 20


def pytest_args(options: KillRateOptions, target: Path, paths: Sequence[Path]) -> list[str]:
    args = [str(p) for p in paths]
    args += suite_pytest_args(options.tests_root.parent)
    args += ["-q", "--tb=no", "-rN", "--no-header", "-p", "delivery_conformance.suite.plugin"]
    args += ["-W", "ignore::pytest.PytestAssertRewriteWarning", "--timeout", str(TEST_TIMEOUT)]
    args += ["--target", str(target), "--no-pacing"]
    # The stateful exploration runs in every cycle whose fault its rules name: a short budget,
    # unshrunk (a fault is caught by the rule charged; `run` keeps its own default and shrinks).
    args += ["--state-sequences", str(KILLRATE_STATE_SEQUENCES), "--no-state-shrink"]
    return args + list(options.extra_args)


def run_killrate(options: KillRateOptions, consumers: Sequence[Consumer] = ()) -> KillRate:
    """Run the cycles against one target and return the kill rate (events go to consumers)."""

    if options.clean_runs < 0:
        raise UsageError("--clean-runs must be 0 or more")
    paths = suite_paths(options)
    if not paths:
        raise UsageError("no test to run for this mode")
    options.run_dir.mkdir(parents=True, exist_ok=True)
    embedded = EmbeddedSandbox() if options.target is None else None
    target = embedded.start() if embedded is not None else options.target
    assert target is not None
    admin: AdminClient | None = None
    try:
        profile = load_profile(target, environ={} if embedded is not None else None)
        admin = _admin_for(profile)
        faults = select_faults(catalogue_rows(admin.faults()), options.faults)
        if not faults:
            raise UsageError("the target's fault catalogue is empty")
        for consumer in consumers:
            consumer(KillRunStarted(options.mode, faults, options.clean_runs, profile.base_url))
        cycle = FaultCycle(
            faults,
            targeted=options.mode is Mode.TARGETED,
            clean_runs=options.clean_runs,
            switch=_switcher(admin),
            consumers=consumers,
            clock=time.monotonic,
        )
        started = time.monotonic()
        # pytest's own output goes to a log beside the report; the consumers print progress.
        with (
            (options.run_dir / "pytest.log").open("w") as log,
            redirect_stdout(log),
            installed_suites_untouched(options.tests_root),
        ):
            status = int(pytest.main(pytest_args(options, target, paths), plugins=[cycle]))
        report = cycle.report(options.mode, time.monotonic() - started)
        if report is None:
            raise HarnessFailure(
                f"the kill-rate session stopped before it finished (pytest exit {status})"
            )
    finally:
        if admin is not None:
            admin.close()
        if embedded is not None:
            embedded.stop()
    for consumer in consumers:
        consumer(KillRunFinished(report))
    return report


def _switcher(admin: AdminClient) -> Callable[[str | None, bool], None]:
    """Switch the target to one fault (None: no fault); `fresh` resets its state first."""

    def switch(fault: str | None, fresh: bool) -> None:
        if fresh:
            admin.reset()
        admin.set_faults(only=[fault] if fault else [])

    return switch
