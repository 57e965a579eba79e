"""Variants on JSON bodies as a whole: fields a newer server adds, and another layout.

- `additive_fields`: an unknown field in every JSON object of every answer, success records,
  envelopes and error bodies alike, nested objects too, on every endpoint except the frozen
  `/videos` ones (spec: General rules 9; Versioning 3: response fields are added without notice).
  Objects that are maps (the `*_i18n` texts keyed by language, `rate_limits.doors` keyed by
  counter) get no key: a new key there would be a new language or counter, not a new field. In a
  `links` object the added field is a link too (an absolute URL).
- `frozen_feed_additions`: the same on the frozen `/videos` answers only (200 bodies, rows,
  `mp4`). GET /videos says "no additions": the suite judges that as a `should` (VID-013), so this
  server must end CONFORMING WITH WARNINGS, never fail.
- `reformatted_json`: every JSON body pretty-printed (indent 2) with the keys of every object in
  reverse order; arrays keep their order (JSON object members have no order, RFC 8259 4).
- `json_escapes`: non-ASCII characters written as `\\u` escapes and `/` as `\\/` (both are the
  same string to a JSON parser, RFC 8259 7).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = [
    "ADDED_FIELD",
    "FROZEN",
    "SERIALISING",
    "add_fields",
    "add_fields_outside_frozen",
    "add_fields_to_frozen",
    "reversed_keys",
    "serialise",
]

FROZEN = frozenset({"videos", "video"})  # endpoint names of GET /videos and GET /videos/{id}
ADDED_FIELD = "x_added"
ADDED_NOTE = "a field this client does not know"
MAPS = frozenset({"doors"})  # objects keyed by data, besides the `*_i18n` texts
SERIALISING = frozenset({VariantName.reformatted_json, VariantName.json_escapes})


def _is_map(key: str | None) -> bool:
    return key is not None and (key in MAPS or key.endswith("_i18n"))


def add_fields(node: Any, key: str | None = None) -> None:
    """Add `ADDED_FIELD` to every object under `node` (in place), maps left alone."""
    if isinstance(node, list):
        for item in node:
            add_fields(item, key)
        return
    if not isinstance(node, dict):
        return
    for child_key, child in node.items():
        add_fields(child, child_key)
    if _is_map(key) or ADDED_FIELD in node:
        return
    if key == "links":
        url = next((v for v in node.values() if isinstance(v, str) and "://" in v), None)
        if url is not None:
            node[ADDED_FIELD] = url
        return
    node[ADDED_FIELD] = {"note": ADDED_NOTE, "items": [1, 2]}  # an object: any type may come


def add_fields_outside_frozen(doc: Any, endpoint: str, status: int) -> None:
    """`additive_fields`: every endpoint but the frozen ones."""
    if endpoint not in FROZEN:
        add_fields(doc)


def add_fields_to_frozen(doc: Any, endpoint: str, status: int) -> None:
    """`frozen_feed_additions`: the 200 answers of the frozen endpoints only."""
    if endpoint in FROZEN and status == 200:
        add_fields(doc)


def reversed_keys(node: Any) -> Any:
    """`node` with the keys of every object in reverse order."""
    if isinstance(node, dict):
        return {k: reversed_keys(node[k]) for k in reversed(node)}
    if isinstance(node, list):
        return [reversed_keys(item) for item in node]
    return node


def serialise(variants: VariantSet, doc: Any) -> bytes:
    """The document written as the layout variants on write it (compact, as the default
    sandbox writes, when none is on)."""
    pretty = variants.enabled(VariantName.reformatted_json)
    escaped = variants.enabled(VariantName.json_escapes)
    if not pretty and not escaped:
        return orjson.dumps(doc)
    if pretty:
        doc = reversed_keys(doc)
    text = json.dumps(
        doc,
        ensure_ascii=escaped,
        indent=2 if pretty else None,
        separators=(",", ": ") if pretty else (",", ":"),
    )
    if escaped:
        text = text.replace("/", "\\/")  # a `/` occurs only inside strings in JSON text
    return text.encode()
