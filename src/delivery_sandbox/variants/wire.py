"""Variants on the wire: content codings, header spelling, an intermediary's own headers.

- `gzip`, `deflate`, `br`: a JSON body coded when the request accepts the coding (RFC 9110
  8.4.1 and 12.5.3; `deflate` is the zlib format, RFC 1950, as RFC 9110 8.4.1.2 says; `br` is
  RFC 7932). `Content-Length` is the coded length, `Vary: Accept-Encoding` is added.
- `title_case_headers`: header names spelled in Title-Case (names are case-insensitive, RFC 9110
  5.1) and the headers a deployment adds in front of the service (`Server`, `Via`, `Date`,
  `Strict-Transport-Security`, `X-Content-Type-Options`, `X-Served-By`). uvicorn writes names in
  lower case whatever the app sends; `http/transport.py: HeaderSpellingHttpToolsProtocol`
  spells them again on the wire (`respell_head`).
- `cache_control_casing`: `Cache-Control: No-Store` (directive names are case-insensitive,
  RFC 9111 5.2).
- `chunked_transfer`: no `Content-Length`; uvicorn then sends the body chunked (RFC 9112 7.1),
  as a streaming proxy does.
- `json_charset`: `Content-Type: application/json; charset=utf-8` (a parameter the media type
  ignores, RFC 8259 11; General rules 4 asks for JSON, not for a spelling of the header).
- `connection_close`: `Connection: close` on every answer, one request per connection
  (RFC 9112 9.6), as some proxies do.

Pure functions: the time for `Date` is passed in.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from email.utils import formatdate

import brotli

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = [
    "CODINGS",
    "accepts",
    "code_body",
    "respell_head",
    "set_header",
    "shape_headers",
    "spell",
    "spells_headers",
]

Headers = list[tuple[bytes, bytes]]

# coding name -> (the variant that offers it, the coder); the first accepted coding on wins.
CODINGS: dict[str, tuple[VariantName, Callable[[bytes], bytes]]] = {
    "gzip": (VariantName.gzip, lambda body: gzip.compress(body, mtime=0)),
    "deflate": (VariantName.deflate, zlib.compress),
    "br": (VariantName.br, brotli.compress),
}

JSON_UTF8 = b"application/json; charset=utf-8"

# Names whose usual spelling is not plain Title-Case (the spec's own, and HTTP's).
SPELLINGS: dict[bytes, bytes] = {
    b"service-api-status": b"Service-API-Status",
    b"x-ratelimit-limit": b"X-RateLimit-Limit",
    b"x-ratelimit-window": b"X-RateLimit-Window",
    b"www-authenticate": b"WWW-Authenticate",
}

# What a reverse proxy or CDN in front of the service adds (none of them a CORS header or a
# cookie: General rules 2).
DEPLOYMENT: tuple[tuple[bytes, bytes], ...] = (
    (b"server", b"nginx"),
    (b"via", b"1.1 edge-proxy"),
    (b"strict-transport-security", b"max-age=63072000; includeSubDomains"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-served-by", b"cache-fra-etou8220"),
)


def accepts(accept_encoding: str | None, coding: str) -> bool:
    """Does an `Accept-Encoding` value allow `coding` (RFC 9110 12.5.3; q=0 refuses it)?"""
    if not accept_encoding:
        return False
    for part in accept_encoding.split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() not in (coding, "*"):
            continue
        q = params.strip().lower().removeprefix("q=")
        try:
            return not params or float(q) > 0
        except ValueError:
            return True
    return False


def set_header(headers: Headers, name: bytes, value: bytes) -> Headers:
    """`headers` with every `name` replaced by one `name: value` at the end."""
    return [(k, v) for k, v in headers if k != name] + [(name, value)]


def code_body(
    variants: VariantSet, headers: Headers, body: bytes, accept_encoding: str | None
) -> tuple[Headers, bytes]:
    """The body coded with the first coding both the variants on and the request accept."""
    for coding, (variant, coder) in CODINGS.items():
        if variants.enabled(variant) and accepts(accept_encoding, coding):
            coded = coder(body)
            headers = set_header(headers, b"content-encoding", coding.encode())
            headers = set_header(headers, b"content-length", str(len(coded)).encode())
            return set_header(headers, b"vary", b"Accept-Encoding"), coded
    return headers, body


def spell(name: bytes) -> bytes:
    """A header name in its usual mixed case: `service-request-id` -> `Service-Request-Id`."""
    known = SPELLINGS.get(name.lower())
    if known is not None:
        return known
    return b"-".join(part[:1].upper() + part[1:] for part in name.lower().split(b"-"))


def spells_headers(variants: VariantSet) -> bool:
    """Must the server keep the header names' spelling on the wire?"""
    return variants.enabled(VariantName.title_case_headers)


def shape_headers(variants: VariantSet, headers: Headers, now: float) -> Headers:
    """The header variants on: casing of `Cache-Control`, chunked transfer, deployment headers
    and Title-Case names (last, so that it spells the added ones too)."""
    if variants.enabled(VariantName.cache_control_casing):
        headers = [
            (k, b"No-Store" if k == b"cache-control" and v == b"no-store" else v)
            for k, v in headers
        ]
    if variants.enabled(VariantName.chunked_transfer):
        headers = [(k, v) for k, v in headers if k != b"content-length"]
    if variants.enabled(VariantName.json_charset):
        headers = [
            (k, JSON_UTF8 if k == b"content-type" and v == b"application/json" else v)
            for k, v in headers
        ]
    if variants.enabled(VariantName.connection_close):
        headers = [*headers, (b"connection", b"close")]
    if variants.enabled(VariantName.title_case_headers):
        date = formatdate(now, usegmt=True).encode()
        headers = [*headers, *DEPLOYMENT, (b"date", date)]
        headers = [(spell(k), v) for k, v in headers]
    return headers


def respell_head(head: bytes) -> bytes:
    """The status line and header block `head` with every name spelled by `spell`; whatever
    follows the blank line is left as it is."""
    block, sep, rest = head.partition(b"\r\n\r\n")
    lines = block.split(b"\r\n")
    for i in range(1, len(lines)):
        name, colon, value = lines[i].partition(b":")
        if colon:
            lines[i] = spell(name) + colon + value
    return b"\r\n".join(lines) + sep + rest
