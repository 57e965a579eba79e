"""Known failures of a server run (`run --expected-failures FILE`; issue: a release gate).

Reading the file (every way it can be wrong is one line, exit 2), the judgement (pure: synthetic
events folded by `results.summarise`: held, fixed, expired, not judged; `--strict`), what every
report shows, and one run end to end against a sandbox with a fault on its own port.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from delivery_conformance.checks import Severity, Violation
from delivery_conformance.evidence.events import (
    ExpectedFailure,
    Outcome,
    RunFinished,
    RunPolicy,
    RunStarted,
    TestFinished,
)
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.junit import render_junit
from delivery_conformance.reports.markdown import render_summary_markdown
from delivery_conformance.reports.results import summarise
from delivery_conformance.reports.writer import results_document
from delivery_conformance.spec.requirements import Level, Requirement, Role
from delivery_conformance.suite.expected_failures import parse_expected_failures
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.verdict import Verdict

TODAY = dt.date(2026, 11, 29)
BIN = Path(sys.executable).parent


def req(rid: str, level: Level = Level.MUST, role: Role = Role.SERVER) -> Requirement:
    return Requirement(rid, "Section", f"statement of {rid}", level, role, "o", None)


REQS = {
    r.id: r
    for r in (req("CAT-001"), req("CAT-002"), req("HDR-001"), req("FRESH-007", Level.SHOULD),
              req("CLI-001", role=Role.CLIENT))
}  # fmt: skip
EXCHANGE = Exchange("GET", "http://t/api/delivery/v1/catalog", {}, status=200)


def entry(rid: str, expires: dt.date = dt.date(2027, 1, 31), reason: str = "tracked") -> str:
    return f'[[expected]]\nrequirement = "{rid}"\nreason = "{reason}"\nexpires = {expires}\n'


def listed(*rids: str, expires: dt.date = dt.date(2027, 1, 31)) -> tuple[ExpectedFailure, ...]:
    return parse_expected_failures("".join(entry(r, expires) for r in rids), REQS, TODAY)


def broken(rid: str) -> Violation:
    return Violation(rid, f"{rid} broken", "x", "y", EXCHANGE, Severity.ERROR)


def run(*tests: TestFinished, policy: RunPolicy):
    events = [RunStarted("http://t", 0.0, 1, True, policy), *tests, RunFinished(9.0, 9.0, 0)]
    return summarise(REQS, events)


def fails(rid: str) -> TestFinished:
    return TestFinished(f"t_{rid}", (rid,), Outcome.FAILED, violations=(broken(rid),))


def passes(rid: str) -> TestFinished:
    return TestFinished(f"t_{rid}", (rid,), Outcome.PASSED)


# -- reading the file ----------------------------------------------------------------------------


def test_an_entry_is_read_with_its_reason_and_date_and_judged_against_today() -> None:
    read = parse_expected_failures(
        entry("CAT-001", dt.date(2026, 11, 29)) + entry("CAT-002", dt.date(2026, 11, 28)),
        REQS, TODAY,
    )  # fmt: skip
    assert [(e.requirement_id, e.reason, e.expired) for e in read] == [
        ("CAT-001", "tracked", False),  # its last day is today: still in date
        ("CAT-002", "tracked", True),
    ]
    assert parse_expected_failures("", REQS, TODAY) == ()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[[expected]\n", "not valid TOML"),
        ('title = "x"\n', "only [[expected]] tables, not title"),
        ('expected = "CAT-001"\n', "must be an array of tables"),
        ('[[expected]]\nrequirement = "CAT-001"\nexpires = 2027-01-01\n', "(missing reason)"),
        (entry("CAT-001") + 'owner = "me"\n', "(unknown owner)"),
        (entry("CAT-999"), "'CAT-999' is no requirement"),
        (entry("CLI-001"), "CLI-001 is a client requirement"),
        (entry("CAT-001") + entry("CAT-001"), "#2: CAT-001 is listed twice"),
        (entry("CAT-001", reason="  "), "CAT-001 needs a reason"),
        ('[[expected]]\nrequirement = "CAT-001"\nreason = "r"\nexpires = "2027-01-31"\n',
         "expires must be a TOML date"),
        ('[[expected]]\nrequirement = "CAT-001"\nreason = "r"\nexpires = 2027-01-31T10:00:00\n',
         "expires must be a TOML date"),
    ],
    ids=["toml", "other-table", "not-tables", "missing", "unknown-key", "unknown-id", "client",
         "twice", "no-reason", "date-as-text", "datetime"],
)  # fmt: skip
def test_a_broken_file_is_one_line_naming_the_entry(text: str, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_expected_failures(text, REQS, TODAY, source="known.toml")
    assert said in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith("expected failures known.toml")


# -- the judgement -------------------------------------------------------------------------------


def statuses(summary) -> dict[str, tuple[str, str]]:
    return {r.requirement.id: (r.status.value, r.expected_state) for r in summary.requirements}


def test_a_listed_failure_is_a_warning_with_its_reason_and_the_run_passes() -> None:
    summary = run(fails("CAT-001"), passes("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                  policy=RunPolicy(expected_failures=listed("CAT-001")))  # fmt: skip
    assert statuses(summary)["CAT-001"] == ("warning", "held")
    result = next(r for r in summary.requirements if r.requirement.id == "CAT-001")
    assert any("accepted until 2027-01-31: tracked" in why for why in result.reasons)
    assert summary.verdict() is Verdict.WARNINGS and summary.exit_code() == 0
    assert "expected failures: 1 held, 0 fixed (remove them), 0 expired" in summary.line()
    strict = run(fails("CAT-001"), passes("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                 policy=RunPolicy(strict=True, expected_failures=listed("CAT-001")))  # fmt: skip
    assert strict.verdict() is Verdict.WARNINGS, "--strict fails on warnings nobody accepted"


def test_strict_still_fails_on_a_warning_the_file_does_not_list() -> None:
    summary = run(fails("CAT-001"), passes("CAT-002"), passes("HDR-001"), fails("FRESH-007"),
                  policy=RunPolicy(strict=True, expected_failures=listed("CAT-001")))  # fmt: skip
    assert summary.verdict() is Verdict.VIOLATIONS


def test_an_unlisted_failure_still_fails_beside_a_listed_one() -> None:
    summary = run(fails("CAT-001"), fails("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                  policy=RunPolicy(expected_failures=listed("CAT-001")))  # fmt: skip
    assert statuses(summary)["CAT-002"] == ("failed", "")
    assert summary.verdict() is Verdict.VIOLATIONS


def test_a_listed_requirement_that_passes_is_reported_fixed_and_does_not_fail_the_run() -> None:
    summary = run(passes("CAT-001"), passes("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                  policy=RunPolicy(expected_failures=listed("CAT-001")))  # fmt: skip
    assert statuses(summary)["CAT-001"] == ("passed", "fixed")
    assert summary.verdict() is Verdict.CONFORMING
    assert "0 held, 1 fixed (remove them)" in summary.line()


def test_an_expired_entry_is_not_applied_and_fails_the_run_even_when_the_rule_passes() -> None:
    gone = listed("CAT-001", expires=dt.date(2026, 11, 1))
    failing = run(fails("CAT-001"), passes("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                  policy=RunPolicy(expected_failures=gone))  # fmt: skip
    assert statuses(failing)["CAT-001"] == ("failed", "expired")
    assert failing.verdict() is Verdict.VIOLATIONS
    passing = run(passes("CAT-001"), passes("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                  policy=RunPolicy(expected_failures=gone))  # fmt: skip
    assert statuses(passing)["CAT-001"] == ("passed", "expired")
    assert passing.verdict() is Verdict.VIOLATIONS and "1 expired" in passing.line()


def test_a_listed_requirement_the_run_did_not_judge_keeps_its_status() -> None:
    summary = run(passes("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                  policy=RunPolicy(expected_failures=listed("CAT-001")))  # fmt: skip
    assert statuses(summary)["CAT-001"] == ("not covered", "not judged")
    assert "1 not judged" in summary.line()


# -- the reports -----------------------------------------------------------------------------------


def test_every_report_shows_the_entries_and_junit_fails_only_the_expired_one() -> None:
    entries = (*listed("CAT-001", "CAT-002"), *listed("HDR-001", expires=dt.date(2026, 1, 1)))
    summary = run(fails("CAT-001"), passes("CAT-002"), passes("HDR-001"), passes("FRESH-007"),
                  policy=RunPolicy(strict=True, expected_failures=entries))  # fmt: skip
    document = results_document(summary)
    by_id = {r["id"]: r for r in document["requirements"]}
    assert by_id["CAT-001"]["expected"] == {"requirement": "CAT-001", "reason": "tracked",
                                           "expires": "2027-01-31", "expired": False,
                                           "state": "held"}  # fmt: skip
    assert by_id["CAT-002"]["expected"]["state"] == "fixed"
    assert "expected" not in by_id["FRESH-007"]
    assert [e["requirement"] for e in document["run"]["policy"]["expected_failures"]] == [
        "CAT-001", "CAT-002", "HDR-001",
    ]  # fmt: skip
    junit = ET.fromstring(render_junit(document, strict=True))
    failed = [c.get("name", "") for c in junit.iter("testcase") if c.find("failure") is not None]
    assert failed == ["HDR-001 expected-failure entry"], "held under --strict is not a failure"
    held = next(c for c in junit.iter("testcase") if c.get("name", "").startswith("CAT-001"))
    assert "accepted until 2027-01-31: tracked" in (held.findtext("system-out") or "")
    markdown = render_summary_markdown(document)
    assert "**CAT-001** (warning (expected))" in markdown
    assert "- **CAT-002** fixed: listed as expected, but it passed: remove the entry" in markdown
    assert "- **HDR-001** expired: expected-failure entry expired on 2026-01-01" in markdown


# -- end to end ------------------------------------------------------------------------------------


def conformance(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "delivery-conformance"), *args], capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip


@pytest.fixture
def faulty_sandbox() -> Iterator[Path]:
    """A sandbox on its own port with the CORS fault (GEN-002); yields its profile."""
    with EmbeddedSandbox(faults=["cors_header_sent"]) as profile:
        yield profile


def test_a_known_violation_passes_the_gate_and_an_expired_one_fails_it(
    faulty_sandbox: Path, tmp_path: Path
) -> None:
    known = tmp_path / "known.toml"
    known.write_text(entry("GEN-002", reason="CORS added by the CDN; removal tracked as OPS-7"))
    args = ["run", "--target", str(faulty_sandbox), "--no-properties", "-k", "test_config_holds"]
    held = conformance(*args, "--report-dir", str(tmp_path / "held"), "--expected-failures",
                       str(known))  # fmt: skip
    assert held.returncode == 0, held.stdout[-1500:] + held.stderr[-800:]
    assert "CONFORMING WITH WARNINGS" in held.stdout and "1 held" in held.stdout
    results = json.loads((tmp_path / "held" / "latest" / "results.json").read_text())
    gen = next(r for r in results["requirements"] if r["id"] == "GEN-002")
    assert gen["status"] == "warning" and gen["expected"]["state"] == "held"
    html = (tmp_path / "held" / "latest" / "report.html").read_text()
    assert 'id="expected-failures"' in html and "OPS-7" in html

    known.write_text(entry("GEN-002", dt.date(2020, 1, 1), reason="CORS from the CDN"))
    expired = conformance(*args, "--report-dir", str(tmp_path / "expired"),
                          "--expected-failures", str(known))  # fmt: skip
    assert expired.returncode == 1 and "1 expired" in expired.stdout

    known.write_text(entry("GEN-999"))
    bad = conformance(*args, "--report-dir", str(tmp_path / "bad"), "--expected-failures",
                      str(known))  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "GEN-999" in bad.stderr
    assert not (tmp_path / "bad").exists(), "a broken baseline stops the run before it starts"
    missing = conformance(*args, "--expected-failures", str(tmp_path / "none.toml"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
