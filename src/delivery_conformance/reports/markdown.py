"""The Markdown step summary (`run --summary-md FILE`): a few lines a CI page shows as is.

### Delivery API v1 conformance: VIOLATIONS FOUND
verdict line; target, duration, seed, tool version
one table row per requirement group where something failed or was missed, and the total
the failed and warning requirements (capped), each with its first finding
the expected-failures entries and how the run left them (held, fixed, expired, not judged)
where the full report is
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from delivery_conformance.reports.view import FindingView, RunView, build_view

__all__ = ["LISTED", "render_summary_markdown"]

LISTED = 15  # failed / warning requirements listed before "and N more"
COLUMNS = ("failed", "warning", "error", "not exercised", "passed")


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def render_summary_markdown(document: Mapping[str, Any], report: str = "") -> str:
    view = build_view(document)
    cov = view.coverage
    out = [
        f"### Delivery API v1 conformance: {view.word}",
        "",
        f"Exit code {view.exit_code}; coverage {cov['exercised']} of {cov['selected']} "
        f"requirements ({cov['percent']}%); target `{view.target}`; "
        f"{view.duration:.1f} s; seed {view.seed}; delivery-conformance {view.tool_version}.",
        "",
        "| group | " + " | ".join(COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    for group in view.groups:
        if not any(group.counts[c] for c in COLUMNS if c != "passed"):
            continue  # a group where nothing failed or was missed adds nothing to a summary
        out.append(f"| {group.name} | " + " | ".join(str(group.counts[c]) for c in COLUMNS) + " |")
    out.append("| **all** | " + " | ".join(f"**{view.counts[c]}**" for c in COLUMNS) + " |")
    listed = _findings(view)
    if listed:
        out += ["", *(f"- {line}" for line in listed[:LISTED])]
        if len(listed) > LISTED:
            out.append(f"- … and {len(listed) - LISTED} more")
    if view.expected:
        out += ["", "Expected failures (`--expected-failures`):", ""]
        out += [f"- **{r.id}** {r.expected.state}: {_cell(r.expected.words())}"
                for r in view.expected if r.expected is not None]  # fmt: skip
    if report:
        out += ["", f"Full report: `{report}`"]
    return "\n".join(out) + "\n"


def _findings(view: RunView) -> list[str]:
    lines = [f"**unattributed**: {_cell(f.message())}{_curl(f)}" for f in view.unattributed]
    for req in (*view.failed, *view.warnings):
        first = req.findings[0].message() if req.findings else req.statement
        accepted = " (expected)" if req.expected and req.expected.state == "held" else ""
        curl = _curl(req.findings[0]) if req.findings else ""
        lines.append(f"**{req.id}** ({req.status}{accepted}): {_cell(first)}{curl}")
    return lines


def _curl(finding: FindingView) -> str:
    """The finding's curl line as a code span, fenced by more backticks than it holds, so
    Markdown shows it exactly as written."""
    if finding.curl:
        fence = "`" * (max(map(len, re.findall("`+", finding.curl)), default=0) + 1)
        return f"; finding {finding.number}: {fence} {finding.curl} {fence}"
    if finding.number:
        return f"; finding {finding.number} cannot be replayed: {_cell(finding.not_replayable)}"
    return ""
