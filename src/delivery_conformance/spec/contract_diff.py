"""Two OpenAPI 3.x descriptions of the Delivery API compared: every change, classed (pure).

    changes = contract_diff(old_document, new_document)     # two dicts, as parsed
    [c for c in changes if c.change_class is ChangeClass.BREAKING]

spec: Versioning, items 3 and 6: inside /v1 only additive changes happen, and the published
OpenAPI description changes only additively. Each change has a kind of
spec/contract_kinds.py (its class and reason come from that table), the operation it touches
(path and method; both empty for the document's own parts), a JSON pointer inside the operation
(with `$ref`s followed, so two documents of different style point alike), a readable place, the
old and the new value.

Operations are matched by path template, whatever the names of its path parameters, and by
method; parameters by location and name (path parameters by position); responses by status;
media types and header names without regard to letter case. A path prefix carried by the first
server URL (`https://host/api/delivery/v1` with paths `/catalog`) is put in front of the paths,
so a document written that way compares with one that writes whole paths. The error codes of a
response (`x-error-codes`, this project's extension) are compared when both documents use the
extension: a document that never writes it has no error codes to lose. Schemas are compared
by spec/contract_schema.py after the style is taken out.

The frozen legacy paths (spec: Endpoints > GET /videos: "frozen legacy path", no additions) keep
their classes, with a note on every additive change there: the suite reads that rule as a
`should` (docs/reading-of-the-spec.md, VID-013).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from delivery_conformance.spec.contract_kinds import KINDS, ChangeClass
from delivery_conformance.spec.contract_schema import (
    ContractError,
    Found,
    SchemaDiff,
    escape,
    lookup,
    resolve,
)

__all__ = ["Change", "ChangeClass", "ContractError", "check_document", "contract_diff"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
FROZEN_PATHS = frozenset({"/api/delivery/v1/videos", "/api/delivery/v1/videos/{}"})
FROZEN_NOTE = (
    "on a frozen legacy path, where the spec wants no additions (Endpoints > GET /videos; a "
    "should, as VID-013)"
)
WORDS = {"description": "description-changed", "summary": "description-changed",
         "title": "description-changed", "example": "example-changed",
         "examples": "example-changed", "deprecated": "deprecation-changed"}  # fmt: skip
PARAMETER_KEYS = {"name", "in", "required", "schema", "content", "style", "explode",
                  "allowReserved", "$ref"}  # fmt: skip


@dataclass(frozen=True)
class Change:
    kind: str
    change_class: ChangeClass
    path: str  # the path template as the new document writes it (the old one when removed)
    method: str  # GET, POST, ...; "" for a whole path or the document itself
    pointer: str  # inside the operation (or the document), with $refs followed
    part: str  # the part of the operation in words: "response 200 application/json"
    field: str  # inside a schema of that part: "films[].title"; "" for the part itself
    old: Any
    new: Any
    reason: str

    @property
    def where(self) -> str:
        return f"{self.part}: {self.field}" if self.field else self.part

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "class": self.change_class.value,
            "location": {"path": self.path, "method": self.method, "pointer": self.pointer},
            "where": self.where,
            "old": self.old,
            "new": self.new,
            "reason": self.reason,
        }

    def operation(self) -> str:
        return " ".join(filter(None, (self.method, self.path))) or "document"


def check_document(document: Any) -> dict[str, Any]:
    """The document, when it is OpenAPI 3.x whose every `$ref` resolves; else `ContractError`."""
    if not isinstance(document, dict):
        raise ContractError("not an OpenAPI document (the top is not a mapping)")
    version = document.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        said = version if version is not None else document.get("swagger")
        raise ContractError(f"not OpenAPI 3.x (openapi: {said!r})")
    if not isinstance(document.get("paths") or {}, dict):
        raise ContractError("`paths` is not a mapping")
    for ref in _refs(document):
        lookup(document, ref)
    return document


def _uses(node: Any, key: str) -> bool:
    """Whether `key` is a key of some mapping inside `node`."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                found.append(item["$ref"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def contract_diff(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from `old` to `new`, in document order (paths sorted)."""
    differ = _Differ(check_document(old), check_document(new))
    try:
        return differ.run()
    except ContractError as error:
        raise ContractError(f"{differ.place()}: {error}") from None
    except (AttributeError, TypeError, KeyError, IndexError) as error:  # a node of another shape
        said = f"a malformed node ({type(error).__name__}: {error})"
        raise ContractError(f"{differ.place()}: {said}") from None


def _template_key(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def _prefix(document: dict[str, Any]) -> str:
    servers = document.get("servers") or []
    url = servers[0].get("url", "") if servers and isinstance(servers[0], dict) else ""
    url = re.sub(r"^\{[^}]*\}", "", str(url))
    path = urlsplit(url).path if "://" in url else url
    return path.rstrip("/") if "{" not in path else ""


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class _Differ:
    def __init__(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.docs = (old, new)
        self.schemas = SchemaDiff(old, new)
        self.changes: list[Change] = []
        self.path = ""
        self.method = ""
        # `x-error-codes` is this project's extension: compared only when both documents use it
        self.error_codes = all(_uses(d, "x-error-codes") for d in (old, new))

    def run(self) -> list[Change]:
        old_paths, new_paths = self._paths(0), self._paths(1)
        for key in sorted(set(old_paths) | set(new_paths)):
            self.method = ""
            if key not in new_paths:
                self.path = old_paths[key][0]
                self.emit("path-removed", "", "path", self.path, None)
            elif key not in old_paths:
                self.path = new_paths[key][0]
                self.emit("path-added", "", "path", None, self.path)
            else:
                self.path = new_paths[key][0]
                self._path_item(old_paths[key], new_paths[key])
        self.path = self.method = ""
        self._document()
        return self.changes

    def place(self) -> str:
        """Where the comparison is, for an error: the operation, or the document."""
        return " ".join(filter(None, (self.method, self.path))) or "the document"

    def emit(
        self, kind: str, pointer: str, where: str, old: Any, new: Any, field: str = ""
    ) -> None:
        row = KINDS[kind]
        reason = row.reason
        if row.change_class is ChangeClass.ADDITIVE and _template_key(self.path) in FROZEN_PATHS:
            reason = f"{reason}; {FROZEN_NOTE}"
        change = Change(
            kind, row.change_class, self.path, self.method, pointer, where, field, old, new, reason
        )
        self.changes.append(change)

    def emit_found(self, found: list[Found], pointer: str, where: str) -> None:
        for f in found:
            self.emit(f.kind, pointer + f.pointer, where, f.old, f.new, f.field.lstrip("."))

    def _paths(self, side: int) -> dict[str, tuple[str, dict[str, Any]]]:
        """Path items by template (`/creatives/{}`): the path as written (prefix put back)."""
        document = self.docs[side]
        prefix = _prefix(document)
        out = {}
        for path, item in (document.get("paths") or {}).items():
            whole = path if not prefix or path.startswith(prefix + "/") else prefix + path
            out[_template_key(whole)] = (whole, resolve(document, item) or {})
        return out

    def _path_item(self, old: tuple[str, Any], new: tuple[str, Any]) -> None:
        old_item, new_item = old[1], new[1]
        for method in METHODS:
            self.method = method.upper()
            before, after = old_item.get(method), new_item.get(method)
            if before is None and after is None:
                continue
            if after is None:
                self.emit("operation-removed", "", "operation", self.method, None)
            elif before is None:
                self.emit("operation-added", "", "operation", None, self.method)
            else:
                self._operation(old, new, resolve(self.docs[0], before),
                                resolve(self.docs[1], after))  # fmt: skip

    # ---- one operation
    def _operation(self, old: Any, new: Any, before: dict[str, Any], after: dict[str, Any]) -> None:
        self._words("", "operation", before, after, {"parameters", "requestBody", "responses",
                                                     "security", "callbacks"})  # fmt: skip
        self._parameters(self._effective_parameters(0, old, before),
                         self._effective_parameters(1, new, after))  # fmt: skip
        self._request_body(before.get("requestBody"), after.get("requestBody"))
        self._responses(before.get("responses") or {}, after.get("responses") or {})
        self._security(
            before.get("security", self.docs[0].get("security")),
            after.get("security", self.docs[1].get("security")),
        )

    def _words(
        self, pointer: str, where: str, before: Any, after: Any, skip: set[str] | frozenset[str]
    ) -> None:
        """Editorial changes of an object: its words, examples, deprecation and extensions."""
        if not isinstance(before, dict) or not isinstance(after, dict):
            return
        for key in sorted(set(before) | set(after)):
            if key in skip:
                continue
            was = _expanded(self.docs[0], before.get(key))
            now = _expanded(self.docs[1], after.get(key))
            if _canon(was) != _canon(now):
                kind = WORDS.get(key, "annotation-changed")
                self.emit(kind, f"{pointer}/{escape(key)}", where, was, now)

    def _effective_parameters(
        self, side: int, item: tuple[str, Any], operation: dict[str, Any]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        document = self.docs[side]
        names = re.findall(r"\{([^}]*)\}", item[0])
        out: dict[tuple[str, str], dict[str, Any]] = {}
        for raw in list(item[1].get("parameters") or []) + list(operation.get("parameters") or []):
            parameter = resolve(document, raw)
            if not isinstance(parameter, dict) or "name" not in parameter:
                raise ContractError("a parameter without a name")
            where, name = str(parameter.get("in", "")), str(parameter["name"])
            if where == "path" and name in names:
                key = ("path", f"#{names.index(name)}")
            else:
                key = (where, name.lower() if where == "header" else name)
            out[key] = parameter
        return out

    def _parameters(
        self, old: dict[tuple[str, str], dict[str, Any]], new: dict[tuple[str, str], Any]
    ) -> None:
        removed = [k for k in old if k not in new]
        added = [k for k in new if k not in old]
        for key in removed:
            name = old[key]["name"]
            moved = next((k for k in added if new[k]["name"] == name), None)
            if moved is not None:
                added.remove(moved)
                self.emit("request-parameter-location-changed",
                          f"/parameters/{key[0]}/{escape(name)}/in", f"parameter {name}", key[0],
                          moved[0])  # fmt: skip
            else:
                self.emit("request-parameter-removed", f"/parameters/{key[0]}/{escape(name)}",
                          f"{key[0]} parameter {name}", name, None)  # fmt: skip
        for key in added:
            parameter = new[key]
            required = bool(parameter.get("required")) or key[0] == "path"
            kind = "request-parameter-added-" + ("required" if required else "optional")
            name = str(parameter["name"])
            self.emit(kind, f"/parameters/{key[0]}/{escape(name)}", f"{key[0]} parameter {name}",
                      None, name)  # fmt: skip
        for key in old:
            if key in new:
                self._parameter(key[0], old[key], new[key])

    def _parameter(self, location: str, before: dict[str, Any], after: dict[str, Any]) -> None:
        name = str(after["name"])
        pointer, where = f"/parameters/{location}/{escape(name)}", f"{location} parameter {name}"
        was = bool(before.get("required")) or location == "path"
        now = bool(after.get("required")) or location == "path"
        if was != now:
            kind = "request-parameter-made-" + ("required" if now else "optional")
            self.emit(kind, f"{pointer}/required", where, was, now)
        if _style(location, before) != _style(location, after):
            self.emit("request-parameter-style-changed", f"{pointer}/style", where,
                      _style(location, before), _style(location, after))  # fmt: skip
        self._words(pointer, where, before, after, PARAMETER_KEYS)
        if str(before["name"]) != name:
            self.emit("annotation-changed", f"{pointer}/name", where, before["name"], name)
        found = self.schemas.compare(_parameter_schema(before), _parameter_schema(after), "request")
        self.emit_found(found, f"{pointer}/schema", where)

    def _request_body(self, before: Any, after: Any) -> None:
        before, after = resolve(self.docs[0], before), resolve(self.docs[1], after)
        if before is None and after is None:
            return
        where = "request body"
        if after is None:
            self.emit("request-body-removed", "/requestBody", where, "body", None)
            return
        if before is None:
            required = "required" if after.get("required") else "optional"
            self.emit(f"request-body-added-{required}", "/requestBody", where, None, "body")
            return
        was, now = bool(before.get("required")), bool(after.get("required"))
        if was != now:
            kind = "request-body-made-" + ("required" if now else "optional")
            self.emit(kind, "/requestBody/required", where, was, now)
        self._words("/requestBody", where, before, after, {"content", "required"})
        self._content("/requestBody", where, "request", before.get("content"),
                      after.get("content"))  # fmt: skip

    def _content(self, pointer: str, where: str, direction: str, before: Any, after: Any) -> None:
        old = {_media(k): v for k, v in (before or {}).items()}
        new = {_media(k): v for k, v in (after or {}).items()}
        for media in sorted(set(old) | set(new)):
            place, at = f"{where} {media}", f"{pointer}/content/{escape(media)}"
            if media not in new:
                self.emit(f"{direction}-media-type-removed", at, place, media, None)
            elif media not in old:
                self.emit(f"{direction}-media-type-added", at, place, None, media)
            else:
                before_media, after_media = old[media] or {}, new[media] or {}
                self._words(at, place, before_media, after_media, {"schema"})
                found = self.schemas.compare(
                    before_media.get("schema"), after_media.get("schema"), direction
                )
                self.emit_found(found, f"{at}/schema", place)

    def _responses(self, before: dict[Any, Any], after: dict[Any, Any]) -> None:
        old = {str(k).upper(): v for k, v in before.items()}
        new = {str(k).upper(): v for k, v in after.items()}
        for status in sorted(set(old) | set(new)):
            pointer, where = f"/responses/{status}", f"response {status}"
            if status not in new:
                self.emit("response-status-removed", pointer, where, status, None)
            elif status not in old:
                self.emit("response-status-added", pointer, where, None, status)
            else:
                self._response(pointer, where, resolve(self.docs[0], old[status]) or {},
                               resolve(self.docs[1], new[status]) or {})  # fmt: skip

    def _response(self, pointer: str, where: str, before: Any, after: Any) -> None:
        self._words(pointer, where, before, after, {"headers", "content", "x-error-codes"})
        self._headers(pointer, where, before.get("headers") or {}, after.get("headers") or {})
        self._content(pointer, where, "response", before.get("content"), after.get("content"))
        if self.error_codes:
            self._error_codes(pointer, where, before, after)

    def _error_codes(self, pointer: str, where: str, before: Any, after: Any) -> None:
        codes_before = {_canon(c): c for c in before.get("x-error-codes") or []}
        codes_after = {_canon(c): c for c in after.get("x-error-codes") or []}
        for code in sorted(set(codes_before) - set(codes_after)):
            self.emit("error-code-removed", f"{pointer}/x-error-codes", f"{where} error codes",
                      codes_before[code], None)  # fmt: skip
        for code in sorted(set(codes_after) - set(codes_before)):
            self.emit("error-code-added", f"{pointer}/x-error-codes", f"{where} error codes",
                      None, codes_after[code])  # fmt: skip

    def _headers(self, pointer: str, where: str, before: Any, after: Any) -> None:
        old = {str(k).lower(): (k, resolve(self.docs[0], v) or {}) for k, v in before.items()}
        new = {str(k).lower(): (k, resolve(self.docs[1], v) or {}) for k, v in after.items()}
        for name in sorted(set(old) | set(new)):
            shown = (new.get(name) or old[name])[0]
            at, place = f"{pointer}/headers/{escape(str(shown))}", f"{where} header {shown}"
            if name not in new:
                self.emit("response-header-removed", at, place, shown, None)
                continue
            if name not in old:
                self.emit("response-header-added", at, place, None, shown)
                continue
            was, now = bool(old[name][1].get("required")), bool(new[name][1].get("required"))
            if was != now:
                kind = "response-header-made-" + ("required" if now else "optional")
                self.emit(kind, f"{at}/required", place, was, now)
            self._words(at, place, old[name][1], new[name][1], {"schema", "content", "required"})
            found = self.schemas.compare(_parameter_schema(old[name][1]),
                                         _parameter_schema(new[name][1]), "response")  # fmt: skip
            self.emit_found(found, f"{at}/schema", place)

    def _security(self, before: Any, after: Any) -> None:
        old, new = _alternatives(before), _alternatives(after)
        open_before = not old or {} in old
        open_after = not new or {} in new
        if open_before and not open_after:
            self.emit("security-now-required", "/security", "security", None,
                      [sorted(a) for a in new])  # fmt: skip
        if open_after and not open_before:
            self.emit("security-made-optional", "/security", "security",
                      [sorted(a) for a in old], None)  # fmt: skip
            return
        for alternative in (a for a in old if a):
            match = next((a for a in new if set(a) == set(alternative)), None)
            if match is None:
                self.emit("security-requirement-removed", "/security", "security",
                          sorted(alternative), None)  # fmt: skip
                continue
            for scheme in sorted(alternative):
                place = f"security {scheme}"
                for scope in sorted(match[scheme] - alternative[scheme]):
                    self.emit("security-scope-added", f"/security/{escape(scheme)}", place,
                              None, scope)  # fmt: skip
                for scope in sorted(alternative[scheme] - match[scheme]):
                    self.emit("security-scope-dropped", f"/security/{escape(scheme)}", place,
                              scope, None)  # fmt: skip
        for alternative in (a for a in new if a):
            if not any(set(a) == set(alternative) for a in old) and not open_before:
                self.emit("security-alternative-added", "/security", "security", None,
                          sorted(alternative))  # fmt: skip

    # ---- the document's own parts
    def _document(self) -> None:
        old, new = self.docs
        tooling = {k for k in (*old, *new) if str(k).startswith("x-")}  # anchors, not contract
        self._words("", "document", old, new,
                    {"paths", "components", "security", "webhooks", *tooling})  # fmt: skip
        schemes = [
            {k: resolve(d, v) for k, v in ((d.get("components") or {}).get("securitySchemes")
                                           or {}).items()}
            for d in (old, new)
        ]  # fmt: skip
        for name in sorted(set(schemes[0]) | set(schemes[1])):
            pointer = f"/components/securitySchemes/{escape(name)}"
            where = f"security scheme {name}"
            before, after = schemes[0].get(name), schemes[1].get(name)
            if after is None:
                self.emit("security-scheme-removed", pointer, where, name, None)
                continue
            if before is None:
                self.emit("security-scheme-added", pointer, where, None, name)
                continue
            wire = ("type", "scheme", "in", "name", "openIdConnectUrl")
            moved = [k for k in wire if before.get(k) != after.get(k)]
            if moved:
                was, now = ({k: side.get(k) for k in moved} for side in (before, after))
                self.emit("security-scheme-changed", pointer, where, was, now)
            scopes_before, scopes_after = _scopes(before), _scopes(after)
            for scope in sorted(scopes_before - scopes_after):
                self.emit("security-scheme-scope-removed", f"{pointer}/flows", where, scope, None)
            for scope in sorted(scopes_after - scopes_before):
                self.emit("security-scheme-scope-added", f"{pointer}/flows", where, None, scope)
            self._words(pointer, where, before, after, {*wire, "flows"})


def _expanded(document: dict[str, Any], node: Any, seen: frozenset[str] = frozenset()) -> Any:
    """`node` with every `$ref` inside replaced by its target (a ref met again stays a ref)."""
    if isinstance(node, list):
        return [_expanded(document, item, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        return _expanded(document, lookup(document, ref), seen | {ref})
    return {k: _expanded(document, v, seen) for k, v in node.items()}


def _media(name: object) -> str:
    """A media type without its parameters, in lower case: `application/json; charset=utf-8`
    and `Application/JSON` name one content."""
    return str(name).split(";")[0].strip().lower()


def _style(location: str, parameter: dict[str, Any]) -> dict[str, Any]:
    style = parameter.get("style") or ("form" if location in ("query", "cookie") else "simple")
    return {
        "style": style,
        "explode": bool(parameter.get("explode", style == "form")),
        "allowReserved": bool(parameter.get("allowReserved", False)),
    }


def _parameter_schema(parameter: dict[str, Any]) -> Any:
    if "schema" in parameter:
        return parameter["schema"]
    for media in (parameter.get("content") or {}).values():
        return (media or {}).get("schema")
    return None


def _alternatives(requirements: Any) -> list[dict[str, frozenset[str]]]:
    return [
        {str(k): frozenset(map(str, v or ())) for k, v in (r or {}).items()}
        for r in requirements or []
    ]


def _scopes(scheme: dict[str, Any]) -> frozenset[str]:
    flows = scheme.get("flows") or {}
    return frozenset(s for flow in flows.values() for s in ((flow or {}).get("scopes") or {}))
