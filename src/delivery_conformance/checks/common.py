"""The rules that hold for every answer, judged on every exchange a test recorded (issue 13).

spec: General rules; Common response headers; Errors > Formats; Errors > Every path. Scenarios
call `assert_conforms` on the answers they look at; this post-pass runs the same registered
checks (the context-aware functions of `headers` and `bodies`) over *every* exchange of a test
(its fixtures', its scenario's, a property test's), so a rule is not judged on a sample.

The request context is rebuilt from the recorded request: method, path, the `Service-Version`
and `Service-Simulate` it sent, a `Host` other than the URL's. What a record cannot tell is left
to the scenarios that know it: the key's pinned version (HDR-007), and the body of an answer
whose record was capped (only its headers are judged). Exchanges outside the API prefix (the
sandbox's admin API) are not judged. One rule broken on many exchanges of a test is one finding
(the first exchange shown, the others counted), so a report stays readable.

    found = judge_exchanges(exchanges, already=violations)
    outcome, violations = with_common_rules(outcome, violations, exchanges)  # plugin.py
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

import httpx

from delivery_conformance.checks.registry import CHECKS, Check
from delivery_conformance.evidence.events import Outcome
from delivery_conformance.evidence.exchange import BODY_CAP, Exchange
from delivery_conformance.evidence.violation import Violation
from delivery_conformance.spec.endpoints import match_endpoint
from delivery_conformance.target.client import RequestContext, Response
from delivery_conformance.target.profile import API_PREFIX

__all__ = [
    "BODY_CHECKS",
    "decoded_headers",
    "judge_exchanges",
    "response_of",
    "with_common_rules",
]

# Checks that read the body: skipped on a record whose body was capped.
BODY_CHECKS = frozenset(
    {"json_content", "flat_error", "envelope_error", "error_request_id", "unknown_path"}
)


def decoded_headers(pairs: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """Headers for a response rebuilt around a body that is already decoded.

    A content coding (gzip, deflate, br: whatever the client accepted) is the transport's
    business: the recorded body is the decoded one, so `Content-Encoding` is left out (else
    httpx would decode it again) and so is the coded `Content-Length`. The coding itself is
    never a finding (spec: General rules 4 asks for JSON, not for an identity coding).
    """
    return [
        (k.encode(), v.encode())
        for k, v in pairs
        if k.lower() not in ("content-encoding", "content-length")
    ]


def response_of(exchange: Exchange) -> Response | None:
    """A `Response` rebuilt from a record (None: no answer, or not an API exchange)."""
    if exchange.status is None:
        return None
    parts = urlsplit(exchange.url)
    if not parts.path.startswith(API_PREFIX):
        return None
    sent = {name.lower(): value for name, value in exchange.request_headers.items()}
    host = sent.get("host")
    context = RequestContext(
        exchange.method,
        parts.path,
        match_endpoint(exchange.method, parts.path),
        version=sent.get("service-version"),
        simulate=sent.get("service-simulate"),
        host=host if host and host != parts.netloc else None,
    )
    http = httpx.Response(
        exchange.status,
        headers=decoded_headers(exchange.response_headers.items()),
        content=exchange.response_body.encode("utf-8"),
    )
    return Response(http, exchange, context)


def _capped(exchange: Exchange) -> bool:
    return len(exchange.response_body) > BODY_CAP


def _key(found: Violation) -> tuple[str, str, int | None]:
    exchange = found.exchange
    if exchange is None:
        return (found.requirement_id, "", None)
    return (found.requirement_id, exchange.url, exchange.status)


def judge_exchanges(
    exchanges: Iterable[Exchange], already: Sequence[Violation] = ()
) -> tuple[Violation, ...]:
    """Every registered check over every API exchange; one violation per rule and title, not
    repeating one a scenario already raised on the same exchange."""
    seen = {_key(v) for v in already}
    grouped: dict[tuple[str, str], list[Violation]] = {}
    for exchange in exchanges:
        response = response_of(exchange)
        if response is None:
            continue
        checks: list[Check] = [
            check for name, check in CHECKS.items()
            if not (_capped(exchange) and name in BODY_CHECKS)
        ]  # fmt: skip
        for check in checks:
            for found in check(response):
                if _key(found) not in seen:
                    grouped.setdefault((found.requirement_id, found.title), []).append(found)
    result: list[Violation] = []
    for same in grouped.values():
        first = same[0]
        if len(same) > 1:
            more = f" (and on {len(same) - 1} more exchange{'s' if len(same) > 2 else ''})"
            first = Violation(
                first.requirement_id, first.title, first.expected, first.actual + more,
                first.exchange, first.severity,
            )  # fmt: skip
        result.append(first)
    return tuple(result)


def with_common_rules(
    outcome: Outcome, violations: tuple[Violation, ...], exchanges: Sequence[Exchange]
) -> tuple[Outcome, tuple[Violation, ...]]:
    """A test's outcome and violations with the common rules judged on all its exchanges: a
    passed or failed test fails with them; an error or a test not exercised keeps its outcome
    (its exchanges are not all the test meant to make)."""
    if outcome not in (Outcome.PASSED, Outcome.FAILED):
        return outcome, violations
    found = judge_exchanges(exchanges, already=violations)
    if not found:
        return outcome, violations
    return Outcome.FAILED, (*violations, *found)
