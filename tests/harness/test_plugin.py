"""The pytest plugin, driven through pytester: markers, needs, outcomes, events, reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness_support import PROFILE_TEXT

from delivery_conformance.evidence.events import (
    Event,
    Outcome,
    RunFinished,
    RunStarted,
    TestDeselected,
    TestFinished,
)

CONFTEST = 'pytest_plugins = ["delivery_conformance.suite.plugin"]\n'
HEADER = """
import pytest
from delivery_conformance.checks import ConformanceFailure, Violation, expect
from delivery_conformance.exceptions import HarnessFailure, TargetGarbage
"""


class Collector:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def pytest_conformance_event(self, event: Event) -> None:
        self.events.append(event)

    def finished(self) -> dict[str, TestFinished]:
        return {e.nodeid.split("::")[-1]: e for e in self.events if isinstance(e, TestFinished)}


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    (pytester.path / "target.toml").write_text(PROFILE_TEXT, encoding="utf-8")
    return pytester


def run(suite: pytest.Pytester, body: str, *args: str) -> tuple[pytest.RunResult, Collector]:
    suite.makepyfile(test_scenarios=HEADER + body)
    collector = Collector()
    result = suite.runpytest("--target", "target.toml", *args, plugins=[collector])
    return result, collector


def test_a_test_without_a_requirement_marker_is_a_usage_error(suite: pytest.Pytester) -> None:
    result, _ = run(suite, "def test_bare():\n    pass\n")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_bare has no @pytest.mark.requirement*"])


def test_an_unknown_requirement_id_is_a_usage_error(suite: pytest.Pytester) -> None:
    body = '@pytest.mark.requirement("HDR-999")\ndef test_x():\n    pass\n'
    result, _ = run(suite, body)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown requirement HDR-999*"])


def test_an_unknown_need_is_a_usage_error(suite: pytest.Pytester) -> None:
    body = (
        '@pytest.mark.requirement("HDR-001")\n@pytest.mark.needs("wizard")\ndef test_x():\n  pass\n'
    )
    result, _ = run(suite, body)
    assert result.ret == pytest.ExitCode.USAGE_ERROR


BODY = """
@pytest.mark.requirement("HDR-001")
def test_passes(profile):
    assert profile.test_organisation

@pytest.mark.requirement("HDR-002")
@pytest.mark.needs("role:nobody", "fixture:film_id")
def test_needs_missing_role():
    raise AssertionError("must not run")

@pytest.mark.requirement("HDR-003")
@pytest.mark.needs("role:films", "fixture:film_id", "admin", "test_organisation")
def test_needs_met(key, fixture_id):
    assert key("films").startswith("svc_live_") and fixture_id("film_id")

@pytest.mark.requirement("HDR-006")
def test_key_lookup_of_a_missing_role(key):
    key("limits")

@pytest.mark.requirement("HDR-011")
def test_typed_violation():
    expect("HDR-012", False, expected="req_ + 26", actual="req_1")

@pytest.mark.requirement("HDR-014", "HDR-015")
def test_bare_assert():
    assert 1 == 2, "svc_live_0123456789abcdef0123456789abcdef leaked?"

@pytest.mark.requirement("GEN-005")
def test_garbage():
    raise TargetGarbage("GET /x answered 200 with text/html, not JSON")

@pytest.mark.requirement("GEN-002")
def test_harness_failure():
    raise HarnessFailure("the admin API answered 500")

@pytest.mark.requirement("GEN-003")
def test_plain_skip():
    pytest.skip("flaky network")

@pytest.mark.requirement("PLAY-065")
def test_not_applicable():
    pytest.skip("not applicable: the server never reused a ticket (best effort)")

@pytest.mark.requirement("VID-013")
def test_should_then_crash():
    expect("VID-013", False, expected="only documented fields", actual=["extra"])
    [][0]

@pytest.mark.requirement("VID-001", "VID-013")
def test_should_then_must():
    expect("VID-013", False, expected="only documented fields", actual=["extra"])
    expect("VID-001", True, expected="a row", actual="a row")
"""


def test_each_kind_of_ending_becomes_the_right_event(suite: pytest.Pytester) -> None:
    result, collector = run(suite, BODY)
    done = collector.finished()
    assert done["test_passes"].outcome is Outcome.PASSED
    assert done["test_needs_missing_role"].outcome is Outcome.NOT_EXERCISED
    assert done["test_needs_missing_role"].reason == "the profile lacks role:nobody"
    assert done["test_needs_met"].outcome is Outcome.PASSED
    assert done["test_key_lookup_of_a_missing_role"].outcome is Outcome.NOT_EXERCISED
    assert "role 'limits'" in done["test_key_lookup_of_a_missing_role"].reason
    typed = done["test_typed_violation"]
    assert typed.outcome is Outcome.FAILED
    assert [(v.requirement_id, v.actual) for v in typed.violations] == [("HDR-012", "req_1")]
    bare = done["test_bare_assert"]  # two requirements: charged to neither, unattributed
    assert [v.requirement_id for v in bare.violations] == [""]
    assert "0123456789abcdef0123456789abcdef" not in bare.violations[0].actual
    assert done["test_garbage"].violations[0].requirement_id == "GEN-005"
    assert done["test_harness_failure"].outcome is Outcome.ERROR
    assert done["test_plain_skip"].outcome is Outcome.NOT_EXERCISED
    assert done["test_plain_skip"].reason == "skipped: flaky network"
    not_applicable = done["test_not_applicable"]
    assert not_applicable.outcome is Outcome.NOT_APPLICABLE
    assert not_applicable.reason == "the server never reused a ticket (best effort)"
    crashed = done["test_should_then_crash"]  # went on with an answer it could not use
    assert crashed.outcome is Outcome.FAILED and "IndexError" in crashed.reason
    assert [v.requirement_id for v in crashed.violations] == ["VID-013"]
    warned = done["test_should_then_must"]  # the `should` kept, the test went on to VID-001
    assert warned.outcome is Outcome.FAILED and warned.checked == ("VID-001", "VID-013")
    assert [v.requirement_id for v in warned.violations] == ["VID-013"]
    kinds = [type(e) for e in collector.events]
    assert kinds[0] is RunStarted and kinds[-1] is RunFinished
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_requirement_option_selects_and_reports_the_rest_as_deselected(
    suite: pytest.Pytester,
) -> None:
    result, collector = run(suite, BODY, "--requirement", "HDR-001")
    assert list(collector.finished()) == ["test_passes"]
    deselected = [e for e in collector.events if isinstance(e, TestDeselected)]
    assert len(deselected) == 11
    assert result.ret == pytest.ExitCode.OK


def test_requirement_option_with_an_unknown_id_is_a_usage_error(suite: pytest.Pytester) -> None:
    result, _ = run(suite, BODY, "--requirement", "NOPE-001")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_report_dir_writes_results_and_html(suite: pytest.Pytester) -> None:
    result, _ = run(suite, BODY, "--report-dir", "out", "-k", "passes or typed or needs_missing")
    data = json.loads((suite.path / "out" / "results.json").read_text())
    by_id = {r["id"]: r for r in data["requirements"]}
    assert by_id["HDR-001"]["status"] == "passed"
    assert by_id["HDR-012"]["status"] == "failed"
    assert by_id["HDR-011"]["status"] == "not exercised"  # stopped on HDR-012
    assert by_id["HDR-002"]["status"] == "not exercised"
    assert by_id["HDR-006"]["status"] == "not exercised"  # deselected by -k
    assert data["run"]["exit_code"] == 1
    assert (suite.path / "out" / "report.html").exists()
    result.stdout.fnmatch_lines(["VIOLATIONS FOUND*report: out*report.html"])


def test_a_broken_profile_stops_the_run_with_exit_3_in_one_line(suite: pytest.Pytester) -> None:
    (suite.path / "target.toml").write_text('base_url = "ftp://x"\n', encoding="utf-8")
    result, _ = run(suite, '@pytest.mark.requirement("HDR-001")\ndef test_x():\n    pass\n')
    assert result.ret == 3
    result.stdout.fnmatch_lines(["*profile target.toml: base_url must start with http*"])


def test_admin_without_an_admin_table_is_not_exercised(suite: pytest.Pytester) -> None:
    text = PROFILE_TEXT.split("[admin]")[0]
    (suite.path / "target.toml").write_text(text, encoding="utf-8")
    body = (
        '@pytest.mark.requirement("AUTH-033")\ndef test_rotate(admin):\n    admin.rotate("films")\n'
    )
    _, collector = run(suite, body)
    done = collector.finished()["test_rotate"]
    assert done.outcome is Outcome.NOT_EXERCISED and "[admin]" in done.reason


def test_an_unreachable_target_makes_the_test_an_error_not_a_failure(
    suite: pytest.Pytester,
) -> None:
    # In a subprocess: httpx imports parts of httpcore lazily on the first connection, and an
    # in-process pytester run would unload them afterwards.
    suite.makepyfile(test_scenarios=HEADER + UNREACHABLE)
    result = suite.runpytest_subprocess("--target", "target.toml", "--report-dir", "out")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = json.loads((suite.path / "out" / "results.json").read_text())
    (test,) = data["tests"]
    assert test["outcome"] == "error" and "cannot reach" in test["reason"]
    assert test["exchanges"] == 1
    assert data["run"]["exit_code"] == 3


UNREACHABLE = """
@pytest.mark.requirement("AUTH-031")
def test_unreachable(client):
    client.get("config")
"""


def test_junit_carries_the_requirement_ids(suite: pytest.Pytester) -> None:
    run(suite, BODY, "-k", "passes", "--junitxml", "junit.xml")
    xml = (Path(suite.path) / "junit.xml").read_text()
    assert 'name="requirements" value="HDR-001"' in xml


FIXTURE_BODY = """
@pytest.fixture
def walked():
    expect("SER-031", False, expected="a walk that ends", actual="the same cursor twice")

@pytest.mark.requirement("SER-030")
def test_uses_a_walk(walked):
    pass

@pytest.mark.requirement("HDR-001", "HDR-003")
def test_judges_one_then_fails_another():
    expect("HDR-001", True, expected="x", actual="x")
    expect("HDR-003", False, expected="y", actual="z")
"""


def test_a_violation_raised_in_a_fixture_fails_its_requirement_not_the_harness(
    suite: pytest.Pytester,
) -> None:
    _result, collector = run(suite, FIXTURE_BODY, "--report-dir", "out")
    done = collector.finished()["test_uses_a_walk"]
    assert done.outcome is Outcome.FAILED
    assert [v.requirement_id for v in done.violations] == ["SER-031"]
    data = json.loads((suite.path / "out" / "results.json").read_text())
    by_id = {r["id"]: r for r in data["requirements"]}
    assert by_id["SER-031"]["status"] == "failed" and data["run"]["exit_code"] == 1
    assert by_id["HDR-001"]["status"] == "passed"  # judged before the test stopped
    assert by_id["HDR-003"]["status"] == "failed"


def test_max_duration_reports_the_rest_not_exercised_and_times_out(
    suite: pytest.Pytester,
) -> None:
    _result, collector = run(suite, BODY, "--max-duration", "0", "--report-dir", "out")
    assert all(t.outcome is Outcome.NOT_EXERCISED for t in collector.finished().values())
    data = json.loads((suite.path / "out" / "results.json").read_text())
    assert data["run"]["stopped"] == "timed out" and data["run"]["exit_code"] == 5


def test_requirement_patterns_select_groups(suite: pytest.Pytester) -> None:
    result, collector = run(suite, BODY, "--requirement", "HDR-00*")
    assert sorted(collector.finished()) == [
        "test_key_lookup_of_a_missing_role", "test_needs_met", "test_needs_missing_role",
        "test_passes",
    ]  # fmt: skip
    result, _ = run(suite, BODY, "--requirement", "HDR-9*")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_unicode_tables_are_built_into_the_hypothesis_folder_the_workers_share(
    tmp_path: Path,
) -> None:
    """What the controller builds once for the workers lands where Hypothesis reads it back,
    so a Hypothesis that moved its tables would be seen here, not as a slower run. In a fresh
    interpreter: Hypothesis keeps the tables in memory once built."""
    script = (
        "import sys; from hypothesis.configuration import set_hypothesis_home_dir; "
        "set_hypothesis_home_dir(sys.argv[1]); "
        "from delivery_conformance.suite.plugin import build_unicode_tables; "
        "build_unicode_tables()"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=60)
    built = {path.name for path in tmp_path.glob("unicode_data/*/*.json.gz")}
    assert "codec-v2-utf-8.json.gz" in built
