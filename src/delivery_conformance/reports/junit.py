"""junit.xml: one test case per requirement, grouped in one suite per requirement group.

Why per requirement and not per scenario: a CI dashboard lists failed test cases, and what a
server team must fix is a broken rule, not a pytest function; one scenario can prove several
requirements and one requirement is proved by several scenarios. So the case is named by the
requirement (`PLAY-012 <statement>`, stable across runs because IDs never change), its class is
its group (`PLAY`), and the scenarios that judged it are its evidence (in system-out).

    failed             <failure> (first line: the first finding, title, expected, actual)
    warning            passed, the finding in system-out; <failure> with strict (not for a
                       failure an in-date expected-failures entry accepts)
    error              <error> (the harness could not judge it)
    not exercised,
    not applicable,
    not testable,
    load campaign,
    not covered        <skipped> with the reason ("not exercised" is never "passed")
    passed             an empty case

Findings no requirement names get one failed case of their own, and so does each expired
expected-failures entry (it fails the run whatever its requirement did). Client-side
requirements are not judged by a server run and are left out, and so are requirements the run
did not select (-k, --requirement). Suites are named after the tool and the target.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from delivery_conformance.reports.view import (
    NOT_SELECTED,
    FindingView,
    RequirementView,
    build_view,
)

__all__ = ["TOOL", "render_junit"]

TOOL = "delivery-conformance"
MESSAGE_CAP = 300
NAME_CAP = 90


def _cap(text: str, size: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1] + "…"


def _evidence(findings: tuple[FindingView, ...], tests: tuple[str, ...]) -> str:
    lines = []
    for finding in findings:
        times = f" (x{finding.count})" if finding.count > 1 else ""
        lines.append(f"{finding.message()}{times}")
        if finding.exchange is not None:
            lines.append(
                f"  {finding.exchange.request_line} -> {finding.exchange.status_line.text}"
            )
        if finding.reproduce():
            lines.append(f"  {finding.reproduce()}")
    if tests:
        lines.append("scenarios:")
        lines += [f"  {nodeid}" for nodeid in tests]
    return "\n".join(lines)


SKIPPED = ("not exercised", "not applicable", "not testable", "load campaign", "not covered")


def _case(suite: ET.Element, req: RequirementView, strict: bool) -> str:
    case = ET.SubElement(
        suite, "testcase", classname=req.group, name=_cap(f"{req.id} {req.statement}", NAME_CAP)
    )
    case.set("time", f"{req.duration:.3f}")
    first = req.findings[0].message() if req.findings else ""
    outcome = req.status
    accepted = req.expected is not None and req.expected.state == "held"
    if req.status == "failed" or (req.status == "warning" and strict and not accepted):
        element = ET.SubElement(case, "failure", type=req.status)
        element.set("message", _cap(f"{req.id}: {first}", MESSAGE_CAP))
        element.text = "\n".join(f.reproduce() for f in req.findings if f.reproduce()) or None
        outcome = "failed"
    elif req.status == "error":
        element = ET.SubElement(case, "error", type="error")
        element.set("message", _cap(f"{req.id} could not be judged: {'; '.join(req.reasons)}",
                                    MESSAGE_CAP))  # fmt: skip
    elif req.status in SKIPPED:
        reason = "; ".join(req.reasons) or ("no scenario names it" if not req.tests else "")
        ET.SubElement(case, "skipped", message=_cap(f"{req.status}: {reason}", MESSAGE_CAP))
        outcome = "skipped"
    out = _evidence(req.findings, req.tests)
    if req.status == "warning" and not strict and not accepted:
        out = f"warning ({req.level} not met): {out}"
    if req.expected is not None:
        out = f"{req.expected.words()}\n{out}".strip()
    if out:
        ET.SubElement(case, "system-out").text = out
    return outcome


def render_junit(document: Mapping[str, Any], *, strict: bool = False) -> str:
    """junit.xml of one results document; `strict` makes warnings failures."""
    view = build_view(document)
    stamp = dt.datetime.fromtimestamp(view.started_at, dt.UTC).isoformat(timespec="seconds")
    root = ET.Element("testsuites", name=f"{TOOL} {view.target}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    groups = [(g.name, g.requirements) for g in view.groups]
    for name, in_group in groups:
        requirements = tuple(r for r in in_group if r.status != NOT_SELECTED)
        if not requirements:
            continue
        suite = ET.SubElement(root, "testsuite", name=f"{TOOL} {name} @ {view.target}")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for req in requirements:
            outcome = _case(suite, req, strict)
            counts["tests"] += 1
            key = {"failed": "failures", "error": "errors", "skipped": "skipped"}.get(outcome)
            if key:
                counts[key] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{sum(r.duration for r in requirements):.3f}")
        suite.set("timestamp", stamp)
    if view.unattributed:
        suite = ET.SubElement(root, "testsuite", name=f"{TOOL} unattributed @ {view.target}")
        for finding in view.unattributed:
            case = ET.SubElement(suite, "testcase", classname="unattributed",
                                 name=_cap(f"finding: {finding.title}", NAME_CAP))  # fmt: skip
            failure = ET.SubElement(case, "failure", type="failed")
            failure.set("message", _cap(finding.message(), MESSAGE_CAP))
            failure.text = finding.reproduce() or None
            ET.SubElement(case, "system-out").text = _evidence((finding,), finding.tests)
        count = str(len(view.unattributed))
        suite.attrib.update(tests=count, failures=count, errors="0", skipped="0")
        totals["tests"] += len(view.unattributed)
        totals["failures"] += len(view.unattributed)
    expired = [(r.id, r.expected) for r in view.expected
               if r.expected is not None and r.expected.state == "expired"]  # fmt: skip
    if expired:
        suite = ET.SubElement(root, "testsuite", name=f"{TOOL} expected failures @ {view.target}")
        for rid, entry in expired:
            name = _cap(f"{rid} expected-failure entry", NAME_CAP)
            case = ET.SubElement(suite, "testcase", classname="expected-failures", name=name)
            failure = ET.SubElement(case, "failure", type="expired")
            failure.set("message", _cap(f"{rid}: {entry.words()}", MESSAGE_CAP))
        count = str(len(expired))
        suite.attrib.update(tests=count, failures=count, errors="0", skipped="0")
        totals["tests"] += len(expired)
        totals["failures"] += len(expired)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{view.duration:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"
