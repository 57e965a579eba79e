"""Faults of the change catalogue (spec/changes.yaml): a change lands, but a value that must
move with it stays where it was, or a value that must stay moves.

Each acts on the 200 answer of one endpoint, after the reference answer was built:

- `film_metadata_updated_at_frozen` (CAT-084): the catalog shows each film's seed
  `metadata_updated_at`, whatever changed since;
- `series_metadata_updated_at_frozen` (SER-048): the series detail does the same;
- `series_hash_ignores_metadata` (SER-049): the series detail's `content_version` hashes the
  answer without its titles, metadata version and times, so a retitle leaves it where it was;
- `playlist_hash_ignores_title` (PLS-047): the playlist detail's `content_version` hashes the
  answer without its title, metadata version and time;
- `retitle_recodes_film` (CAT-085): the catalog gives a film whose title changed another `code`;
- `metadata_change_reslugs_film` (CAT-002): the catalog gives a film whose metadata changed since
  the seed (a retitle, or one of its episodes withdrawn: its `metadata_version` moved) another
  `slug`, as a slug generator run again on every edit would;
- `retitle_reslugs_category` (PLS-048): the playlist list gives a playlist whose title changed
  another Category `slug`;
- `withdrawn_at_follows_the_clock` (STATE-021): a withdrawn playlist's `withdrawn_at` is the
  moment of the read, never later than `server_time`, but never the same twice either.

The admin side's faults of the catalogue, `creative_rename_restamps_created_at` and
`creative_rename_restamps_approved_at` (CRE-065) and `creative_rename_recodes` (CRE-005), act where
a creative is renamed (faults/freshness.py: `renamed`).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from delivery_sandbox.faults.names import FaultName

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Request, Server

__all__ = ["CHANGE_FAULTS", "mangle_change_reply"]

CHANGE_FAULTS = frozenset(
    {
        FaultName.film_metadata_updated_at_frozen,
        FaultName.series_metadata_updated_at_frozen,
        FaultName.series_hash_ignores_metadata,
        FaultName.playlist_hash_ignores_title,
        FaultName.retitle_recodes_film,
        FaultName.metadata_change_reslugs_film,
        FaultName.retitle_reslugs_category,
        FaultName.withdrawn_at_follows_the_clock,
    }
)
_SERIES_LEFT_OUT = ("content_version", "title_i18n", "metadata_version", "metadata_updated_at",
                    "updated_at")  # fmt: skip
_PLAYLIST_LEFT_OUT = ("content_version", "title", "metadata_version", "updated_at")


def _hash_without(data: dict[str, Any], left_out: tuple[str, ...]) -> str:
    """A hash of `data` less some fields, in the form of the reference `content_version`."""
    kept = {k: v for k, v in data.items() if k not in left_out}
    return hashlib.sha256(orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def mangle_change_reply(reply: Answer, sb: Server, exchange: Request) -> None:
    """Apply the switched-on faults of this module to one answer, in place."""
    on = sb.faults.on & CHANGE_FAULTS
    if not on or reply.status != 200 or not reply.body:
        return
    try:
        body = orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        return
    if not isinstance(body, dict):
        return
    seeded = sb.store.seed_films
    data = body.get("data")
    if exchange.endpoint == "catalog":
        for film in body.get("films") or ():
            first = seeded.get(str(film.get("id")))
            if not isinstance(film, dict) or first is None:
                continue
            if FaultName.film_metadata_updated_at_frozen in on:
                stamp = first.metadata_updated_at
                film["metadata_updated_at"] = None if stamp is None else _iso(stamp)
            if FaultName.retitle_recodes_film in on and film.get("title") != first.title:
                film["code"] = f"{str(film.get('code'))[:2]}999999"
            edited = film.get("metadata_version") != first.metadata_version
            if FaultName.metadata_change_reslugs_film in on and edited:
                film["slug"] = f"{film.get('slug')}-2"
    elif exchange.endpoint == "playlists" and isinstance(data, dict):
        for item in data.get("items") or ():
            seed = sb.store.seed_playlists.get(str(item.get("code")))
            renamed = seed is not None and item.get("title") != seed.title
            category = item.get("category")
            if FaultName.retitle_reslugs_category in on and renamed and isinstance(category, dict):
                category["slug"] = f"{category.get('slug')}-renamed"
            if FaultName.withdrawn_at_follows_the_clock in on and item.get("withdrawn_at"):
                item["withdrawn_at"] = max(int(item["withdrawn_at"]), int(sb.now()) - 1)
    elif exchange.endpoint == "series_one" and isinstance(data, dict):
        if FaultName.series_metadata_updated_at_frozen in on:
            first = next((f for f in seeded.values() if f.code == data.get("code")), None)
            if first is not None:
                data["metadata_updated_at"] = first.metadata_updated_at
        if FaultName.series_hash_ignores_metadata in on:
            data["content_version"] = _hash_without(data, _SERIES_LEFT_OUT)
    elif exchange.endpoint == "playlist" and isinstance(data, dict):
        playlist_fault = FaultName.playlist_hash_ignores_title in on
        data["content_version"] = (
            _hash_without(data, _PLAYLIST_LEFT_OUT)
            if playlist_fault
            else data.get("content_version")
        )
    reply.body = orjson.dumps(body)
