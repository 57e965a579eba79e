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
from dataclasses import dataclass
from typing import Any, Literal

import orjson

__all__ = ["Scope", "decode", "encode"]

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
        payload, signature = raw[:-SIG_BYTES], raw[-SIG_BYTES:]
        # only the exact text issued: a last character differing in its unused bits decodes to
        # the same bytes but is not a value the endpoint returned (CAT-068)
        canonical = base64.urlsafe_b64encode(raw).rstrip(b"=").decode() == cursor
        if (
            not canonical
            or len(raw) <= SIG_BYTES
            or not hmac.compare_digest(signature, _sign(secret, endpoint, binding, payload))
        ):
            return None
        position = orjson.loads(payload)
    except ValueError:  # not base64, or not JSON (orjson.JSONDecodeError is a ValueError)
        return None
    return position if isinstance(position, list) else None


@dataclass(frozen=True)
class Scope:
    """The cursors of one list query: signed for this endpoint and these filters (`binding`),
    so a cursor resumes only the listing that issued it (PAGE-010)."""

    secret: bytes
    endpoint: str
    binding: str

    def encode(self, position: list[Any]) -> str:
        return encode(self.secret, self.endpoint, self.binding, position)

    def resume_after(self, cursor: str | None) -> list[Any] | Literal[False] | None:
        """Where a page starts: None for the first page (no cursor), the position after which
        it resumes, or False for a cursor of another listing or edited by hand (the convention
        of `listing.parse_epoch`)."""
        if cursor is None:
            return None
        position = decode(self.secret, self.endpoint, self.binding, cursor)
        return False if position is None else position
