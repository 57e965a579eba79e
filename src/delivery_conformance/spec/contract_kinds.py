"""Every kind of contract change `contract-diff` reports, with its class and the reason for it.

    KINDS["response-property-removed"].change_class is ChangeClass.BREAKING

The classes follow spec: Versioning (item 3: inside /v1 only additive changes happen, namely new
endpoints, optional parameters, response fields, enum values and error codes; item 6: the
OpenAPI description changes only additively) and spec: What the service does, general rule 9
(clients ignore fields, enum values and error codes they do not know). docs/reading-of-the-spec.md
(Contract diff) records how the two read together.

A schema change is judged by the side that sends the value. A request schema that accepts less
than before (a narrower type, a raised minimum, a new pattern) refuses what clients sent: breaking;
one that accepts more is additive. A response schema that may carry more than before (a wider
type, a raised maximum) gives clients what they did not expect: breaking; one that carries less is
still inside what they handle, so it is classed additive. Enum values in a response are the
exception general rule 9 makes: a new one is additive. The constraint families (range, length,
item count, property count, pattern, format, extra properties, rules, variants) are generated
from that one rule, so every direction of every family has a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "BOUND_FAMILIES",
    "CONSTRAINT_FAMILIES",
    "KINDS",
    "ChangeClass",
    "Kind",
    "constraint_kind",
]


class ChangeClass(StrEnum):
    BREAKING = "breaking"
    ADDITIVE = "additive"
    EDITORIAL = "editorial"


@dataclass(frozen=True)
class Kind:
    name: str
    change_class: ChangeClass
    reason: str


B, A, E = ChangeClass.BREAKING, ChangeClass.ADDITIVE, ChangeClass.EDITORIAL
_ONLY_ADDITIVE = "Versioning 3 allows only additive changes inside /v1"

_ROWS: tuple[tuple[str, ChangeClass, str], ...] = (
    # ---- paths and operations
    ("path-removed", B, f"clients calling it get 404; {_ONLY_ADDITIVE}"),
    ("path-added", A, "a new endpoint (Versioning 3)"),
    ("operation-removed", B, f"clients calling it get 405; {_ONLY_ADDITIVE}"),
    ("operation-added", A, "a new endpoint (Versioning 3)"),
    # ---- parameters
    ("request-parameter-removed", B, f"clients that send it lose what it did; {_ONLY_ADDITIVE}"),
    ("request-parameter-added-required", B, "clients that do not send it are refused"),
    ("request-parameter-added-optional", A, "a new optional parameter (Versioning 3)"),
    ("request-parameter-made-required", B, "clients that leave it out are refused"),
    ("request-parameter-made-optional", A, "accepts every request it accepted before"),
    ("request-parameter-location-changed", B, "clients send it where it is no longer read"),
    ("request-parameter-style-changed", B, "clients serialise it in a form no longer read"),
    ("request-default-changed", B, "clients that leave the value out get another behaviour"),
    # ---- request bodies
    ("request-body-added-required", B, "clients that send no body are refused"),
    ("request-body-added-optional", A, "an optional body accepts every request it did before"),
    ("request-body-removed", B, f"clients that send the body lose what it did; {_ONLY_ADDITIVE}"),
    ("request-body-made-required", B, "clients that send no body are refused"),
    ("request-body-made-optional", A, "accepts every request it accepted before"),
    ("request-media-type-removed", B, "clients sending that media type are refused"),
    ("request-media-type-added", A, "another media type is accepted as well"),
    ("request-property-removed", B, f"clients that send it lose what it did; {_ONLY_ADDITIVE}"),
    ("request-property-added-required", B, "clients that do not send it are refused"),
    ("request-property-added-optional", A, "a new optional field (Versioning 3)"),
    ("request-property-made-required", B, "clients that leave it out are refused"),
    ("request-property-made-optional", A, "accepts every body it accepted before"),
    # ---- responses
    ("response-status-removed", B, f"clients branching on it lose that answer; {_ONLY_ADDITIVE}"),
    ("response-status-added", A, "clients handle an unknown status by its class (Errors)"),
    ("response-media-type-removed", B, "clients asking for that media type get no answer in it"),
    ("response-media-type-added", A, "another media type is offered as well"),
    ("response-header-removed", B, f"clients reading it find nothing; {_ONLY_ADDITIVE}"),
    ("response-header-added", A, "a new header; clients ignore what they do not read"),
    ("response-header-made-optional", B, "clients reading it may find nothing"),
    ("response-header-made-required", A, "always sent now; what clients read is still there"),
    ("error-code-removed", B, f"clients branching on it lose that answer; {_ONLY_ADDITIVE}"),
    ("error-code-added", A, "a new error code (Versioning 3; general rule 9)"),
    ("response-property-removed", B, f"clients reading it find nothing; {_ONLY_ADDITIVE}"),
    ("response-property-added", A, "a new response field (Versioning 3; general rule 9)"),
    ("response-property-made-optional", B, "clients reading it may find nothing"),
    ("response-property-made-required", A, "always sent now; what clients read is still there"),
    # ---- types and value sets
    ("request-type-widened", A, "accepts every value it accepted before"),
    ("request-type-narrowed", B, "values clients sent are refused"),
    ("request-type-changed", B, "values clients sent are refused"),
    ("response-type-widened", B, "clients get values of a type they were not told of"),
    ("response-type-narrowed", A, "every value is of a type clients already handle"),
    ("response-type-changed", B, "clients get values of a type they were not told of"),
    ("request-enum-value-removed", B, "clients sending that value are refused or misread"),
    ("request-enum-value-added", A, "a new value accepted (Versioning 3)"),
    ("response-enum-value-removed", B, f"clients branching on it lose that case; {_ONLY_ADDITIVE}"),
    ("response-enum-value-added", A, "a new enum value (Versioning 3; general rule 9)"),
    ("request-value-set-closed", B, "values outside the listed ones, accepted before, are refused"),
    ("request-value-set-opened", A, "accepts every value it accepted before"),
    # ---- security
    ("security-requirement-removed", B, "clients authenticating that way are refused"),
    ("security-alternative-added", A, "another way to authenticate is accepted as well"),
    ("security-now-required", B, "clients calling without credentials are refused"),
    ("security-made-optional", A, "requests with credentials are still accepted"),
    ("security-scope-added", B, "keys without the new scope are refused"),
    ("security-scope-dropped", A, "keys that were accepted still are"),
    ("security-scheme-removed", B, "clients authenticating with it are refused"),
    ("security-scheme-added", A, "a new way to authenticate"),
    ("security-scheme-changed", B, "clients send credentials in a form no longer read"),
    ("security-scheme-scope-removed", B, "keys carrying that scope lose what it granted"),
    ("security-scheme-scope-added", A, "a new scope"),
    # ---- words only
    ("description-changed", E, "documentation only"),
    ("example-changed", E, "documentation only"),
    ("annotation-changed", E, "documentation only: no rule on the wire changed"),
    ("deprecation-changed", E, "Versioning 5 lets a deprecation be announced; removal would break"),
)

# Families of constraint keywords. A change of one narrows, widens or (neither) changes what the
# schema allows. The bound families name their keywords (spec/contract_schema.py reads them); the
# others are judged as a whole: `additionalProperties` false or not, a rule (`if`/`then`/`else`,
# `not`, `dependentRequired`, a `oneOf` that constrains a shape) added, dropped or changed, a
# member of a choice of shapes (`oneOf`/`anyOf`) added or dropped.
BOUND_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("range", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")),
    ("length", ("minLength", "maxLength")),
    ("item-count", ("minItems", "maxItems", "uniqueItems")),
    ("property-count", ("minProperties", "maxProperties")),
    ("pattern", ("pattern",)),
    ("format", ("format",)),
)
CONSTRAINT_FAMILIES = (*(f for f, _ in BOUND_FAMILIES), "extra-properties", "rule", "variant")
# (direction, outcome) -> class and reason of a constraint change; "changed" is breaking both ways.
OUTCOMES: dict[tuple[str, str], tuple[ChangeClass, str]] = {
    ("request", "narrowed"): (B, "values clients sent are refused"),
    ("request", "widened"): (A, "accepts every value it accepted before"),
    ("request", "changed"): (B, "values clients sent may be refused"),
    ("response", "narrowed"): (A, "every value is within what clients already handle"),
    ("response", "widened"): (B, "clients get values outside what they were told"),
    ("response", "changed"): (B, "clients get values outside what they were told"),
}
UNKNOWN_FIELDS = (A, "clients ignore fields they do not know (general rule 9)")


def _family_rows() -> tuple[tuple[str, ChangeClass, str], ...]:
    return tuple(
        (constraint_kind(direction, family, outcome), *(
            UNKNOWN_FIELDS if (family, direction) == ("extra-properties", "response") else row
        ))
        for family in CONSTRAINT_FAMILIES
        for (direction, outcome), row in OUTCOMES.items()
    )  # fmt: skip


def constraint_kind(direction: str, family: str, outcome: str) -> str:
    """`request-range-narrowed`: the name of a row of the generated families."""
    return f"{direction}-{family}-{outcome}"


KINDS: dict[str, Kind] = {name: Kind(name, cls, why) for name, cls, why in _ROWS + _family_rows()}
