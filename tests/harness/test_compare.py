"""`delivery-conformance compare OLD NEW` and `run.observed` (reports/compare.py, observed.py,
compare_render.py, compare_command.py): each change class and its exit code, bad inputs in one
line, the Markdown and the HTML, the behaviour a run records and a change of it between runs."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from delivery_conformance import cli
from delivery_conformance.evidence.exchange import BODY_CAP, Exchange
from delivery_conformance.reports.compare import Change, classify, compare_documents
from delivery_conformance.reports.compare_render import render_html, render_markdown
from delivery_conformance.reports.observed import observe
from delivery_conformance.reports.writer import check_results
from delivery_conformance.spec.limits import SPEC_LIMITS
from delivery_conformance.target.embedded import EmbeddedSandbox

ROOT = Path(__file__).resolve().parents[2]
API = "http://127.0.0.1:9/api/delivery/v1"

# -- builders ------------------------------------------------------------------------------------


def requirement(rid: str, status: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": rid, "status": status, "section": "Limits", "statement": f"statement of {rid}",
        "level": "must", "tests": [f"t::{rid}"], "reasons": [], "violations": [], **extra,
    }  # fmt: skip


def observed(**changes: Any) -> dict[str, Any]:
    """A `run.observed` as a clean sandbox run records it; `changes` replace top-level keys."""
    counters = {
        name: {"announced": c.limit, "header_ceiling": c.limit, "unit": "requests",
               "retry_after": {"count": 2, "min": 1, "median": 1, "max": 2}}
        for name, c in SPEC_LIMITS.items() if c.advertised
    }  # fmt: skip
    data = {
        "exchanges": 10,
        "rate_limits": {"window_seconds": 60, "header_windows": {"60": 2}, "counters": counters},
        "retry_after": {"429": {"count": 2, "min": 1, "median": 1, "max": 2}, "503": None},
        "paging": {"GET /series": {"default_page_size": 50, "largest_limit_accepted": 100,
                                   "smallest_limit_refused": 101, "largest_full_page": 7}},
        "deprecation": {"GET /config": {"2026-10-02": {"answers": 3, "deprecation": [],
                                                       "sunset": [], "link": []}}},
        "config_versions": None,
        "service_versions": {"2026-10-02": 10},
    }  # fmt: skip
    return data | changes


def document(
    statuses: dict[str, str],
    *,
    version: str = "1.3",
    coverage: tuple[int, int] = (3, 3),
    durations: dict[str, float] | None = None,
    observation: dict[str, Any] | None = None,
    kind: str | None = None,
    unattributed: tuple[str, ...] = (),
    expected: dict[str, str] | None = None,
) -> dict[str, Any]:
    exercised, selected = coverage
    run: dict[str, Any] = {
        "base_url": "http://127.0.0.1:9", "started_at": 1.0, "duration_seconds": 10.0,
        "seed": 1, "pacing": False, "exit_code": 0, "verdict": "CONFORMING: ...",
        "verdict_word": "CONFORMING", "tests": {"passed": 3}, "requirements": {"passed": 3},
        "coverage": {"selected": selected, "exercised": exercised,
                     "percent": round(100.0 * exercised / selected, 1), "not_exercised": []},
    }  # fmt: skip
    if observation is not None:
        run["observed"] = observation
    if kind is not None:
        run["kind"] = kind
    listed = expected or {}
    requirements = [requirement(rid, status) for rid, status in statuses.items()]
    for entry in requirements:
        if entry["id"] in listed:
            reason = listed[entry["id"]]
            entry["expected"] = {
                "requirement": entry["id"], "reason": reason, "expires": "2027-01-31",
                "expired": False, "state": "held",
            }  # fmt: skip
    violation = {"requirement_id": "", "title": "", "expected": "x", "actual": "y",
                 "severity": "error", "exchange": None}  # fmt: skip
    return {
        "format_version": version,
        "tool": {"name": "delivery-conformance", "version": "0"},
        "run": run,
        "requirements": requirements,
        "client_requirements": [],
        "violations_of_unknown_requirements": [],
        "unattributed_findings": [violation | {"title": t} for t in unattributed],
        "tests": [
            {
                "nodeid": n,
                "requirement_ids": [],
                "outcome": "passed",
                "reason": "",
                "violations": [],
                "duration": d,
            }
            for n, d in (durations or {"t::a": 1.0}).items()
        ],
    }


def write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def compare(tmp_path: Path, old: Any, new: Any, *options: str) -> int:
    first, second = write(tmp_path / "old.json", old), write(tmp_path / "new.json", new)
    return cli.main(["compare", str(first), str(second), *options])


BASE = {"LIM-001": "passed", "LIM-002": "passed", "LIM-003": "failed", "LIM-004": "not exercised"}


def test_the_builders_make_valid_results() -> None:
    check_results(document(BASE, observation=observed()))
    check_results(document(BASE, version="1.2"))


# -- change classes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "change"),
    [
        ("passed", "passed", Change.UNCHANGED),
        ("passed", "failed", Change.NEW_FAILURE),
        ("warning", "failed", Change.NEW_FAILURE),
        ("not exercised", "failed", Change.NEW_FAILURE),
        ("passed", "error", Change.NEWLY_ERRORED),
        ("passed", "not exercised", Change.NEWLY_NOT_EXERCISED),
        ("failed", "not exercised", Change.NEWLY_NOT_EXERCISED),
        ("error", "not exercised", Change.OTHER),
        ("passed", "warning", Change.NEW_WARNING),
        ("failed", "warning", Change.NEW_WARNING),
        ("failed", "passed", Change.FIXED),
        ("warning", "passed", Change.FIXED),
        ("not exercised", "passed", Change.NEWLY_COVERED),
        ("absent", "passed", Change.NEWLY_COVERED),
        ("not covered", "not exercised", Change.OTHER),
        ("passed", "absent", Change.OTHER),
    ],
)
def test_each_status_pair_has_one_change_class(old: str, new: str, change: Change) -> None:
    assert classify(old, new) is change


def test_each_regression_class_is_listed_and_exits_1(tmp_path: Path, capsys) -> None:
    new = {"LIM-001": "failed", "LIM-002": "error", "LIM-003": "failed",
           "LIM-004": "not exercised", "LIM-005": "not exercised"}  # fmt: skip
    old = BASE | {"LIM-005": "passed"}
    assert compare(tmp_path, document(old), document(new)) == 1
    out = capsys.readouterr().out
    assert "REGRESSION: 1 new failure, 1 newly errored, 1 newly not exercised" in out
    assert "new failure (1):\n  LIM-001  passed -> failed" in out
    assert "newly errored (1):\n  LIM-002  passed -> error" in out
    assert "newly not exercised (1):\n  LIM-005  passed -> not exercised" in out
    assert "LIM-003" not in out, "an unchanged failure is counted, not listed"


def test_fixes_warnings_and_new_coverage_alone_exit_0(tmp_path: Path, capsys) -> None:
    new = {"LIM-001": "warning", "LIM-002": "passed", "LIM-003": "passed", "LIM-004": "passed"}
    assert compare(tmp_path, document(BASE), document(new)) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == "no regression"
    assert "fixed (1):\n  LIM-003  failed -> passed" in out
    assert "new warning (1):\n  LIM-001  passed -> warning" in out
    assert "newly covered (1):\n  LIM-004  not exercised -> passed" in out


def test_a_listed_expected_failure_is_a_warning_not_a_regression(tmp_path: Path, capsys) -> None:
    new = BASE | {"LIM-001": "warning"}
    reason = {"LIM-001": "tracked in TICKET-7"}
    assert compare(tmp_path, document(BASE), document(new, expected=reason)) == 0
    assert "[expected failure: tracked in TICKET-7]" in capsys.readouterr().out


def test_a_coverage_drop_alone_is_a_regression(tmp_path: Path, capsys) -> None:
    old, new = document(BASE, coverage=(3, 3)), document(BASE, coverage=(2, 3))
    assert compare(tmp_path, old, new) == 1
    out = capsys.readouterr().out
    assert "REGRESSION: coverage 100.0 % -> 66.7 %" in out
    assert "coverage: 3/3 (100.0 %) -> 2/3 (66.7 %)" in out


def test_a_new_unattributed_finding_is_a_regression(tmp_path: Path, capsys) -> None:
    old = document(BASE, unattributed=("old finding",))
    new = document(BASE, unattributed=("old finding", "CORS header sent"))
    assert compare(tmp_path, old, new) == 1
    assert "new unattributed findings (1):\n  CORS header sent (expected x)" in (
        capsys.readouterr().out
    )


def test_duration_moves_are_listed_largest_first_without_noise() -> None:
    old = document(BASE, durations={"t::a": 1.0, "t::b": 1.0, "t::c": 1.0, "t::gone": 1.0})
    new = document(BASE, durations={"t::a": 1.5, "t::b": 0.2, "t::c": 1.004, "t::new": 1.0})
    comparison = compare_documents(old, new)
    assert [(m.nodeid, round(m.delta, 3)) for m in comparison.moves] == [
        ("t::b", -0.8),
        ("t::a", 0.5),
    ]
    assert (comparison.tests_added, comparison.tests_removed) == (1, 1)


# -- behaviour -----------------------------------------------------------------------------------


def changed_behaviour() -> dict[str, Any]:
    new = copy.deepcopy(observed())
    counters = new["rate_limits"]["counters"]
    counters["config"]["announced"] = 300  # a limit changed
    counters["catalog"]["retry_after"] = {"count": 1, "min": 5, "median": 5, "max": 5}
    counters["creatives"]["retry_after"] = {"count": 1, "min": 40, "median": 40, "max": 40}
    new["paging"]["GET /series"]["default_page_size"] = 20  # a page size changed
    new["deprecation"]["GET /config"]["2026-10-02"]["deprecation"] = ["@1790899200"]
    return new


def test_behavioural_changes_are_reported_apart_and_only_fail_when_asked(
    tmp_path: Path, capsys
) -> None:
    old, new = (
        document(BASE, observation=observed()),
        document(BASE, observation=changed_behaviour()),
    )
    assert compare(tmp_path, old, new) == 0
    out = capsys.readouterr().out
    assert "behaviour: 4 changes (report only)" in out
    assert "limit: config announced: 600 -> 300" in out
    assert "retry-after: 429 catalog retry after: 1/1/2 s (min/median/max) -> 5/5/5 s" in out
    assert "page size: GET /series default page size: 50 -> 20" in out
    assert (
        "deprecation: GET /config (Service-Version 2026-10-02) Deprecation appeared: "
        "none -> @1790899200" in out
    )
    assert "creatives retry" not in out, "a clock-minute counter's Retry-After moves with the clock"
    assert compare(tmp_path, old, new, "--fail-on-behaviour") == 1
    assert "REGRESSION: 4 behavioural changes" in capsys.readouterr().out


def test_a_figure_only_one_run_observed_is_not_a_change() -> None:
    new = observed()
    new["paging"] = {"GET /series": {"default_page_size": None, "largest_limit_accepted": 100}}
    comparison = compare_documents(document(BASE, observation=observed()),
                                   document(BASE, observation=new))  # fmt: skip
    assert comparison.behaviour == ()


def test_results_of_1_2_compare_and_say_behaviour_was_not_recorded(tmp_path: Path, capsys) -> None:
    old = document(BASE, version="1.2")
    assert compare(tmp_path, old, document(BASE, observation=observed())) == 0
    out = capsys.readouterr().out
    assert "behaviour: not recorded (results format 1.2 -> 1.3" in out


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (None, document(BASE), "OLD {old}: cannot read (No such file or directory)"),
        ("{not json", document(BASE), "OLD {old}: not JSON"),
        (document(BASE), {"format_version": "1.3"}, "NEW {new}: not a results file of format 1.x"),
        (document(BASE), [1, 2], "NEW {new}: not a results file (no format_version)"),
        (document(BASE), document(BASE, version="2.0"),
         "NEW {new}: results format 2.0, this compare reads 1.x (OLD is 1.3, NEW is 2.0)"),
        (document(BASE), document(BASE, kind="client certification"),
         "OLD {old} is a server run, NEW {new} a client certification"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_in_one_line(
    tmp_path: Path, capsys, old: Any, new: Any, said: str
) -> None:
    first, second = tmp_path / "old.json", write(tmp_path / "new.json", new)
    if old is not None:
        write(first, old)
    assert cli.main(["compare", str(first), str(second)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert said.format(old=first, new=second) in err


def test_an_unwritable_summary_file_exits_2(tmp_path: Path, capsys) -> None:
    where = str(tmp_path / "missing" / "summary.md")
    assert compare(tmp_path, document(BASE), document(BASE), "--summary-md", where) == 2
    assert f"--summary-md {where}: cannot write" in capsys.readouterr().err


# -- Markdown and HTML ---------------------------------------------------------------------------


def test_markdown_is_appended_for_a_pr_comment(tmp_path: Path, capsys) -> None:
    summary = write(tmp_path / "summary.md", "earlier step\n")
    new = document(BASE | {"LIM-001": "failed"}, observation=changed_behaviour())
    old = document(BASE, observation=observed())
    assert compare(tmp_path, old, new, "--summary-md", str(summary)) == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### Delivery API v1 conformance, compared: REGRESSION")
    assert "| verdict | CONFORMING | CONFORMING |" in text
    assert "| new failure | 1 |" in text and "| unchanged | 3 |" in text
    assert "**new failure** (1)\n\n- **LIM-001** passed → failed: statement of LIM-001" in text
    assert "- limit: config announced: 600 -> 300" in text
    comparison = compare_documents(old, new)
    assert text.endswith(render_markdown(comparison))


def test_html_is_one_escaped_page(tmp_path: Path, capsys) -> None:
    new = document(BASE | {"LIM-001": "failed"}, observation=changed_behaviour())
    new["requirements"][0]["statement"] = "<script>alert(1)</script>"
    page = tmp_path / "compare.html"
    old = document(BASE, observation=observed())
    assert compare(tmp_path, old, new, "--html", str(page)) == 1
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert "REGRESSION: 1 new failure" in html and 'id="new-failure"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "http://" not in html.replace(str(tmp_path), ""), "no link outside the page"
    assert "limit" in render_html(compare_documents(old, new), "a", "b", False)


# -- run.observed --------------------------------------------------------------------------------


def answer(path: str, status: int = 200, body: Any = None, **headers: str) -> Exchange:
    text = body if isinstance(body, str) else json.dumps(body) if body is not None else ""
    method = "POST" if path.startswith("/playback") else "GET"
    return Exchange(method, API + path, status=status, response_headers=headers,
                    response_body=text)  # fmt: skip


def config_body(config_limit: int) -> dict[str, Any]:
    doors = {"catalog": {"limit": 3000, "unit": "requests"},
             "config": {"limit": config_limit, "unit": "requests"}}  # fmt: skip
    return {"rate_limits": {"window_seconds": 60, "doors": doors}}


def test_observe_reads_limits_retry_after_pages_and_deprecations() -> None:
    link = '<http://127.0.0.1:9/docs/evolution>; rel="deprecation"'
    page = {"code": 0, "data": {"items": [{"code": "S1"}, {"code": "S2"}], "next_cursor": "c2"}}
    exchanges = [
        answer("/config", body=config_body(600), **{"Service-Version": "2026-10-02"}),
        answer("/config", body=config_body(600)),
        answer("/config", body=config_body(3)),  # a scenario lowered it on purpose
        answer("/catalog?limit=1", 429, {"error_code": "rate_limited"},
               **{"Retry-After": "2", "X-RateLimit-Limit": "3", "X-RateLimit-Window": "60"}),
        answer("/playback", 503, {}, **{"Retry-After": "4"}),
        answer("/videos", 429, {"error_code": "rate_limited"}),  # no header: still a refusal
        answer("/series?cursor=c1", body=page),
        answer("/series?limit=100", body={"code": 0, "data": {"items": [], "next_cursor": None}}),
        answer("/series?limit=101", 422, {"code": 4220}),
        answer("/series?cursor=c1&limit=0", 422, {"code": 4220}),
        answer("/catalog?cursor=c1", body='{"films": [' + " " * BODY_CAP + "]…[9 more characters]"),
        answer("/catalog", **{"Deprecation": "@1790899200", "Link": link,
                              "Service-Version": "2026-08-01"}),
        Exchange("POST", "http://127.0.0.1:9/_sandbox/roles/films/limits", status=200),
    ]  # fmt: skip
    seen = observe(exchanges)
    assert seen["exchanges"] == len(exchanges) - 1, "the admin API is left out"
    counters = seen["rate_limits"]["counters"]
    assert counters["config"]["announced"] == 600
    assert counters["config"]["announced_values"] == {"600": 2, "3": 1}
    assert counters["catalog"]["header_limits"] == {"3": 1}
    assert (counters["videos"]["refusals"], counters["videos"]["header_limits"]) == (1, {})
    assert counters["catalog"]["retry_after"] == {"count": 1, "min": 2, "median": 2, "max": 2}
    assert seen["retry_after"]["503"] == {"count": 1, "min": 4, "median": 4, "max": 4}
    assert seen["paging"]["GET /series"] == {
        "default_page_size": 2, "largest_limit_accepted": 100,
        "smallest_limit_refused": 101, "largest_full_page": None,
    }  # fmt: skip
    assert seen["paging"]["GET /catalog"]["default_page_size"] is None, "a capped body is unread"
    dated = seen["deprecation"]["GET /catalog"]["2026-08-01"]
    assert dated["deprecation"] == ["@1790899200"]
    assert dated["link"] == ['<{base_url}/docs/evolution>; rel="deprecation"']
    assert seen["service_versions"] == {"2026-08-01": 1, "2026-10-02": 1}


def test_observe_says_not_observed_rather_than_guess() -> None:
    seen = observe([answer("/catalog", 401, {"error": "x"})])
    assert seen["rate_limits"] == {"window_seconds": None, "header_windows": {}, "counters": {}}
    assert seen["retry_after"] == {"429": None, "503": None}
    assert seen["paging"]["GET /catalog"]["default_page_size"] is None
    assert seen["deprecation"] == {} and seen["config_versions"] is None


# -- real runs -----------------------------------------------------------------------------------

SELECTION = ("test_config_doors_are_the_limits_table_or_above or test_bad_limit_is_invalid_request "
             "or test_limit_caps_the_page")  # fmt: skip


def real_run(report_dir: Path, *target: str) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", "run", "--no-properties",
         "--report-dir", str(report_dir), "-k", SELECTION, *target],
        capture_output=True, text=True, timeout=240, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return report_dir / "latest" / "results.json"


@pytest.mark.slow
def test_a_real_run_records_the_sandbox_figures_and_a_limit_change_shows(
    tmp_path: Path, capsys
) -> None:
    clean = real_run(tmp_path / "clean")
    data = json.loads(clean.read_text(encoding="utf-8"))
    seen = data["run"]["observed"]
    announced = {n: c["announced"] for n, c in seen["rate_limits"]["counters"].items()}
    assert announced == {n: c.limit for n, c in SPEC_LIMITS.items() if c.advertised}
    assert seen["rate_limits"]["window_seconds"] == 60
    assert seen["paging"]["GET /catalog"]["smallest_limit_refused"] == 201
    assert seen["paging"]["GET /series"]["largest_limit_accepted"] == 100
    with EmbeddedSandbox(options=("--limits-scale", "0.5")) as profile:
        halved = real_run(tmp_path / "halved", "--target", str(profile))
    assert cli.main(["compare", str(clean), str(halved)]) == 1  # CFG-037 fails: limits below
    out = capsys.readouterr().out
    assert "new failure (1):\n  CFG-037  passed -> failed" in out
    assert "limit: config announced: 600 -> 300" in out
    assert "limit: playback announced: 10800 -> 5400" in out


def test_versions_and_a_disappearing_deprecation_are_behavioural_changes() -> None:
    dated = {"answers": 2, "deprecation": ["@1790899200"], "sunset": [], "link": []}
    rows = [{"version": "2026-08-01", "deprecated_at": None, "sunset_at": None}]
    old = observed(deprecation={"GET /catalog": {"2026-08-01": dated}}, config_versions=rows)
    new = observed(
        deprecation={"GET /catalog": {"2026-08-01": dated | {"deprecation": []}}},
        config_versions=[rows[0] | {"deprecated_at": "2026-10-02"}],
        service_versions={"2026-10-02": 3, "2027-01-01": 1},
    )
    comparison = compare_documents(document(BASE, observation=old), document(BASE, observation=new))
    lines = [b.line() for b in comparison.behaviour or ()]
    assert lines == [
        "deprecation: GET /catalog (Service-Version 2026-08-01) Deprecation disappeared: "
        "@1790899200 -> none",
        "service version: answered: 2026-10-02 -> 2026-10-02, 2027-01-01",
        "config versions: GET /config api.supported_versions: 2026-08-01 (deprecated -, "
        "sunset -) -> 2026-08-01 (deprecated 2026-10-02, sunset -)",
    ]
