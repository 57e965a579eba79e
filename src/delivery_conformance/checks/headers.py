"""Cross-cutting header checks (spec: General rules; Common response headers; Limits).

Each check looks at one response and its request context and returns the violations it found.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from delivery_conformance.checks.registry import register
from delivery_conformance.evidence.violation import Violation, violation
from delivery_conformance.spec.error_table import rows_for
from delivery_conformance.spec.operations import Operation

if TYPE_CHECKING:
    from delivery_conformance.target.client import Response

__all__ = ["error_code_of"]

REQUEST_ID = re.compile(r"req_[!-~]{26}")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def error_code_of(response: Response) -> str | int | None:
    """The machine code of an error body: `error_code`, envelope `code`, else `error`."""
    try:
        body: Any = json.loads(response.content) if response.content else None
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    for name in ("error_code", "code", "error"):
        value = body.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return value
    return None


@register("api_status", "HDR-001", "HDR-002")
def api_status(response: Response) -> list[Violation]:
    value = response.headers.get("service-api-status")
    if value is None:
        return [
            violation(
                "HDR-001",
                "Service-API-Status missing",
                expected="beta",
                actual="no header",
                response=response,
            )
        ]
    if value != "beta":
        return [
            violation(
                "HDR-002",
                "Service-API-Status not beta",
                expected="beta",
                actual=value,
                response=response,
            )
        ]
    return []


def _is_date(value: str) -> bool:
    if not DATE.fullmatch(value):
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


@register("service_version", "HDR-003", "HDR-004", "HDR-005", "HDR-006", "HDR-007", "HDR-008")
def service_version(response: Response) -> list[Violation]:
    context, value = response.context, response.headers.get("service-version")
    if context.operation == Operation.GET_VIDEO and response.status_code == 200:
        if value is not None:
            return [
                violation(
                    "HDR-004",
                    "Service-Version on a 200 of GET /videos/{id}",
                    expected="no Service-Version",
                    actual=value,
                    response=response,
                )
            ]
        return []
    if value is None:
        rule = "HDR-005" if context.operation == Operation.GET_VIDEO else "HDR-003"
        return [
            violation(
                rule,
                "Service-Version missing",
                expected="a dated version",
                actual="no header",
                response=response,
            )
        ]
    if not _is_date(value):
        return [
            violation(
                "HDR-006",
                "Service-Version not a YYYY-MM-DD date",
                expected="YYYY-MM-DD",
                actual=value,
                response=response,
            )
        ]
    # A 400 to a request that named a version may be its refusal whatever the body looks like
    # (a refusal in the wrong format is ERR-007's finding). A 401 names no key's version at
    # all: which version it reports is HDR-010's reading (one it serves), and a 401 where the
    # version check was due first is AUTH-010's finding.
    unsupported = response.status_code == 400
    refused_key = response.status_code == 401
    if (
        context.version is not None
        and not unsupported
        and not refused_key
        and _is_date(context.version)
    ):
        if value != context.version:
            return [
                violation(
                    "HDR-008",
                    "Service-Version differs from the requested version",
                    expected=context.version,
                    actual=value,
                    response=response,
                )
            ]
    elif (
        context.version is None
        and context.pinned_version
        and response.status_code < 300
        and value != context.pinned_version
    ):
        return [
            violation(
                "HDR-007",
                "Service-Version differs from the key's pin",
                expected=context.pinned_version,
                actual=value,
                response=response,
            )
        ]
    return []


@dataclass(frozen=True)
class HeaderForm:
    """A header every answer carries in one form: the rule and title for a missing header,
    and for one that is not `well_formed`."""

    header: str
    expected: str
    missing: tuple[str, str]
    malformed: tuple[str, str]
    well_formed: Callable[[str], bool]

    def __call__(self, response: Response) -> list[Violation]:
        value = response.headers.get(self.header)
        if value is None:
            (rule, title), actual = self.missing, "no header"
        elif not self.well_formed(value):
            (rule, title), actual = self.malformed, value
        else:
            return []
        return [violation(rule, title, expected=self.expected, actual=actual, response=response)]


# spec: Headers (the table of response headers): two headers with a fixed form on every answer
request_id = register("request_id", "HDR-011", "HDR-012")(
    HeaderForm(
        "service-request-id",
        "req_ + 26 characters",
        ("HDR-011", "Service-Request-Id missing"),
        ("HDR-012", "Service-Request-Id malformed"),
        lambda value: REQUEST_ID.fullmatch(value) is not None,
    )
)
# Decision HDR-015: "Always `no-store`" gives the whole value, so it is the one directive and
# nothing else; its name compares in any letter case (RFC 9111 5.2).
cache_control = register("cache_control", "HDR-014", "HDR-015")(
    HeaderForm(
        "cache-control",
        "no-store",
        ("HDR-014", "Cache-Control missing"),
        ("HDR-015", "Cache-Control is not exactly no-store"),
        lambda value: value.strip().lower() == "no-store",
    )
)


@register("no_cors", "GEN-002")
def no_cors(response: Response) -> list[Violation]:
    found = sorted(n for n in response.headers if n.lower().startswith("access-control-"))
    if found:
        return [
            violation(
                "GEN-002",
                "CORS header sent",
                expected="no Access-Control-* header",
                actual=", ".join(found),
                response=response,
            )
        ]
    return []


@register("no_cookies", "GEN-003")
def no_cookies(response: Response) -> list[Violation]:
    if "set-cookie" in response.headers:
        return [
            violation(
                "GEN-003",
                "cookie set",
                expected="no Set-Cookie",
                actual="Set-Cookie present",
                response=response,
            )
        ]
    return []


def _retry_after_due(response: Response) -> bool | None:
    """True: must be present; False: must be absent; None: the spec says nothing here."""
    status = response.status_code
    if status == 429:
        return True
    if status != 503 or response.context.operation is None:
        return None
    code = error_code_of(response)
    for row in rows_for(response.context.operation):
        if row.status == 503 and row.code == code:
            return row.retry_after
    return None


@register("retry_after", "HDR-024", "HDR-025", "HDR-026", "PLAY-093")
def retry_after(response: Response) -> list[Violation]:
    """spec: Common response headers (Retry-After on 429 and retryable 503); Errors > Playback."""
    value, due = response.headers.get("retry-after"), _retry_after_due(response)
    if value is None and due:
        rule = "HDR-024" if response.status_code == 429 else "HDR-025"
        return [
            violation(
                rule,
                "Retry-After missing",
                expected="Retry-After: <seconds>",
                actual="no header",
                response=response,
            )
        ]
    if value is not None and due is False:
        return [
            violation(
                "PLAY-093",
                "Retry-After on a 503 not_ready",
                expected="no Retry-After",
                actual=value,
                response=response,
            )
        ]
    if value is not None and not value.strip().isdigit():
        return [
            violation(
                "HDR-026",
                "Retry-After not whole seconds",
                expected="delta-seconds",
                actual=value,
                response=response,
            )
        ]
    return []


@register("rate_limit_headers", "HDR-027", "HDR-028", "HDR-029", "HDR-030")
def rate_limit_headers(response: Response) -> list[Violation]:
    limit = response.headers.get("x-ratelimit-limit")
    window = response.headers.get("x-ratelimit-window")
    found: list[Violation] = []
    if response.status_code != 429:
        if limit is not None:
            found.append(
                violation(
                    "HDR-028",
                    "X-RateLimit-Limit outside a 429",
                    expected="absent",
                    actual=limit,
                    response=response,
                )
            )
        if window is not None:
            found.append(
                violation(
                    "HDR-030",
                    "X-RateLimit-Window outside a 429",
                    expected="absent",
                    actual=window,
                    response=response,
                )
            )
        return found
    if limit is None or not limit.strip().isdigit():
        found.append(
            violation(
                "HDR-027",
                "X-RateLimit-Limit missing or not an integer",
                expected="X-RateLimit-Limit: <limit>",
                actual=limit or "no header",
                response=response,
            )
        )
    if window is None or window.strip() != "60":
        found.append(
            violation(
                "HDR-029",
                "X-RateLimit-Window not 60",
                expected="60",
                actual=window or "no header",
                response=response,
            )
        )
    return found
