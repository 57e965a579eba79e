"""The report writer: consumes run events, writes every report file of a run.

    reports/<run id>/results.json  (schemas/results.schema.json, format FORMAT_VERSION)
    reports/<run id>/report.html   (self-contained, for a person; see report_html)
    reports/<run id>/spec.html     (the spec with heading anchors, linked from report.html)
    reports/<run id>/junit.xml     (our own: one case per requirement; see report_junit)
    reports/latest                 (a symlink to the last run, or a copy where links fail)
    --summary-md FILE              (a short Markdown summary appended, for CI step summaries)
    --har FILE                     (every exchange of the run as HAR 1.2: reports/har.py)

It only consumes events (`pytest_conformance_event`); it never looks at pytest internals.
Everything written comes from redacted exchanges and typed violations; the three renderings are
made from the results document, so they can be made again from a results.json read back.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from delivery_conformance import __version__
from delivery_conformance.evidence.events import Event, RunFinished
from delivery_conformance.evidence.redact import Redactor
from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.har import har_log
from delivery_conformance.reports.html import find_spec, render_html, render_spec, spec_anchors
from delivery_conformance.reports.junit import TOOL, render_junit
from delivery_conformance.reports.markdown import render_summary_markdown
from delivery_conformance.reports.reproduce import numbered_findings
from delivery_conformance.reports.results import RunSummary, summarise
from delivery_conformance.reports.view import safe_url
from delivery_conformance.spec.files import read_parsed
from delivery_conformance.spec.requirements import default_path, load_requirements

__all__ = [
    "FORMAT_VERSION",
    "SCHEMA_PATH",
    "ReportWriter",
    "check_results",
    "finish_outputs",
    "load_results",
    "point_latest",
    "prepare_outputs",
    "prepare_report_dir",
    "results_document",
    "run_info",
    "write_har",
    "write_reports",
    "write_summary_markdown",
]

# 1.1: status "load campaign", field load_campaign; 1.2: "not applicable"; 1.3: run.observed,
# run.policy.expected_failures and a requirement's `expected`, numbered `findings` (curl lines)
FORMAT_VERSION = "1.3"
SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "results.schema.json"
LATEST = "latest"


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def run_info() -> dict[str, Any]:
    """What identifies the harness side of a run: version and the spec files' hashes."""
    spec_dir = default_path().parent
    return {
        "harness_version": __version__,
        "python": platform.python_version(),
        "openapi_sha256": _sha256(spec_dir / "openapi.yaml"),
        "requirements_sha256": _sha256(spec_dir / "requirements.yaml"),
    }


def results_document(summary: RunSummary) -> dict[str, Any]:
    """results.json: the summary with its format version and the tool that wrote it."""
    data = _scrub(summary.to_dict())
    data["run"]["base_url"] = safe_url(str(data["run"].get("base_url", "")))
    data["findings"] = numbered_findings(data)  # from the redacted exchanges: no key in them
    tool = {"name": TOOL, "version": __version__}
    return {"format_version": FORMAT_VERSION, "tool": tool, **data}


def _scrub(value: Any, redactor: Redactor | None = None) -> Any:
    """Redact once more on the way out: exchanges field by field, every other string as text.

    Exchanges were redacted when captured; this keeps a record built any other way (or a
    pattern added later) from reaching a file."""
    redactor = redactor or Redactor()
    if isinstance(value, dict):
        if "method" in value and "request_headers" in value:  # an exchange
            out = dict(value)
            for name in ("request_headers", "response_headers"):
                out[name] = redactor.headers(value.get(name) or {})
            for name in ("request_body", "response_body"):
                out[name] = redactor.body(value[name]) if value.get(name) else ""
            out["url"] = redactor.text(str(value.get("url", "")))
            if value.get("error"):
                out["error"] = redactor.text(str(value["error"]))
            return out
        return {key: _scrub(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item, redactor) for item in value]
    if isinstance(value, str):
        return redactor.text(value)
    return value


@cache
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def check_results(document: Any, where: str = "results") -> None:
    """Raise `UsageError` (one line) unless `document` follows the published schema."""
    error = best_match(Draft202012Validator(_schema()).iter_errors(document))
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path) or "top level"
        message = error.message if len(error.message) <= 120 else error.message[:117] + "..."
        raise UsageError(f"{where}: not a results file of format 1.x (at {path}: {message})")


def load_results(path: Path) -> dict[str, Any]:
    """Read a results.json back; any problem is a `UsageError` of one line (exit 2)."""
    document = read_parsed(path, json.loads, "not JSON", ValueError, UsageError)
    check_results(document, str(path))
    return dict(document)


def prepare_report_dir(directory: Path) -> None:
    """Create `directory` and prove it writable before anything runs (exit 2 when not)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / ".write-test"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        why = exc.strerror or exc.__class__.__name__
        raise UsageError(f"report dir {directory}: cannot write there ({why})") from None


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"report dir {path.parent}: cannot write {path.name} "
                         f"({exc.strerror or exc.__class__.__name__})") from None  # fmt: skip


def write_document(
    document: Mapping[str, Any], directory: Path, *, strict: bool | None = None
) -> Path:
    """Write results.json, report.html, spec.html and junit.xml; return report.html's path."""
    prepare_report_dir(directory)
    if strict is None:
        strict = bool(document["run"].get("policy", {}).get("strict", False))
    _write(directory / "results.json", json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    spec = find_spec()
    anchors: set[str] = set()
    if spec is not None:
        text = spec.read_text(encoding="utf-8")
        anchors = spec_anchors(text)
        sections: dict[str, list[str]] = {}
        for req in (*document["requirements"], *document["client_requirements"]):
            sections.setdefault(req["section"], []).append(req["id"])
        _write(directory / "spec.html", render_spec(text, sections))
    html_path = directory / "report.html"
    _write(html_path, render_html(document, anchors))
    _write(directory / "junit.xml", render_junit(document, strict=strict))
    return html_path


def write_reports(summary: RunSummary, directory: Path, *, strict: bool | None = None) -> Path:
    """Write every report file of one run summary; return the path of report.html."""
    return write_document(results_document(summary), directory, strict=strict)


def write_summary_markdown(document: Mapping[str, Any], path: Path, report: Path) -> None:
    """The `--summary-md` file (appended to, as CI step-summary files are shared)."""
    try:
        with path.open("a", encoding="utf-8") as out:
            out.write(render_summary_markdown(document, str(report)))
    except OSError as exc:
        raise UsageError(f"--summary-md {path}: cannot write ({exc.strerror})") from None


def point_latest(report_dir: Path, run_dir: Path) -> Path:
    """Make `<report_dir>/latest` the last run: a relative symlink, or a copy where links fail."""
    latest = report_dir / LATEST
    temporary = report_dir / f".{LATEST}-{os.getpid()}"
    try:
        if temporary.is_symlink():
            temporary.unlink()
        temporary.symlink_to(run_dir.name, target_is_directory=True)
        if latest.is_dir() and not latest.is_symlink():
            shutil.rmtree(latest)  # a copy left by an earlier run where links failed
        os.replace(temporary, latest)
    except OSError:
        if temporary.is_symlink():
            temporary.unlink()
        if latest.is_symlink():
            latest.unlink()
        elif latest.exists():
            shutil.rmtree(latest)
        shutil.copytree(run_dir, latest)
    return latest


def prepare_outputs(run_dir: Path, summary_md: Path | None = None, har: Path | None = None) -> None:
    """Before a run: the report dir and the `--summary-md` and `--har` files must be writable
    (exit 2); a `--har` file that did not exist is not left behind by the probe."""
    prepare_report_dir(run_dir)
    if summary_md is not None:
        try:
            with summary_md.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            why = exc.strerror or exc.__class__.__name__
            raise UsageError(f"--summary-md {summary_md}: cannot write ({why})") from None
    if har is not None:
        existed = har.exists()
        try:
            with har.open("a", encoding="utf-8"):
                pass
            if not existed:
                har.unlink()
        except OSError as exc:
            why = exc.strerror or exc.__class__.__name__
            raise UsageError(f"--har {har}: cannot write ({why})") from None


def write_har(summary: RunSummary, path: Path) -> None:
    """The `--har` file: every exchange of the run, redacted, as HAR 1.2."""
    document = har_log(summary.tests, TOOL, __version__)
    try:
        path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
    except OSError as exc:
        raise UsageError(f"--har {path}: cannot write ({exc.strerror})") from None


def finish_outputs(
    summary: RunSummary,
    report_dir: Path,
    run_dir: Path,
    summary_md: Path | None = None,
    har: Path | None = None,
) -> None:
    """After a run: `<report_dir>/latest` points at it; the step summary and HAR are written."""
    if (run_dir / "results.json").exists():
        try:
            point_latest(report_dir, run_dir)
        except OSError as exc:  # the run and its report stand; only the pointer is missing
            why = exc.strerror or exc.__class__.__name__
            print(f"delivery-conformance: {report_dir / LATEST} not updated ({why})",
                  file=sys.stderr)  # fmt: skip
    if summary_md is not None:
        write_summary_markdown(results_document(summary), summary_md, run_dir / "report.html")
    if har is not None:
        write_har(summary, har)


class ReportWriter:
    """A pytest plugin object: collects events; on `RunFinished` writes the reports."""

    def __init__(
        self, directory: Path, *, announce: bool = True, strict: bool | None = None
    ) -> None:
        self.directory = directory
        self.announce = announce
        self.strict = strict
        self.events: list[Event] = []
        self.summary: RunSummary | None = None
        self.document: dict[str, Any] | None = None
        self.html_path: Path | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        """`pytest --report-dir` too: an unwritable dir is a usage error before any test."""
        try:
            prepare_report_dir(self.directory)
        except UsageError as error:
            raise pytest.UsageError(str(error)) from None

    def pytest_conformance_event(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, RunFinished):
            self.summary = summarise(load_requirements(), self.events, run_info())
            self.document = results_document(self.summary)
            self.html_path = write_document(self.document, self.directory, strict=self.strict)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.summary is not None and self.announce:
            terminalreporter.write_line(f"{self.summary.line()}; report: {self.html_path}")
