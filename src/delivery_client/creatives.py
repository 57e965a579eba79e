"""Creatives sync and file links (spec: GET /creatives, GET /creatives/{id}, GET
/creatives/{id}/file; Resources > Creative record; Limits > Freshness, last sentence).

- One `updated_since` for every page of one sync (CLI-029): the stored mark, pinned on each page.
- Records are upserted by `creative_id` (CLI-030); the next mark is the largest `updated_at`
  seen minus one second, since `updated_at` is rounded down and a record changed later in that
  same second would otherwise be missed (the records returned again are simply overwritten).
- The walk is applied in one transaction after its last page; a failed walk changes nothing.
- `final.file_url` is stored (it is needed to download) but never logged or exported; when it
  answers 410 the creative is read again for the current link (CLI-031). Download links (the
  `Location` of /file or of the share link, `data.url`) are used at once, never stored (CLI-033).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from sqlite3 import Connection
from typing import Any

import httpx

from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.exceptions import BadResponse
from delivery_client.paging import walk_envelope
from delivery_client.redact import redactor
from delivery_client.state import State

__all__ = ["CreativesSync", "download_final", "store_walk", "sync_creatives"]

PATH = API_PREFIX + "creatives"


@dataclass(frozen=True)
class CreativesSync:
    updated_since: int | None
    pages: int
    records: int
    next_mark: int | None


def _record(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("creative_id"), str):
        raise BadResponse("a creative record has no string `creative_id`")
    final = item.get("final")
    if isinstance(final, dict) and isinstance(final.get("file_url"), str):
        redactor.add(final["file_url"])
    return item


def store_walk(db: Connection, records: list[dict[str, Any]]) -> None:
    """Write the records of one walk, each overwriting the stored one of its `creative_id`
    (CLI-030): a record returned again replaces its copy."""
    for record in records:
        State.upsert_creative(db, record)


def sync_creatives(client: DeliveryClient, state: State, limit: int = 100) -> CreativesSync:
    mark = state.meta("creatives_updated_since")
    since = int(mark) if mark else None
    pinned = {"updated_since": since} if since is not None else None
    records: list[dict[str, Any]] = []
    pages = 0
    for data in walk_envelope(client, PATH, {"limit": limit}, pinned=pinned):
        pages += 1
        records += [_record(item) for item in data["items"]]
    stamps = [r["updated_at"] for r in records if isinstance(r.get("updated_at"), int)]
    latest = max(stamps, default=None)
    next_mark = max(since or 0, latest - 1) if latest is not None else since
    with state.transaction() as db:
        store_walk(db, records)
        if next_mark is not None:
            State.set_meta(db, "creatives_updated_since", next_mark)
    return CreativesSync(since, pages, len(records), next_mark)


def _reread(client: DeliveryClient, state: State, creative_id: str) -> str | None:
    body = client.request("GET", f"{PATH}/{creative_id}").object()
    record = _record(body.get("data"))
    with state.transaction() as db:
        State.upsert_creative(db, record)
    return state.file_url(creative_id)


def download_final(client: DeliveryClient, state: State, creative_id: str, out: Path) -> str:
    """Write the final MP4 to `out`; returns how it was reached ("share link", "re-read share
    link" or "file endpoint"). No link is stored or printed."""
    how = "share link"
    link = state.file_url(creative_id)
    if link is not None:
        reply = client.request("GET", link, keyless=True, accept=(301, 302, 303, 307, 308, 410))
        if reply.status == 410:
            link, how = _reread(client, state, creative_id), "re-read share link"
            if link is not None:
                reply = client.request("GET", link, keyless=True, accept=(302, 303, 307, 308, 410))
        if link is not None and reply.status != 410:
            location = reply.headers.get("location")
            target = str(httpx.URL(link).join(location)) if location else None
            return _fetch(client, target, out, how)
    reply = client.request("GET", f"{PATH}/{creative_id}/file", params={"redirect": "0"})
    data = reply.object().get("data")
    url = data.get("url") if isinstance(data, dict) else None
    return _fetch(client, url, out, "file endpoint")


def _fetch(client: DeliveryClient, url: Any, out: Path, how: str) -> str:
    if not isinstance(url, str) or not url:
        raise BadResponse("no download link in the answer")
    redactor.add(url)
    reply = client.request("GET", url, keyless=True)
    out.write_bytes(reply.content)
    return how
