"""`contract-diff`: each kind of change, applied to a copy of spec/openapi.yaml, is found alone
with its class (spec: Versioning 3; docs/reading-of-the-spec.md, Contract diff), a document
written in another style compares equal, and bad input is one line with exit 2.

Each row of CHANGES is (name, mutate, expected class, expected kind): `mutate` changes the new
copy; a row marked `reverse` compares the changed copy (old) with the original (new), which is
how a change that only goes one way from our document (a required header made optional...) is
made. A row with `base` applies it to both sides first.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from delivery_conformance import cli
from delivery_conformance.resources import spec_path
from delivery_conformance.spec.contract_diff import ChangeClass, contract_diff
from delivery_conformance.spec.contract_kinds import KINDS

Doc = dict[str, Any]
P = "/api/delivery/v1"
B, A, E = ChangeClass.BREAKING, ChangeClass.ADDITIVE, ChangeClass.EDITORIAL
ORIGINAL: Doc = yaml.load(spec_path("openapi.yaml").read_text(), Loader=yaml.CSafeLoader)


def schema(doc: Doc, name: str) -> Doc:
    return doc["components"]["schemas"][name]


def op(doc: Doc, path: str, method: str = "get") -> Doc:
    return doc["paths"][P + path][method]


def param(doc: Doc, name: str) -> Doc:
    return doc["components"]["parameters"][name]


def scheme(doc: Doc) -> Doc:
    return doc["components"]["securitySchemes"]


def rename(mapping: Doc, old: str, new: str) -> None:
    mapping[new] = mapping.pop(old)


def oauth(doc: Doc) -> None:
    flows = {
        "clientCredentials": {
            "tokenUrl": "https://auth.example/token",
            "scopes": {"metadata:read": "read", "playback": "play"},
        }
    }
    scheme(doc)["oauth"] = {"type": "oauth2", "flows": flows}


def two_ways_in(doc: Doc) -> None:
    op(doc, "/catalog")["security"] = [{"bearerAuth": []}, {"mtls": []}]


def scoped(doc: Doc) -> None:
    op(doc, "/catalog")["security"] = [{"bearerAuth": ["metadata:read"]}]


@dataclass(frozen=True)
class Row:
    name: str
    mutate: Callable[[Doc], object]
    change_class: ChangeClass
    kind: str
    reverse: bool = False
    base: Callable[[Doc], object] | None = None


Where = Callable[[Doc], Any]
Mutate = Callable[[Doc], object]


def put(where: Where, key: str, value: Any) -> Mutate:
    return lambda d: where(d).__setitem__(key, value)


def drop(where: Where, key: Any) -> Mutate:
    """Remove `key` (an item of a list, a key of a mapping)."""
    return lambda d: where(d).remove(key) if isinstance(where(d), list) else where(d).pop(key)


def add(where: Where, value: Any) -> Mutate:
    return lambda d: where(d).append(value)


def both(*steps: Mutate) -> Mutate:
    return lambda d: [step(d) for step in steps]


def film(d: Doc) -> Doc:
    return schema(d, "Film")


def film_field(name: str) -> Where:
    return lambda d: schema(d, "Film")["properties"][name]


def single_request(d: Doc) -> Doc:
    return schema(d, "PlaybackSingleRequest")


def limit(d: Doc) -> Doc:
    return param(d, "CatalogLimit")["schema"]


def responses(path: str, method: str = "get") -> Where:
    return lambda d: op(d, path, method)["responses"]


def playback_body(d: Doc) -> Doc:
    return op(d, "/playback", "post")["requestBody"]


def header(name: str) -> Where:
    return lambda d: d["components"]["headers"][name]


JSON_BODY = {"content": {"application/json": {"schema": {"type": "object"}}}}
REGION = {"name": "region", "in": "query", "schema": {"type": "string"}}
NEW_GET = {"get": {"responses": {"200": {"description": "ok"}}}}

# fmt: off
CHANGES = [
    Row("a path removed", drop(lambda d: d["paths"], P + "/series/{code}"), B, "path-removed"),
    Row("a path added", put(lambda d: d["paths"], P + "/series/{code}/episodes", NEW_GET), A,
        "path-added"),
    Row("an operation removed", drop(lambda d: d["paths"][P + "/config"], "get"), B,
        "operation-removed"),
    Row("an operation added", put(lambda d: d["paths"][P + "/creatives/{id}"], "delete",
        {"responses": {"204": {"description": "gone"}}}), A, "operation-added"),
    Row("a parameter removed", lambda d: op(d, "/catalog")["parameters"].pop(1), B,
        "request-parameter-removed"),
    Row("a required parameter added", add(lambda d: op(d, "/catalog")["parameters"],
        {**REGION, "required": True}), B, "request-parameter-added-required"),
    Row("an optional parameter added", add(lambda d: op(d, "/catalog")["parameters"], REGION), A,
        "request-parameter-added-optional"),
    Row("a parameter made required", put(lambda d: param(d, "Category"), "required", True), B,
        "request-parameter-made-required"),
    Row("a parameter made optional", put(lambda d: param(d, "Category"), "required", True), A,
        "request-parameter-made-optional", reverse=True),
    Row("a parameter moved to a header", put(lambda d: param(d, "Cursor"), "in", "header"), B,
        "request-parameter-location-changed"),
    Row("a parameter's style changed", put(lambda d: param(d, "Cursor"), "style",
        "pipeDelimited"), B, "request-parameter-style-changed"),
    Row("a default changed", put(lambda d: param(d, "FeedLimit")["schema"], "default", 20), B,
        "request-default-changed"),
    Row("a required body added", put(lambda d: op(d, "/config"), "requestBody",
        {**JSON_BODY, "required": True}), B, "request-body-added-required"),
    Row("an optional body added", put(lambda d: op(d, "/config"), "requestBody", JSON_BODY), A,
        "request-body-added-optional"),
    Row("the body removed", drop(lambda d: op(d, "/playback", "post"), "requestBody"), B,
        "request-body-removed"),
    Row("the body made optional", put(playback_body, "required", False), A,
        "request-body-made-optional"),
    Row("the body made required", put(playback_body, "required", False), B,
        "request-body-made-required", reverse=True),
    Row("a request media type removed", drop(lambda d: playback_body(d)["content"],
        "application/json"), B, "request-media-type-removed"),
    Row("a request media type added", put(lambda d: playback_body(d)["content"], "text/plain",
        {"schema": {"type": "string"}}), A, "request-media-type-added"),
    Row("a request field removed", drop(lambda d: single_request(d)["properties"], "viewer_ref"),
        B, "request-property-removed"),
    Row("a required request field added", both(put(single_request, "required", ["region"]),
        put(lambda d: single_request(d)["properties"], "region", {"type": "string"})), B,
        "request-property-added-required"),
    Row("an optional request field added", put(lambda d: single_request(d)["properties"],
        "locale", {"type": "string"}), A, "request-property-added-optional"),
    Row("a request field made required", put(single_request, "required", ["intent"]), B,
        "request-property-made-required"),
    Row("a request field made optional", put(single_request, "required", ["intent"]), A,
        "request-property-made-optional", reverse=True),
    Row("a response status removed", drop(responses("/catalog"), "503"), B,
        "response-status-removed"),
    Row("a response status added", put(responses("/catalog"), "404", {"description": "none"}),
        A, "response-status-added"),
    Row("a response media type removed", drop(lambda d: responses("/config")(d)["200"][
        "content"], "application/json"), B, "response-media-type-removed"),
    Row("a response media type added", put(lambda d: responses("/config")(d)["200"]["content"],
        "text/csv", {"schema": {"type": "string"}}), A, "response-media-type-added"),
    Row("a response header removed", drop(lambda d: d["components"]["responses"]["RateLimited"][
        "headers"], "Retry-After"), B, "response-header-removed"),
    Row("a response header added", put(lambda d: responses("/config")(d)["200"]["headers"],
        "X-Trace", {"schema": {"type": "string"}}), A, "response-header-added"),
    Row("a response header made optional", put(header("RetryAfter"), "required", False), B,
        "response-header-made-optional"),
    Row("a response header made required", put(header("Deprecation"), "required", True), A,
        "response-header-made-required"),
    Row("an error code removed", drop(lambda d: responses("/catalog")(d)["400"]["x-error-codes"],
        "invalid_request"), B, "error-code-removed"),
    Row("an error code added", add(lambda d: responses("/catalog")(d)["400"]["x-error-codes"],
        "invalid_cursor"), A, "error-code-added"),
    Row("a response field removed", both(drop(lambda d: film(d)["properties"], "title"),
        drop(lambda d: film(d)["required"], "title")), B, "response-property-removed"),
    Row("a response field added", put(lambda d: film(d)["properties"], "rating_count",
        {"type": "integer"}), A, "response-property-added"),
    Row("a response field made optional", drop(lambda d: film(d)["required"], "slug"), B,
        "response-property-made-optional"),
    Row("a response field made required", add(lambda d: schema(d, "CatalogPage")["required"],
        "next_cursor"), A, "response-property-made-required"),
    Row("a parameter type widened", put(limit, "type", ["integer", "string"]), A,
        "request-type-widened"),
    Row("a parameter type narrowed", put(limit, "type", ["integer", "string"]), B,
        "request-type-narrowed", reverse=True),
    Row("a parameter type changed", put(limit, "type", "string"), B, "request-type-changed"),
    Row("a response type widened", put(film_field("display_order"), "type", "number"), B,
        "response-type-widened"),
    Row("a response type narrowed", put(film_field("language"), "type", "string"), A,
        "response-type-narrowed"),
    Row("a response type changed", put(film_field("display_order"), "type", "string"), B,
        "response-type-changed"),
    Row("a request value removed", drop(lambda d: schema(d, "Intent")["x-known-values"],
        "prefetch"), B, "request-enum-value-removed"),
    Row("a request value added", add(lambda d: schema(d, "Intent")["x-known-values"], "preview"),
        A, "request-enum-value-added"),
    Row("a response enum value removed", drop(lambda d: schema(d, "Creative")["properties"][
        "status"]["enum"], "pushed"), B, "response-enum-value-removed"),
    Row("a response enum value added", add(lambda d: schema(d, "Creative")["properties"][
        "status"]["enum"], "archived"), A, "response-enum-value-added"),
    Row("a request value set closed", lambda d: rename(schema(d, "Intent"), "x-known-values",
        "enum"), B, "request-value-set-closed"),
    Row("a request value set opened", lambda d: rename(schema(d, "Intent"), "x-known-values",
        "enum"), A, "request-value-set-opened", reverse=True),
    Row("a parameter maximum lowered", put(limit, "maximum", 100), B, "request-range-narrowed"),
    Row("a parameter maximum raised", put(limit, "maximum", 500), A, "request-range-widened"),
    Row("a parameter minimum raised", put(lambda d: param(d, "UpdatedSince")["schema"],
        "minimum", 1), B, "request-range-narrowed"),
    Row("a response minimum lowered", put(lambda d: schema(d, "RateLimitDoor")["properties"][
        "limit"], "minimum", 0), B, "response-range-widened"),
    Row("a response minimum raised", put(lambda d: schema(d, "Episode")["properties"][
        "episode_no"], "minimum", 2), A, "response-range-narrowed"),
    Row("a request maxLength lowered", put(lambda d: schema(d, "ViewerRef"), "maxLength", 128),
        B, "request-length-narrowed"),
    Row("a request maxLength raised", put(lambda d: schema(d, "ViewerRef"), "maxLength", 512),
        A, "request-length-widened"),
    Row("a request maxItems lowered", put(lambda d: schema(d, "PlaybackBatchEpisodesRequest")[
        "properties"]["episodes"], "maxItems", 2), B, "request-item-count-narrowed"),
    Row("a response maxItems raised", put(lambda d: schema(d, "PlaybackBatchResponse")[
        "properties"]["items"], "maxItems", 5), B, "response-item-count-widened"),
    Row("a pattern added on a request parameter", put(lambda d: param(d, "Cursor")["schema"],
        "pattern", "^c_"), B, "request-pattern-narrowed"),
    Row("a request pattern changed", put(lambda d: param(d, "Category")["schema"], "pattern",
        "^[a-z]+$"), B, "request-pattern-changed"),
    Row("a request pattern removed", drop(lambda d: param(d, "Category")["schema"], "pattern"),
        A, "request-pattern-widened"),
    Row("a response pattern changed", put(lambda d: schema(d, "RequestId"), "pattern",
        "^req_.{20,30}$"), B, "response-pattern-changed"),
    Row("a request format changed", put(lambda d: param(d, "ServiceVersionHeader")["schema"],
        "format", "date-time"), B, "request-format-changed"),
    Row("a request closed to unknown fields", put(single_request, "additionalProperties", False),
        B, "request-extra-properties-narrowed"),
    Row("a response closed to unknown fields", put(film, "additionalProperties", False), A,
        "response-extra-properties-narrowed"),
    Row("a request rule added", put(single_request, "propertyNames", {"maxLength": 40}), B,
        "request-rule-narrowed"),
    Row("a request rule changed", put(lambda d: single_request(d)["dependentRequired"],
        "viewer_ref", ["intent"]), B, "request-rule-changed"),
    Row("a request body form removed", lambda d: schema(d, "PlaybackRequest")["oneOf"].pop(), B,
        "request-variant-narrowed"),
    Row("a response shape added", add(lambda d: schema(d, "PlaybackResponse")["oneOf"],
        {"$ref": "#/components/schemas/FlatError"}), B, "response-variant-widened"),
    Row("security now required", put(lambda d: d, "security", [{"bearerAuth": []}]), B,
        "security-now-required", base=drop(lambda d: d, "security")),
    Row("security made optional", drop(lambda d: d, "security"), A, "security-made-optional"),
    Row("another way in", two_ways_in, A, "security-alternative-added"),
    Row("a way in removed", two_ways_in, B, "security-requirement-removed", reverse=True),
    Row("a scope required", scoped, B, "security-scope-added"),
    Row("a scope no longer required", scoped, A, "security-scope-dropped", reverse=True),
    Row("a security scheme removed", drop(scheme, "bearerAuth"), B, "security-scheme-removed"),
    Row("a security scheme added", put(scheme, "apiKey", {"type": "apiKey", "in": "header",
        "name": "X-Key"}), A, "security-scheme-added"),
    Row("a security scheme changed", put(lambda d: scheme(d)["bearerAuth"], "scheme", "basic"),
        B, "security-scheme-changed"),
    Row("a scope removed from a scheme", drop(lambda d: scheme(d)["oauth"]["flows"][
        "clientCredentials"]["scopes"], "playback"), B, "security-scheme-scope-removed",
        base=oauth),
    Row("a scope added to a scheme", put(lambda d: scheme(d)["oauth"]["flows"][
        "clientCredentials"]["scopes"], "videos:read", "videos"), A,
        "security-scheme-scope-added", base=oauth),
    Row("a description changed", put(film, "description", "A film."), E, "description-changed"),
    Row("an example changed", put(film, "examples", []), E, "example-changed"),
    Row("an operation id changed", put(lambda d: op(d, "/config"), "operationId", "readConfig"),
        E, "annotation-changed"),
    Row("an operation deprecated", put(lambda d: op(d, "/config"), "deprecated", True), E,
        "deprecation-changed"),
]
# fmt: on


def documents(row: Row) -> tuple[Doc, Doc]:
    old = copy.deepcopy(ORIGINAL)
    if row.base is not None:
        row.base(old)
    new = copy.deepcopy(old)
    row.mutate(new)
    return (new, old) if row.reverse else (old, new)


def test_the_table_covers_thirty_kinds_and_names_only_known_ones() -> None:
    kinds = {row.kind for row in CHANGES}
    assert len(kinds) >= 30 and kinds <= set(KINDS)
    assert len({row.name for row in CHANGES}) == len(CHANGES)


@pytest.mark.parametrize("row", CHANGES, ids=[row.name for row in CHANGES])
def test_each_change_is_found_alone_with_its_class(row: Row) -> None:
    old, new = documents(row)
    changes = contract_diff(old, new)
    assert changes, f"{row.name}: nothing found"
    assert {(c.kind, c.change_class) for c in changes} == {(row.kind, row.change_class)}
    assert all(c.reason == KINDS[row.kind].reason or "frozen" in c.reason for c in changes)


def inline(node: Any, doc: Doc, seen: tuple[str, ...] = ()) -> Any:
    """The document with every `$ref` replaced by a copy of its target (siblings kept on top)."""
    if isinstance(node, list):
        return [inline(item, doc, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node and node["$ref"] not in seen:
        ref = node["$ref"]
        target: Any = doc
        for token in ref[2:].split("/"):
            target = target[token.replace("~1", "/").replace("~0", "~")]
        merged = {
            **inline(target, doc, (*seen, ref)),
            **{k: v for k, v in node.items() if k != "$ref"},
        }
        return inline(merged, doc, (*seen, ref))
    return {k: inline(v, doc, seen) for k, v in node.items()}


def three_o_style(node: Any) -> Any:
    """`type: [X, "null"]` written as 3.0's `type: X, nullable: true`."""
    if isinstance(node, list):
        return [three_o_style(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: three_o_style(v) for k, v in node.items()}
    kinds = out.get("type")
    if isinstance(kinds, list) and "null" in kinds and len(kinds) == 2:
        out["type"] = next(k for k in kinds if k != "null")
        out["nullable"] = True
    return out


def split_into_all_of(doc: Doc) -> None:
    film = schema(doc, "Film")
    names = list(film["properties"])
    first, second = names[: len(names) // 2], names[len(names) // 2 :]
    film["allOf"] = [
        {
            "type": "object",
            "properties": {n: film["properties"][n] for n in first},
            "required": [n for n in film["required"] if n in first],
        },
        {
            "properties": {n: film["properties"][n] for n in second},
            "required": [n for n in film["required"] if n in second],
        },
    ]
    for key in ("type", "properties", "required"):
        film.pop(key)


def servers_carry_the_prefix(doc: Doc) -> None:
    doc["servers"][0]["url"] = "https://www.delivery.example/api/delivery/v1"
    doc["paths"] = {path.removeprefix(P): item for path, item in doc["paths"].items()}


@pytest.mark.parametrize(
    "restyle",
    [
        pytest.param(lambda d: inline(d, d), id="every $ref inlined"),
        pytest.param(three_o_style, id="nullable written the 3.0 way"),
    ],
)
def test_a_document_written_in_another_style_has_no_change(restyle: Callable[[Doc], Doc]) -> None:
    assert contract_diff(ORIGINAL, restyle(copy.deepcopy(ORIGINAL))) == []


@pytest.mark.parametrize(
    "restyle",
    [
        pytest.param(split_into_all_of, id="an object split into allOf parts"),
        pytest.param(
            lambda d: rename(schema(d, "Tag")["properties"]["type"], "x-known-values", "enum"),
            id="a response open set written as an enum",
        ),
        pytest.param(
            lambda d: schema(d, "Film")["properties"].__setitem__(
                "language",
                {
                    "oneOf": [{"type": "null"}, {"type": "string"}],
                    "description": "Free text; display it, do not parse it.",
                },
            ),
            id="null as a oneOf member",
        ),
    ],
)
def test_a_change_of_style_alone_is_no_change(restyle: Callable[[Doc], object]) -> None:
    new = copy.deepcopy(ORIGINAL)
    restyle(new)
    assert contract_diff(ORIGINAL, new) == []


def strip_error_codes(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("x-error-codes", None)
        for value in node.values():
            strip_error_codes(value)
    elif isinstance(node, list):
        for value in node:
            strip_error_codes(value)


def test_error_codes_are_compared_only_when_both_documents_list_them() -> None:
    new = copy.deepcopy(ORIGINAL)
    strip_error_codes(new)  # a document that does not use this project's extension
    assert contract_diff(ORIGINAL, new) == []
    op(new, "/catalog")["responses"]["400"]["x-error-codes"] = ["invalid_request"]
    kinds = {c.kind for c in contract_diff(ORIGINAL, new)}
    assert kinds == {"error-code-removed"}


def test_paths_under_a_server_url_prefix_match_whole_paths() -> None:
    new = copy.deepcopy(ORIGINAL)
    servers_carry_the_prefix(new)
    changes = contract_diff(ORIGINAL, new)
    assert [(c.kind, c.pointer) for c in changes] == [("annotation-changed", "/servers")]


def test_a_schema_that_contains_itself_is_compared_without_end() -> None:
    old = copy.deepcopy(ORIGINAL)
    node = {"$ref": "#/components/schemas/Node"}
    old["components"]["schemas"]["Base"] = {"type": "object"}
    schema(old, "Base")["properties"] = {"name": {"type": "string"}, "child": node}
    old["components"]["schemas"]["Node"] = {
        "allOf": [{"$ref": "#/components/schemas/Base"}],
        "properties": {"child": node, "children": {"type": "array", "items": node}},
    }
    schema(old, "Film")["properties"]["tree"] = node
    new = copy.deepcopy(old)
    schema(new, "Base")["properties"]["name"]["type"] = "integer"
    unshared = json.loads(json.dumps(old)), json.loads(json.dumps(new))  # no object met twice
    for pair in ((old, new), unshared):
        kinds = {(c.kind, c.where) for c in contract_diff(*pair)}
        assert (
            "response-type-changed",
            "response 200 application/json: films[].tree.name",
        ) in kinds
    assert contract_diff(old, copy.deepcopy(old)) == []


# ---- the command


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["contract-diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, doc: Doc) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_our_spec_against_itself_is_no_change(capsys: pytest.CaptureFixture[str]) -> None:
    """Its time is measured by `make bench` (benchmarks/contract_diff.py), not here."""
    spec = str(spec_path("openapi.yaml"))
    code, out, err = run([spec, spec], capsys)
    assert (code, err) == (0, "") and "0 breaking, 0 additive, 0 editorial" in out
    assert "no change" in out


def test_a_breaking_change_exits_1_and_writes_markdown_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = copy.deepcopy(ORIGINAL)
    schema(new, "Film")["properties"]["rating_count"] = {"type": "integer"}  # additive
    param(new, "CatalogLimit")["schema"]["maximum"] = 100  # breaking
    markdown, machine = tmp_path / "diff.md", tmp_path / "diff.json"
    markdown.write_text("earlier step\n")  # appended to, as $GITHUB_STEP_SUMMARY is
    code, out, _ = run(
        [
            str(spec_path("openapi.yaml")),
            str(write(tmp_path / "new.json", new)),
            "--markdown",
            str(markdown),
            "--json",
            str(machine),
        ],
        capsys,
    )
    assert code == 1
    assert out.splitlines()[1] == "BREAKING" and "request-range-narrowed" in out
    table = markdown.read_text()
    assert table.startswith("earlier step\n### Contract diff: 1 breaking, 1 additive")
    assert "| Class | Change | Operations | Where | Old | New | Why |" in table
    cells = [
        "**breaking**",
        "`request-range-narrowed`",
        "GET /catalog",
        "query parameter limit (maximum)",
    ]
    assert "| " + " | ".join(cells) + " |" in table
    document = json.loads(machine.read_text())
    assert document["counts"] == {"breaking": 1, "additive": 1, "editorial": 0}
    first = document["changes"][0]
    assert set(first) == {"kind", "class", "location", "where", "old", "new", "reason"}
    assert first["location"] == {
        "path": P + "/catalog",
        "method": "GET",
        "pointer": "/parameters/query/limit/schema/maximum",
    }
    assert (first["old"], first["new"]) == (200, 100)


@pytest.mark.parametrize(("fail_on", "expected"), [("breaking", 0), ("additive", 1), ("any", 1)])
def test_fail_on_picks_the_class_that_fails(
    fail_on: str, expected: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = copy.deepcopy(ORIGINAL)
    schema(new, "Film")["properties"]["rating_count"] = {"type": "integer"}
    code, _, _ = run(
        [
            str(spec_path("openapi.yaml")),
            str(write(tmp_path / "new.json", new)),
            "--fail-on",
            fail_on,
        ],
        capsys,
    )
    assert code == expected


def test_an_editorial_change_fails_only_with_fail_on_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = copy.deepcopy(ORIGINAL)
    schema(new, "Film")["description"] = "A film."
    argv = [str(spec_path("openapi.yaml")), str(write(tmp_path / "new.json", new))]
    assert run([*argv, "--fail-on", "additive"], capsys)[0] == 0
    assert run([*argv, "--fail-on", "any"], capsys)[0] == 1


def test_an_addition_on_the_frozen_videos_path_says_so() -> None:
    new = copy.deepcopy(ORIGINAL)
    schema(new, "VideoRow")["properties"]["rating"] = {"type": "integer"}
    (change,) = [c for c in contract_diff(ORIGINAL, new) if c.path.endswith("/videos")]
    assert change.change_class is A and "frozen legacy path" in change.reason


BAD_INPUTS = [
    ("missing", None, "cannot read (No such file or directory)"),
    ("broken.yaml", "paths: [unclosed\n", "neither YAML nor JSON"),
    ("broken.json", '{"openapi": "3.1.0",', "neither YAML nor JSON"),
    ("list.yaml", "- a\n- b\n", "not an OpenAPI document"),
    ("swagger.yaml", "swagger: '2.0'\npaths: {}\n", "not OpenAPI 3.x"),
    ("no-version.json", '{"paths": {}}', "not OpenAPI 3.x"),
    (
        "dangling.yaml",
        "openapi: 3.1.0\npaths:\n  /a:\n    get:\n      responses:\n"
        "        '200': {$ref: '#/components/responses/Nope'}\n",
        "$ref #/components/responses/Nope does not resolve",
    ),
    (
        "external.yaml",
        "openapi: 3.1.0\npaths:\n  /a: {$ref: 'other.yaml#/paths/a'}\n",
        "only references inside the document are resolved",
    ),
    (
        "malformed.yaml",
        "openapi: 3.1.0\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n"
        "          description: ok\n          content:\n            application/json:\n"
        "              schema: {properties: [a, b]}\n",
        "GET /a: a schema's `properties` is not a mapping",
    ),
]


@pytest.mark.parametrize(("name", "text", "said"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2(
    name: str, text: str | None, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / name
    if text is not None:
        bad.write_text(text, encoding="utf-8")
    for argv in (
        [str(bad), str(spec_path("openapi.yaml"))],
        [str(spec_path("openapi.yaml")), str(bad)],
    ):
        code, out, err = run(argv, capsys)
        assert (code, out) == (2, "")
        assert len(err.strip().splitlines()) == 1
        assert err.startswith(f"delivery-conformance: {bad}: ") and said in err


def test_an_output_file_that_cannot_be_written_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(spec_path("openapi.yaml"))
    code, _, err = run([spec, spec, "--json", str(tmp_path / "no" / "such" / "d.json")], capsys)
    assert code == 2 and "cannot write" in err and len(err.strip().splitlines()) == 1
