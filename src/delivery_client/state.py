"""The client's local view in one SQLite file (standard library only).

A sync computes its whole new view in memory and writes it in one transaction at the end, so a
failed or killed sync leaves the previous state as it was. `export` renders the view as stable
JSON (sorted keys and rows) for the certification judge; it never holds a link or a secret.

Export format `delivery-client-state/2` (the fields of `/1` plus those marked +, each what the
app shows or decides; a reader of `/1` ignores them):
    {"format", "catalog": {"walks", +"display_lang", "films": [{"id", "slug", "title",
     +"title_shown", "available", "missed_walks", "metadata_version", +"audio_language",
     +"age_rating",
     "episodes": [{"episode_no", "id", "status", "stream_ready", "vid_ready", +"free",
     +"poster_url"}]}]},
     "creatives": {"updated_since", "items": [{"creative_id", "status", "updated_at",
     "rights_ends_at", "final_ready", "has_file_url", "usable", +"final_size"}]},
     "series": {"items": [{"code", "status", "content_version", "details_fetched",
     +"age_rating", +"artwork", +"tags"}]},
     "playlists": {"items": [the fields of /1, +"licensed"]},
     +"playback": {"tickets": [{"episode_id", "status", "protection", "expires_at",
     "sellable_as_paid"}]}}
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from delivery_client.catalog import FilmRecord
from delivery_client.exceptions import StateError
from delivery_client.rules import (
    age_rating,
    artwork,
    audio_language,
    episode_poster,
    final_size,
    i18n_text,
    is_free,
    licensed,
    usable,
)

__all__ = ["EXPORT_FORMAT", "LISTINGS", "State"]

EXPORT_FORMAT = "delivery-client-state/2"
LISTINGS = ("series", "playlists")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS films (id TEXT PRIMARY KEY, film TEXT NOT NULL,
    episodes TEXT NOT NULL, available INTEGER NOT NULL, missed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS creatives (creative_id TEXT PRIMARY KEY, record TEXT NOT NULL,
    file_url TEXT, updated_at INTEGER);
CREATE TABLE IF NOT EXISTS series (code TEXT PRIMARY KEY, item TEXT NOT NULL,
    detail TEXT, content_version TEXT);
CREATE TABLE IF NOT EXISTS playlists (code TEXT PRIMARY KEY, item TEXT NOT NULL,
    detail TEXT, content_version TEXT);
CREATE TABLE IF NOT EXISTS tickets (episode_id TEXT PRIMARY KEY, status INTEGER NOT NULL,
    protection TEXT, expires_at TEXT, sellable INTEGER NOT NULL);
"""


def _number(value: Any) -> int:
    return value if isinstance(value, int) else -1


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class State:
    def __init__(self, path: str | Path) -> None:
        try:
            self._db = sqlite3.connect(str(path), isolation_level=None, timeout=10.0)
            self._db.execute("PRAGMA journal_mode=WAL")  # a killed writer leaves the last commit
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as error:
            raise StateError(f"cannot open the state file {path}: {error}") from None

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All or nothing: BEGIN IMMEDIATE ... COMMIT, rolled back on any error."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StateError(f"cannot write the state: {error}") from None
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as error:
            raise StateError(f"cannot write the state: {error}") from None

    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    @staticmethod
    def set_meta(db: sqlite3.Connection, key: str, value: object) -> None:
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    def viewer_ref(self, account: str, new_ref: Callable[[], str]) -> str:
        """The opaque `viewer_ref` of one of the app's viewers (POST /playback: no personal
        data, PLAY-025): made once by `new_ref` and kept under a digest of the account, so the
        same viewer sends the same id (server-side reuse) and the account itself is never sent
        nor stored."""
        key = "viewer:" + hashlib.sha256(account.encode()).hexdigest()
        known = self.meta(key)
        if known is not None:
            return known
        made = new_ref()
        with self.transaction() as db:
            self.set_meta(db, key, made)
        return made

    # Catalog
    def films(self) -> dict[str, FilmRecord]:
        rows = self._db.execute("SELECT id, film, episodes, available, missed FROM films")
        return {
            row[0]: FilmRecord(
                row[0], json.loads(row[1]), tuple(json.loads(row[2])), bool(row[3]), row[4]
            )
            for row in rows
        }

    def replace_films(
        self, view: Mapping[str, FilmRecord], walks: int, digest: str | None = None
    ) -> None:
        with self.transaction() as db:
            self.set_meta(db, "catalog_digest", digest or "")
            db.execute("DELETE FROM films")
            db.executemany(
                "INSERT INTO films VALUES (?, ?, ?, ?, ?)",
                [
                    (r.id, _dump(r.film), _dump(list(r.episodes)), int(r.available), r.missed)
                    for r in view.values()
                ],
            )
            self.set_meta(db, "catalog_walks", walks)

    def repeat_walk(self, walks: int, walks_before_unavailable: int) -> tuple[int, int, int]:
        """Apply a walk identical to the last one: the films it listed keep missed 0; every
        other film has missed one more walk. Returns (listed, available, total)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE films SET missed = missed + 1, available = available AND missed + 1 < ? "
                "WHERE missed > 0",
                (walks_before_unavailable,),
            )
            self.set_meta(db, "catalog_walks", walks)
            listed, available, total = db.execute(
                "SELECT SUM(missed = 0), SUM(available), COUNT(*) FROM films"
            ).fetchone()
        return int(listed or 0), int(available or 0), int(total or 0)

    # Creatives: `file_url` is kept apart from the record and never exported.
    def creatives(self) -> dict[str, dict[str, Any]]:
        rows = self._db.execute("SELECT creative_id, record FROM creatives")
        return {row[0]: json.loads(row[1]) for row in rows}

    def file_url(self, creative_id: str) -> str | None:
        row = self._db.execute(
            "SELECT file_url FROM creatives WHERE creative_id = ?", (creative_id,)
        ).fetchone()
        return row[0] if row else None

    @staticmethod
    def upsert_creative(db: sqlite3.Connection, record: Mapping[str, Any]) -> None:
        """Insert or overwrite the record of its `creative_id`; `file_url` is kept apart."""
        final = record.get("final") if isinstance(record.get("final"), dict) else {}
        file_url = final.get("file_url") if isinstance(final, dict) else None
        kept = {**record, "final": {k: v for k, v in (final or {}).items() if k != "file_url"}}
        db.execute(
            "INSERT OR REPLACE INTO creatives VALUES (?, ?, ?, ?)",
            (str(record["creative_id"]), _dump(kept), file_url, record.get("updated_at")),
        )

    # Series and playlists: code -> (list item, stored content_version, detail stored)
    def listing(self, kind: str) -> dict[str, tuple[dict[str, Any], str | None, bool]]:
        assert kind in LISTINGS
        rows = self._db.execute(f"SELECT code, item, content_version, detail FROM {kind}")
        return {row[0]: (json.loads(row[1]), row[2], row[3] is not None) for row in rows}

    def details(self, kind: str) -> dict[str, dict[str, Any]]:
        """code -> the stored detail (links already dropped), for items whose detail was read."""
        assert kind in LISTINGS
        rows = self._db.execute(f"SELECT code, detail FROM {kind} WHERE detail IS NOT NULL")
        out = {row[0]: json.loads(row[1]) for row in rows}
        return {code: detail for code, detail in out.items() if isinstance(detail, dict)}

    # Playback: what the app decided about each ticket (never the token or the manifest link).
    def record_tickets(self, rows: list[tuple[str, int, str | None, str | None, bool]]) -> None:
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO tickets VALUES (?, ?, ?, ?, ?)",
                [(e, s, p, x, int(sell)) for e, s, p, x, sell in rows],
            )

    def export(self, now: float, display_lang: str = "en") -> dict[str, Any]:
        """The client's view as stable JSON-ready data; `now` decides `usable` (CLI-034),
        `display_lang` the language the titles are shown in (CLI-058)."""
        films = [
            {
                "id": r.id,
                "slug": r.film.get("slug"),
                "title": r.film.get("title"),
                "title_shown": i18n_text(r.film, "title_i18n", display_lang),
                "available": r.available,
                "missed_walks": r.missed,
                "metadata_version": r.film.get("metadata_version"),
                "audio_language": audio_language(r.film),
                "age_rating": age_rating(r.film),
                "episodes": sorted(
                    (
                        {k: e.get(k) for k in ("episode_no", "id", "status", "stream_ready")}
                        | {"vid_ready": e.get("vid_ready")}
                        | {"poster_url": episode_poster(e, r.film)}
                        | {"free": _free(r.film, e.get("episode_no"))}
                        for e in r.episodes
                    ),
                    key=lambda e: (_number(e["episode_no"]), str(e["id"])),
                ),
            }
            for r in sorted(self.films().values(), key=lambda r: r.id)
        ]
        creatives = []
        for creative_id, record in sorted(self.creatives().items()):
            final = record.get("final") if isinstance(record.get("final"), dict) else {}
            rights = record.get("rights") if isinstance(record.get("rights"), dict) else {}
            creatives.append(
                {
                    "creative_id": creative_id,
                    "status": record.get("status"),
                    "updated_at": record.get("updated_at"),
                    "rights_ends_at": (rights or {}).get("ends_at"),
                    "final_ready": (final or {}).get("ready"),
                    "has_file_url": self.file_url(creative_id) is not None,
                    "usable": usable(record, now),
                    "final_size": final_size(record),
                }
            )
        listed = {
            kind: [
                {
                    "code": code,
                    "status": item.get("status"),
                    "content_version": version,
                    "details_fetched": fetched,
                }
                for code, (item, version, fetched) in sorted(self.listing(kind).items())
            ]
            for kind in LISTINGS
        }
        series_details = self.details("series")
        for row in listed["series"]:
            detail = series_details.get(str(row["code"]))
            row["age_rating"] = age_rating(detail or {})
            row["artwork"] = artwork(detail) if detail else None
            row["tags"] = sorted(map(str, detail.get("tags") or {})) if detail else None
        items = {code: item for code, (item, _, _) in self.listing("playlists").items()}
        for row in listed["playlists"]:
            row["licensed"] = licensed(items[str(row["code"])])
        tickets = [
            {"episode_id": row[0], "status": row[1], "protection": row[2],
             "expires_at": row[3], "sellable_as_paid": bool(row[4])}
            for row in self._db.execute(
                "SELECT episode_id, status, protection, expires_at, sellable FROM tickets "
                "ORDER BY episode_id"
            )
        ]  # fmt: skip
        walks = int(self.meta("catalog_walks", "0") or 0)
        since = self.meta("creatives_updated_since")
        return {
            "format": EXPORT_FORMAT,
            "catalog": {"walks": walks, "display_lang": display_lang, "films": films},
            "creatives": {"updated_since": int(since) if since else None, "items": creatives},
            "series": {"items": listed["series"]},
            "playlists": {"items": listed["playlists"]},
            "playback": {"tickets": tickets},
        }


def _free(film: Mapping[str, Any], episode_no: Any) -> bool | None:
    """Film `free_until_episode` applied to one episode (CAT-077); None without a number."""
    if not isinstance(episode_no, int) or isinstance(episode_no, bool):
        return None
    return is_free(film, episode_no)
