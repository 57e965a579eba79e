"""Schemathesis's own check failures, each charged to the one requirement it breaks.

A built-in check (a response that does not fit its schema, a missing documented header, an
undocumented status, a 405 without `Allow` ...) says what is wrong but names no requirement.
`requirement_for` reads one failure with the operation and the response that showed it and
returns, from the tables below, the requirement it breaks; `attributed` turns every built-in
failure of a Schemathesis error into a `ContractViolation` carrying that ID and the redacted
exchange. A failure no table row covers gets the empty ID (an unattributed finding, never
spread over the requirements a test lists).

Tables (spec sections cited beside each): the header a failure names; the body field it names,
by operation; the shape of an error body, by family (flat, envelope, open videos); the content
type, status and method rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import schemathesis
from schemathesis.core.failures import Failure, FailureGroup

from delivery_conformance.checks import Violation
from delivery_conformance.evidence.redact import SECRET_FIELDS
from delivery_conformance.properties.checks import _TARGET, ContractViolation, harness_response
from delivery_conformance.spec.endpoints import ENDPOINTS, SUCCESS_SHAPE, ErrorFormat
from delivery_conformance.spec.operations import Operation

__all__ = ["UNATTRIBUTED", "attributed", "requirement_for", "validate"]

UNATTRIBUTED = ""  # no rule in particular: reported as an unattributed finding

# spec: Response headers. A documented header missing / present with a bad value.
HEADER_MISSING: Mapping[str, str] = {
    "service-api-status": "HDR-001",
    "service-version": "HDR-003",
    "service-request-id": "HDR-011",
    "cache-control": "HDR-014",
    "x-ratelimit-limit": "HDR-027",
    "x-ratelimit-window": "HDR-029",
    "allow": "ERR-016",
    "service-simulated": "SIM-002",
}
HEADER_VALUE: Mapping[str, str] = {
    "service-api-status": "HDR-002",
    "service-version": "HDR-006",
    "service-request-id": "HDR-012",
    "cache-control": "HDR-015",
    "retry-after": "HDR-026",
    "x-ratelimit-limit": "HDR-027",
    "x-ratelimit-window": "HDR-029",
    "deprecation": "HDR-017",
    "sunset": "HDR-021",
    "link": "HDR-022",
    "allow": "ERR-016",
    "service-simulated": "SIM-002",
}


def _by_field(operation: str, prefix: str, fields: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """(operation, prefix/field) -> requirement, from requirement -> its fields (by spaces)."""
    return {
        (operation, f"{prefix}/{name}"): rid
        for rid, names in fields.items()
        for name in names.split()
    }


# spec: Endpoints. SUCCESS_SHAPE (spec/endpoints.py): the requirement that gives the success
# body of each operation its shape.
# Where a field has a requirement of its own: (operation, field path with `*` for any index).
FIELD_SHAPE: Mapping[tuple[str, str], str] = {
    **_by_field(
        Operation.GET_CATALOG,
        "films/*",
        {
            "CAT-001": "id",
            "CAT-003": "title",
            "CAT-004": "slug",
            "CAT-006": "synopsis_short synopsis_full language poster_url default_lang",
            "CAT-007": "genres",
            "CAT-008": "status",
            "CAT-009": "display_order",
            "CAT-011": "planned_episodes free_until_episode",
            "CAT-013": "audience form setting",
            "CAT-014": "code",
            "CAT-016": "title_i18n synopsis_short_i18n synopsis_i18n",
            "CAT-017": "content_rating",
            "CAT-018": "is_completed",
            "CAT-021": "release_date",
            "CAT-022": "tags",
            "CAT-024": "people",
            "CAT-026": "trailer",
            "CAT-027": "metadata_version",
            "CAT-028": "metadata_updated_at",
            "CAT-030": "images",
            "CAT-032": "materials",
        },
    ),
    **_by_field(
        Operation.GET_CATALOG,
        "episodes/*",
        {
            "CAT-036": "id",
            "CAT-037": "film_id",
            "CAT-038": "episode_no",
            "CAT-039": "title synopsis poster_uri poster_store_uri vid",
            "CAT-040": "duration_ms",
        },
    ),
    (Operation.GET_CONFIG, "api/status"): "CFG-002",
    (Operation.GET_CONFIG, "api/path_version"): "CFG-003",
    (Operation.GET_CONFIG, "api/latest_version"): "CFG-006",
    (Operation.GET_CONFIG, "api/version_header"): "CFG-007",
    (Operation.GET_CONFIG, "api/supported_versions"): "CFG-008",
    (Operation.GET_CONFIG, "key/scopes"): "CFG-011",
    (Operation.GET_CONFIG, "key/test_organisation"): "CFG-012",
    (Operation.POST_PLAYBACK, "items"): "PLAY-040",
}
# Envelope members of a successful envelope (spec: Endpoints > Paging and envelopes).
ENVELOPE_FIELD: Mapping[str, str] = {
    "code": "PAGE-006",
    "message": "PAGE-007",
    "server_time": "PAGE-008",
    "links": "PAGE-009",
}
# The operations whose errors are envelopes: read from the endpoint table, not restated.
ENVELOPE_OPERATIONS = frozenset(
    e.operation for e in ENDPOINTS if e.error_format is ErrorFormat.ENVELOPE
)
VIDEO_OPERATIONS = frozenset({Operation.LIST_VIDEOS, Operation.GET_VIDEO})

# spec: Errors > Formats. An error body that does not fit: by family, then by the field named.
FLAT_ERROR_FIELD: Mapping[str, str] = {
    "error": "ERR-001",
    "error_code": "ERR-002",
    "request_id": "HDR-013",
    "supported_versions": "VER-007",
    "latest_version": "VER-007",
}
ENVELOPE_ERROR_FIELD: Mapping[str, str] = {"code": "ERR-009", "request_id": "HDR-013"}

# spec: What the service does, item 5 (JSON bodies labelled application/json).
CONTENT_CODES = frozenset({"ST104", "ST105", "ST106", "ST109", "ST110"})


def _operation_id(case: schemathesis.Case[Any]) -> str:
    return str(case.operation.definition.raw.get("operationId", ""))


def _field(path: Sequence[Any]) -> str:
    return "/".join("*" if isinstance(step, int) else str(step) for step in path)


def _body_requirement(operation: str, status: int, path: Sequence[Any]) -> str:
    """ST108 on the body: the field's own rule, else the shape rule of the answer."""
    top = str(path[0]) if path else ""
    if status == 429:
        return "ERR-006"  # spec: Errors > Formats (every 429 is flat rate_limited)
    if status >= 400:
        if operation in VIDEO_OPERATIONS:
            return "HDR-013" if top == "request_id" else "VID-031"
        if operation in ENVELOPE_OPERATIONS and top not in FLAT_ERROR_FIELD:
            return ENVELOPE_ERROR_FIELD.get(top, "ERR-008")
        return FLAT_ERROR_FIELD.get(top, "ERR-001")
    if status == 308:
        return "GEN-006"
    field = _field(path)
    while field:
        if (operation, field) in FIELD_SHAPE:
            return FIELD_SHAPE[(operation, field)]
        field = field.rpartition("/")[0]
    if operation in ENVELOPE_OPERATIONS and len(path) <= 1 and top in ENVELOPE_FIELD:
        return ENVELOPE_FIELD[top]
    return SUCCESS_SHAPE.get(operation, UNATTRIBUTED)


def _header_named(response: schemathesis.Response, failure: Failure) -> str | None:
    """The response header whose value a header-schema failure quotes (None: not one)."""
    instance = getattr(failure, "instance", None)
    wanted = str(instance).lower()
    names = [
        name.lower()
        for name, values in response.headers.items()
        if any(str(v).strip().lower() == wanted for v in values)
    ]
    documented = [n for n in names if n in HEADER_VALUE]
    return documented[0] if len(documented) == 1 else None


def requirement_for(failure: Failure, operation: str, response: schemathesis.Response) -> str:
    """The requirement one built-in failure breaks (`UNATTRIBUTED` when no row says)."""
    code, status = failure.code, response.status_code
    if code == "ST103":
        return "VER-013"  # an answer the operation's table does not list (as `rules` judges)
    if code in CONTENT_CODES:
        return "GEN-005"
    if code == "ST107":
        missing = [h.lower() for h in getattr(failure, "missing_headers", [])]
        ids = {_missing_header(name, operation, status) for name in missing}
        return ids.pop() if len(ids) == 1 else UNATTRIBUTED
    if code == "ST108":
        if failure.title.startswith("Response header"):
            name = _header_named(response, failure)
            return HEADER_VALUE.get(name, UNATTRIBUTED) if name else UNATTRIBUTED
        return _body_requirement(operation, status, list(getattr(failure, "instance_path", [])))
    if code == "ST204":
        reason = getattr(failure, "failure_reason", "")
        return "ERR-016" if reason == "missing_allow_header" else "ERR-015"
    if code == "ST205":
        return "ERR-016"
    if code == "ST203":
        return "AUTH-001"  # spec: Errors (every table): no Authorization is a 401
    return UNATTRIBUTED


def _missing_header(name: str, operation: str, status: int) -> str:
    if name == "retry-after":
        return "HDR-024" if status == 429 else "HDR-025"
    if name == "location":
        return "CRE-037" if operation == Operation.GET_CREATIVE_FILE else "GEN-006"
    if name == "service-version" and operation == Operation.GET_VIDEO and status != 200:
        return "HDR-005"
    return HEADER_MISSING.get(name, UNATTRIBUTED)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def attributed(
    error: BaseException, case: schemathesis.Case[Any], response: schemathesis.Response
) -> BaseException:
    """The same failures, each built-in one now a `ContractViolation` with its requirement."""
    operation = _operation_id(case)
    evidence = harness_response(response)
    out: list[Failure] = []
    for leaf in _leaves(error):
        if isinstance(leaf, ContractViolation) or not isinstance(leaf, Failure):
            out.append(leaf)  # type: ignore[arg-type]
            continue
        rid = requirement_for(leaf, operation, response)
        found = Violation(
            requirement_id=rid,
            title=f"{leaf.code} {leaf.title}",
            expected=f"an answer that fits spec/openapi.yaml for {operation}",
            actual=_first_line(leaf),
            exchange=None if leaf.code in ("ST204", "ST205", "ST203") else evidence.exchange,
        )
        out.append(ContractViolation(found, case.operation.label))
    return out[0] if len(out) == 1 else FailureGroup(out)


def _first_line(failure: Failure) -> str:
    """What the failure says, in one line; a value of a secret field is never quoted."""
    if failure.code == "ST108":
        path = [str(s) for s in getattr(failure, "instance_path", [])]
        where = "/" + "/".join(path)
        if any(step in SECRET_FIELDS or step == "url" for step in path):
            return f"value does not fit the schema at {where}"
        message = getattr(failure, "validation_message", "") or failure.title
        return _TARGET.redactor.text(f"{message} at {where}")[:300]
    text = str(failure.message or failure.title).strip().splitlines()
    return _TARGET.redactor.text(" ".join(line.strip() for line in text if line.strip())[:300])


def validate(case: schemathesis.Case[Any], response: schemathesis.Response) -> None:
    """`case.validate_response`, with every built-in failure charged to its requirement."""
    try:
        case.validate_response(response)
    except (Failure, FailureGroup) as error:
        raise attributed(error, case, response) from None
