"""The `reply` seam: every legal variant that shapes a finished answer, in one fixed order.

`shape_reply` takes the status, the header list and the body the sandbox would send, and what
routing already knows of the request (`Asked`: the endpoint, the method, `Accept-Encoding`, the
time). JSON bodies of the Delivery API are parsed once, reshaped by the body variants on
(`opaque`, `times`, `open_sets`, `shapes`, `messages`, `bodies`, in that order) and written once
(`bodies.serialise`); then the wire variants (`wire`) code the body and spell the headers.

It is pure: the time comes in `Asked`, nothing of the sandbox is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from delivery_sandbox.variants import bodies, messages, opaque, open_sets, shapes, times, wire
from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["Asked", "shape_reply"]

Headers = list[tuple[bytes, bytes]]
BodyStep = Callable[[Any, str, int], None]


@dataclass(frozen=True, slots=True)
class Asked:
    """What the reply variants know of the request."""

    endpoint: str | None  # the route's endpoint name; "unknown" for a 404 path; None: not the API
    method: str = "GET"
    accept_encoding: str | None = None
    now: float = 0.0


# Body variants in the order they act on the parsed document (each mutates it in place).
BODY_STEPS: tuple[tuple[VariantName, BodyStep], ...] = (
    (VariantName.hash_format, opaque.respell_hashes),
    (VariantName.cursor_format, opaque.wrap_cursors),
    (VariantName.iso_time_offset, times.offset_times),
    (VariantName.open_sets_grow, open_sets.grow),
    (VariantName.batch_echo_shape, shapes.reshape_batch_echo),
    (VariantName.deprecations_shape, shapes.reshape_deprecations),
    (VariantName.trailer_fields, shapes.widen_trailers),
    (VariantName.reworded_messages, messages.reword),
    (VariantName.additive_fields, bodies.add_fields_outside_frozen),
    (VariantName.frozen_feed_additions, bodies.add_fields_to_frozen),
)
BODY_VARIANTS = frozenset(name for name, _ in BODY_STEPS) | bodies.SERIALISING


def _is_json(headers: Sequence[tuple[bytes, bytes]]) -> bool:
    return any(k == b"content-type" and v.startswith(b"application/json") for k, v in headers)


def reshape_body(variants: VariantSet, status: int, body: bytes, endpoint: str) -> bytes:
    """The JSON body as the body variants on would write it."""
    doc = orjson.loads(body)
    for name, step in BODY_STEPS:
        if variants.enabled(name):
            step(doc, endpoint, status)
    return bodies.serialise(variants, doc)


def shape_reply(
    variants: VariantSet,
    status: int,
    headers: Sequence[tuple[bytes, bytes]],
    body: bytes,
    asked: Asked,
) -> tuple[Headers, bytes]:
    """The answer as the variants on would send it."""
    out = list(headers)
    json = bool(body) and _is_json(out)
    if json and asked.endpoint is not None and not BODY_VARIANTS.isdisjoint(variants.on):
        body = reshape_body(variants, status, body, asked.endpoint)
        out = wire.set_header(out, b"content-length", str(len(body)).encode())
    if json:
        out, body = wire.code_body(variants, out, body, asked.accept_encoding)
    out = wire.shape_headers(variants, out, asked.now)
    if asked.method == "HEAD":  # a HEAD answered like GET: the same headers, no body
        body = b""
    return out, body
