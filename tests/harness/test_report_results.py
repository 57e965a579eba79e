"""results.json and its schema, reports/latest, the Markdown step summary, reading back, and
the bad input of the report side (schema-invalid results, unwritable report dir): exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_support import PROFILE_TEXT
from jsonschema import Draft202012Validator
from report_support import SECRETS, clean_document, sample_document, sample_summary

from delivery_conformance import cli
from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.markdown import render_summary_markdown
from delivery_conformance.reports.writer import (
    FORMAT_VERSION,
    SCHEMA_PATH,
    check_results,
    finish_outputs,
    load_results,
    point_latest,
    prepare_report_dir,
    write_reports,
)
from delivery_conformance.verdict import Verdict


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def test_the_published_schema_is_a_valid_schema_with_a_format_version() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert FORMAT_VERSION.startswith("1.")
    assert "format_version" in schema["required"]


def test_written_results_follow_the_schema_and_carry_no_secret(tmp_path: Path) -> None:
    html = write_reports(sample_summary(), tmp_path / "run")
    names = sorted(p.name for p in html.parent.iterdir())
    assert names == ["junit.xml", "report.html", "results.json", "spec.html"]
    text = (tmp_path / "run" / "results.json").read_text(encoding="utf-8")
    data = json.loads(text)
    check_results(data)
    assert data["format_version"] == FORMAT_VERSION
    assert data["tool"]["name"] == "delivery-conformance"
    assert data["run"]["base_url"] == "http://127.0.0.1:9"  # user:password@ dropped
    for secret in SECRETS:
        for path in html.parent.iterdir():
            assert secret not in path.read_text(encoding="utf-8"), (secret, path.name)
    check_results(clean_document())


@pytest.mark.parametrize(
    ("breakage", "said"),
    [
        (lambda d: d.pop("format_version"), "'format_version' is a required property"),
        (lambda d: d.update(format_version="2.0"), "at format_version"),
        (lambda d: d["requirements"][0].update(status="fine"), "at requirements/0/status"),
        (lambda d: d["run"].update(exit_code="one"), "at run/exit_code"),
    ],
)
def test_a_schema_invalid_document_is_refused_in_one_line(breakage, said: str) -> None:
    document = sample_document()
    breakage(document)
    with pytest.raises(UsageError) as caught:
        check_results(document, "r.json")
    assert said in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.exit_code == 2


def test_reading_back_refuses_missing_garbled_and_invalid_files(tmp_path: Path) -> None:
    garbled = tmp_path / "garbled.json"
    garbled.write_text("{not json", encoding="utf-8")
    invalid = tmp_path / "invalid.json"
    invalid.write_text('{"format_version": "1.0"}', encoding="utf-8")
    for path, said in ((tmp_path / "absent.json", "cannot read"), (garbled, "not JSON"),
                       (invalid, "not a results file of format 1.x")):  # fmt: skip
        with pytest.raises(UsageError, match=said):
            load_results(path)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(sample_document()), encoding="utf-8")
    assert load_results(good)["format_version"] == FORMAT_VERSION


def test_latest_points_at_the_last_run(tmp_path: Path) -> None:
    first, second = tmp_path / "run-1", tmp_path / "run-2"
    for run in (first, second):
        run.mkdir()
        (run / "results.json").write_text(run.name, encoding="utf-8")
    point_latest(tmp_path, first)
    latest = point_latest(tmp_path, second)
    assert latest.is_symlink() and (latest / "results.json").read_text() == "run-2"
    assert not any(p.name.startswith(".latest") for p in tmp_path.iterdir())


def test_latest_is_a_copy_where_symlinks_fail(tmp_path: Path, monkeypatch) -> None:
    def refuse(self, target, target_is_directory=False):
        raise OSError("symlinks not supported here")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    for name in ("run-1", "run-2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(name, encoding="utf-8")
        latest = point_latest(tmp_path, tmp_path / name)
    assert not latest.is_symlink() and (latest / "results.json").read_text() == "run-2"


def test_an_unwritable_report_dir_is_one_clear_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")  # a file where a directory is due (root or not)
    with pytest.raises(UsageError, match=r"report dir .*a-file/run: cannot write there") as caught:
        prepare_report_dir(blocker / "run")
    assert caught.value.exit_code == 2


def test_run_with_an_unwritable_report_dir_exits_2_before_any_target(
    tmp_path: Path, capsys
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    assert cli.main(["run", "--report-dir", str(blocker)]) == 2
    assert "cannot write there" in one_line(capsys.readouterr().err)
    summary = blocker / "summary.md"
    assert cli.main(["run", "--report-dir", str(tmp_path), "--summary-md", str(summary)]) == 2
    assert "--summary-md" in one_line(capsys.readouterr().err)


def test_the_report_command_renders_again_from_results_and_refuses_bad_ones(
    tmp_path: Path, capsys
) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps(sample_document()), encoding="utf-8")
    summary = tmp_path / "summary.md"
    assert cli.main(["report", str(results), "--out", str(tmp_path / "again"),
                     "--summary-md", str(summary)]) == 0  # fmt: skip
    assert "VIOLATIONS FOUND" in capsys.readouterr().out
    assert (tmp_path / "again" / "report.html").exists() and (tmp_path / "again" / "junit.xml")
    assert summary.read_text(encoding="utf-8").startswith("### Delivery API v1 conformance")
    results.write_text('{"format_version": "1.0", "run": {}}', encoding="utf-8")
    assert cli.main(["report", str(results)]) == 2
    assert "not a results file of format 1.x" in one_line(capsys.readouterr().err)


def test_the_step_summary_is_short_and_names_the_failures() -> None:
    text = render_summary_markdown(sample_document(), "reports/latest/report.html")
    lines = text.splitlines()
    assert lines[0] == "### Delivery API v1 conformance: VIOLATIONS FOUND"
    assert len(lines) < 40
    assert "| HDR | 1 | 1 | 1 | 1 | 1 |" in text  # HDR-006 was not selected: not missed
    assert "- **HDR-002** (failed): Service-API-Status not beta: expected beta; got ga" in text
    assert "- **HDR-003** (warning)" in text and "- **unattributed**: undocumented status" in text
    assert text.rstrip().endswith("`reports/latest/report.html`")
    for secret in SECRETS:
        assert secret not in text
    clean = render_summary_markdown(clean_document())
    assert "CONFORMING" in clean and "- **" not in clean and "| HDR |" not in clean


def test_pytest_report_dir_unwritable_is_a_usage_error_before_any_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest('pytest_plugins = ["delivery_conformance.suite.plugin"]\n')
    (pytester.path / "target.toml").write_text(PROFILE_TEXT, encoding="utf-8")
    (pytester.path / "blocker").write_text("", encoding="utf-8")
    pytester.makepyfile(
        'import pytest\n@pytest.mark.requirement("HDR-001")\ndef test_x():\n    pass\n'
    )
    result = pytester.runpytest("--target", "target.toml", "--report-dir", "blocker/out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "report dir blocker/out: cannot write there" in one_line(result.stderr.str())
    result.stdout.no_fnmatch_line("*1 passed*")


def test_the_schema_knows_every_verdict_word_of_the_verdict_table() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    words = schema["properties"]["run"]["properties"]["verdict_word"]["enum"]
    assert words == [v.word for v in Verdict]


def test_latest_that_cannot_be_made_is_one_line_and_keeps_the_run(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    monkeypatch.setattr("shutil.copytree", refuse)
    run = tmp_path / "run-1"
    write_reports(sample_summary(), run)
    finish_outputs(sample_summary(), tmp_path, run)
    assert "latest not updated (No space left on device)" in one_line(capsys.readouterr().err)
    assert (run / "report.html").exists()
