"""Variants on opaque values: the same identity in another spelling.

- `request_id_alphabet` (request seam): request ids `req_` + 26 characters of another alphabet
  (lower-case letters and digits, where the default uses upper-case Crockford base32), in the
  header and in error bodies alike (spec: Common response headers: an opaque id, not to be
  parsed; Limits > Other constants: `req_` + 26 characters). The map is one to one, so ids stay
  unique.
- `hash_format`: `content_version` and `metadata_version` in another form (the spec calls them
  hashes and says what equality means, never their form). The same value always maps to the
  same new one, so every equality the spec states (list and detail, catalog and series) holds.
- `cursor_format` (reply and request seams): cursors in another form (spec: Paging and
  envelopes: cursors are opaque, passed back unchanged). Every `next_cursor` and every `cursor`
  in a `links` URL is wrapped on the way out; a cursor coming in is unwrapped before the endpoint
  reads it, and one this server did not issue stays one the endpoint refuses.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = [
    "respell_hashes",
    "respell_request_id",
    "unwrap_cursor",
    "unwrap_query",
    "wrap_cursor",
    "wrap_cursors",
]

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
OTHER_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"  # lower case and digits, one to one
_RESPELL = str.maketrans(CROCKFORD, OTHER_ALPHABET)
HASH_FIELDS = frozenset({"content_version", "metadata_version"})
CURSOR_MARK = b"pg2:"


def respell_request_id(variants: VariantSet, request_id: str) -> str:
    """The request id in the other alphabet when `request_id_alphabet` is on."""
    if not variants.enabled(VariantName.request_id_alphabet) or not request_id.startswith("req_"):
        return request_id
    return "req_" + request_id[4:].translate(_RESPELL)


def _rehash(value: str) -> str:
    return "v2-" + hashlib.blake2b(value.encode(), digest_size=16).hexdigest()


def respell_hashes(node: Any, endpoint: str = "", status: int = 200) -> None:
    """Every non-null `content_version`/`metadata_version` under `node` in the other form."""
    if isinstance(node, list):
        for item in node:
            respell_hashes(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in HASH_FIELDS and isinstance(value, str):
                node[key] = _rehash(value)
            else:
                respell_hashes(value)


def wrap_cursor(cursor: str) -> str:
    return base64.urlsafe_b64encode(CURSOR_MARK + cursor.encode()).rstrip(b"=").decode()


def unwrap_cursor(cursor: str) -> str:
    """The cursor the endpoint issued; a value this server never sent comes out changed, so the
    endpoint refuses it as it refuses any cursor it did not issue."""
    if not cursor:
        return cursor
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if raw.startswith(CURSOR_MARK):
        try:
            inner = raw[len(CURSOR_MARK) :].decode()
        except UnicodeDecodeError:
            inner = ""
        # only the exact text sent: a last character differing in its unused bits decodes to
        # the same bytes but is not a cursor this server returned (CAT-068)
        if inner and wrap_cursor(inner) == cursor:
            return inner
    return "A" + cursor  # shifted by one character: never a cursor the endpoint signed


def _wrap_link(url: str) -> str:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(k == "cursor" for k, _ in query):
        return url
    wrapped = [(k, wrap_cursor(v) if k == "cursor" and v else v) for k, v in query]
    return urlunsplit(parts._replace(query=urlencode(wrapped)))


def wrap_cursors(node: Any, endpoint: str = "", status: int = 200) -> None:
    """Every `next_cursor` and every cursor inside a `links` URL under `node`, wrapped."""
    if isinstance(node, list):
        for item in node:
            wrap_cursors(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "next_cursor" and isinstance(value, str):
            node[key] = wrap_cursor(value)
        elif key == "links" and isinstance(value, dict):
            for name, link in value.items():
                if isinstance(link, str):
                    value[name] = _wrap_link(link)
        else:
            wrap_cursors(value)


def unwrap_query(variants: VariantSet, query: dict[str, str]) -> None:
    """The `cursor` of a request's query as the endpoint issued it (in place)."""
    if variants.enabled(VariantName.cursor_format) and "cursor" in query:
        query["cursor"] = unwrap_cursor(query["cursor"])
