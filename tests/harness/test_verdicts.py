"""Verdict words, exit codes and coverage (issue: verdicts a server team can trust).

Pure: synthetic events folded by `results.summarise`; no target, no pytest run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from delivery_conformance.checks import Severity, Violation
from delivery_conformance.evidence.events import (
    Outcome,
    RunFinished,
    RunPolicy,
    RunStarted,
    TestDeselected,
    TestFinished,
)
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.results import Status, summarise
from delivery_conformance.spec.requirements import Level, Requirement, Role
from delivery_conformance.suite.selection import select
from delivery_conformance.verdict import Verdict


def req(rid: str, level: Level = Level.MUST, untestable: str | None = None) -> Requirement:
    return Requirement(rid, "Section", f"statement of {rid}", level, Role.SERVER, "o", untestable)


REQS = {
    r.id: r
    for r in (
        req("HDR-001"), req("HDR-002"), req("HDR-003"), req("CAT-001"), req("CAT-002"),
        req("FRESH-007", Level.SHOULD), req("GEN-008", untestable="TLS is not seen on loopback"),
        req("ERR-001"),
    )
}  # fmt: skip
NO_POLICY = RunPolicy()
EXCHANGE = Exchange("GET", "http://t/api/delivery/v1/catalog?limit=1", {}, status=200)


def run(*tests: TestFinished | TestDeselected, policy: RunPolicy = NO_POLICY, **finish):
    events = [RunStarted("http://t", 0.0, 1, True, policy), *tests, RunFinished(9.0, 9.0, 0)]
    if finish:
        events[-1] = RunFinished(9.0, 9.0, finish.get("status", 0), finish.get("stopped"))
    return summarise(REQS, events)


def ran(nodeid: str, ids: tuple[str, ...], outcome: Outcome, **kw) -> TestFinished:
    return TestFinished(nodeid, ids, outcome, **kw)


def broken(rid: str, severity: Severity = Severity.ERROR) -> Violation:
    return Violation(rid, f"{rid} broken", "x", "y", EXCHANGE, severity)


ALL_PASS = tuple(
    ran(f"t{i}", (rid,), Outcome.PASSED)
    for i, rid in enumerate(["HDR-001", "HDR-002", "HDR-003", "CAT-001", "CAT-002", "ERR-001"])
)


def test_every_selected_requirement_passed_is_conforming_exit_0() -> None:
    summary = run(*ALL_PASS, ran("f", ("FRESH-007",), Outcome.PASSED))
    assert summary.verdict() is Verdict.CONFORMING and summary.exit_code() == 0
    assert summary.line().startswith("CONFORMING: ")


def test_a_violated_should_is_a_warning_exit_0_unless_strict() -> None:
    shown = ran("f", ("FRESH-007",), Outcome.FAILED, violations=(broken("FRESH-007"),))
    summary = run(*ALL_PASS, shown)
    assert {r.requirement.id: r.status for r in summary.requirements}["FRESH-007"] is (
        Status.WARNING
    )
    assert summary.verdict() is Verdict.WARNINGS and summary.exit_code() == 0
    assert "1 warnings" in summary.line()
    strict = run(*ALL_PASS, shown, policy=RunPolicy(strict=True))
    assert strict.verdict() is Verdict.VIOLATIONS and strict.exit_code() == 1


def test_a_must_violation_judged_as_a_warning_by_its_check_is_a_warning() -> None:
    soft = ran("c", ("CAT-001",), Outcome.FAILED, violations=(broken("CAT-001", Severity.WARNING),))
    assert run(*ALL_PASS[:3], soft, *ALL_PASS[4:]).verdict() is Verdict.WARNINGS


def test_a_partial_run_is_partial_exit_4_with_what_was_missing() -> None:
    missing = ran("m", ("CAT-002",), Outcome.NOT_EXERCISED, reason="the profile lacks role:videos")
    summary = run(*ALL_PASS[:4], missing)
    assert summary.verdict() is Verdict.PARTIAL and summary.exit_code() == 4
    coverage = summary.coverage_detail()
    assert (coverage.exercised, coverage.selected) == (4, 5)
    assert coverage.not_exercised == (("CAT-002", ("the profile lacks role:videos",)),)
    assert "PARTIAL" in summary.line() and "role:videos (1)" in summary.coverage_line()
    assert "CONFORMING" not in summary.line()


def test_min_coverage_accepts_a_known_partial_profile_but_says_so() -> None:
    missing = ran("m", ("CAT-002",), Outcome.NOT_EXERCISED, reason="the profile lacks admin")
    accepted = run(*ALL_PASS[:4], missing, policy=RunPolicy(min_coverage=80.0))
    assert accepted.verdict() is Verdict.PARTIAL_ACCEPTED and accepted.exit_code() == 0
    assert accepted.line().startswith("PARTIAL, ACCEPTED (--min-coverage 80 %)")
    refused = run(*ALL_PASS[:4], missing, policy=RunPolicy(min_coverage=81.0))
    assert refused.verdict() is Verdict.PARTIAL


def test_coverage_is_judged_against_what_the_run_selected() -> None:
    narrowed = run(
        ran("a", ("CAT-001", "HDR-001"), Outcome.PASSED),
        ran("b", ("CAT-002",), Outcome.PASSED),
        TestDeselected("c", ("HDR-002",)),
        policy=RunPolicy(selectors=("CAT-*",)),
    )
    assert narrowed.coverage_detail().selected == 2
    assert narrowed.verdict() is Verdict.CONFORMING


def test_requirements_no_test_names_are_the_tools_gap_not_a_partial_run() -> None:
    summary = run(*ALL_PASS[:5])  # ERR-001 named by no test: not covered
    assert {r.requirement.id: r.status for r in summary.requirements}["ERR-001"] is (
        Status.NOT_COVERED
    )
    assert summary.coverage_detail().not_covered == 2  # ERR-001 and FRESH-007
    assert summary.verdict() is Verdict.CONFORMING


def test_a_requirement_a_load_campaign_measures_is_reported_as_such_never_not_covered() -> None:
    measured = Requirement(
        "LIM-026", "Limits", "video counter", Level.MUST, Role.SERVER, "o", load_campaign="minute"
    )
    events = [RunStarted("http://t", 0.0, 1, True, NO_POLICY), *ALL_PASS[:5], RunFinished(9, 9, 0)]
    summary = summarise({**REQS, measured.id: measured}, events)
    result = {r.requirement.id: r for r in summary.requirements}["LIM-026"]
    assert result.status is Status.LOAD_CAMPAIGN
    assert "load campaign `minute`" in result.reasons[0]
    assert summary.coverage_detail().not_covered == 2  # ERR-001 and FRESH-007 only
    assert summary.verdict() is Verdict.CONFORMING  # not selected, so not a partial run


def test_violations_win_over_partial_and_timed_out() -> None:
    failed = ran("a", ("HDR-001",), Outcome.FAILED, violations=(broken("HDR-001"),))
    missing = ran("m", ("CAT-002",), Outcome.NOT_EXERCISED, reason="the profile lacks admin")
    assert run(failed, missing, stopped="timed out").verdict() is Verdict.VIOLATIONS


def test_a_run_stopped_by_its_time_bound_is_timed_out_exit_5() -> None:
    late = ran("z", ("CAT-002",), Outcome.NOT_EXERCISED, reason="the run reached --max-duration")
    summary = run(*ALL_PASS[:4], late, stopped="timed out")
    assert summary.verdict() is Verdict.TIMED_OUT and summary.exit_code() == 5


def test_an_interrupted_run_is_interrupted_whatever_it_found() -> None:
    failed = ran("a", ("HDR-001",), Outcome.FAILED, violations=(broken("HDR-001"),))
    assert run(failed, status=2).verdict() is Verdict.INTERRUPTED


def test_one_defect_hides_no_other_requirement_its_checks_judged() -> None:
    """A failed test whose checks judged other requirements passes those (the ledger)."""
    headers = ("HDR-001", "HDR-002", "HDR-003")
    cookie = ran("h", headers, Outcome.FAILED, violations=(broken("HDR-003"),), checked=headers)
    statuses = {r.requirement.id: r.status for r in run(cookie).requirements}
    assert statuses["HDR-001"] is Status.PASSED and statuses["HDR-002"] is Status.PASSED
    assert statuses["HDR-003"] is Status.FAILED
    unjudged = ran("h", headers, Outcome.FAILED, violations=(broken("HDR-003"),))
    statuses = {r.requirement.id: r.status for r in run(unjudged).requirements}
    assert statuses["HDR-001"] is Status.NOT_EXERCISED


def test_an_unattributed_finding_fails_the_run_and_is_charged_to_no_requirement() -> None:
    loose = Violation("", "scenario assertion failed", "the assertion to hold", "x", EXCHANGE)
    summary = run(*ALL_PASS, ran("u", ("CAT-001", "CAT-002"), Outcome.FAILED, violations=(loose,)))
    assert summary.unattributed == (loose,)
    assert summary.requirement_counts()["failed"] == 0
    assert summary.verdict() is Verdict.VIOLATIONS
    assert "1 unattributed" in summary.line()


def test_findings_count_one_defect_once_and_the_widest_charge_is_reported() -> None:
    same = broken("HDR-001")
    summary = run(
        ran("a", ("HDR-001",), Outcome.FAILED, violations=(same,)),
        ran("b", ("HDR-001",), Outcome.FAILED, violations=(same,)),
    )
    assert len(summary.findings()) == 1 and summary.widest_charge() == 1
    data = summary.to_dict()["run"]
    assert data["findings"] == 1 and data["widest_charge"] == 1
    assert data["verdict_word"] == "VIOLATIONS FOUND" and data["exit_code"] == 1


@pytest.mark.parametrize(
    ("selectors", "chosen"),
    [(["CAT-*"], ["CAT-001", "CAT-002"]), (["hdr-00?"], ["HDR-001", "HDR-002", "HDR-003"]),
     (["CAT-001", "CAT-*"], ["CAT-001", "CAT-002"])],
)  # fmt: skip
def test_selectors_take_ids_and_patterns(selectors: list[str], chosen: list[str]) -> None:
    assert select(selectors, REQS) == chosen


def test_a_selector_matching_nothing_is_a_usage_error_with_a_hint() -> None:
    with pytest.raises(UsageError, match=r"did you mean CAT-001"):
        select(["CAT-0001"], REQS)
    with pytest.raises(UsageError, match=r"matches no requirement ID"):
        select(["ZZ-*"], REQS)
    assert UsageError("x").exit_code == 2


def test_the_readme_exit_code_table_is_the_verdict_table() -> None:
    from delivery_conformance import verdict

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert verdict.markdown_table() in readme


def test_a_crashed_pytest_session_is_a_harness_error_even_with_findings() -> None:
    """INTERNALERROR (pytest exit 3): the run is not whole, so its findings are no verdict."""
    failed = ran("a", ("HDR-001",), Outcome.FAILED, violations=(broken("HDR-001"),))
    assert run(failed, status=3).verdict() is Verdict.HARNESS


def test_a_non_json_body_is_charged_to_gen_005_whichever_test_read_it() -> None:
    import pytest as _pytest

    from delivery_conformance.exceptions import TargetGarbage
    from delivery_conformance.plugin import _classify

    def garbage() -> None:
        raise TargetGarbage("GET /x answered 200 with text/html, not JSON")

    call = _pytest.CallInfo.from_call(garbage, when="call")
    html = Exchange("GET", "http://t/api/delivery/v1/catalog", {}, status=200,
                    response_body="<html>")  # fmt: skip
    outcome, _, found = _classify(call, ("CAT-001", "CAT-002"), [html])
    assert outcome is Outcome.FAILED and [v.requirement_id for v in found] == ["GEN-005"]


def test_an_empty_error_answer_to_a_read_another_endpoint_needed_first_is_not_exercised() -> None:
    """PLAY-059 (Endpoints > POST /playback) reads GET /catalog to find an episode: a 405 with an
    empty body there leaves its own rule unjudged, not broken."""
    import pytest as _pytest

    from delivery_conformance.exceptions import TargetGarbage
    from delivery_conformance.plugin import _classify

    def garbage() -> None:
        raise TargetGarbage("GET /catalog answered 405 with an empty body")

    call = _pytest.CallInfo.from_call(garbage, when="call")
    empty = Exchange("GET", "http://t/api/delivery/v1/catalog", {}, status=405)
    for ids in (("PLAY-059",), ("PLAY-059", "PLAY-060")):
        outcome, reason, found = _classify(call, ids, [empty])
        assert (outcome, found) == (Outcome.NOT_EXERCISED, ())
        assert reason.startswith(
            "not exercised: a read it needed first, GET /catalog, answered 405"
        )


@pytest.mark.parametrize(
    ("method", "path", "status", "ids", "charged"),
    [
        # an empty success answer breaks the operation's success-body rule, whoever read it
        ("GET", "/playlists", 200, ("PLS-008",), "PLS-023"),
        ("GET", "/playlists", 200, ("PLS-008", "PLS-037"), "PLS-023"),
        ("GET", "/catalog", 200, ("CAT-001",), "CAT-059"),
        ("POST", "/playback", 200, ("PLAY-010",), "PLAY-001"),
        # an empty error answer stays the reading test's own finding (or unattributed)
        ("GET", "/catalog", 404, ("CAT-001",), "CAT-001"),
        ("GET", "/catalog", 405, ("CAT-058",), "CAT-058"),  # Endpoints > GET /catalog
        ("GET", "/catalog", 405, ("PLAY-068",), "PLAY-068"),  # Errors > Playback: no one endpoint
        ("GET", "/catalog", 404, ("CAT-001", "CAT-002"), ""),
        ("GET", "/nowhere", 200, ("GEN-001",), "GEN-001"),
    ],
)
def test_an_empty_answer_is_charged_to_the_rule_of_what_was_due(
    method: str, path: str, status: int, ids: tuple[str, ...], charged: str
) -> None:
    import pytest as _pytest

    from delivery_conformance.exceptions import TargetGarbage
    from delivery_conformance.plugin import _classify

    def garbage() -> None:
        raise TargetGarbage(f"{method} {path} answered {status} with an empty body")

    call = _pytest.CallInfo.from_call(garbage, when="call")
    empty = Exchange(method, f"http://t/api/delivery/v1{path}?limit=2", {}, status=status)
    _, _, found = _classify(call, ids, [empty])
    assert [v.requirement_id for v in found] == [charged]
