"""Keyless share links and download links of creatives (spec: Resources > Creative record,
`final.file_url`; Endpoints > GET /creatives/{id}/file).

Two paths outside `/api/delivery/v1/`, both without a key:

- `/api/c/<token>.mp4`, the durable share link of `final.file_url`: every open re-checks the
  creative (still approved or pushed, final ready, export rights active) and answers 302 to a
  fresh download link valid 15 minutes, else 410 (docs/reading-of-the-spec.md (CRE-024)).
- `/_files/creatives/<id>.mp4?exp=..&sig=..`, the download link itself (what the share link and
  `GET /creatives/{id}/file` point at): 200 with a tiny fake MP4 while valid, 410 once expired,
  403 when the signature does not match.

Bodies of the refusals are flat (`error`, `error_code`, `request_id`); the common headers are
the same as on every other answer (docs/reading-of-the-spec.md (HDR (all))). Neither path spends a
rate counter. Faults act at one step of the step seam (faults/steps.py: `bend`): what an open of
a share link weighs (revoked, rights open, the download link's lifetime).
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qsl, quote

from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http import errors
from delivery_sandbox.http.headers import Exchange, Reply
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.state.store import DAY, Creative, LicenceState

__all__ = [
    "FAKE_MP4",
    "FILES_PREFIX",
    "PREFIXES",
    "SHARE_PREFIX",
    "download_link",
    "export_rights_active",
    "handle",
]

SHARE_PREFIX = "/api/c/"
FILES_PREFIX = "/_files/creatives/"
PREFIXES = (SHARE_PREFIX, FILES_PREFIX)
LINK_TTL = 900  # spec: Limits > Other constants, creative download link
SHARE_RETRY_AFTER = b"2"

# ftyp + free + empty mdat: enough for a partner's pipeline to see an MP4 arrive.
FAKE_MP4 = (
    b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom\x00\x00\x00\x08free\x00\x00\x00\x08mdat"
)
VIDEO_MP4 = b"video/mp4"

MSG_SHARE_UNKNOWN = "no such share link"
MSG_SHARE_GONE = "this share link no longer opens; read the creative again for its current link"
MSG_SHARE_UNAVAILABLE = "download link could not be prepared; retry"
MSG_LINK_EXPIRED = "this download link has expired; ask for a new one"
MSG_LINK_INVALID = "this download link is not valid"


def export_rights_active(sb: Sandbox, creative: Creative, now: float) -> bool:
    """Export rights hold: the last day has not passed and the film licence is not suspended
    (spec: Creative record, `rights.ends_at`; Errors > Creatives, 4032).

    Requirements: CRE-049.
    """
    ends = creative.rights_ends_at
    if ends is not None and now >= ends + DAY:
        return False
    if creative.film_id is not None:
        licence = sb.store.licences.get((creative.org_id, creative.film_id))
        if licence is not None and licence.state is LicenceState.SUSPENDED:
            return False
    return True


def _signature(sb: Sandbox, creative_id: str, expires: int) -> str:
    return hashlib.sha256(sb.cursor_secret + f"{creative_id}:{expires}".encode()).hexdigest()[:32]


def download_link(
    sb: Sandbox, base_url: str, creative: Creative, now: float, ttl: int = LINK_TTL
) -> tuple[str, int]:
    """A keyless download link valid 15 minutes, and its expiry in epoch seconds.

    Requirements: CRE-023, CRE-040.
    """
    expires = int(now) + ttl
    signature = quote(_signature(sb, creative.id, expires))
    return f"{base_url}{FILES_PREFIX}{creative.id}.mp4?exp={expires}&sig={signature}", expires


def _by_token(sb: Sandbox) -> dict[str, Creative]:
    found = sb.cache.get("share_tokens")
    if found is None:
        found = {c.share_token: c for c in sb.store.creatives.values() if c.share_token}
        sb.cache["share_tokens"] = found
    return found


def _refusal(
    sb: Sandbox,
    exchange: Exchange,
    status: int,
    message: str,
    code: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> Reply:
    return errors.flat(exchange, sb.faults, status, message, code, headers)


def _unavailable(sb: Sandbox, exchange: Exchange) -> Reply:
    """503 with Retry-After: the creatives store is out, or the download link could not be made."""
    retry = [(b"retry-after", SHARE_RETRY_AFTER)]
    return _refusal(sb, exchange, 503, MSG_SHARE_UNAVAILABLE, "service_unavailable", retry)


def open_share_link(sb: Sandbox, exchange: Exchange, token: str) -> Reply:
    """One open of `final.file_url`: re-check, then 302 to a fresh download link, else 410.

    Requirements: CRE-023.

    Requirements: CRE-063.
    """
    creative = _by_token(sb).get(token)
    if creative is None:
        return _refusal(sb, exchange, 404, MSG_SHARE_UNKNOWN, "not_found")
    now = sb.now()
    if "creatives" in sb.outages:
        return _unavailable(sb, exchange)
    revoked, rights_open, ttl = bend(  # the share-link step
        sb,
        "share.link",
        (creative.id in sb.store.revoked_links, export_rights_active(sb, creative, now), LINK_TTL),
    )
    if revoked or not creative.visible or not creative.final_ready or not rights_open:
        return _refusal(sb, exchange, 410, MSG_SHARE_GONE, "gone")
    if creative.link_failure:
        return _unavailable(sb, exchange)
    url, _ = download_link(sb, exchange.base_url, creative, now, ttl)
    return Reply(302, b"", [(b"location", url.encode())], content_type=None)


def serve_download(sb: Sandbox, exchange: Exchange, creative_id: str, query: bytes) -> Reply:
    """The download link: the fake file while valid, 410 once expired, 403 when forged."""
    values = dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True))
    raw_exp, sig = values.get("exp", ""), values.get("sig", "")
    if not raw_exp.isdigit() or len(raw_exp) > 11:
        return _refusal(sb, exchange, 403, MSG_LINK_INVALID, "link_invalid")
    expires = int(raw_exp)
    if not hmac.compare_digest(sig.encode(), _signature(sb, creative_id, expires).encode()):
        return _refusal(sb, exchange, 403, MSG_LINK_INVALID, "link_invalid")
    if sb.now() >= expires:
        return _refusal(sb, exchange, 410, MSG_LINK_EXPIRED, "link_expired")
    return Reply(200, FAKE_MP4, content_type=VIDEO_MP4)


def handle(sb: Sandbox, exchange: Exchange, method: str, path: str, query: bytes) -> Reply:
    """Answer a request whose path starts with one of `PREFIXES`."""
    prefix = SHARE_PREFIX if path.startswith(SHARE_PREFIX) else FILES_PREFIX
    name = path[len(prefix) :]
    stem = name[: -len(".mp4")] if name.endswith(".mp4") else ""
    if not stem or "/" in stem:
        return errors.flat(exchange, sb.faults, 404, errors.MSG_NOT_FOUND, "not_found")
    if method != "GET":
        return Reply(405, b"", [(b"allow", b"GET")], content_type=None)
    if prefix == SHARE_PREFIX:
        return open_share_link(sb, exchange, stem)
    return serve_download(sb, exchange, stem, query)
