"""The harness's checks as Schemathesis checks: every generated response is held to the spec.

Each registered harness check (`delivery_conformance.checks.CHECKS`: common headers, no CORS, no
cookies, JSON labelling, error formats, request_id, Retry-After and X-RateLimit-* placement ...)
becomes a `@schemathesis.check` named `delivery_<name>`; `delivery_error_table` judges the status
and code of each answer by the spec's error tables (`rules.expected_answer`). A broken rule is
raised as `ContractViolation`, a Schemathesis `Failure` that carries the harness `Violation`, so
the requirement ID survives into Schemathesis's own output and into the harness reports.

The checks read only the response and the request Schemathesis recorded; what they need from
the target (which key plays which role, the pins, the secrets to redact) is set once with
`configure(profile)`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import schemathesis
from schemathesis.core.failures import Failure, Severity

from delivery_conformance.checks import CHECKS, Check, Violation, violation
from delivery_conformance.checks.common import decoded_headers
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.redact import Redactor
from delivery_conformance.properties.rules import documented, expected_answer
from delivery_conformance.spec.endpoints import Endpoint, match_endpoint
from delivery_conformance.spec.error_table import STRING_CODES_IN_ERROR
from delivery_conformance.spec.operations import Operation
from delivery_conformance.target.client import RequestContext
from delivery_conformance.target.client import Response as HarnessResponse
from delivery_conformance.target.profile import TargetProfile

__all__ = [
    "CHECK_NAMES",
    "OPERATION_ROLES",
    "ContractViolation",
    "configure",
    "harness_response",
    "violations_of",
]

# ARCHITECTURE.md > Key roles: the role whose scopes open each operation.
OPERATION_ROLES: dict[str, str] = {
    Operation.GET_CATALOG: "films",
    Operation.GET_CONFIG: "films",
    Operation.LIST_CREATIVES: "films",
    Operation.GET_CREATIVE: "films",
    Operation.GET_CREATIVE_FILE: "films",
    Operation.POST_PLAYBACK: "films",
    Operation.LIST_SERIES: "films",
    Operation.GET_SERIES: "films",
    Operation.LIST_PLAYLISTS: "videos",
    Operation.GET_PLAYLIST: "videos",
    Operation.LIST_VIDEOS: "videos",
    Operation.GET_VIDEO: "videos",
}


class ContractViolation(Failure):
    """A response broke one requirement of the Delivery API v1 (a harness `Violation`)."""

    code: ClassVar[str] = "DC001"
    kind_title: ClassVar[str] = "Delivery API contract broken"
    __slots__ = ("violation",)

    def __init__(self, found: Violation, operation: str | None) -> None:
        super().__init__(
            operation=operation,
            title=f"{found.requirement_id} {found.title}",
            message=f"Expected: {found.expected}\nActual: {found.actual}",
            severity=Severity.HIGH,
        )
        self.violation = found

    @property
    def _unique_key(self) -> str:
        return f"{self.violation.requirement_id}|{self.violation.title}"


@dataclass
class _Target:
    """What the checks know of the target: set by `configure`, grown by the cursors seen."""

    redactor: Redactor = field(default_factory=lambda: Redactor([]))
    roles: dict[str, str] = field(default_factory=dict)  # API key -> role
    pins: dict[str, str] = field(default_factory=dict)  # role -> pinned dated version
    # operation -> cursor issued -> the filters of the request that issued it
    cursors: dict[str, dict[str, frozenset[tuple[str, str]]]] = field(default_factory=dict)
    # The last response seen and its harness view: the fifteen checks of one response share it
    # instead of redacting the same (possibly large) body fifteen times.
    last: tuple[schemathesis.Response, HarnessResponse] | None = None


_TARGET = _Target()


def configure(profile: TargetProfile, pins: dict[str, str] | None = None) -> None:
    """Tell the checks which keys play which role, their pins, and the secrets to redact."""
    secrets = list(profile.keys.values()) + ([profile.admin.token] if profile.admin else [])
    _TARGET.roles = {key: role for role, key in profile.keys.items()}
    _TARGET.redactor = Redactor(secrets, _TARGET.roles)
    _TARGET.pins = dict(pins or {})
    _TARGET.cursors = {}
    _TARGET.last = None


def _request_parts(response: schemathesis.Response) -> tuple[str, str, dict[str, str], str]:
    request = response.request
    headers = {name: str(value) for name, value in request.headers.items()}
    body = request.body or b""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    return str(request.method or "GET"), str(request.url or ""), headers, text


def harness_response(response: schemathesis.Response) -> HarnessResponse:
    """The Schemathesis response as the harness checks see it: context, redacted exchange."""
    if _TARGET.last is not None and _TARGET.last[0] is response:
        return _TARGET.last[1]
    harness = _harness_view(response)
    _TARGET.last = (response, harness)
    return harness


def _harness_view(response: schemathesis.Response) -> HarnessResponse:
    method, url, request_headers, request_body = _request_parts(response)
    path = urlsplit(url).path
    lower = {name.lower(): value for name, value in request_headers.items()}
    authorization = lower.get("authorization", "")
    key = authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None
    role = _TARGET.roles.get(key) if key else None
    context = RequestContext(
        method=method,
        path=path,
        endpoint=match_endpoint(method, path),
        role=role,
        version=lower.get("service-version"),
        simulate=lower.get("service-simulate"),
        pinned_version=_TARGET.pins.get(role) if role else None,
    )
    pairs = [(name, value) for name, values in response.headers.items() for value in values]
    http = httpx.Response(
        response.status_code,
        headers=decoded_headers(pairs),  # the content is already decoded
        content=response.content,
        request=httpx.Request(method, url),
    )
    exchange = Exchange.capture(
        _TARGET.redactor,
        method=method,
        url=url,
        request_headers=request_headers,
        request_body=request_body,
        status=response.status_code,
        response_headers=pairs,
        response_body=response.content.decode("utf-8", "replace"),
        elapsed=response.elapsed,
        started_at=0.0,
    )
    return HarnessResponse(http, exchange, context)


def _json(content: bytes) -> Any:
    try:
        return json.loads(content) if content else None
    except ValueError:
        return None


def _error_code(body: Any) -> str | int | None:
    """The machine code where the spec puts it (spec: Errors > Formats)."""
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("error_code"), str):
        return str(body["error_code"])
    code = body.get("code")
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    if isinstance(body.get("error"), str) and body["error"] in STRING_CODES_IN_ERROR:
        return str(body["error"])
    return None


def _path_params(endpoint: Endpoint, path: str) -> dict[str, str]:
    names = endpoint.template.strip("/").split("/")
    values = path.rstrip("/").split("/")[-len(names) :]
    return {
        name[1:-1]: unquote(value)
        for name, value in zip(names, values, strict=True)
        if name.startswith("{")
    }


# Decision (docs/reading-of-the-spec.md: CRE-057, SER-043, PLS-038, VID-018): a cursor goes with the
# filters of the listing that issued it; passed back with other filters the spec does not say
# whether it is still "this endpoint's".
_FILTERS = ("updated_since", "category", "collection")


def _filters(query: dict[str, list[str]]) -> frozenset[tuple[str, str]]:
    return frozenset((name, value) for name in _FILTERS for value in query.get(name, []))


def _remember_cursors(operation: str, body: Any, query: dict[str, list[str]]) -> None:
    data = body.get("data") if isinstance(body, dict) else None
    holders = [h for h in (body, data) if isinstance(h, dict)]
    seen = _TARGET.cursors.setdefault(operation, {})
    found: list[str] = []
    for holder in holders:
        if isinstance(holder.get("next_cursor"), str):
            found.append(holder["next_cursor"])
        links = holder.get("links")
        following = links.get("next") if isinstance(links, dict) else None
        if isinstance(following, str):
            found += parse_qs(urlsplit(following).query).get("cursor", [])
    for cursor in found:
        seen[cursor] = _filters(query)


def error_table_violations(response: HarnessResponse, request_body: str) -> list[Violation]:
    """Judge status and code by the spec's error tables (see `rules`)."""
    endpoint = response.context.endpoint
    if endpoint is None:
        return []
    operation, status = endpoint.operation, response.status_code
    body = _json(response.content)
    if status == 200:
        query = parse_qs(urlsplit(str(response.http.request.url)).query, keep_blank_values=True)
        _remember_cursors(operation, body, query)
    found = _judged_by_rules(response, endpoint, body, request_body)
    if found or documented(operation, status):
        return found
    return [
        violation(
            "VER-013",
            f"status {status} is not an answer the spec lists for {operation}",
            expected="a status of the operation's error table, or its success status",
            actual=status,
            response=response,
        )
    ]


def _judged_by_rules(
    response: HarnessResponse, endpoint: Endpoint, body: Any, request_body: str
) -> list[Violation]:
    """Sent with the operation's own key, no version header or the key's own pinned version:
    `rules` says what is due (another version may be refused first, spec: Authentication 4)."""
    context, operation, status = response.context, endpoint.operation, response.status_code
    judged = (
        context.role == OPERATION_ROLES.get(operation)
        and context.version in (None, context.pinned_version)
        and context.simulate is None
    )
    if not judged:
        return []
    query = parse_qs(urlsplit(str(response.http.request.url)).query, keep_blank_values=True)
    sent_body = _json(request_body.encode()) if request_body else None
    if operation == Operation.POST_PLAYBACK and request_body and sent_body is None:
        sent_body = request_body  # not JSON at all
    issued = _TARGET.cursors.get(operation, {})
    filters = _filters(query)
    expectation = expected_answer(
        operation,
        query,
        _path_params(endpoint, context.path),
        body=sent_body,
        issued_cursors=frozenset(c for c, bound in issued.items() if bound == filters),
        unclear_cursors=frozenset(c for c, bound in issued.items() if bound != filters),
    )
    if expectation is None:
        return []
    code = _error_code(body) if status >= 400 else None
    if expectation.admits(status, code):
        return []
    answers = sorted(expectation.allowed, key=str)
    wanted = " or ".join(f"{s} {c if c is not None else '(no code)'}" for s, c in answers)
    if expectation.refused:
        title = "invalid input not refused as the error table says"
    else:
        title = "valid input refused or answered outside the error table"
        wanted = "success or a documented non-validation answer"
    return [
        violation(
            rule,
            title,
            expected=wanted,
            actual=f"{status} {code if code is not None else '(no code)'}",
            response=response,
        )
        for rule in expectation.requirements
    ]


def violations_of(response: schemathesis.Response, check: Check | None = None) -> list[Violation]:
    """Violations of one harness check (None: the error table judge) for this response."""
    harness = harness_response(response)
    if check is None:
        return error_table_violations(harness, _request_parts(response)[3])
    return check(harness)


def _as_schemathesis_check(name: str, check: Check | None) -> Callable[..., None]:
    def run(ctx: Any, response: schemathesis.Response, case: schemathesis.Case[Any]) -> None:
        found = violations_of(response, check)
        if not found:
            return
        failures = [ContractViolation(v, case.operation.label) for v in found]
        if len(failures) == 1:
            raise failures[0]
        from schemathesis.core.failures import FailureGroup

        raise FailureGroup(failures)

    run.__name__ = name
    run.__qualname__ = name
    run.__doc__ = f"Delivery API v1 check `{name}` (harness: delivery_conformance.checks)."
    return run


CHECK_NAMES: tuple[str, ...] = (
    *(f"delivery_{name}" for name in CHECKS),
    "delivery_error_table",
)

for _name, _check in CHECKS.items():
    schemathesis.check(_as_schemathesis_check(f"delivery_{_name}", _check))
schemathesis.check(_as_schemathesis_check("delivery_error_table", None))
