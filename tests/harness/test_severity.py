"""Severity is honoured end to end: a sandbox fault that breaks only a `should` rule gives a
warning (exit 0), and a failure with `--strict` (exit 1).

`suspension_seen_late` breaks FRESH-007 alone (Limits > Freshness: a suspension usually shows in
about 1 s), a `should`: the suspension still shows within the 30 s bound (FRESH-005, FRESH-006,
both `must`, keep passing). The run is narrowed to that requirement's test.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness_support import run_results

from delivery_conformance.checks import (
    ConformanceFailure,
    Severity,
    expect,
    raise_hard,
    violation,
)
from delivery_conformance.evidence import ledger
from delivery_conformance.spec.requirements import Level, load_requirements
from delivery_conformance.target.embedded import EmbeddedSandbox

FAULT, RULE = "suspension_seen_late", "FRESH-007"


@pytest.fixture(scope="module")
def faulted_target() -> Iterator[Path]:
    assert load_requirements()[RULE].level is Level.SHOULD
    with EmbeddedSandbox(faults=[FAULT]) as profile_path:
        yield profile_path


def run(target: Path, report_dir: Path, *extra: str) -> tuple[int, str, dict]:
    done = subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", "run", "--target", str(target),
         "--requirement", RULE, "--no-properties", "--no-pacing",
         "--report-dir", str(report_dir), *extra],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout, run_results(report_dir)


def test_a_broken_should_is_a_warning_and_the_run_exits_0(
    faulted_target: Path, tmp_path: Path
) -> None:
    code, out, data = run(faulted_target, tmp_path)
    assert code == 0, out[-2000:]
    assert "CONFORMING WITH WARNINGS" in out
    by_id = {r["id"]: r for r in data["requirements"]}
    assert by_id[RULE]["status"] == "warning" and by_id[RULE]["violations"]
    assert data["run"]["requirements"]["failed"] == 0
    assert by_id["FRESH-005"]["status"] == by_id["FRESH-006"]["status"] == "passed"


def test_with_strict_the_same_run_fails(faulted_target: Path, tmp_path: Path) -> None:
    code, out, data = run(faulted_target, tmp_path, "--strict")
    assert code == 1, out[-2000:]
    assert data["run"]["verdict_word"] == "VIOLATIONS FOUND"
    assert data["run"]["policy"]["strict"] is True


def test_a_broken_should_never_stops_the_assertions_after_it() -> None:
    # VID-013 (no new fields on the frozen feed) is a `should`: the row checks after it (VID-001,
    # VID-003) must still run and judge their own rules (issue: a warning stopped its test).
    ledger.begin()
    ledger.soften({"VID-013"})
    try:
        expect("VID-013", False, expected="only the documented row fields", actual=["extra"])
        expect("VID-003", True, expected="the collection", actual="c1")
        with pytest.raises(ConformanceFailure) as raised:
            expect("VID-001", False, expected="a row", actual="not a row")
        assert [v.requirement_id for v in raised.value.violations] == ["VID-001"]
        assert [v.requirement_id for v in ledger.deferred()] == ["VID-013"]
        assert {"VID-013", "VID-003", "VID-001"} <= ledger.checked()
        warned = violation("HDR-001", "t", expected="e", actual="a", severity=Severity.WARNING)
        raise_hard([warned])  # a finding judged as a warning is kept too, whatever its level
        assert ledger.deferred()[-1] is warned
    finally:
        ledger.soften(())
        ledger.begin()
