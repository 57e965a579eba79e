import json
from pathlib import Path

from delivery_conformance.checks import Violation
from delivery_conformance.evidence.events import (
    Outcome,
    RunFinished,
    RunStarted,
    TestDeselected,
    TestFinished,
)
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.reports.results import Status, summarise
from delivery_conformance.reports.writer import write_reports
from delivery_conformance.spec.requirements import Level, Requirement, Role


def req(rid: str, *, role: Role = Role.SERVER, untestable: str | None = None) -> Requirement:
    return Requirement(rid, "Section > Part", f"statement of {rid}", Level.MUST, role, "observe",
                       untestable)  # fmt: skip


REQS = {
    r.id: r
    for r in (
        req("HDR-001"), req("HDR-002"), req("HDR-003"), req("HDR-004"), req("HDR-005"),
        req("GEN-008", untestable="loopback is plain HTTP"), req("CLI-001", role=Role.CLIENT),
        req("ERR-001"),
    )
}  # fmt: skip
EXCHANGE = Exchange("GET", "http://t/api/delivery/v1/config", {"Authorization": "Bearer x…"},
                    status=200, response_headers={"service-version": "2026-10-02"})  # fmt: skip
VIOLATION = Violation("HDR-002", "Service-API-Status not beta", "beta", "ga", EXCHANGE)


def events(*tests: TestFinished | TestDeselected, status: int = 0) -> list:
    return [RunStarted("http://t", 1000.0, 7, True), *tests, RunFinished(1010.0, 10.0, status)]


def finished(nodeid: str, ids: tuple[str, ...], outcome: Outcome, **kw) -> TestFinished:
    return TestFinished(nodeid, ids, outcome, exchanges=(EXCHANGE,), **kw)


def statuses(summary) -> dict[str, Status]:
    return {r.requirement.id: r.status for r in summary.requirements}


def test_each_requirement_gets_the_status_its_tests_earned() -> None:
    summary = summarise(REQS, events(
        finished("a", ("HDR-001", "HDR-002"), Outcome.PASSED),
        finished("b", ("HDR-002",), Outcome.FAILED, violations=(VIOLATION,)),
        finished("c", ("HDR-003",), Outcome.NOT_EXERCISED, reason="the profile lacks admin"),
        finished("d", ("HDR-004",), Outcome.ERROR, reason="TargetUnreachable"),
        TestDeselected("e", ("HDR-005",)),
    ))  # fmt: skip
    assert statuses(summary) == {
        "HDR-001": Status.PASSED,
        "HDR-002": Status.FAILED,
        "HDR-003": Status.NOT_EXERCISED,
        "HDR-004": Status.ERROR,
        "HDR-005": Status.NOT_EXERCISED,
        "GEN-008": Status.NOT_TESTABLE,
        "ERR-001": Status.NOT_COVERED,
    }
    assert [r.requirement.id for r in summary.client_requirements] == ["CLI-001"]
    assert summary.exit_code() == 1
    assert summary.service_versions == ("2026-10-02",)


def test_a_requirement_whose_test_stopped_on_another_violation_is_not_exercised() -> None:
    summary = summarise(REQS, events(
        finished("a", ("ERR-001",), Outcome.FAILED, violations=(VIOLATION,))
    ))  # fmt: skip
    by_id = {r.requirement.id: r for r in summary.requirements}
    assert by_id["ERR-001"].status is Status.NOT_EXERCISED
    assert by_id["HDR-002"].status is Status.FAILED  # named by the violation, not the marker


def test_exit_code_is_3_on_errors_0_when_clean_and_130_when_interrupted() -> None:
    assert summarise(REQS, events(finished("d", ("HDR-004",), Outcome.ERROR))).exit_code() == 3
    assert summarise(REQS, events(finished("a", ("HDR-001",), Outcome.PASSED))).exit_code() == 0
    interrupted = summarise(REQS, events(finished("a", ("HDR-001",), Outcome.PASSED), status=2))
    assert interrupted.exit_code() == 130


def test_only_not_exercised_tests_still_count_nothing_as_passed() -> None:
    summary = summarise(REQS, events(finished("c", ("HDR-003",), Outcome.NOT_EXERCISED)))
    assert summary.requirement_counts()["passed"] == 0
    assert summary.coverage() == (0, 6)


def test_violation_of_an_unknown_requirement_is_kept_and_fails_the_run() -> None:
    stray = Violation("ZZZ-001", "t", "e", "a")
    summary = summarise(
        REQS, events(finished("a", ("HDR-001",), Outcome.FAILED, violations=(stray,)))
    )
    assert summary.stray_violations == (stray,)
    assert summary.exit_code() == 1


def test_reports_are_written_self_contained_with_failures_first(tmp_path: Path) -> None:
    summary = summarise(REQS, events(
        finished("a", ("HDR-001",), Outcome.PASSED),
        finished("b", ("HDR-002",), Outcome.FAILED, violations=(VIOLATION,)),
        finished("c", ("HDR-003",), Outcome.NOT_EXERCISED, reason="the profile lacks admin"),
    ), extra={"harness_version": "0.1.0"})  # fmt: skip
    html_path = write_reports(summary, tmp_path / "run")
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert data["run"]["exit_code"] == 1 and data["run"]["seed"] == 7
    by_id = {r["id"]: r for r in data["requirements"]}
    assert by_id["HDR-002"]["violations"][0]["actual"] == "ga"
    assert by_id["HDR-002"]["violations"][0]["exchange"]["status"] == 200
    assert by_id["HDR-003"]["reasons"] == ["the profile lacks admin"]
    assert data["client_requirements"][0]["id"] == "CLI-001"
    html = html_path.read_text()
    assert "<link" not in html and "src=" not in html and "http-equiv" not in html
    assert html.index('id="verdict"') < html.index('id="first"') < html.index('id="requirements"')
    assert "Service-API-Status not beta" in html and "statement of HDR-002" in html


def test_html_escapes_what_the_target_sent(tmp_path: Path) -> None:
    hostile = Violation("HDR-002", "t", "beta", "<img src=x onerror=alert(1)>", EXCHANGE)
    summary = summarise(
        REQS, events(finished("b", ("HDR-002",), Outcome.FAILED, violations=(hostile,)))
    )
    html = write_reports(summary, tmp_path).read_text()
    assert "<img" not in html and "&lt;img" in html


def test_a_rule_the_target_legally_never_reached_is_not_applicable_not_passed_nor_missing() -> None:
    # A server that never reuses tickets (best effort): the reuse rules do not bind it.
    summary = summarise(REQS, events(
        finished("a", ("HDR-001",), Outcome.PASSED),
        finished("b", ("HDR-003",), Outcome.NOT_APPLICABLE, reason="the server never reused"),
    ))  # fmt: skip
    by_id = {r.requirement.id: r for r in summary.requirements}
    assert by_id["HDR-003"].status is Status.NOT_APPLICABLE
    assert by_id["HDR-003"].reasons == ("the server never reused",)
    assert summary.requirement_counts()["passed"] == 1
    assert summary.coverage_detail().not_exercised == ()
    assert summary.exit_code() == 0
    assert "1 not applicable" in summary.line()
    # one test of the rule not applicable and another missing its fixture: still not exercised
    mixed = summarise(REQS, events(
        finished("b", ("HDR-003",), Outcome.NOT_APPLICABLE, reason="never reused"),
        finished("c", ("HDR-003",), Outcome.NOT_EXERCISED, reason="the profile lacks admin"),
    ))  # fmt: skip
    assert statuses(mixed)["HDR-003"] is Status.NOT_EXERCISED
    assert mixed.exit_code() == 4


def test_exchanges_are_counted_per_counter_and_per_key_role() -> None:
    """The spec counts per organisation (Limits): the figures say which role's key spent what,
    and leave out requests without a key of the profile (the server does not count them)."""
    base = "http://t/api/delivery/v1/"
    sent = (
        Exchange("GET", base + "catalog", credential="role:films"),
        Exchange("GET", base + "series", credential="role:limits"),
        Exchange("GET", base + "catalog", credential="role:films"),
        Exchange("GET", base + "catalog", credential="none"),
        Exchange("POST", base + "playback", credential="role:films"),
        Exchange("GET", base + "nowhere", credential="role:films"),
    )
    summary = summarise(
        REQS, events(TestFinished("a", ("HDR-001",), Outcome.PASSED, exchanges=sent))
    )
    assert summary.exchange_counts() == {
        "total": 6,
        "per_counter": {"catalog": 4, "playback": 1},
        "per_role": {"films": {"catalog": 2, "playback": 1}, "limits": {"catalog": 1}},
    }
