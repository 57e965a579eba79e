"""What a person reads of a run, as plain values: the shared view of report.html, junit.xml and
the Markdown step summary (pure: no I/O, no clock).

Everything here is computed from the results document (`report.results_document`), so a report
can be rendered again from a results.json read back. Identical findings are collapsed (same
requirement, title, expectation and route, as the verdict counts them), with a count and the
scenarios that showed them; bodies are
pretty-printed, capped around the offending line, and the header or field a finding names is
marked. Values are redacted once more on the way out (they were redacted at capture already).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from delivery_conformance.evidence.redact import redact_headers, redact_json, redact_text
from delivery_conformance.reports.reproduce import numbered_findings

__all__ = [
    "BODY_LINES",
    "ExchangeView",
    "ExpectedView",
    "FindingView",
    "GroupView",
    "Line",
    "RequirementView",
    "RunView",
    "build_view",
    "safe_url",
    "section_anchor",
    "verdict_word",
]

BODY_LINES = 40  # lines of a pretty-printed body shown around the offending one
STATUS_ORDER = (
    "failed", "warning", "error", "not exercised", "passed", "not selected", "not applicable",
    "not testable", "load campaign", "not covered",
)  # fmt: skip
NOT_SELECTED = "not selected"  # left out by -k / --requirement: not part of this run's coverage
FILTERS = ("failed", "warning", "not exercised", "passed")  # the rest shows under "other"
# Words too common in finding texts to mark a JSON key by (they would mark half the body).
_COMMON_KEYS = frozenset({"data", "items", "id", "links", "meta", "none", "null", "true", "false"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_SLUG = re.compile(r"[^a-z0-9]+")
_CUT = re.compile(r"…\[\d+ more characters\]$")  # what Exchange's cap appends


def section_anchor(section: str) -> str:
    """The HTML id of a spec heading path (`Errors > Playback` -> `s-errors-playback`)."""
    return "s-" + _SLUG.sub("-", section.lower()).strip("-")


def safe_url(url: str) -> str:
    """A target URL fit to print: any `user:password@` part is dropped."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def verdict_word(run: Mapping[str, Any]) -> str:
    """The verdict word of a run (`VIOLATIONS FOUND`), read from its verdict line."""
    word = run.get("verdict_word")
    if isinstance(word, str) and word:
        return word
    return str(run.get("verdict", "")).split(":", 1)[0].strip() or "UNKNOWN"


@dataclass(frozen=True)
class Line:
    text: str
    marked: bool = False


@dataclass(frozen=True)
class ExchangeView:
    request_line: str
    request_headers: tuple[Line, ...]
    request_body: tuple[Line, ...]
    status_line: Line
    response_headers: tuple[Line, ...]
    response_body: tuple[Line, ...]
    body_note: str  # "lines 12-51 of 230 shown" when capped


@dataclass(frozen=True)
class FindingView:
    anchor: str
    requirement_id: str
    title: str
    expected: str | None  # None when it said nothing ("none", empty)
    actual: str
    severity: str
    count: int
    tests: tuple[str, ...]
    exchange: ExchangeView | None
    number: int = 0  # its number in the run's `findings` (replay RESULTS --finding N)
    curl: str | None = None  # the request again, the key from DELIVERY_KEY_<ROLE>
    not_replayable: str = ""  # why there is no curl line

    def reproduce(self) -> str:
        """One line: the finding's number and its curl line, or why it cannot be sent again."""
        if not self.number:
            return ""
        if self.curl:
            return f"reproduce finding {self.number}: {self.curl}"
        return f"finding {self.number} cannot be replayed: {self.not_replayable}"

    def message(self) -> str:
        """One line: what was due and what came."""
        due = f"expected {self.expected}; " if self.expected else ""
        return f"{self.title}: {due}got {self.actual}"


@dataclass(frozen=True)
class ExpectedView:
    """An expected-failures entry that lists a requirement, and how this run left it."""

    reason: str
    expires: str
    state: str  # held, fixed, expired, not judged (reports.results.EXPECTED_STATES)

    def words(self) -> str:
        said = {
            "held": f"expected failure, accepted until {self.expires}",
            "fixed": "listed as expected, but it passed: remove the entry",
            "expired": f"expected-failure entry expired on {self.expires}: not applied",
            "not judged": f"listed as expected (until {self.expires}); not judged in this run",
        }
        return f"{said.get(self.state, self.state)}: {self.reason}"


@dataclass(frozen=True)
class RequirementView:
    id: str
    group: str
    status: str
    level: str
    section: str
    statement: str
    tests: tuple[str, ...]
    reasons: tuple[str, ...]
    findings: tuple[FindingView, ...]
    duration: float = 0.0  # seconds of the scenarios that name it (shared ones counted in each)
    expected: ExpectedView | None = None  # listed in the run's expected failures

    @property
    def filter(self) -> str:
        return self.status if self.status in FILTERS else "other"


@dataclass(frozen=True)
class GroupView:
    """One group of requirements in the report, with its counts by status."""

    name: str
    requirements: tuple[RequirementView, ...]
    counts: Mapping[str, int]


@dataclass(frozen=True)
class RunView:
    """The run as the report shows it: its verdict word and line, exit code and target."""

    word: str
    line: str
    exit_code: int
    target: str
    tool_version: str
    format_version: str
    seed: Any
    started_at: float
    duration: float
    pacing: bool
    service_versions: tuple[str, ...]
    coverage: Mapping[str, Any]
    counts: Mapping[str, int]
    groups: tuple[GroupView, ...]
    client: tuple[RequirementView, ...]
    unattributed: tuple[FindingView, ...]
    not_exercised: tuple[RequirementView, ...]
    statuses: tuple[str, ...] = STATUS_ORDER
    filters: tuple[str, ...] = field(default=FILTERS)

    @property
    def failed(self) -> tuple[RequirementView, ...]:
        return tuple(r for g in self.groups for r in g.requirements if r.status == "failed")

    @property
    def warnings(self) -> tuple[RequirementView, ...]:
        return tuple(r for g in self.groups for r in g.requirements if r.status == "warning")

    @property
    def expected(self) -> tuple[RequirementView, ...]:
        """The requirements the run's expected-failures file lists, in file order of the spec."""
        return tuple(r for g in self.groups for r in g.requirements if r.expected is not None)


def build_view(document: Mapping[str, Any]) -> RunView:
    """The view of one results document (see schemas/results.schema.json)."""
    run = document["run"]
    shown_by = _tests_by_finding(document.get("tests", ()))
    numbered = _numbered(document)
    durations = {str(t["nodeid"]): float(t.get("duration", 0.0)) for t in document.get("tests", ())}
    missing = _selected_but_not_exercised(run)
    requirements = tuple(
        _unselected(_requirement(r, shown_by, durations, numbered), missing)
        for r in document["requirements"]
    )
    groups: dict[str, list[RequirementView]] = {}
    for view in requirements:
        groups.setdefault(view.group, []).append(view)
    stray = [
        *document.get("unattributed_findings", ()),
        *document.get("violations_of_unknown_requirements", ()),
    ]
    counts = _count(requirements)
    return RunView(
        word=verdict_word(run),
        line=str(run.get("verdict", "")),
        exit_code=int(run.get("exit_code", 0)),
        target=safe_url(str(run.get("base_url", ""))),
        tool_version=str(document.get("tool", {}).get("version", run.get("harness_version", ""))),
        format_version=str(document.get("format_version", "")),
        seed=run.get("seed"),
        started_at=float(run.get("started_at", 0.0)),
        duration=float(run.get("duration_seconds", 0.0)),
        pacing=bool(run.get("pacing", True)),
        service_versions=tuple(run.get("service_versions_seen", ())),
        coverage=_coverage(run, requirements),
        counts=counts,
        groups=tuple(
            GroupView(name, tuple(views), _count(views)) for name, views in groups.items()
        ),
        client=tuple(
            _requirement(r, shown_by, durations, numbered)
            for r in document.get("client_requirements", ())
        ),
        unattributed=_collapse("unattributed", stray, shown_by, numbered),
        not_exercised=tuple(r for r in requirements if r.status == "not exercised"),
    )


def _selected_but_not_exercised(run: Mapping[str, Any]) -> set[str] | None:
    listed = run.get("coverage", {}).get("not_exercised")
    return {str(e["id"]) for e in listed} if isinstance(listed, list) else None


def _unselected(view: RequirementView, missing: set[str] | None) -> RequirementView:
    """A `not exercised` row the run never selected is shown as `not selected` (the coverage
    figure leaves it out too), so a narrowed run lists only what it failed to reach."""
    if view.status == "not exercised" and missing is not None and view.id not in missing:
        return replace(view, status=NOT_SELECTED)
    return view


def _count(views: Iterable[RequirementView]) -> dict[str, int]:
    counts = dict.fromkeys(STATUS_ORDER, 0)
    for view in views:
        counts[view.status] = counts.get(view.status, 0) + 1
    return counts


def _coverage(run: Mapping[str, Any], requirements: tuple[RequirementView, ...]) -> dict[str, Any]:
    """selected / exercised / percent, whichever shape the summary wrote."""
    given = run.get("coverage", {})
    if "selected" in given:
        selected, exercised = int(given["selected"]), int(given.get("exercised", 0))
    else:  # format 1.0 of the summary: judged of testable
        selected, exercised = int(given.get("testable", 0)), int(given.get("judged", 0))
    percent = given.get("percent")
    if percent is None:
        percent = round(100.0 * exercised / selected, 1) if selected else 0.0
    return {"selected": selected, "exercised": exercised, "percent": percent}


def _requirement(
    data: Mapping[str, Any],
    shown_by: Mapping[tuple[str, ...], list[str]],
    durations: Mapping[str, float],
    numbered: Mapping[tuple[str, ...], Mapping[str, Any]],
) -> RequirementView:
    rid = str(data["id"])
    tests = tuple(str(t) for t in data.get("tests", ()))
    return RequirementView(
        id=rid,
        group=rid.split("-", 1)[0],
        status=str(data["status"]),
        level=str(data.get("level", "")),
        section=str(data.get("section", "")),
        statement=redact_text(str(data.get("statement", ""))),
        tests=tests,
        reasons=tuple(redact_text(str(r)) for r in data.get("reasons", ())),
        findings=_collapse(rid, data.get("violations", ()), shown_by, numbered),
        duration=sum(durations.get(t, 0.0) for t in tests),
        expected=_expected(data.get("expected")),
    )


def _expected(data: Any) -> ExpectedView | None:
    if not isinstance(data, Mapping):
        return None
    return ExpectedView(
        reason=redact_text(str(data.get("reason", ""))),
        expires=str(data.get("expires", "")),
        state=str(data.get("state", "")),
    )


def _key(violation: Mapping[str, Any]) -> tuple[str, ...]:
    """One defect seen several times is one finding: same rule, expectation and route (the
    key of `results.finding_key`, read from a results document)."""
    head = tuple(str(violation.get(k, "")) for k in ("requirement_id", "title", "expected"))
    exchange = violation.get("exchange")
    if not exchange:
        return head
    path = str(exchange.get("url", "")).split("://", 1)[-1].partition("/")[2].split("?", 1)[0]
    route = "/" + "/".join(
        "{id}" if any(c.isdigit() for c in part) and len(part) > 8 else part
        for part in path.split("/")
    )
    return (*head, str(exchange.get("method", "")), route, str(exchange.get("status")))


def _numbered(document: Mapping[str, Any]) -> dict[tuple[str, ...], Mapping[str, Any]]:
    """The run's numbered findings by key (made from its tests for results before 1.3)."""
    findings = document.get("findings")
    if not isinstance(findings, list):
        findings = numbered_findings(document)
    return {_key(finding): finding for finding in findings}


def _tests_by_finding(tests: Iterable[Mapping[str, Any]]) -> dict[tuple[str, ...], list[str]]:
    found: dict[tuple[str, ...], list[str]] = {}
    for test in tests:
        for violation in test.get("violations", ()):
            found.setdefault(_key(violation), []).append(str(test["nodeid"]))
    return found


def _collapse(
    anchor_base: str,
    violations: Iterable[Mapping[str, Any]],
    shown_by: Mapping[tuple[str, ...], list[str]],
    numbered: Mapping[tuple[str, ...], Mapping[str, Any]],
) -> tuple[FindingView, ...]:
    firsts: dict[tuple[str, ...], Mapping[str, Any]] = {}
    counts: dict[tuple[str, ...], int] = {}
    for violation in violations:
        key = _key(violation)
        firsts.setdefault(key, violation)
        counts[key] = counts.get(key, 0) + 1
    views = []
    for index, (key, violation) in enumerate(firsts.items(), start=1):
        expected = redact_text(str(violation.get("expected", "")))
        actual = redact_text(str(violation.get("actual", "")))
        title = redact_text(str(violation.get("title", "")))
        rid = str(violation.get("requirement_id", ""))
        if rid and title.startswith(f"{rid} "):  # "PLAY-012 not met" beside the ID says it twice
            title = title[len(rid) + 1 :]
        exchange = violation.get("exchange")
        reproduction = numbered.get(key, {})
        views.append(
            FindingView(
                anchor=f"{anchor_base}-f{index}",
                requirement_id=rid,
                title=title,
                expected=None if expected.strip().lower() in ("", "none") else expected,
                actual=actual,
                severity=str(violation.get("severity", "error")),
                count=counts[key],
                tests=tuple(dict.fromkeys(shown_by.get(key, ()))),
                exchange=_exchange(exchange, f"{title} {expected} {actual}") if exchange else None,
                number=int(reproduction.get("number") or 0),
                curl=reproduction.get("curl"),
                not_replayable=str(reproduction.get("not_replayable") or ""),
            )
        )
    return tuple(views)


def _exchange(data: Mapping[str, Any], finding: str) -> ExchangeView:
    words = {w.lower() for w in _WORD.findall(finding)}
    words |= {part for w in words for part in re.split(r"[-_.]", w) if len(part) > 2}
    keys = {w for w in words if w not in _COMMON_KEYS and len(w) > 1}
    request_body = _body(str(data.get("request_body") or ""), keys)[0]
    response_body, note = _body(str(data.get("response_body") or ""), keys)
    status = data.get("status")
    status_text = f"HTTP {status}" if status is not None else f"no response ({data.get('error')})"
    return ExchangeView(
        request_line=f"{data.get('method', '')} {redact_text(str(data.get('url', '')))}",
        request_headers=_headers(data.get("request_headers") or {}, words),
        request_body=request_body,
        status_line=Line(status_text, _names_status(status, finding)),
        response_headers=_headers(data.get("response_headers") or {}, words),
        response_body=response_body,
        body_note=note,
    )


def _names_status(status: Any, finding: str) -> bool:
    return status is not None and re.search(rf"\b{status}\b", finding) is not None


def _headers(headers: Mapping[str, str], words: set[str]) -> tuple[Line, ...]:
    return tuple(
        Line(f"{name}: {value}", name.lower() in words)
        for name, value in redact_headers(headers).items()
    )


def _body(body: str, keys: set[str]) -> tuple[tuple[Line, ...], str]:
    """Pretty-printed, redacted lines; the lines of named keys marked; capped around the first."""
    if not body:
        return (), ""
    try:
        text = json.dumps(redact_json(json.loads(body)), indent=2, ensure_ascii=False)
    except ValueError:
        text = _reindent(redact_text(body))
    lines = [Line(t, _names_key(t, keys)) for t in text.splitlines()]
    if len(lines) <= BODY_LINES:
        return tuple(lines), ""
    first = next((i for i, line in enumerate(lines) if line.marked), 0)
    start = max(0, min(first - BODY_LINES // 4, len(lines) - BODY_LINES))
    shown = lines[start : start + BODY_LINES]
    return tuple(shown), f"lines {start + 1}-{start + len(shown)} of {len(lines)} shown"


def _reindent(text: str) -> str:
    """Indent JSON that does not parse (cut at the capture cap), as far as it goes."""
    cut = _CUT.search(text)
    tail = text[cut.start() :] if cut else ""
    text = text[: cut.start()] if cut else text
    if not text.lstrip().startswith(("{", "[")):
        return text + tail
    out: list[str] = []
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            out.append(char)
            in_string = True
        elif char in "{[":
            depth += 1
            out.append(char + "\n" + "  " * depth)
        elif char in "}]":
            depth = max(0, depth - 1)
            out.append("\n" + "  " * depth + char)
        elif char == ",":
            out.append(",\n" + "  " * depth)
        elif char == ":":
            out.append(": ")
        elif not char.isspace():
            out.append(char)
    return "".join(out) + ("\n" + tail if tail else "")


def _names_key(line: str, keys: set[str]) -> bool:
    match = re.match(r'\s*"([^"]+)"\s*:', line)
    scalar = not line.rstrip().endswith(("{", "["))  # mark the leaf, not its container
    return match is not None and scalar and match.group(1).lower() in keys
