"""Schemathesis's own check failures are charged to the one requirement each breaks.

The table rows one by one (a missing header, a bad header value, a body field, an error body, a
405 without `Allow`, an undocumented status, a content type), the unattributed remainder, and one
property run of GET /catalog against the foreign server: every built-in failure comes back as a
typed violation of a known requirement (or unattributed), none of them charged to /config's.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
import schemathesis
from foreign_server import profile_text, serve
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.openapi.checks import (
    MissingHeaders,
    UndefinedContentType,
    UndefinedStatusCode,
    UnsupportedMethodResponse,
    UseAfterFree,
)

from delivery_conformance.properties import PropertySettings, configure, load_schema
from delivery_conformance.properties.blame import (
    UNATTRIBUTED,
    attributed,
    requirement_for,
)
from delivery_conformance.properties.checks import ContractViolation
from delivery_conformance.properties.runs import run_operation
from delivery_conformance.suite.plugin import known_requirement_ids
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import load_profile

URL = "http://127.0.0.1:9/api/delivery/v1/"


class SchemaFailure(Failure):
    """Stands in for `JsonSchemaError` (which needs a validator error to build)."""

    code: ClassVar[str] = "ST108"

    def __init__(self, path: list[Any], *, header: bool = False, instance: Any = None) -> None:
        title = "Response violates schema"
        if header:
            title = "Response header does not conform to the schema"
        super().__init__(operation="GET /x", title=title, message="")
        self.instance_path = path
        self.instance = instance


def answer(status: int, path: str = "catalog", **headers: str) -> schemathesis.Response:
    http = httpx.Response(
        status, headers=headers, content=b"{}", request=httpx.Request("GET", URL + path)
    )
    http.elapsed = datetime.timedelta(milliseconds=3)
    return schemathesis.Response.from_any(http)


def missing(*names: str) -> MissingHeaders:
    return MissingHeaders(operation="GET /x", missing_headers=list(names), message="")


@pytest.mark.parametrize(
    ("failure", "operation", "status", "due"),
    [
        (missing("Service-Version"), "getCatalog", 200, "HDR-003"),
        (missing("Service-Version"), "getVideo", 404, "HDR-005"),
        (missing("Retry-After"), "getCatalog", 429, "HDR-024"),
        (missing("Retry-After"), "listSeries", 503, "HDR-025"),
        (missing("Location"), "getCreativeFile", 302, "CRE-037"),
        (missing("Service-Request-Id", "Cache-Control"), "getCatalog", 200, UNATTRIBUTED),
        (SchemaFailure(["films", 3, "id"]), "getCatalog", 200, "CAT-001"),
        (SchemaFailure(["films", 0, "tags", 1, "slug"]), "getCatalog", 200, "CAT-022"),
        (SchemaFailure(["episodes", 2, "duration_ms"]), "getCatalog", 200, "CAT-040"),
        (SchemaFailure(["films"]), "getCatalog", 200, "CAT-059"),
        (SchemaFailure(["api", "latest_version"]), "getConfig", 200, "CFG-006"),
        (SchemaFailure(["server_time"]), "listSeries", 200, "PAGE-008"),
        (SchemaFailure(["data", "items", 0, "code"]), "listSeries", 200, "SER-030"),
        (SchemaFailure(["error_code"]), "getCatalog", 400, "ERR-002"),
        (SchemaFailure(["code"]), "listCreatives", 404, "ERR-009"),
        (SchemaFailure(["message"]), "listCreatives", 404, "ERR-008"),
        (SchemaFailure(["error_code"]), "listCreatives", 429, "ERR-006"),
        (SchemaFailure(["error"]), "getVideo", 404, "VID-031"),
        (
            UnsupportedMethodResponse(
                operation="TRACE /x",
                method="TRACE",
                status_code=405,
                failure_reason="missing_allow_header",
                message="",
            ),
            "getCatalog",
            405,
            "ERR-016",
        ),
        (
            UnsupportedMethodResponse(
                operation="TRACE /x",
                method="TRACE",
                status_code=200,
                failure_reason="wrong_status",
                message="",
            ),
            "getCatalog",
            200,
            "ERR-015",
        ),
        (
            UndefinedStatusCode(
                operation="GET /x",
                status_code=418,
                defined_status_codes=["200"],
                allowed_status_codes=[200],
                message="",
            ),
            "getCatalog",
            418,
            "VER-013",
        ),
        (
            UndefinedContentType(
                operation="GET /x",
                content_type="text/html",
                defined_content_types=["a/json"],
                message="",
            ),
            "getConfig",
            200,
            "GEN-005",
        ),
        (
            UseAfterFree(operation="GET /x", message="", free="DELETE /x", usage="GET /x"),
            "getCatalog",
            200,
            UNATTRIBUTED,
        ),
    ],
)
def test_each_failure_is_charged_to_the_rule_it_breaks(
    failure: Failure, operation: str, status: int, due: str
) -> None:
    assert requirement_for(failure, operation, answer(status)) == due


def test_a_bad_header_value_is_charged_to_that_headers_rule() -> None:
    response = answer(200, **{"Service-Version": "2026-13-45", "Cache-Control": "public"})
    found = SchemaFailure([], header=True, instance="public")
    assert requirement_for(found, "getCatalog", response) == "HDR-015"
    ambiguous = SchemaFailure([], header=True, instance="nothing like it")
    assert requirement_for(ambiguous, "getCatalog", response) == UNATTRIBUTED


def test_every_id_of_the_tables_is_a_known_requirement() -> None:
    from delivery_conformance.properties import blame

    known = known_requirement_ids()
    ids = set(blame.HEADER_MISSING.values()) | set(blame.HEADER_VALUE.values())
    ids |= set(blame.SUCCESS_SHAPE.values()) | set(blame.FIELD_SHAPE.values())
    ids |= set(blame.ENVELOPE_FIELD.values()) | set(blame.FLAT_ERROR_FIELD.values())
    ids |= set(blame.ENVELOPE_ERROR_FIELD.values())
    assert ids <= known, sorted(ids - known)


def test_attributed_failures_are_typed_violations_with_the_exchange() -> None:
    class Case:
        class operation:
            label = "GET /api/delivery/v1/catalog"

            class definition:
                raw: ClassVar[dict[str, str]] = {"operationId": "getCatalog"}

    error = FailureGroup([missing("Service-Version"), SchemaFailure(["films", 0, "id"])])
    result = attributed(error, Case(), answer(200))  # type: ignore[arg-type]
    assert isinstance(result, FailureGroup)
    found = [leaf.violation for leaf in result.exceptions if isinstance(leaf, ContractViolation)]
    assert [v.requirement_id for v in found] == ["HDR-003", "CAT-001"]
    assert all(v.exchange is not None and v.exchange.status == 200 for v in found)


def test_a_property_run_against_a_foreign_server_names_rules_not_markers(tmp_path: Path) -> None:
    settings = PropertySettings(seed=3, examples=5, stateful_steps=2, scenarios=2)
    with serve(3, "valid") as base_url:
        path = tmp_path / "foreign.toml"
        path.write_text(profile_text(base_url, 3))
        profile = load_profile(path, environ={})
        configure(profile)
        with DeliveryClient(profile) as client:
            findings = run_operation(load_schema(profile, settings), client, "getCatalog")
    assert findings.violations, "the foreign server's random answers break some rule"
    assert not findings.builtin, "every built-in failure comes back typed"
    ids = findings.requirement_ids
    assert ids <= known_requirement_ids() | {UNATTRIBUTED}
    assert not {i for i in ids if i.startswith(("CFG-", "CRE-", "SER-", "PLS-", "VID-"))}, ids
