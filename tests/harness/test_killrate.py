"""The kill-rate machinery: judging a fault and a clean run, the catalogue, the cycles that
switch each fault, the report. The end-to-end run over the sandbox's whole catalogue (targeted
mode, three clean runs) is judged in test_sandbox_kill_rate.py; the full mode (every test under
every fault, property tests included) is `make killrate`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from delivery_conformance import cli
from delivery_conformance.evidence.events import Outcome
from delivery_conformance.exceptions import HarnessFailure, UsageError
from delivery_conformance.killrate.cycle import base_nodeid
from delivery_conformance.killrate.judge import (
    FaultRow,
    KillRate,
    KillRunFinished,
    Mode,
    TestResult,
    catalogue_rows,
    judge_clean_run,
    judge_fault,
    select_faults,
)
from delivery_conformance.killrate.report import KillRateWriter, markdown

ROOT = Path(__file__).resolve().parents[2]
SORT = FaultRow("catalog_sort_broken", ("CAT-010",), "films sorted by title descending")


def failed(test: str, *ids: str, properties: bool = False) -> TestResult:
    return TestResult(test, Outcome.FAILED, ids, properties)


def passed(test: str, properties: bool = False) -> TestResult:
    return TestResult(test, Outcome.PASSED, (), properties)


def test_a_failure_naming_the_faults_id_catches_it() -> None:
    verdict = judge_fault(SORT, [passed("a"), failed("b", "CAT-010", "PAGE-001")], 1.5)
    assert verdict.caught and verdict.caught_by == ("b",)
    assert verdict.failing_ids == ("CAT-010", "PAGE-001")
    assert verdict.caught_elsewhere == ("PAGE-001",)


def test_a_failure_naming_only_other_ids_does_not_catch_it() -> None:
    verdict = judge_fault(SORT, [failed("b", "CAT-011")], 0.1)
    assert not verdict.caught
    assert verdict.caught_elsewhere == ("CAT-011",) and verdict.failed_tests == ("b",)


def test_no_test_for_the_fault_does_not_catch_it() -> None:
    verdict = judge_fault(SORT, [], 0.0)
    assert not verdict.caught and verdict.tests == 0 and verdict.caught_by_properties is None


def test_a_test_failing_on_the_clean_target_is_no_evidence() -> None:
    verdict = judge_fault(SORT, [failed("b", "CAT-010")], 0.1, failed_clean={"b"})
    assert not verdict.caught


def test_errors_are_counted_but_do_not_catch() -> None:
    error = TestResult("b", Outcome.ERROR, (), False, "TargetUnreachable")
    verdict = judge_fault(SORT, [error], 0.1)
    assert not verdict.caught and verdict.errors == 1


def test_property_catches_are_told_apart() -> None:
    results = [failed("p", "CAT-010", properties=True), failed("s", "CAT-010")]
    assert judge_fault(SORT, results, 0.1).caught_by_properties is True
    results = [passed("p", properties=True), failed("s", "CAT-010")]
    assert judge_fault(SORT, results, 0.1).caught_by_properties is False


def test_a_clean_run_passes_only_without_failure_or_error() -> None:
    assert judge_clean_run(1, [passed("a"), passed("b")], 1.0).passed
    assert not judge_clean_run(1, [passed("a"), failed("b", "HDR-001")], 1.0).passed
    error = TestResult("c", Outcome.ERROR)
    assert judge_clean_run(2, [passed("a"), error], 1.0).failed == ("c",)
    assert not judge_clean_run(3, [], 0.0).passed


def test_the_kill_rate_needs_every_fault_and_every_clean_run() -> None:
    caught = judge_fault(SORT, [failed("b", "CAT-010")], 0.1)
    missed = judge_fault(FaultRow("x", ("HDR-001",)), [passed("a")], 0.1)
    clean = judge_clean_run(1, [passed("a")], 1.0)
    dirty = judge_clean_run(2, [failed("a", "HDR-001")], 1.0)
    assert KillRate(Mode.TARGETED, (caught,), (clean,)).ok()
    assert not KillRate(Mode.TARGETED, (caught, missed), (clean,)).ok()
    assert not KillRate(Mode.TARGETED, (caught,), (clean, dirty)).ok()
    assert KillRate(Mode.TARGETED, (caught, missed), ()).rate == 0.5


def test_the_cycle_id_is_taken_off_node_ids() -> None:
    assert base_nodeid("t.py::test_a[clean-1]", "clean-1") == "t.py::test_a"
    assert base_nodeid("t.py::test_a[x-y-cookie_set]", "cookie_set") == "t.py::test_a[x-y]"


def test_the_catalogue_is_read_from_the_admin_answer() -> None:
    rows = catalogue_rows([{"name": "a", "requirements": ["HDR-001"], "summary": "s"}])
    assert rows == (FaultRow("a", ("HDR-001",), "s"),)
    with pytest.raises(HarnessFailure):
        catalogue_rows([{"name": "a", "requirements": "HDR-001"}])
    with pytest.raises(HarnessFailure):
        catalogue_rows({"faults": []})


def test_an_unknown_fault_name_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="nope"):
        select_faults([SORT], ["nope"])
    assert select_faults([SORT], []) == (SORT,)


def test_the_writer_writes_json_and_markdown(tmp_path: Path) -> None:
    verdict = judge_fault(SORT, [failed("b", "CAT-010")], 0.25)
    report = KillRate(Mode.FULL, (verdict,), (judge_clean_run(1, [passed("a")], 1.0),), 3.0)
    KillRateWriter(tmp_path)(KillRunFinished(report))
    data = json.loads((tmp_path / "killrate.json").read_text())
    assert data["kill_rate"] == 1.0 and data["faults"][0]["caught_by"] == ["b"]
    assert (tmp_path / "killrate.md").read_text() == markdown(report)
    assert "`catalog_sort_broken` | CAT-010 | yes" in markdown(report)


@pytest.mark.parametrize(
    "argv", [["killrate", "--mode", "sideways"], ["killrate", "--clean-runs", "-1"]]
)
def test_killrate_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


CYCLE_SUITE = """
from pathlib import Path

import pytest


def note(what):
    with Path("setups.txt").open("a") as out:
        out.write(what + "\\n")


@pytest.fixture(scope="module")
def walked():
    note("module")


@pytest.fixture
def admin():
    return "resets the target after the test"


@pytest.mark.requirement("CAT-010")
def test_admin_used(walked, admin):
    note("admin")


@pytest.mark.requirement("CAT-010")
def test_order(walked):
    note("order")


@pytest.mark.requirement("HDR-001")
@pytest.mark.parametrize("n", [pytest.param(1, marks=pytest.mark.requirement("CAT-010")), 2])
def test_headers(walked, n):
    note(f"headers{n}")


def test_unmarked():
    note("unmarked")
"""


def test_cycles_switch_the_fault_and_tear_fixtures_down_between_them(
    pytester: pytest.Pytester,
) -> None:
    """Targeted: clean runs take every test, a fault only the tests naming its IDs; a module
    fixture is set up again in every cycle; the switch comes before the cycle's fixtures, and
    again after a test whose `admin` fixture reset the target."""
    from delivery_conformance.killrate.cycle import FaultCycle

    pytester.makeini("[pytest]\nmarkers =\n    requirement(*ids): ids\n")
    pytester.makepyfile(test_suite=CYCLE_SUITE)
    switched: list[tuple[str | None, bool]] = []
    faults = [SORT, FaultRow("api_status_missing", ("HDR-001",))]
    cycle = FaultCycle(
        faults,
        targeted=True,
        clean_runs=1,
        switch=lambda fault, fresh: switched.append((fault, fresh)),
        consumers=[],
        clock=lambda: 0.0,
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", plugins=[cycle])
    result.assert_outcomes(passed=10, deselected=1)  # headers[2] names no CAT-010
    assert switched == [
        (None, True),
        ("catalog_sort_broken", True),
        ("catalog_sort_broken", False),  # again after a test that used `admin`
        ("api_status_missing", True),
    ]
    setups = (pytester.path / "setups.txt").read_text().split()
    assert setups == [
        *("module", "admin", "order", "headers1", "headers2", "unmarked"),  # clean-1: all
        *("module", "admin", "order", "headers1"),  # catalog_sort_broken: tests naming CAT-010
        *("module", "headers1", "headers2"),  # api_status_missing: HDR-001
    ]


def test_progress_names_each_fault_and_the_rate() -> None:
    import io

    from delivery_conformance.killrate.judge import KillRunStarted
    from delivery_conformance.killrate.report import ProgressPrinter

    out = io.StringIO()
    printer = ProgressPrinter(out)
    missed = judge_fault(FaultRow("x", ("HDR-001",), "no header"), [failed("a", "HDR-002")], 1.0)
    printer(KillRunStarted(Mode.TARGETED, (missed.fault,), 1, "http://127.0.0.1:1"))
    printer(missed)
    printer(KillRunFinished(KillRate(Mode.TARGETED, (missed,), ())))
    lines = out.getvalue().splitlines()
    assert lines[1] == "[1/1] x (HDR-001): NOT CAUGHT; failing: HDR-002; 1 tests, 1.0 s"
    assert lines[2].startswith("kill rate (targeted): 0/1 faults caught (0.0 %)")
    assert lines[3] == "not caught: x (no header)"


def test_a_failure_charged_to_every_claimed_id_names_none_in_particular() -> None:
    from delivery_conformance.evidence.violation import Violation
    from delivery_conformance.killrate.judge import specific_ids

    claimed = ("HDR-001", "CAT-010", "VER-013")
    blanket = [Violation(i, "scenario assertion failed", "to hold", "boom") for i in claimed]
    typed = Violation("HDR-001", "Service-API-Status missing", "the header", "none")
    assert specific_ids([*blanket, typed], claimed) == ("HDR-001",)
    assert specific_ids(blanket, claimed) == ()
    assert specific_ids(blanket[:1], ("HDR-001",)) == ("HDR-001",)  # one claimed ID: its own


def test_exact_blame_is_nothing_failed_but_the_faults_ids_or_declared_collateral() -> None:
    exact = judge_fault(SORT, [failed("a", "CAT-010"), passed("b")], 0.1)
    assert exact.exact and exact.blamed_elsewhere == ()
    spread = judge_fault(SORT, [failed("a", "CAT-010"), failed("b", "CAT-011")], 0.1)
    assert spread.caught and not spread.exact and spread.blamed_elsewhere == ("CAT-011",)
    declared = FaultRow(SORT.name, SORT.requirement_ids, SORT.summary, ("CAT-011",))
    assert judge_fault(declared, [failed("a", "CAT-010"), failed("b", "CAT-011")], 0.1).exact
    unattributed = judge_fault(SORT, [failed("a", "CAT-010", "")], 0.1)
    assert not unattributed.exact and unattributed.blamed_elsewhere == ("",)
    assert not judge_fault(SORT, [], 0.0).exact  # not caught is not exact
    report = KillRate(Mode.TARGETED, (exact, spread), ())
    assert report.exact == 1 and "exact blame 1/2" in report.line()
    assert report.to_dict()["not_exact"] == [SORT.name]
    assert "exact blame 1/2" in markdown(report) and "| yes | - |" in markdown(report)


def test_the_catalogue_carries_declared_collateral() -> None:
    row = {
        "name": "a",
        "requirements": ["HDR-001"],
        "summary": "s",
        "collateral": [{"requirement": "HDR-002", "reason": "the header is absent too"}],
    }
    assert catalogue_rows([row])[0].collateral == ("HDR-002",)
    with pytest.raises(HarnessFailure):
        catalogue_rows([{**row, "collateral": ["HDR-002"]}])


def test_the_sandbox_catalogue_declares_collateral_with_a_reason_and_known_ids() -> None:
    """The catalogue as GET /_sandbox/faults serves it (read in a process of its own)."""
    from delivery_conformance.suite.plugin import known_requirement_ids

    script = (
        "import json; from delivery_sandbox.faults.registry import FaultSwitch, catalogue; "
        "print(json.dumps(catalogue(FaultSwitch())))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    rows = json.loads(done.stdout)
    known = known_requirement_ids()
    declared = [(row["name"], c) for row in rows for c in row["collateral"]]
    assert declared, "some fault declares collateral"
    for name, collateral in declared:
        row = next(r for r in rows if r["name"] == name)
        assert collateral["requirement"] in known, (name, collateral)
        assert collateral["requirement"] not in row["requirements"], (name, collateral)
        assert len(collateral["reason"]) > 10, (name, collateral)
    assert catalogue_rows(rows)  # the harness reads it, collateral included
