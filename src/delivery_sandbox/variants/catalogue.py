"""The catalogue of legal variants, and the set a sandbox runs with (`--variant NAME`).

Each row names the variant, the spec section that allows the behaviour, a one-line summary and
the seam it acts at:

- `reply`: the finished answer on its way out (headers, body bytes, content coding);
- `request`: the request as it comes in;
- `store`: what the data endpoints read (caches, ages, pages);
- `playback`: ticket minting, reuse and admission;
- `limits`: the counters of an organisation;
- `reading`: an answer where the spec admits more than one reading.

Variants are chosen at start and kept across `POST /_sandbox/reset` (a reset restores data,
never the kind of server the sandbox plays).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum, auto

__all__ = ["VARIANTS", "Seam", "UnknownVariant", "Variant", "VariantName", "VariantSet"]


class Seam(StrEnum):
    REPLY = auto()
    REQUEST = auto()
    STORE = auto()
    PLAYBACK = auto()
    LIMITS = auto()
    READING = auto()


class VariantName(StrEnum):
    """Every legal variant; the table below gives each its row."""

    gzip = auto()
    # reply and request seams: wire, bodies, opaque values, open sets, shapes not shown
    deflate = auto()
    br = auto()
    title_case_headers = auto()
    cache_control_casing = auto()
    chunked_transfer = auto()
    reformatted_json = auto()
    json_escapes = auto()
    additive_fields = auto()
    frozen_feed_additions = auto()
    open_sets_grow = auto()
    series_status_grows = auto()
    batch_echo_shape = auto()
    reworded_messages = auto()
    deprecations_shape = auto()
    trailer_fields = auto()
    request_id_alphabet = auto()
    hash_format = auto()
    cursor_format = auto()
    allow_lists_head = auto()
    iso_time_offset = auto()
    json_charset = auto()
    connection_close = auto()
    fewer_simulations = auto()
    # behaviours: caches, reuse, counters, paging, readings (caches.py, reuse.py, counters.py,
    # paging.py, readings.py)
    no_reuse = auto()
    short_reuse_window = auto()
    catalog_cache = auto()
    two_servers = auto()
    counting_high = auto()
    raised_limits = auto()
    shed_earlier = auto()
    retry_after_three = auto()
    short_pages = auto()
    empty_pages = auto()
    device_fields_values = auto()
    category_unknown_404 = auto()
    episode_id_not_uuid_400 = auto()
    suspended_batch_per_item = auto()
    unpaged_null_cursor = auto()
    list_since_12_digits = auto()


@dataclass(frozen=True, slots=True)
class Variant:
    name: VariantName
    allowed_by: str  # the spec section (or RFC) that leaves room for the behaviour
    summary: str
    seam: Seam

    def to_dict(self) -> dict[str, str]:
        return {
            "name": self.name.value,
            "allowed_by": self.allowed_by,
            "summary": self.summary,
            "seam": self.seam.value,
        }


_ROWS: tuple[Variant, ...] = (
    Variant(
        VariantName.gzip,
        "General rules 4 (JSON bodies); HTTP content codings (RFC 9110 8.4)",
        "JSON answers gzip-coded (Content-Encoding: gzip) when the request accepts gzip",
        Seam.REPLY,
    ),
    Variant(
        VariantName.deflate,
        "General rules 4; content codings (RFC 9110 8.4.1.2: deflate is the zlib format)",
        "JSON answers deflate-coded (zlib, RFC 1950) when the request accepts deflate",
        Seam.REPLY,
    ),
    Variant(
        VariantName.br,
        "General rules 4; content codings (RFC 9110 8.4; br: RFC 7932)",
        "JSON answers brotli-coded (Content-Encoding: br) when the request accepts br",
        Seam.REPLY,
    ),
    Variant(
        VariantName.title_case_headers,
        "General rules 2 (no CORS, no cookies: nothing else excluded); names are"
        " case-insensitive (RFC 9110 5.1)",
        "header names in Title-Case on the wire, plus Server, Via, Date,"
        " Strict-Transport-Security, X-Content-Type-Options, X-Served-By from a proxy",
        Seam.REPLY,
    ),
    Variant(
        VariantName.cache_control_casing,
        "General rules 6; cache directives are case-insensitive (RFC 9111 5.2)",
        "Cache-Control: No-Store",
        Seam.REPLY,
    ),
    Variant(
        VariantName.chunked_transfer,
        "HTTP/1.1 message framing (RFC 9112 6.1, 7.1); the spec names no framing",
        "bodies sent chunked, without Content-Length, as a streaming proxy does",
        Seam.REPLY,
    ),
    Variant(
        VariantName.reformatted_json,
        "General rules 4 (JSON); object members have no order (RFC 8259 4)",
        "every JSON body pretty-printed, keys of every object in reverse order",
        Seam.REPLY,
    ),
    Variant(
        VariantName.json_escapes,
        "General rules 4 (JSON); escaped and plain characters are one string (RFC 8259 7)",
        "JSON bodies with non-ASCII characters as \\u escapes and / as \\/",
        Seam.REPLY,
    ),
    Variant(
        VariantName.additive_fields,
        "General rules 9; Versioning 3 (response fields added without notice)",
        "an unknown field in every JSON object of every answer but the frozen /videos ones",
        Seam.REPLY,
    ),
    Variant(
        VariantName.frozen_feed_additions,
        'GET /videos "no additions", judged as a should (VID-013): warnings, never a failure',
        "unknown fields in the 200 answers of GET /videos and GET /videos/{id} only",
        Seam.REPLY,
    ),
    Variant(
        VariantName.open_sets_grow,
        "Resources: Film audience/form/setting/tags type, Series film_status and images kind,"
        ' Playlist detail image and poster source, Creative scene action ("more may be added")',
        "new values in every open set of the resources",
        Seam.REPLY,
    ),
    Variant(
        VariantName.series_status_grows,
        'Series list item status: "active or withdrawn; more may be added"; GET /series lists'
        " licensed series",
        "a series whose licence starts later listed with status scheduled (its detail 404 4040)",
        Seam.STORE,
    ),
    Variant(
        VariantName.batch_echo_shape,
        "POST /playback batch response: the request echo's inner shape is not shown",
        "batch items echo the request as {episode: {...}, options: {intent, next}}",
        Seam.REPLY,
    ),
    Variant(
        VariantName.reworded_messages,
        "Errors > Formats: error is a message for logs, not parsed (except the named codes)",
        "other error and message texts, except where the code itself is the text",
        Seam.REPLY,
    ),
    Variant(
        VariantName.deprecations_shape,
        "Versioning 5: the shape of deprecations[] entries is not shown",
        "/config deprecations[] entries in another layout (seen with --versions extended)",
        Seam.REPLY,
    ),
    Variant(
        VariantName.trailer_fields,
        "Film trailer: other fields of the trailer object are not shown",
        "film trailer objects (catalog, series detail) carry kind, duration_sec, aspect",
        Seam.REPLY,
    ),
    Variant(
        VariantName.request_id_alphabet,
        "Common response headers: Service-Request-Id is opaque, req_ + 26 characters",
        "request ids req_ + 26 lower-case letters and digits, header and body alike",
        Seam.REQUEST,
    ),
    Variant(
        VariantName.hash_format,
        "Resources: content_version and metadata_version are hashes of unstated form",
        "content_version and metadata_version in another form (equal stays equal)",
        Seam.REPLY,
    ),
    Variant(
        VariantName.cursor_format,
        "Paging and envelopes: cursors are opaque, passed back unchanged",
        "cursors (next_cursor and in links) in another form",
        Seam.REQUEST,
    ),
    Variant(
        VariantName.allow_lists_head,
        "General rules 8; HEAD may mirror GET (RFC 9110 9.3.2); readings ERR-015, ERR-016",
        "HEAD on a GET endpoint answered like GET without a body; 405 Allow: GET, HEAD",
        Seam.REQUEST,
    ),
    Variant(
        VariantName.iso_time_offset,
        "General rules 5: ISO 8601 UTC strings (UTC as Z or +00:00, RFC 3339 5.6)",
        "ISO 8601 UTC times written with +00:00 instead of Z",
        Seam.REPLY,
    ),
    Variant(
        VariantName.json_charset,
        "General rules 4 (JSON bodies); the charset parameter changes nothing (RFC 8259 11)",
        "Content-Type: application/json; charset=utf-8",
        Seam.REPLY,
    ),
    Variant(
        VariantName.connection_close,
        "HTTP/1.1 persistence is the server's choice (RFC 9112 9.6); the spec names none",
        "Connection: close on every answer: one request per connection",
        Seam.REPLY,
    ),
    Variant(
        VariantName.fewer_simulations,
        "POST /playback: Service-Simulate scenarios: the list is not shown; an unsupported one"
        " is ignored",
        "only rate_limited, service_unavailable, not_entitled:outside_window and partial_batch"
        " are simulated; other scenarios run the request normally",
        Seam.REQUEST,
    ),
    # -- behaviours ---------------------------------------------------------------------------
    Variant(
        VariantName.no_reuse,
        "POST /playback > Server-side reuse (best effort only)",
        "never reuses a ticket: every request mints a new one and is counted as such",
        Seam.PLAYBACK,
    ),
    Variant(
        VariantName.short_reuse_window,
        "POST /playback > Server-side reuse (best effort only)",
        "reuses a ticket only while 20 minutes of it are left (manifest links never)",
        Seam.PLAYBACK,
    ),
    Variant(
        VariantName.catalog_cache,
        "Limits > Freshness (upper bounds; each server has its own cache); GET /catalog",
        "catalog, series and playlists answers and ticket checks read a copy of the data up to"
        " 20 s old; each admin change is taken in within its Freshness row (caches.py)",
        Seam.STORE,
    ),
    Variant(
        VariantName.two_servers,
        "Limits > Freshness (each server has its own cache, so calls seconds apart can differ)",
        "answers alternate between a fresh server and one with a cache like catalog_cache",
        Seam.STORE,
    ),
    Variant(
        VariantName.counting_high,
        "Limits (counting is approximate on the high side by up to about 2.5 %)",
        "every counter counts 2.5 % high: an organisation is refused about 2.5 % early",
        Seam.LIMITS,
    ),
    Variant(
        VariantName.raised_limits,
        "Limits (limits can be raised for an organisation on request); GET /config",
        "every organisation's limits are 1.5 times the table's, shown in rate_limits.doors;"
        " the admin API still sets exact values",
        Seam.LIMITS,
    ),
    Variant(
        VariantName.shed_earlier,
        "Limits > Behaviour at the ceiling 2 (under about 20 % of the allowance left)",
        "prefetches are shed with 22 % of the playback allowance left",
        Seam.LIMITS,
    ),
    Variant(
        VariantName.retry_after_three,
        "Limits > Behaviour at the ceiling 1 (continuous counters: usually 1 to 2 seconds)",
        "the 429s of the continuous counters (playback, catalog) say Retry-After 3",
        Seam.LIMITS,
    ),
    Variant(
        VariantName.short_pages,
        "Paging and envelopes (stop when the next cursor is null, never because a page is short)",
        "every paged list serves about half of `limit` a page while more follow",
        Seam.STORE,
    ),
    Variant(
        VariantName.empty_pages,
        "Paging and envelopes (never stop because a page is empty); GET /playlists; GET /videos",
        "every paged walk has an empty page with a cursor as its second page and ends on an"
        " empty page",
        Seam.STORE,
    ),
    Variant(
        VariantName.device_fields_values,
        "Errors > Formats (`fields`: with invalid_device_info, the rejected values)",
        "400 invalid_device_info lists the rejected device values in `fields`, not their names",
        Seam.READING,
    ),
    Variant(
        VariantName.category_unknown_404,
        "Errors > Series and playlists (422 for a category not a slug; no slug grammar given)",
        "a `category` of letters, digits, hyphens and underscores in any case that names no"
        " Category is 404 4040, not 422 4220",
        Seam.READING,
    ),
    Variant(
        VariantName.episode_id_not_uuid_400,
        "General rules 4 (ids are UUID strings); Errors > Playback (400: no episode_id)",
        "a non-UUID `episode_id` is no episode_id: 400 without error_code (batch:"
        " invalid_request), not 404 not_ready",
        Seam.READING,
    ),
    Variant(
        VariantName.suspended_batch_per_item,
        "Errors > Playback (per ticket: 403 not_entitled, reason org_suspended)",
        "a well-formed batch from a suspended organisation is 200 with every item 403"
        " not_entitled, reason org_suspended (single and malformed bodies stay whole 403s)",
        Seam.READING,
    ),
    Variant(
        VariantName.unpaged_null_cursor,
        "GET /catalog (whole catalog unpaged); Versioning 3 (new response fields)",
        "the unpaged catalog also carries `next_cursor: null` and `links: {next: null}`",
        Seam.READING,
    ),
    Variant(
        VariantName.list_since_12_digits,
        "GET /series, GET /playlists (`updated_since`: epoch seconds, no digit limit)",
        "series and playlists accept a 12-digit `updated_since` (nothing is newer: empty page)",
        Seam.READING,
    ),
)

VARIANTS: dict[VariantName, Variant] = {row.name: row for row in _ROWS}
if set(VARIANTS) != set(VariantName):  # pragma: no cover - a row per name, checked at import
    raise ImportError(f"variant rows and names differ: {set(VariantName) ^ set(VARIANTS)}")


class UnknownVariant(ValueError):
    pass


class VariantSet:
    """The variants one sandbox plays, fixed at start."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        unknown = [n for n in names if n not in VariantName.__members__]
        if unknown:
            raise UnknownVariant(", ".join(unknown))
        self.on: frozenset[VariantName] = frozenset(VariantName(n) for n in names)

    def enabled(self, name: VariantName) -> bool:
        return name in self.on

    def __bool__(self) -> bool:
        return bool(self.on)

    def catalogue(self) -> list[dict[str, object]]:
        return [{**row.to_dict(), "enabled": row.name in self.on} for row in _ROWS]
