"""Common response headers and the reply object (spec: General rules; Common response headers).

Every answer, error or not, goes out through `send_reply`, which adds `Service-API-Status`,
`Service-Version`, `Service-Request-Id` and `Cache-Control`, plus the deprecation headers on
200 when the serving version is deprecated. Header lists are built from bytes constants.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from delivery_sandbox.faults.reply import bend_answer_headers
from delivery_sandbox.http.versions import Version
from delivery_sandbox.variants.catalogue import VariantSet
from delivery_sandbox.variants.reply import Asked, shape_reply

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Caller  # what the state's caller offers
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["Call", "Exchange", "Reply", "RequestIds", "bearer_key", "json_reply", "send_reply"]

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
JSON = b"application/json"

H_STATUS = b"service-api-status"
H_VERSION = b"service-version"
H_REQUEST_ID = b"service-request-id"
H_CACHE = b"cache-control"
BETA = b"beta"
NO_STORE = b"no-store"


class RequestIds:
    """`req_` + 26 Crockford base32 characters: a random prefix of 10 and a counter of 16.

    The random source is injected. The counter is written in upper-case hex, whose digits
    are all Crockford characters.

    Requirements: HDR-011, HDR-012, HDR-031.
    """

    def __init__(self, rng: random.Random) -> None:
        self._prefix = "req_" + "".join(rng.choice(CROCKFORD) for _ in range(10))
        self._count = 0

    def next(self) -> str:
        self._count += 1
        return f"{self._prefix}{self._count:016X}"


@dataclass(slots=True)
class Exchange:
    """What one request needs to answer: its id, the version to announce, the caller."""

    request_id: str
    version: str
    base_url: str
    version_info: Version | None = None
    caller: Caller | None = None
    omit_version: bool = False
    accept_encoding: str | None = None  # read by the `reply` variants (content codings)
    endpoint: str | None = None  # the route's endpoint name ("unknown": a 404 path); variants
    method: str = "GET"  # the request's method, for the `reply` variants (HEAD: no body)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Call:
    """A request as handlers see it: query values (last of repeated names), path values."""

    query: dict[str, str]
    params: dict[str, str]


@dataclass(slots=True)
class Reply:
    status: int
    body: bytes = b""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    content_type: bytes | None = JSON


def json_reply(status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> Reply:
    return Reply(status, body, headers if headers is not None else [])


def deprecation_headers(version: Version, base_url: str) -> list[tuple[bytes, bytes]]:
    """Deprecation, Sunset and Link for a deprecated version (spec: Versioning 5).

    Requirements: HDR-017, HDR-018, HDR-020, HDR-021, HDR-022, HDR-023.
    """
    out: list[tuple[bytes, bytes]] = []
    deprecation = version.deprecation_header()
    if deprecation is None:
        return out
    out.append((b"deprecation", deprecation.encode()))
    link = f'<{base_url}/docs/delivery-api-v1/evolution>; rel="deprecation"'
    sunset = version.sunset_header()
    if sunset is not None:
        out.append((b"sunset", sunset.encode()))
        link += f', <{base_url}/docs/delivery-api-v1/evolution#sunset>; rel="sunset"'
    out.append((b"link", link.encode()))
    return out


def common_headers(exchange: Exchange, status: int) -> list[tuple[bytes, bytes]]:
    """The headers every answer carries, and the deprecation headers on a 200 only.

    Requirements: GEN-002, GEN-003, HDR-001, HDR-002, HDR-003, HDR-004, HDR-005, HDR-006, HDR-011,
    HDR-014, HDR-015, HDR-016, HDR-019.
    """
    if exchange.omit_version:
        headers = [(H_STATUS, BETA), (H_REQUEST_ID, exchange.request_id.encode())]
    else:
        headers = [
            (H_STATUS, BETA),
            (H_VERSION, exchange.version.encode()),
            (H_REQUEST_ID, exchange.request_id.encode()),
        ]
    headers.append((H_CACHE, NO_STORE))
    info = exchange.version_info
    if status == 200 and info is not None and info.deprecated_at is not None:
        headers.extend(deprecation_headers(info, exchange.base_url))
    return headers


async def send_reply(
    send: Any,
    exchange: Exchange,
    reply: Reply,
    faults: FaultSwitch,
    variants: VariantSet | None = None,
) -> None:
    """Every answer goes out here: common headers, then `Content-Type` on every body and the
    answer's own headers; the header faults bend the list at the reply seam
    (faults/reply.py: `bend_answer_headers`), and the legal variants of the `reply` seam shape it
    last.

    Requirements: ERR-005, GEN-005.
    """
    common = common_headers(exchange, reply.status)
    own: list[tuple[bytes, bytes]] = []
    if reply.content_type is not None:
        own.append((b"content-type", reply.content_type))
    own.append((b"content-length", str(len(reply.body)).encode()))
    own.extend(reply.headers)
    headers = bend_answer_headers(common, own, reply.status, exchange, faults)
    body = reply.body
    if variants:
        asked = Asked(exchange.endpoint, exchange.method, exchange.accept_encoding, time.time())
        headers, body = shape_reply(variants, reply.status, headers, body, asked)
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


BEARER = "Bearer "


def bearer_key(header: str | None) -> str | None:
    """The key of `Authorization: Bearer <key>`, exactly one space, nothing else; else None.

    Requirements: AUTH-002, AUTH-003, AUTH-004, AUTH-005, AUTH-036.
    """
    if header is None:
        return None
    if not header.startswith(BEARER):
        return None
    key = header[len(BEARER) :]
    if not key or " " in key:
        return None
    return key
