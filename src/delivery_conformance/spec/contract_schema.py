"""Two JSON Schemas (OpenAPI 3.0 or 3.1) compared for `contract-diff`, after the style is taken out.

    SchemaDiff(old_document, new_document).compare(old_schema, new_schema, "response")

Before comparing, each schema is brought to one form (`View`), so that two ways of writing the
same contract compare equal: a `$ref` is followed (its sibling keywords kept, as 3.1 allows), the
parts of an `allOf` are merged, `nullable: true` (3.0), a `"null"` in a type list (3.1) and a
`oneOf`/`anyOf` of `{type: "null"}` and one other schema all give the same nullable type,
`const` is a one-value `enum`, and an object or array type is inferred from `properties` or
`items` when no `type` is written. Open value sets are written as `x-known-values` (this
project's style) or `enum`; for a response they are the same to clients (general rule 9).

Each difference is a `Found`: a kind of spec/contract_kinds.py, a JSON pointer and a field path
relative to the compared schemas, the old and the new value. Results are memoised per pair of
schema objects (a shared component is compared once), and a pair met again while it is being
compared (a recursive schema) is taken as equal there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from delivery_conformance.spec.contract_kinds import BOUND_FAMILIES, constraint_kind

__all__ = ["ContractError", "Found", "SchemaDiff", "escape", "resolve"]

LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
FAMILY = {  # bound keyword -> its family of spec/contract_kinds.py
    keyword: family for family, keywords in BOUND_FAMILIES for keyword in keywords
}
RULE_KEYWORDS = (
    "if", "then", "else", "not", "dependentRequired", "dependentSchemas", "patternProperties",
    "propertyNames", "contains", "minContains", "maxContains", "unevaluatedProperties",
    "unevaluatedItems", "prefixItems", "discriminator",
)  # fmt: skip
MAX_DEPTH = 60  # schemas compared inside one another at once (a real document nests far less)
DESCRIPTIONS = ("description", "title", "summary")
EXAMPLES = ("examples", "example")
DOCS = {*DESCRIPTIONS, *EXAMPLES, "deprecated"}
HANDLED = {
    "$ref", "allOf", "oneOf", "anyOf", "type", "nullable", "enum", "const", "x-known-values",
    "properties", "required", "items", "additionalProperties", "default", "deprecated",
    *FAMILY, *RULE_KEYWORDS, *DESCRIPTIONS, *EXAMPLES,
}  # fmt: skip


class ContractError(ValueError):
    """The document cannot be compared: a `$ref` that does not resolve, a malformed node."""


def escape(token: str) -> str:
    """One JSON pointer token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve(document: dict[str, Any], node: Any) -> Any:
    """`node` with its `$ref` chain followed (local refs only); siblings of a ref are dropped."""
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if ref in seen:
            raise ContractError(f"$ref {ref} refers to itself")
        seen.add(ref)
        node = lookup(document, ref)
    return node


def lookup(document: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        raise ContractError(f"$ref {ref}: only references inside the document are resolved")
    node: Any = document
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise ContractError(f"$ref {ref} does not resolve")
    return node


@dataclass(frozen=True)
class Found:
    kind: str
    pointer: str  # relative to the compared schema, starting with "/" (or "")
    field: str  # "films[].title", relative; "" for the schema itself
    old: Any = None
    new: Any = None


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class View:
    """One schema in one form: what every part of its `allOf` (and its refs) says together."""

    types: frozenset[str] | None = None
    closed: frozenset[str] | None = None  # enum/const values (canonical JSON)
    known: frozenset[str] | None = None  # x-known-values
    nullable: bool = False
    properties: dict[str, list[Any]] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    items: list[Any] = field(default_factory=list)
    extra: list[Any] = field(default_factory=list)  # additionalProperties schemas; False closes
    extra_closed: bool = False
    bounds: dict[str, Any] = field(default_factory=dict)
    patterns: set[str] = field(default_factory=set)
    variants: list[Any] = field(default_factory=list)  # oneOf/anyOf members, before deciding
    rules: list[tuple[str, str]] = field(default_factory=list)  # (keyword, canonical JSON)
    default: list[Any] = field(default_factory=list)
    docs: dict[str, str] = field(default_factory=dict)
    ref: str | None = None
    folded: set[int] = field(default_factory=set)  # ids of the schema objects folded in

    def value_set(self) -> frozenset[str] | None:
        values = self.closed if self.closed is not None else self.known
        if values is not None and self.nullable and self.closed is not None:
            return values | {"null"}
        return values

    def type_set(self) -> frozenset[str] | None:
        types = self.types
        if types is None and not self.variants:
            if self.properties or self.required or self.extra or self.extra_closed:
                types = frozenset({"object"})
            elif self.items:
                types = frozenset({"array"})
        if types is not None and self.nullable:
            types = types | {"null"}
        return types


def _add_part(parts: list[Any], part: Any) -> None:
    """Parts of one sub-schema, each object once (two `$ref`s to one schema give the same one)."""
    if not any(known is part for known in parts):
        parts.append(part)


def _is_null_schema(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    return kind == "null" or kind == ["null"] or schema.get("enum") == [None]


_Key = tuple[tuple[int, ...], tuple[int, ...], str]  # the parts' identities, the direction


class SchemaDiff:
    """Compares schemas of two documents; `compare` returns the differences of one pair."""

    def __init__(self, old_document: dict[str, Any], new_document: dict[str, Any]) -> None:
        self.documents = (old_document, new_document)
        self.memo: dict[_Key, tuple[list[Any], list[Any], list[Found]]] = {}
        self.active: set[_Key] = set()
        self.depth = 0

    # ---- bringing a schema to one form
    def _fold(self, schema: Any, side: int, out: View, depth: int) -> None:
        if depth > 64:
            raise ContractError("allOf or $ref nested more than 64 deep")
        if schema is True or schema is None:
            return
        if schema is False:
            out.closed = frozenset()
            return
        if not isinstance(schema, dict):
            raise ContractError(f"a schema must be an object, not {_canon(schema)[:60]}")
        if id(schema) in out.folded:  # one schema reached twice (two allOf members name it)
            return
        out.folded.add(id(schema))
        _check_shape(schema)
        if isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            out.ref = out.ref or ref.rsplit("/", 1)[-1]
            self._fold(lookup(self.documents[side], ref), side, out, depth + 1)
        for part in schema.get("allOf") or ():
            self._fold(part, side, out, depth + 1)
        union = schema.get("oneOf") or schema.get("anyOf")
        if union and len(union) == 2 and any(_is_null_schema(s) for s in union):
            out.nullable = True
            self._fold(next(s for s in union if not _is_null_schema(s)), side, out, depth + 1)
        elif union:
            out.variants.append(schema)  # decided in `compare`: a union or a rule
        self._fold_keywords(schema, out)

    def _fold_keywords(self, schema: dict[str, Any], out: View) -> None:
        if "type" in schema:
            kinds = schema["type"]
            listed = frozenset(kinds if isinstance(kinds, list) else [kinds])
            if "null" in listed:
                out.nullable = True
            listed = listed - {"null"} or frozenset({"null"})
            out.types = listed if out.types is None else (out.types & listed)
        if schema.get("nullable") is True:
            out.nullable = True
        values = None
        if "enum" in schema and isinstance(schema["enum"], list):
            values = frozenset(_canon(v) for v in schema["enum"])
        if "const" in schema:
            values = frozenset({_canon(schema["const"])})
        if values is not None:
            out.closed = values if out.closed is None else (out.closed & values)
        if isinstance(schema.get("x-known-values"), list):
            known = frozenset(_canon(v) for v in schema["x-known-values"])
            out.known = known if out.known is None else (out.known | known)
        for name, sub in (schema.get("properties") or {}).items():
            _add_part(out.properties.setdefault(name, []), sub)
        out.required |= set(schema.get("required") or ())
        if "items" in schema:
            _add_part(out.items, schema["items"])
        extra = schema.get("additionalProperties")
        if extra is False:
            out.extra_closed = True
        elif isinstance(extra, dict):
            _add_part(out.extra, extra)
        self._fold_bounds(schema, out)
        out.rules.extend((k, _canon(schema[k])) for k in RULE_KEYWORDS if k in schema)
        if "default" in schema:
            out.default = [schema["default"]]
        for key, value in schema.items():
            if key not in HANDLED or key in DOCS:
                out.docs[key] = _canon(value)  # a sibling of a $ref overrides its target

    @staticmethod
    def _fold_bounds(schema: dict[str, Any], out: View) -> None:
        bounds = out.bounds
        for key in LOWER_BOUNDS + UPPER_BOUNDS:
            value = schema.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                tighter = max if key in LOWER_BOUNDS else min
                bounds[key] = tighter(bounds[key], value) if key in bounds else value
        for plain, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if schema.get(exclusive) is True and plain in bounds:  # 3.0: a flag on the bound
                bounds[exclusive] = bounds.pop(plain)
        if schema.get("multipleOf") is not None:
            bounds["multipleOf"] = schema["multipleOf"]
        if schema.get("uniqueItems") is True:
            bounds["uniqueItems"] = True
        if "format" in schema:
            bounds["format"] = schema["format"]
        if isinstance(schema.get("pattern"), str):
            out.patterns.add(schema["pattern"])

    # ---- comparing two views
    def compare(self, old: Any, new: Any, direction: str) -> list[Found]:
        return self.compare_parts([old], [new], direction)

    def compare_parts(self, old: list[Any], new: list[Any], direction: str) -> list[Found]:
        """The differences of two schemas, each given as the parts that say it together (one
        property written in several `allOf` members); memoised by the parts' identities."""
        key = (tuple(map(id, old)), tuple(map(id, new)), direction)
        if key in self.memo:
            return self.memo[key][2]
        if key in self.active:  # met again while being compared: a schema that contains itself
            return []
        self.active.add(key)
        try:
            found = self._compare(self._view(old, 0), self._view(new, 1), direction)
        finally:
            self.active.discard(key)
        self.memo[key] = (old, new, found)  # the parts are kept alive: their ids stay theirs
        return found

    def _view(self, parts: list[Any], side: int) -> View:
        out = View()
        for part in parts:
            self._fold(part, side, out, depth=0)
        return out

    def _compare(self, old: View, new: View, direction: str) -> list[Found]:
        if self.depth >= MAX_DEPTH:  # a schema that contains itself through merged parts
            return []
        self.depth += 1
        try:
            return self._compare_views(old, new, direction)
        finally:
            self.depth -= 1

    def _compare_views(self, old: View, new: View, direction: str) -> list[Found]:
        found: list[Found] = []
        add = found.append
        self._compare_types(old, new, direction, add)
        self._compare_values(old, new, direction, add)
        self._compare_bounds(old, new, direction, add)
        old_union = self._union(old)
        new_union = self._union(new)
        self._compare_rules(old, new, direction, add, old_union, new_union)
        self._compare_docs(old, new, direction, add)
        found.extend(self._compare_properties(old, new, direction))
        found.extend(self._nested(old.items, new.items, direction, "/items", "[]"))
        found.extend(self._compare_extra(old, new, direction))
        found.extend(self._compare_variants(old_union, new_union, direction))
        return found

    @staticmethod
    def _union(view: View) -> list[Any]:
        """The members of a `oneOf`/`anyOf` when the schema is a choice of shapes; empty when the
        schema has a shape of its own and the `oneOf` only constrains it (a rule)."""
        if view.types is not None or view.properties or not view.variants:
            return []
        holder = view.variants[0]
        return list(holder.get("oneOf") or holder.get("anyOf") or [])

    @staticmethod
    def _compare_types(old: View, new: View, direction: str, add: Callable[[Found], None]) -> None:
        before, after = old.type_set(), new.type_set()
        if before == after:
            return
        wider = _covers(after, before)
        narrower = _covers(before, after)
        outcome = "widened" if wider else "narrowed" if narrower else "changed"
        shown = (sorted(before) if before else None, sorted(after) if after else None)
        add(Found(f"{direction}-type-{outcome}", "/type", "", *shown))

    @staticmethod
    def _compare_values(old: View, new: View, direction: str, add: Callable[[Found], None]) -> None:
        before, after = old.value_set(), new.value_set()
        if before is not None and after is not None:
            for value in sorted(before - after):
                add(Found(f"{direction}-enum-value-removed", "/enum", "", json.loads(value)))
            for value in sorted(after - before):
                add(Found(f"{direction}-enum-value-added", "/enum", "", None, json.loads(value)))
        was_closed, is_closed = old.closed is not None, new.closed is not None
        if direction == "request" and was_closed != is_closed:
            kind = "request-value-set-closed" if is_closed else "request-value-set-opened"
            add(Found(kind, "/enum", "", _shown(before), _shown(after)))
        elif (before is None) != (after is None):
            add(Found("annotation-changed", "/x-known-values", "", _shown(before), _shown(after)))

    @staticmethod
    def _compare_bounds(old: View, new: View, direction: str, add: Callable[[Found], None]) -> None:
        keys = sorted(set(old.bounds) | set(new.bounds))
        for key in keys:
            before, after = old.bounds.get(key), new.bounds.get(key)
            if before == after:
                continue
            outcome = _bound_outcome(key, before, after)
            add(Found(constraint_kind(direction, FAMILY[key], outcome), f"/{key}", "",
                      before, after))  # fmt: skip
        if old.patterns != new.patterns:
            outcome = (
                "narrowed" if not old.patterns else "widened" if not new.patterns else "changed"
            )
            add(Found(constraint_kind(direction, "pattern", outcome), "/pattern", "",
                      _one(old.patterns), _one(new.patterns)))  # fmt: skip

    @staticmethod
    def _compare_rules(
        old: View,
        new: View,
        direction: str,
        add: Callable[[Found], None],
        old_union: list[Any],
        new_union: list[Any],
    ) -> None:
        before = old.rules + ([] if old_union else _variant_rules(old))
        after = new.rules + ([] if new_union else _variant_rules(new))
        for keyword in sorted({k for k, _ in before} | {k for k, _ in after}):
            lost = sorted(v for k, v in before if k == keyword)
            gained = sorted(v for k, v in after if k == keyword)
            for value in [v for v in lost if v in gained]:
                lost.remove(value)
                gained.remove(value)
            pointer = f"/{keyword}"
            while lost and gained:  # the same keyword with another value
                add(Found(constraint_kind(direction, "rule", "changed"), pointer, "",
                          json.loads(lost.pop(0)), json.loads(gained.pop(0))))  # fmt: skip
            for value in lost:
                add(Found(constraint_kind(direction, "rule", "widened"), pointer, "",
                          json.loads(value), None))  # fmt: skip
            for value in gained:
                add(Found(constraint_kind(direction, "rule", "narrowed"), pointer, "",
                          None, json.loads(value)))  # fmt: skip
        if old.default != new.default:
            kind = (
                "request-default-changed"
                if direction == "request" and old.default and new.default
                else "annotation-changed"
            )
            add(Found(kind, "/default", "", _first(old.default), _first(new.default)))

    @staticmethod
    def _compare_docs(old: View, new: View, direction: str, add: Callable[[Found], None]) -> None:
        for key in sorted(set(old.docs) | set(new.docs)):
            before, after = old.docs.get(key), new.docs.get(key)
            if before == after:
                continue
            kind = (
                "description-changed" if key in DESCRIPTIONS
                else "example-changed" if key in EXAMPLES
                else "deprecation-changed" if key == "deprecated"
                else "annotation-changed"
            )  # fmt: skip
            add(Found(kind, f"/{escape(key)}", "", _loads(before), _loads(after)))

    def _compare_properties(self, old: View, new: View, direction: str) -> list[Found]:
        found: list[Found] = []
        names = sorted(set(old.properties) | set(new.properties) | old.required | new.required)
        for name in names:
            pointer, label = f"/properties/{escape(name)}", f".{name}"
            was, now = name in old.properties, name in new.properties
            was_required, is_required = name in old.required, name in new.required
            if (was or was_required) and not (now or is_required):
                found.append(Found(f"{direction}-property-removed", pointer, label, name, None))
                continue
            if (now or is_required) and not (was or was_required):
                if direction == "request":
                    kind = "request-property-added-" + ("required" if is_required else "optional")
                else:
                    kind = "response-property-added"
                found.append(Found(kind, pointer, label, None, name))
                continue
            if was_required != is_required:
                if direction == "request":
                    kind = "request-property-made-" + ("required" if is_required else "optional")
                else:
                    kind = "response-property-made-" + ("required" if is_required else "optional")
                found.append(Found(kind, "/required", label, was_required, is_required))
            found.extend(
                self._nested(
                    old.properties.get(name, []),
                    new.properties.get(name, []),
                    direction,
                    pointer,
                    label,
                )
            )
        return found

    def _compare_extra(self, old: View, new: View, direction: str) -> list[Found]:
        if old.extra_closed != new.extra_closed:
            outcome = "narrowed" if new.extra_closed else "widened"
            kind = constraint_kind(direction, "extra-properties", outcome)
            return [Found(kind, "/additionalProperties", "", not old.extra_closed,
                          not new.extra_closed)]  # fmt: skip
        if old.extra or new.extra:
            return self._nested(old.extra, new.extra, direction, "/additionalProperties", ".*")
        return []

    def _compare_variants(self, old: list[Any], new: list[Any], direction: str) -> list[Found]:
        if not old and not new:
            return []
        found: list[Found] = []
        pairs, lost, gained = _match_variants(old, new)
        for i, j in pairs:
            name = _ref_name(new[j]) or _variant_name(old[i], j)
            found.extend(self._nested([old[i]], [new[j]], direction, f"/oneOf/{j}", f"({name})"))
        for i in lost:
            found.append(Found(constraint_kind(direction, "variant", "narrowed"), f"/oneOf/{i}",
                               "", _variant_name(old[i], i), None))  # fmt: skip
        for j in gained:
            found.append(Found(constraint_kind(direction, "variant", "widened"), f"/oneOf/{j}",
                               "", None, _variant_name(new[j], j)))  # fmt: skip
        return found

    def _nested(
        self, old: list[Any], new: list[Any], direction: str, pointer: str, label: str
    ) -> list[Found]:
        """Differences of a sub-schema (one property, the items), prefixed with its place."""
        if not old and not new:
            return []
        inner = self.compare_parts(old, new, direction)
        return [
            Found(f.kind, pointer + f.pointer, _join(label, f.field), f.old, f.new) for f in inner
        ]


SHAPES: tuple[tuple[tuple[str, ...], type, str], ...] = (
    (("properties", "dependentRequired", "patternProperties"), dict, "a mapping"),
    (("allOf", "oneOf", "anyOf", "enum", "required", "x-known-values"), list, "a list"),
)


def _check_shape(schema: dict[str, Any]) -> None:
    """A keyword of the wrong JSON type is a malformed document, said in one line."""
    for keys, kind, said in SHAPES:
        for key in keys:
            if key in schema and not isinstance(schema[key], kind):
                raise ContractError(f"a schema's `{key}` is not {said}: {_canon(schema[key])[:60]}")
    for name in schema.get("required") or ():
        if not isinstance(name, str):
            raise ContractError(f"a schema's `required` lists {_canon(name)[:60]}, not a name")
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict | bool):
            raise ContractError(f"property {name}: a schema must be an object")


def _join(label: str, inner: str) -> str:
    if not inner:
        return label
    return label + inner if inner[0] in ".[(" else f"{label}.{inner}"


def _covers(wide: frozenset[str] | None, narrow: frozenset[str] | None) -> bool:
    if wide is None:
        return True
    if narrow is None:
        return False
    return all(t in wide or (t == "integer" and "number" in wide) for t in narrow)


def _bound_outcome(key: str, before: Any, after: Any) -> str:
    if key in ("format", "multipleOf"):
        return "narrowed" if before is None else "widened" if after is None else "changed"
    if key == "uniqueItems":
        return "narrowed" if after else "widened"
    if before is None:
        return "narrowed"
    if after is None:
        return "widened"
    if key in LOWER_BOUNDS:
        return "narrowed" if after > before else "widened"
    return "narrowed" if after < before else "widened"


def _variant_rules(view: View) -> list[tuple[str, str]]:
    return [(k, _canon(v[k])) for v in view.variants for k in ("oneOf", "anyOf") if k in v]


def _match_variants(
    old: list[Any], new: list[Any]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pairs of members with the same `$ref` name, then the rest in order (a document that
    writes its members inline has no names to match)."""
    pairs: list[tuple[int, int]] = []
    old_left, new_left = list(range(len(old))), list(range(len(new)))
    for i in list(old_left):
        name = _ref_name(old[i])
        match = next((j for j in new_left if name and _ref_name(new[j]) == name), None)
        if match is not None:
            pairs.append((i, match))
            old_left.remove(i)
            new_left.remove(match)
    for i, j in zip(list(old_left), list(new_left), strict=False):  # the rest, in order
        pairs.append((i, j))
        old_left.remove(i)
        new_left.remove(j)
    return pairs, old_left, new_left


def _ref_name(schema: Any) -> str:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    return ""


def _variant_name(schema: Any, index: int) -> str:
    return _ref_name(schema) or f"variant {index + 1}"


def _shown(values: frozenset[str] | None) -> list[Any] | None:
    return None if values is None else [json.loads(v) for v in sorted(values)]


def _one(patterns: set[str]) -> str | None:
    return " & ".join(sorted(patterns)) if patterns else None


def _first(values: list[Any]) -> Any:
    return values[0] if values else None


def _loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)
