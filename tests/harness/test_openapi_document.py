"""Self-tests of spec/openapi.yaml against the spec's rules and the hand-written error table.

spec: Errors (every table), What the service does > Common response headers, Endpoints,
Limits > Other constants. The document is read as data; nothing here starts a server.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_openapi
from openapi_spec_validator.validation import OpenAPIV31SpecValidator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from delivery_conformance.spec.endpoints import ENDPOINTS
from delivery_conformance.spec.error_table import (
    ALL_OPERATIONS,
    ERROR_TABLE,
    UNKNOWN_PATH,
    ErrorFormat,
    ErrorRow,
)

DOCUMENT_PATH = Path(__file__).resolve().parents[2] / "spec" / "openapi.yaml"
DOC_URI = "urn:delivery-api-v1:openapi"
PREFIX = "/api/delivery/v1"

# spec: Endpoints - the twelve operations, by operation id: the harness's one endpoint table.
OPERATIONS: dict[str, tuple[str, str]] = {
    str(e.operation): (e.method.lower(), e.template) for e in ENDPOINTS
}

# spec: Limits > Other constants - (minimum, maximum, default) of `limit` per list operation.
LIMIT_RULES: dict[str, tuple[int, int, int | None]] = {
    "getCatalog": (1, 200, None),
    "listCreatives": (1, 100, 50),
    "listSeries": (1, 100, 50),
    "listPlaylists": (1, 100, 50),
    "listVideos": (1, 200, 50),
}

# docs/reading-of-the-spec.md (SIM (endpoints)).
SIMULATE_OPERATIONS = frozenset({"getCatalog", "getConfig", "postPlayback"})

COMMON = frozenset({"Service-API-Status", "Service-Version", "Service-Request-Id", "Cache-Control"})
DEPRECATION = frozenset({"Deprecation", "Sunset", "Link"})
RATE_LIMIT = frozenset({"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Window"})


def expected_headers(operation_id: str, status: int) -> tuple[frozenset[str], frozenset[str]]:
    """(required, optional) response headers per the spec's common header table."""
    required = set(COMMON)
    optional: set[str] = set()
    if status == 200:
        optional |= DEPRECATION
        if operation_id == "getVideo":
            required.discard("Service-Version")
    elif status == 429:
        required |= RATE_LIMIT
    elif status == 503:
        optional.add("Retry-After")  # retryable 503 only; never on 503 not_ready
    elif status == 405:
        required.add("Allow")
    elif status in (302, 308):
        required.add("Location")
    if operation_id in SIMULATE_OPERATIONS and status not in (302, 308, 405):
        optional.add("Service-Simulated")
    return frozenset(required), frozenset(optional)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    with DOCUMENT_PATH.open(encoding="utf-8") as handle:
        loaded = yaml.safe_load(handle)
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def registry(document: dict[str, Any]) -> Registry[Any]:
    resource: Resource[Any] = Resource.from_contents(document, default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(DOC_URI, resource)
    return registry


def resolve(document: dict[str, Any], node: Any) -> Any:
    """Follow local `$ref`s (``#/a/b``) until a non-reference node."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and len(node) == 1:
        ref = node["$ref"]
        assert ref.startswith("#/"), f"only local references are used: {ref}"
        node = document
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        seen += 1
        assert seen < 20, "reference loop"
    return node


def pointer(parts: list[str]) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def operation(document: dict[str, Any], operation_id: str) -> dict[str, Any]:
    method, path = OPERATIONS[operation_id]
    found = document["paths"][PREFIX + path][method]
    assert isinstance(found, dict)
    return found


def responses(document: dict[str, Any], operation_id: str) -> dict[int, dict[str, Any]]:
    raw = operation(document, operation_id)["responses"]
    return {int(status): resolve(document, value) for status, value in raw.items()}


def validator_for(registry: Registry[Any], schema_pointer: str) -> Draft202012Validator:
    return Draft202012Validator(
        {"$ref": f"{DOC_URI}#{schema_pointer}"},
        registry=registry,
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def iter_schema_examples(node: Any, parts: list[str]) -> Iterator[tuple[str, list[Any]]]:
    """Schema objects holding a list of `examples` (media types hold a map instead)."""
    if isinstance(node, dict):
        examples = node.get("examples")
        if isinstance(examples, list):
            yield pointer(parts), examples
        for key, value in node.items():
            if isinstance(key, str) and key.startswith("x-"):
                continue
            yield from iter_schema_examples(value, [*parts, key])
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from iter_schema_examples(value, [*parts, str(index)])


def iter_media_types(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(label, schema pointer, media type object) for every request and response body."""
    for path, item in document["paths"].items():
        for method, op in item.items():
            body = op.get("requestBody")
            if body:
                for media, obj in resolve(document, body)["content"].items():
                    yield f"{method} {path} request {media}", "", obj
            for status, response in op["responses"].items():
                for media, obj in resolve(document, response).get("content", {}).items():
                    yield f"{method} {path} {status} {media}", "", obj
    for name, response in document["components"]["responses"].items():
        for media, obj in response.get("content", {}).items():
            yield f"components/responses/{name} {media}", "", obj


def media_schema_pointer(document: dict[str, Any], media: dict[str, Any]) -> str:
    schema = media["schema"]
    assert set(schema) == {"$ref"}, "bodies name a component schema"
    ref = schema["$ref"]
    assert isinstance(ref, str)
    return ref[1:]


# ---- the document as a whole -------------------------------------------------------------------


def test_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert str(document["openapi"]).startswith("3.1")
    validate_openapi(document, cls=OpenAPIV31SpecValidator)


def test_document_lists_exactly_the_twelve_operations(document: dict[str, Any]) -> None:
    found = {
        op["operationId"]: (method, path)
        for path, item in document["paths"].items()
        for method, op in item.items()
    }
    assert found == {op: (m, PREFIX + p) for op, (m, p) in OPERATIONS.items()}
    assert set(ALL_OPERATIONS) == set(OPERATIONS)
    for op_id in OPERATIONS:
        op = operation(document, op_id)
        assert op["tags"] and op["summary"], op_id


def test_every_operation_needs_the_bearer_key(document: dict[str, Any]) -> None:
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert document["security"] == [{"bearerAuth": []}]
    for op_id in OPERATIONS:
        assert "security" not in operation(document, op_id), f"{op_id} overrides security"


def test_version_header_on_every_operation_and_simulate_only_where_documented(
    document: dict[str, Any],
) -> None:
    for op_id in OPERATIONS:
        params = [resolve(document, p) for p in operation(document, op_id).get("parameters", [])]
        headers = {p["name"] for p in params if p["in"] == "header"}
        assert "Service-Version" in headers, op_id
        assert ("Service-Simulate" in headers) == (op_id in SIMULATE_OPERATIONS), op_id


@pytest.mark.parametrize("op_id", sorted(LIMIT_RULES))
def test_limit_parameter_has_the_spec_range(document: dict[str, Any], op_id: str) -> None:
    params = [resolve(document, p) for p in operation(document, op_id)["parameters"]]
    (limit,) = [p for p in params if p["name"] == "limit" and p["in"] == "query"]
    schema = limit["schema"]
    low, high, default = LIMIT_RULES[op_id]
    assert (schema["type"], schema["minimum"], schema["maximum"]) == ("integer", low, high)
    assert schema.get("default") == default


def test_links_target_existing_operations_and_parameters(document: dict[str, Any]) -> None:
    seen = 0
    for op_id in OPERATIONS:
        for status, response in responses(document, op_id).items():
            for name, link in response.get("links", {}).items():
                seen += 1
                target = operation(document, link["operationId"])
                names = {
                    (p["in"], p["name"])
                    for p in (resolve(document, x) for x in target.get("parameters", []))
                }
                for key in link.get("parameters", {}):
                    where, _, param = key.partition(".")
                    assert (where, param) in names, f"{op_id} {status} link {name}: {key}"
    assert seen >= 12


# ---- examples ---------------------------------------------------------------------------------


def test_every_component_schema_has_an_example(document: dict[str, Any]) -> None:
    missing = [
        name
        for name, schema in document["components"]["schemas"].items()
        if not schema.get("examples")
    ]
    assert missing == []


def test_schema_level_examples_validate(document: dict[str, Any], registry: Registry[Any]) -> None:
    checked = 0
    for schema_pointer, examples in iter_schema_examples(document["components"], ["components"]):
        validator = validator_for(registry, schema_pointer)
        for example in examples:
            errors = [e.message for e in validator.iter_errors(example)]
            assert errors == [], f"{schema_pointer}: {errors[:3]}"
            checked += 1
    for schema_pointer, examples in iter_schema_examples(document["paths"], ["paths"]):
        validator = validator_for(registry, schema_pointer)
        for example in examples:
            assert list(validator.iter_errors(example)) == [], schema_pointer
            checked += 1
    assert checked > 100


def test_every_body_has_examples_that_validate(
    document: dict[str, Any], registry: Registry[Any]
) -> None:
    for label, _, media in iter_media_types(document):
        examples = media.get("examples")
        assert examples, f"{label} has no examples"
        validator = validator_for(registry, media_schema_pointer(document, media))
        for name, example in examples.items():
            value = resolve(document, example)["value"]
            errors = [e.message for e in validator.iter_errors(value)]
            assert errors == [], f"{label} example {name}: {errors[:3]}"


def test_every_component_example_is_checked_against_a_schema(
    document: dict[str, Any], registry: Registry[Any]
) -> None:
    """Each named example is used by some body, or names its schema in `x-schema`."""
    used: set[str] = set()
    for _, _, media in iter_media_types(document):
        for example in media.get("examples", {}).values():
            ref = example.get("$ref", "")
            if ref.startswith("#/components/examples/"):
                used.add(ref.rsplit("/", 1)[1])
    for name, example in document["components"]["examples"].items():
        if name in used:
            continue
        assert "x-schema" in example, f"example {name} is validated nowhere"
        validator = validator_for(registry, example["x-schema"][1:])
        errors = [e.message for e in validator.iter_errors(example["value"])]
        assert errors == [], f"example {name}: {errors[:3]}"


def test_a_broken_example_is_caught(document: dict[str, Any], registry: Registry[Any]) -> None:
    """The example checks can fail: a placeholder episode with an id is refused."""
    placeholder = dict(document["components"]["examples"]["EpisodePlaceholder"]["value"])
    placeholder["id"] = "0b7e3c55-2d1a-4f6e-8a9b-c3d4e5f60718"
    validator = validator_for(registry, "/components/schemas/Episode")
    assert list(validator.iter_errors(placeholder))


# ---- errors: the document against the hand-written table ---------------------------------------


def documented_codes(response: dict[str, Any]) -> set[str | int]:
    return set(response.get("x-error-codes", []))


def response_for(document: dict[str, Any], row: ErrorRow) -> dict[str, Any]:
    if row.operation_id == UNKNOWN_PATH:
        found = resolve(document, document["x-every-path-errors"][str(row.status)])
    else:
        found = responses(document, row.operation_id).get(row.status)
    assert found is not None, f"{row.operation_id} does not document {row.status}"
    assert isinstance(found, dict)
    return found


@pytest.mark.parametrize(
    "row", ERROR_TABLE, ids=lambda r: f"{r.operation_id}-{r.status}-{r.code}-{r.scope.value}"
)
def test_error_table_row_is_documented(document: dict[str, Any], row: ErrorRow) -> None:
    response = response_for(document, row)
    if row.code is not None:
        assert row.code in documented_codes(response)
    content = response.get("content", {})
    if row.format is ErrorFormat.EMPTY:
        assert content == {}
        return
    schema_ref = content["application/json"]["schema"]["$ref"]
    if row.format is ErrorFormat.FLAT:
        assert schema_ref == "#/components/schemas/FlatError"
    else:
        assert schema_ref.startswith("#/components/schemas/EnvelopeError")


def test_document_has_no_error_answer_missing_from_the_table(document: dict[str, Any]) -> None:
    table = {(r.operation_id, r.status, r.code) for r in ERROR_TABLE}
    table_statuses = {(r.operation_id, r.status) for r in ERROR_TABLE}
    extra: list[tuple[str, int, str | int | None]] = []
    for op_id in OPERATIONS:
        for status, response in responses(document, op_id).items():
            if status < 400:
                continue
            if (op_id, status) not in table_statuses:
                extra.append((op_id, status, None))
            extra += [
                (op_id, status, code)
                for code in documented_codes(response)
                if (op_id, status, code) not in table
            ]
    assert extra == []


# ---- headers ----------------------------------------------------------------------------------


def test_every_response_has_the_headers_of_the_common_table(document: dict[str, Any]) -> None:
    for op_id in OPERATIONS:
        for status, response in responses(document, op_id).items():
            headers = {
                name: resolve(document, header)
                for name, header in response.get("headers", {}).items()
            }
            required, optional = expected_headers(op_id, status)
            got_required = frozenset(n for n, h in headers.items() if h.get("required"))
            got_optional = frozenset(n for n, h in headers.items() if not h.get("required"))
            assert (got_required, got_optional) == (required, optional), f"{op_id} {status}"


def test_the_200_of_get_video_has_no_service_version(document: dict[str, Any]) -> None:
    assert "Service-Version" not in responses(document, "getVideo")[200]["headers"]
    assert "Service-Version" in responses(document, "listVideos")[200]["headers"]
    assert "Service-Version" in responses(document, "getVideo")[404]["headers"]


def test_common_header_schemas_carry_the_spec_values(document: dict[str, Any]) -> None:
    headers = document["components"]["headers"]
    assert headers["ServiceApiStatus"]["schema"]["const"] == "beta"
    cache = re.compile(headers["CacheControl"]["schema"]["pattern"])
    assert all(cache.fullmatch(v) for v in ("no-store", "No-Store", "NO-STORE"))  # RFC 9111
    assert not any(cache.search(v) for v in ("no-store, private", "public", "no-cache"))
    assert headers["ServiceRequestId"]["schema"]["pattern"] == "^req_.{26}$"
    assert headers["ServiceVersion"]["schema"]["format"] == "date"


# ---- the error table on its own (spec: Errors > Formats) ---------------------------------------


def test_envelope_codes_start_with_their_status() -> None:
    for row in ERROR_TABLE:
        if row.format is ErrorFormat.ENVELOPE:
            assert isinstance(row.code, int) and row.code // 10 == row.status, row
        else:
            assert row.code is None or isinstance(row.code, str), row


@pytest.mark.parametrize("op_id", ALL_OPERATIONS)
def test_every_operation_has_the_flat_answers_every_endpoint_shares(op_id: str) -> None:
    """429 `rate_limited` and 400 `unsupported_version` are flat on every endpoint; 405 is empty."""
    rows = {(r.status, r.code): r.format for r in ERROR_TABLE if r.operation_id == op_id}
    assert rows[(429, "rate_limited")] is ErrorFormat.FLAT
    assert rows[(400, "unsupported_version")] is ErrorFormat.FLAT
    assert rows[(405, None)] is ErrorFormat.EMPTY
    assert any(status == 401 for status, _ in rows)
