"""Cross-cutting body checks: JSON labelling, error formats, every-path errors.

spec: General rules items 4 and 8; Errors > Formats; Errors > Every path. Which format an error
must use comes from `error_table` (flat for catalog, playback, config and videos; envelope for
creatives, series and playlists; flat 429 and 400 `unsupported_version` everywhere).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from delivery_conformance.checks.registry import register
from delivery_conformance.evidence.violation import Violation, violation
from delivery_conformance.spec.endpoints import match_path
from delivery_conformance.spec.error_table import STRING_CODES_IN_ERROR, ErrorFormat, rows_for
from delivery_conformance.target.profile import API_PREFIX

if TYPE_CHECKING:
    from delivery_conformance.target.client import Response

__all__ = ["error_body_format", "expected_error_formats"]


def _body(response: Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def expected_error_formats(response: Response) -> set[ErrorFormat]:
    """The formats an error answer of this operation and status may use (error_table)."""
    operation = response.context.operation
    if operation is None:
        # An unknown path, or a real path asked with another method and refused before routing
        # (docs/reading-of-the-spec.md: ERR-014, ERR-017): flat, or the format of the endpoint the
        # path belongs to.
        real = match_path(response.context.path) if _under_api(response) else None
        return {ErrorFormat.FLAT} | ({real.error_format} if real else set())
    formats: set[ErrorFormat] = {
        row.format
        for row in rows_for(operation)
        if row.status == response.status_code and row.format is not ErrorFormat.EMPTY
    }
    if not formats and response.context.endpoint is not None:
        formats = {response.context.endpoint.error_format}
    return formats


def error_body_format(response: Response) -> ErrorFormat | None:
    """Which format this error response is judged against (None: not a judged error).

    An answer to HEAD has no body by HTTP's rules (RFC 9110, 9.3.2): its error body is not judged.
    """
    if response.status_code < 400 or response.status_code == 405:
        return None
    if response.context.method == "HEAD":
        return None
    formats = expected_error_formats(response)
    body = _body(response)
    if ErrorFormat.ENVELOPE in formats and (
        formats == {ErrorFormat.ENVELOPE} or (isinstance(body, dict) and "code" in body)
    ):
        return ErrorFormat.ENVELOPE
    return ErrorFormat.FLAT


@register("json_content", "GEN-005")
def json_content(response: Response) -> list[Violation]:
    if not response.content:
        return []
    kind = response.headers.get("content-type", "")
    if kind.split(";")[0].strip().lower() != "application/json":
        return [
            violation(
                "GEN-005",
                "body not labelled application/json",
                expected="Content-Type: application/json",
                actual=kind or "none",
                response=response,
            )
        ]
    if _body(response) is None and response.content.strip() != b"null":
        return [
            violation(
                "GEN-005",
                "body is not JSON",
                expected="a JSON body",
                actual=response.text[:80],
                response=response,
            )
        ]
    return []


def _error_object(
    response: Response, fmt: ErrorFormat, rule: str, expected: str
) -> dict[str, Any] | Violation | None:
    """The body of an error answer in `fmt` (None for any other answer), or the violation of
    `rule` when that body is not a JSON object."""
    if error_body_format(response) is not fmt:
        return None
    body = _body(response)
    if isinstance(body, dict):
        return body
    title = f"{fmt} error body is not a JSON object"
    actual = response.text[:80] or "empty body"
    return violation(rule, title, expected=expected, actual=actual, response=response)


@register("flat_error", "ERR-001", "ERR-002", "ERR-004", "ERR-005", "ERR-006")
def flat_error(response: Response) -> list[Violation]:
    """spec: Errors > Formats (flat), Limits (429 is flat everywhere)."""
    body = _error_object(response, ErrorFormat.FLAT, "ERR-005", "a JSON object")
    if not isinstance(body, dict):
        return [] if body is None else [body]
    found = []
    error, code = body.get("error"), body.get("error_code")
    if not isinstance(error, str):
        found.append(
            violation(
                "ERR-001",
                "flat error without a string `error`",
                expected="`error`: string",
                actual=error,
                response=response,
            )
        )
    if "error_code" in body and not isinstance(code, str):
        found.append(
            violation(
                "ERR-002",
                "`error_code` is not a string",
                expected="`error_code`: string",
                actual=code,
                response=response,
            )
        )
    # spec: Errors > Playback (per ticket): a 403 `not_entitled` has `error` equal to its
    # `reason`, which may be `org_suspended`: that `error` is a reason, not a code in `error`.
    entitlement = code == "not_entitled" and error == body.get("reason")
    carried = isinstance(error, str) and error in STRING_CODES_IN_ERROR  # any JSON may come
    if carried and "error_code" in body and not entitlement:
        found.append(
            violation(
                "ERR-004",
                "a code carried in `error` also has `error_code`",
                expected=f"`error` {error!r} and no `error_code`",
                actual=code,
                response=response,
            )
        )
    if response.status_code == 429 and code != "rate_limited":
        found.append(
            violation(
                "ERR-006",
                "429 without flat `error_code` rate_limited",
                expected="error_code rate_limited",
                actual=code,
                response=response,
            )
        )
    return found


@register("envelope_error", "ERR-008", "ERR-009")
def envelope_error(response: Response) -> list[Violation]:
    """spec: Errors > Formats (envelope): {code, message, server_time, request_id}, no data."""
    expected = "{code, message, server_time, request_id}"
    body = _error_object(response, ErrorFormat.ENVELOPE, "ERR-008", expected)
    if not isinstance(body, dict):
        return [] if body is None else [body]
    problems = [
        f"`{name}` missing"
        for name in ("code", "message", "server_time", "request_id")
        if name not in body
    ]
    if "data" in body:
        problems.append("`data` present")
    found = []
    if problems:
        found.append(
            violation(
                "ERR-008",
                "envelope error fields wrong",
                expected="code, message, server_time, request_id and no data",
                actual="; ".join(problems),
                response=response,
            )
        )
    code, status = body.get("code"), response.status_code
    good_code = (
        isinstance(code, int)
        and not isinstance(code, bool)
        and 1000 <= code <= 9999
        and str(code)[:3] == str(status)
    )
    if "code" in body and not good_code:
        found.append(
            violation(
                "ERR-009",
                "envelope code does not fit the status",
                expected=f"four digits starting with {status}",
                actual=code,
                response=response,
            )
        )
    return found


@register("error_request_id", "HDR-013")
def error_request_id(response: Response) -> list[Violation]:
    """spec: Common response headers (Service-Request-Id repeated as `request_id`)."""
    if error_body_format(response) is None:
        return []
    body = _body(response)
    header = response.headers.get("service-request-id")
    actual = body.get("request_id") if isinstance(body, dict) else None
    if header is not None and actual != header:  # a missing header is HDR-011's finding
        return [
            violation(
                "HDR-013",
                "request_id differs from Service-Request-Id",
                expected=header,
                actual=actual,
                response=response,
            )
        ]
    return []


def _under_api(response: Response) -> bool:
    context = response.context
    return context.path.startswith(API_PREFIX) and context.host is None


# Roles whose key the server is right to refuse (no key, an unknown one, a revoked one).
_NO_VALID_KEY = (None, "revoked")


def _refused_before_routing(response: Response) -> bool:
    """Decision (docs/reading-of-the-spec.md: ERR-014, ERR-017): Authentication item 4 orders the
    version and key checks but places neither the path nor the method, so a request without a valid
    key may get the key's 401, and one naming a version the 400 `unsupported_version`, instead of
    the 404 or 405 of Errors > Every path."""
    context, status = response.context, response.status_code
    if status == 401:
        return context.role in _NO_VALID_KEY
    if status == 400 and context.version is not None:
        body = _body(response)
        return isinstance(body, dict) and body.get("error_code") == "unsupported_version"
    return False


@register("unknown_path", "ERR-012", "ERR-013")
def unknown_path(response: Response) -> list[Violation]:
    """spec: General rules item 8; Errors > Every path (any method, 404 `not_found`)."""
    if not _under_api(response) or match_path(response.context.path) is not None:
        return []
    if _refused_before_routing(response):
        return []
    body = _body(response)
    code = body.get("error_code") if isinstance(body, dict) else None
    if response.status_code == 404 and code == "not_found":
        return []
    rule = "ERR-013" if response.status_code == 405 else "ERR-012"
    title, expected = "unknown path not answered 404 not_found", "404 error_code not_found"
    actual = f"{response.status_code} error_code {code!r}"
    return [violation(rule, title, expected=expected, actual=actual, response=response)]


@register("wrong_method", "ERR-015", "ERR-016")
def wrong_method(response: Response) -> list[Violation]:
    """spec: General rules item 8; Errors > Every path (405, empty body, Allow)."""
    endpoint = match_path(response.context.path) if _under_api(response) else None
    if endpoint is None or endpoint.method == response.context.method:
        return []
    if _refused_before_routing(response):
        return []
    found = []
    if response.status_code != 405 or response.content:
        found.append(
            violation(
                "ERR-015",
                "wrong method not answered 405 with an empty body",
                expected="405 with an empty body",
                actual=f"{response.status_code}, {len(response.content)} bytes",
                response=response,
            )
        )
    allow = response.headers.get("allow", "")
    # ERR-016 is about what a 405 carries: another status is ERR-015's finding alone.
    if response.status_code == 405 and endpoint.method not in {
        m.strip().upper() for m in allow.split(",")
    }:
        found.append(
            violation(
                "ERR-016",
                "Allow does not name the endpoint's method",
                expected=f"Allow: {endpoint.method}",
                actual=allow or "no Allow",
                response=response,
            )
        )
    return found
