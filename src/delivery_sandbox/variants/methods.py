"""The variant `allow_lists_head` (request seam): HEAD served on every GET endpoint.

HTTP lets a server answer `HEAD` like `GET` without the body (RFC 9110 9.3.2), and a server that
does so names it in `Allow` (RFC 9110 10.2.1). The readings ERR-015 and ERR-016
(docs/reading-of-the-spec.md) accept both: `HEAD` on a `GET` endpoint is not judged as a wrong
method, and `Allow: GET, HEAD` is tolerated. `HEAD` on `POST /playback` stays a wrong method.
"""

from __future__ import annotations

from collections.abc import Collection

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["allowed", "routed_method"]


def routed_method(variants: VariantSet, method: str, offered: Collection[str]) -> str:
    """The method a request is routed as: `HEAD` as `GET` where the path offers `GET`."""
    if method == "HEAD" and "GET" in offered and variants.enabled(VariantName.allow_lists_head):
        return "GET"
    return method


def allowed(variants: VariantSet, offered: Collection[str]) -> list[str]:
    """The methods a 405 names in `Allow`."""
    methods = set(offered)
    if "GET" in methods and variants.enabled(VariantName.allow_lists_head):
        methods.add("HEAD")
    return sorted(methods)
