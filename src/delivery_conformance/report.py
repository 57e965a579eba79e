"""The report writer: consumes run events, writes results.json and report.html.

    reports/<run id>/junit.xml     (pytest's own --junitxml, one testcase per test)
    reports/<run id>/results.json  (run info, then every requirement with its status)
    reports/<run id>/report.html   (self-contained, for a person)

It only consumes events (`pytest_conformance_event`); it never looks at pytest internals.
Everything written comes from redacted exchanges and typed violations.
"""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path
from typing import Any

import pytest

from delivery_conformance import __version__
from delivery_conformance.events import Event, RunFinished
from delivery_conformance.report_html import render_html
from delivery_conformance.requirements import default_path, load_requirements
from delivery_conformance.results import RunSummary, summarise

__all__ = ["ReportWriter", "run_info", "write_reports"]


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


def write_reports(summary: RunSummary, directory: Path) -> Path:
    """Write results.json and report.html; return the path of report.html."""
    directory.mkdir(parents=True, exist_ok=True)
    data = summary.to_dict()
    (directory / "results.json").write_text(
        json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    html_path = directory / "report.html"
    html_path.write_text(render_html(summary), encoding="utf-8")
    return html_path


class ReportWriter:
    """A pytest plugin object: collects events; on `RunFinished` writes the reports."""

    def __init__(self, directory: Path, *, announce: bool = True) -> None:
        self.directory = directory
        self.announce = announce
        self.events: list[Event] = []
        self.summary: RunSummary | None = None
        self.html_path: Path | None = None

    def pytest_conformance_event(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, RunFinished):
            self.summary = summarise(load_requirements(), self.events, run_info())
            self.html_path = write_reports(self.summary, self.directory)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.summary is not None and self.announce:
            terminalreporter.write_line(f"{self.summary.line()}; report: {self.html_path}")
