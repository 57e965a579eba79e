"""A `Comparison` (reports/compare.py) as text (stdout), Markdown (`--summary-md`, a PR comment)
and a self-contained HTML page (`--html`, templates/compare.html.j2). Pure: strings out.

Every rendering shows, in this order: the verdict of each run, regression or not and why, the
coverage and duration change, the requirements of each change class (unchanged ones counted
only), the largest per-test duration moves, then the behavioural changes (report only unless
`--fail-on-behaviour`), or that a run did not record them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from delivery_conformance.reports.compare import Change, Comparison, RequirementChange

__all__ = ["LISTED", "render_html", "render_markdown", "render_text"]

LISTED = 15  # requirements listed per change class in Markdown before "and N more"
SHOWN = tuple(c for c in Change if c is not Change.UNCHANGED)

_ENV = Environment(
    loader=PackageLoader("delivery_conformance.reports", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["code"] = lambda text: Markup(  # escape, then show `backticked` parts as <code>
    re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text)))
)


def _coverage(coverage: Mapping[str, Any]) -> str:
    return f"{coverage['exercised']}/{coverage['selected']} ({coverage['percent']} %)"


def _signed(seconds: float) -> str:
    return f"{seconds:+.2f} s"


def headline(comparison: Comparison, fail_on_behaviour: bool = False) -> str:
    """`REGRESSION: 1 new failure, ...` or `no regression`."""
    why = comparison.regressions()
    if fail_on_behaviour and comparison.behaviour:
        why.append(f"{len(comparison.behaviour)} behavioural changes")
    return f"REGRESSION: {', '.join(why)}" if why else "no regression"


def facts(comparison: Comparison) -> list[str]:
    c = comparison
    delta = c.new.duration - c.old.duration
    tests = f"tests: {c.tests_added} added, {c.tests_removed} removed"
    return [
        f"verdict: {c.old.verdict} -> {c.new.verdict}",
        f"coverage: {_coverage(c.old.coverage)} -> {_coverage(c.new.coverage)}",
        f"duration: {c.old.duration:.1f} s -> {c.new.duration:.1f} s ({_signed(delta)}); {tests}",
        "requirements: " + ", ".join(f"{n} {name}" for name, n in c.counts().items()),
    ]


def behaviour_note(comparison: Comparison, fail_on_behaviour: bool = False) -> str:
    if comparison.behaviour is None:
        return (
            f"behaviour: not recorded (results format {comparison.old.format} -> "
            f"{comparison.new.format}: `run.observed` is in format 1.3 and later)"
        )
    if not comparison.behaviour:
        return "behaviour: no change seen"
    counted = "a regression (--fail-on-behaviour)" if fail_on_behaviour else "report only"
    return f"behaviour: {len(comparison.behaviour)} changes ({counted})"


def _requirement_line(change: RequirementChange) -> str:
    line = f"{change.id}  {change.old} -> {change.new}  {change.statement}"
    return f"{line}  [{change.note}]" if change.note else line


def render_text(comparison: Comparison, old: str, new: str, fail_on_behaviour: bool) -> str:
    out = [
        f"compare {old} -> {new} ({comparison.kind}, results format "
        f"{comparison.old.format} -> {comparison.new.format})",
        headline(comparison, fail_on_behaviour),
        *facts(comparison),
    ]
    for change in SHOWN:
        listed = comparison.of(change)
        if listed:
            out += ["", f"{change.value} ({len(listed)}):"]
            out += [f"  {_requirement_line(r)}" for r in listed]
    if comparison.new_unattributed:
        out += ["", f"new unattributed findings ({len(comparison.new_unattributed)}):"]
        out += [f"  {line}" for line in comparison.new_unattributed]
    if comparison.moves:
        out += ["", "largest duration moves:"]
        out += [
            f"  {_signed(m.delta)}  {m.nodeid} ({m.old:.2f} -> {m.new:.2f} s)"
            for m in comparison.moves
        ]
    out += ["", behaviour_note(comparison, fail_on_behaviour)]
    out += [f"  {b.line()}" for b in comparison.behaviour or ()]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def render_markdown(comparison: Comparison, fail_on_behaviour: bool = False) -> str:
    c = comparison
    out = [
        f"### Delivery API v1 conformance, compared: {headline(c, fail_on_behaviour)}",
        "",
        "| | old | new |",
        "|---|---|---|",
        f"| verdict | {c.old.verdict} | {c.new.verdict} |",
        f"| coverage | {_coverage(c.old.coverage)} | {_coverage(c.new.coverage)} |",
        f"| duration | {c.old.duration:.1f} s | {c.new.duration:.1f} s |",
        f"| results format | {c.old.format} | {c.new.format} |",
        "",
        "| change | requirements |",
        "|---|---:|",
        *(f"| {name} | {n} |" for name, n in c.counts().items()),
    ]
    for change in SHOWN:
        listed = c.of(change)
        if not listed:
            continue
        out += ["", f"**{change.value}** ({len(listed)})", ""]
        out += [
            f"- **{r.id}** {r.old} → {r.new}: {_cell(r.note or r.statement)}"
            for r in listed[:LISTED]
        ]
        if len(listed) > LISTED:
            out.append(f"- … and {len(listed) - LISTED} more")
    if c.new_unattributed:
        out += ["", f"**new unattributed findings** ({len(c.new_unattributed)})", ""]
        out += [f"- {_cell(line)}" for line in c.new_unattributed[:LISTED]]
    out += ["", _cell(behaviour_note(c, fail_on_behaviour))]
    if c.behaviour:
        out += [""] + [f"- {_cell(b.line())}" for b in c.behaviour[:LISTED]]
        if len(c.behaviour) > LISTED:
            out.append(f"- … and {len(c.behaviour) - LISTED} more")
    return "\n".join(out) + "\n"


def render_html(comparison: Comparison, old: str, new: str, fail_on_behaviour: bool) -> str:
    return _ENV.get_template("compare.html.j2").render(
        c=comparison,
        old=old,
        new=new,
        headline=headline(comparison, fail_on_behaviour),
        facts=facts(comparison),
        classes=[(change.value, comparison.of(change)) for change in SHOWN],
        behaviour_note=behaviour_note(comparison, fail_on_behaviour),
    )
