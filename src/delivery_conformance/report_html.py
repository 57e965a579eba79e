"""report.html: one self-contained page (inline CSS, no script, no external asset).

Order: summary and coverage, then failures (requirement, statement, section, expected, actual,
the redacted request and response), then errors, then not exercised, then passed, then the rest.
Every value is escaped; every value was redacted before it reached the summary.
"""

from __future__ import annotations

import datetime as dt
import json
from html import escape

from delivery_conformance.exchange import Exchange
from delivery_conformance.results import RequirementResult, RunSummary, Status

__all__ = ["render_html"]

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.5rem}h2{margin-top:2rem;border-bottom:1px solid #ccc}
.verdict{padding:.6rem 1rem;border-radius:6px;font-weight:600}
.ok{background:#e3f6e3}.bad{background:#fde2e2}.warn{background:#fff3cd}
table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:left;vertical-align:top}
details{margin:.6rem 0;padding:.4rem .8rem;border:1px solid #ddd;border-radius:6px}
summary{cursor:pointer}pre{background:#f6f6f6;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
.id{font-family:monospace;font-weight:600}.muted{color:#666}
"""

ORDER = (
    Status.FAILED,
    Status.ERROR,
    Status.NOT_EXERCISED,
    Status.PASSED,
    Status.NOT_TESTABLE,
    Status.NOT_COVERED,
)
TITLES = {
    Status.FAILED: "Failed",
    Status.ERROR: "Could not be judged (harness error)",
    Status.NOT_EXERCISED: "Not exercised",
    Status.PASSED: "Passed",
    Status.NOT_TESTABLE: "Not testable from outside",
    Status.NOT_COVERED: "Not covered by any test",
}


def _exchange(exchange: Exchange | None) -> str:
    if exchange is None:
        return '<p class="muted">no exchange recorded</p>'
    request = "\n".join(
        [f"{exchange.method} {exchange.url}"]
        + [f"{k}: {v}" for k, v in exchange.request_headers.items()]
        + (["", exchange.request_body] if exchange.request_body else [])
    )
    status = exchange.status if exchange.status is not None else f"no response ({exchange.error})"
    response = "\n".join(
        [f"HTTP {status}"]
        + [f"{k}: {v}" for k, v in exchange.response_headers.items()]
        + (["", _pretty(exchange.response_body)] if exchange.response_body else [])
    )
    return f"<pre>{escape(request)}</pre><pre>{escape(response)}</pre>"


def _pretty(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:
        return body


def _requirement(result: RequirementResult) -> str:
    req = result.requirement
    head = (
        f'<summary><span class="id">{escape(req.id)}</span> {escape(req.statement)}'
        f' <span class="muted">({escape(req.section)})</span></summary>'
    )
    parts = [head]
    for violation in result.violations:
        parts.append(
            f"<p><b>{escape(violation.title)}</b><br>expected: {escape(violation.expected)}"
            f"<br>actual: {escape(violation.actual)}</p>{_exchange(violation.exchange)}"
        )
    if result.reasons:
        parts.append("<p>" + "<br>".join(escape(r) for r in result.reasons) + "</p>")
    if result.tests:
        parts.append(
            '<p class="muted">tests: ' + ", ".join(escape(t) for t in result.tests) + "</p>"
        )
    is_open = " open" if result.status is Status.FAILED else ""
    return f"<details{is_open}>{''.join(parts)}</details>"


def render_html(summary: RunSummary) -> str:
    code = summary.exit_code()
    css_class = {0: "ok", 1: "bad"}.get(code, "warn")
    judged, testable = summary.coverage()
    started = dt.datetime.fromtimestamp(summary.started_at, dt.UTC).isoformat(timespec="seconds")
    counts = summary.requirement_counts()
    rows = "".join(f"<tr><td>{escape(k)}</td><td>{v}</td></tr>" for k, v in counts.items())
    info = summary.extra
    versions = ", ".join(summary.service_versions) or "none"
    sections = []
    for status in ORDER:
        chosen = [r for r in summary.requirements if r.status is status]
        if chosen:
            body = "".join(_requirement(r) for r in chosen)
            sections.append(f"<h2>{TITLES[status]} ({len(chosen)})</h2>{body}")
    if summary.stray_violations:
        items = "".join(
            f"<p><span class='id'>{escape(v.requirement_id)}</span> {escape(v.title)}: "
            f"expected {escape(v.expected)}, actual {escape(v.actual)}</p>"
            for v in summary.stray_violations
        )
        sections.insert(0, f"<h2>Violations of unknown requirements</h2>{items}")
    client = summary.client_requirements
    client_html = "".join(_requirement(r) for r in client)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Delivery API v1 conformance report</title>
<style>{CSS}</style></head><body>
<h1>Delivery API v1 conformance report</h1>
<p class="verdict {css_class}">{escape(summary.line())}</p>
<table>
<tr><th>Target</th><td>{escape(summary.base_url)}</td></tr>
<tr><th>Service-Version seen</th><td>{escape(versions)}</td></tr>
<tr><th>Started (UTC)</th><td>{started}</td></tr>
<tr><th>Duration</th><td>{summary.duration:.1f} s</td></tr>
<tr><th>Seed</th><td>{escape(str(summary.seed))}</td></tr>
<tr><th>Pacing</th><td>{"on" if summary.pacing else "off"}</td></tr>
<tr><th>Harness</th><td>{escape(str(info.get("harness_version", "")))}</td></tr>
<tr><th>Coverage</th><td>{judged} of {testable} server requirements testable from outside</td></tr>
</table>
<h2>Requirements by status</h2><table>{rows}</table>
{"".join(sections)}
<h2>Client-side requirements ({len(client)}, not judged by a server run)</h2>{client_html}
</body></html>
"""
