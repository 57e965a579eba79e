"""Judge a JSON value against a component schema of `spec/openapi.yaml`.

spec: Resources and their fields (every table: types and nullability). The OpenAPI document is
written from those tables; every field of a table is `required` there (present, possibly null)
and open value sets stay plain strings, so a schema error is a real departure from the spec.

    schema_errors(film, "Film")                        # whole object
    field_errors(film, "Film", ("id", "slug"))         # only these fields (presence and type)
    expect_schema("CAT-001", film, "Film", fields=("id",), response=response)

Messages name the JSON path of the bad value and never print long strings (signed links and
tokens stay out of reports: values are cut to 40 characters).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from delivery_conformance.evidence import ledger
from delivery_conformance.evidence.assertions import raise_hard
from delivery_conformance.evidence.violation import violation
from delivery_conformance.resources import spec_path
from delivery_conformance.spec.files import parse_yaml

if TYPE_CHECKING:
    from delivery_conformance.target.client import Response

__all__ = [
    "default_openapi_path",
    "expect_schema",
    "field_errors",
    "has_schema",
    "schema_errors",
]

_DOCUMENT_URI = "urn:delivery-api-v1:openapi"
_MAX_SHOWN = 40


def default_openapi_path() -> Path:
    return spec_path("openapi.yaml")


@functools.cache
def _registry(path: Path) -> tuple[Registry, dict[str, Any]]:
    document = parse_yaml(path.read_text(encoding="utf-8"))
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    return Registry().with_resource(_DOCUMENT_URI, resource), document["components"]["schemas"]


def _validator(pointer: str, path: Path | None) -> Draft202012Validator:
    registry, _ = _registry(path or default_openapi_path())
    schema = {"$ref": f"{_DOCUMENT_URI}#/components/schemas/{pointer}"}
    return Draft202012Validator(schema, registry=registry, format_checker=FormatChecker())


def has_schema(name: str, *, path: Path | None = None) -> bool:
    _, schemas = _registry(path or default_openapi_path())
    return name in schemas


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _where(prefix: str, parts: Iterable[Any]) -> str:
    text = prefix
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text or "$"


def schema_errors(
    value: Any, pointer: str, *, where: str = "", path: Path | None = None
) -> list[str]:
    """One line per departure of `value` from `#/components/schemas/<pointer>` (empty: fits)."""
    found = []
    for error in _validator(pointer, path).iter_errors(value):
        location = _where(where, error.absolute_path)
        if error.validator == "required":
            found.append(f"{location}: {error.message.split(' is ')[0]} missing")
        else:
            found.append(f"{location}: {_shown(error.instance)} fails {error.validator}")
    return sorted(set(found))


def field_errors(
    record: Mapping[str, Any] | Any,
    schema: str,
    fields: Iterable[str],
    *,
    where: str = "",
    path: Path | None = None,
) -> list[str]:
    """Presence and schema of only `fields` of `record` (an object of component `schema`)."""
    if not isinstance(record, Mapping):
        return [f"{where or '$'}: {_shown(record)} is not an object"]
    found = []
    for name in fields:
        if name not in record:
            found.append(f"{where}.{name}: missing")
            continue
        pointer = f"{schema}/properties/{name}"
        found.extend(schema_errors(record[name], pointer, where=f"{where}.{name}", path=path))
    return found


def expect_schema(
    requirement_id: str,
    value: Any,
    schema: str,
    *,
    fields: Iterable[str] | None = None,
    where: str = "",
    response: Response | None = None,
) -> None:
    """Raise `ConformanceFailure` for `requirement_id` when `value` departs from `schema` (a
    `should` requirement's finding is deferred: `raise_hard`)."""
    ledger.record((requirement_id,))
    if fields is None:
        problems = schema_errors(value, schema, where=where)
        title = f"body departs from schema {schema}"
    else:
        fields = tuple(fields)
        problems = field_errors(value, schema, fields, where=where)
        # one finding per field checked: a wrong `title` and a wrong `url` are two defects
        title = f"{schema}.{'/'.join(fields)} departs from its schema"
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise_hard(
            [
                violation(
                    requirement_id,
                    title,
                    expected=f"{schema} of spec/openapi.yaml",
                    actual=shown,
                    response=response,
                )
            ]
        )
