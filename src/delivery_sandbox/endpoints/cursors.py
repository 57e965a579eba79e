"""Opaque, tamper-evident cursors bound to an endpoint and its query (spec: Paging and envelopes).

A cursor carries the sort key of the last row served. It is signed with the sandbox secret
together with the endpoint name and the query values that define the listing (for example
`updated_since`, `category`, `collection`), so a cursor from another endpoint, another query or
edited by hand is refused. Pure: no clock, no I/O.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import orjson

__all__ = ["decode", "encode"]

SIG_BYTES = 12


def _sign(secret: bytes, endpoint: str, binding: str, payload: bytes) -> bytes:
    message = endpoint.encode() + b"\0" + binding.encode() + b"\0" + payload
    return hmac.new(secret, message, hashlib.sha256).digest()[:SIG_BYTES]


def encode(secret: bytes, endpoint: str, binding: str, position: list[Any]) -> str:
    payload = orjson.dumps(position)
    token = payload + _sign(secret, endpoint, binding, payload)
    return base64.urlsafe_b64encode(token).rstrip(b"=").decode()


def decode(secret: bytes, endpoint: str, binding: str, cursor: str) -> list[Any] | None:
    """The position inside `cursor`, or None when it was not issued for this endpoint and query."""
    if not cursor or len(cursor) > 512:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except ValueError:
        return None
    payload, signature = raw[:-SIG_BYTES], raw[-SIG_BYTES:]
    if len(raw) <= SIG_BYTES or not hmac.compare_digest(
        signature, _sign(secret, endpoint, binding, payload)
    ):
        return None
    try:
        position = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    return position if isinstance(position, list) else None
