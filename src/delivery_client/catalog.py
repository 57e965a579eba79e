"""Safe catalog sync (spec: Limits > Freshness (upper bounds), "Catalog paging"; GET /catalog;
Resources > Film and Episode).

`walk_catalog` fetches one walk: one unpaged response unless paging is asked for (one
consistent snapshot, CLI-043), else pages one at a time, de-duplicated by film id with the later
copy winning. Any page that does not end in 200 raises, so the walk is not complete and nothing
is applied. `apply_walk` is pure: the view after a complete walk, with a film marked unavailable
only once it was missing from `WALKS_BEFORE_UNAVAILABLE` (two) complete walks in a row,
`vid_ready` null keeping the previous value, and signed links dropped before anything is stored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.exceptions import BadResponse
from delivery_client.paging import walk_flat

__all__ = [
    "WALKS_BEFORE_UNAVAILABLE",
    "FilmRecord",
    "Walk",
    "apply_walk",
    "fetch_catalog",
    "keep_vid_ready",
    "merge_pages",
    "parse_pages",
    "strip_film",
    "walk_catalog",
]

Film = dict[str, Any]
Walk = dict[str, tuple[Film, tuple[Film, ...]]]  # film id -> (film, its episodes)
WALKS_BEFORE_UNAVAILABLE = 2  # complete walks in a row without a film (CLI-046)


@dataclass(frozen=True)
class FilmRecord:
    id: str
    film: Film
    episodes: tuple[Film, ...]
    available: bool
    missed: int  # complete walks in a row that did not list it


def _film_id(film: Any) -> str:
    if not isinstance(film, dict) or not isinstance(film.get("id"), str):
        raise BadResponse("a catalog film has no string `id`")
    film_id: str = film["id"]
    return film_id


def merge_pages(pages: Iterable[Mapping[str, Any]]) -> Walk:
    """Films and episodes of every page, one entry per film id (later copy wins)."""
    walk: Walk = {}
    for page in pages:
        films, episodes = page.get("films"), page.get("episodes")
        if not isinstance(films, list) or not isinstance(episodes, list):
            raise BadResponse("a catalog page lacks the `films` or `episodes` array")
        by_film: dict[str, list[Film]] = {}
        for episode in episodes:
            if not isinstance(episode, dict) or not isinstance(episode.get("film_id"), str):
                raise BadResponse("a catalog episode has no string `film_id`")
            by_film.setdefault(episode["film_id"], []).append(episode)
        for film in films:
            film_id = _film_id(film)
            walk[film_id] = (film, tuple(by_film.get(film_id, ())))
    return walk


def fetch_catalog(client: DeliveryClient, *, paged: bool = False) -> tuple[list[bytes], str]:
    """The raw bodies of one complete walk and their digest (with the settings'), or an exception
    (then nothing may be applied). Equal digests mean an identical walk. Only raw bytes are
    kept, so a walk equal to the last applied one is not parsed twice nor held parsed."""
    path = API_PREFIX + "catalog"
    settings = client.settings
    digest = hashlib.sha256(repr(settings).encode())
    if not paged:
        reply = client.request("GET", path)
        digest.update(reply.content)
        return [reply.content], digest.hexdigest()
    raw: list[bytes] = []
    limit = {"limit": settings.page_size}
    for _ in walk_flat(client, path, "films", limit, digest=digest, raw=raw):
        pass
    return raw, digest.hexdigest()


def parse_pages(bodies: Iterable[bytes]) -> list[Film]:
    pages = []
    for body in bodies:
        try:
            page = json.loads(body)
        except ValueError:
            raise BadResponse("a catalog page is not JSON") from None
        if not isinstance(page, dict):
            raise BadResponse("a catalog page is not a JSON object")
        pages.append(page)
    return pages


def walk_catalog(client: DeliveryClient, *, paged: bool = False) -> Walk:
    """One complete walk, merged."""
    return merge_pages(parse_pages(fetch_catalog(client, paged=paged)[0]))


_EPISODE_LINKS = ("poster_signed_url",)


def strip_film(film: Film, episodes: Iterable[Film]) -> tuple[Film, tuple[Film, ...]]:
    """Drop the links that must not be stored: episode `poster_signed_url` (CLI-039, CAT-078)
    and the pre-signed `materials[].url`."""
    kept = dict(film)
    if isinstance(kept.get("materials"), list):
        kept["materials"] = [
            {k: v for k, v in item.items() if k != "url"} if isinstance(item, dict) else item
            for item in kept["materials"]
        ]
    rows = tuple({k: v for k, v in row.items() if k not in _EPISODE_LINKS} for row in episodes)
    return kept, rows


def keep_vid_ready(new: tuple[Film, ...], old: tuple[Film, ...]) -> tuple[Film, ...]:
    """Episode `vid_ready` null keeps the value stored before (CAT-078)."""
    before = {row.get("episode_no"): row.get("vid_ready") for row in old}
    return tuple(
        {**row, "vid_ready": before.get(row.get("episode_no"))}
        if row.get("vid_ready") is None
        else row
        for row in new
    )


def apply_walk(previous: Mapping[str, FilmRecord], walk: Walk) -> dict[str, FilmRecord]:
    """The view after one complete walk."""
    view: dict[str, FilmRecord] = {}
    for film_id, (film, episodes) in walk.items():
        film, episodes = strip_film(film, episodes)
        old = previous.get(film_id)
        if old is not None:
            episodes = keep_vid_ready(episodes, old.episodes)
        view[film_id] = FilmRecord(film_id, film, episodes, True, 0)
    for film_id, old in previous.items():
        if film_id in view:
            continue
        missed = old.missed + 1
        available = old.available and missed < WALKS_BEFORE_UNAVAILABLE
        view[film_id] = FilmRecord(film_id, old.film, old.episodes, available, missed)
    return view
