"""The sandbox's data and the queries every endpoint uses (spec: Resources and their fields).

Records are frozen; what the admin API changes (series take-downs, playlist and category
withdrawals) lives in small dicts on `Store` that `reset` clears. Licence checks return the
spec's `not_entitled` reasons so that playback and the catalog read the same rules.

Data API for playback (stable): `film_by_ref`, `episode`, `episode_by_no`, `episodes_of`,
`licence_refusal`, `subtitle_url`; `Episode.protection`, `stream_ready`, `failure`, `vid_for`.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

__all__ = [
    "DAY",
    "WITHDRAWN_LISTED",
    "Category",
    "Clip",
    "Collection",
    "Creative",
    "Episode",
    "Film",
    "Licence",
    "LicenceState",
    "Playlist",
    "Store",
    "Video",
]

DAY = 86_400
WITHDRAWN_LISTED = 30 * DAY  # spec: Limits > Other constants, withdrawn items stay listed


class LicenceState(StrEnum):
    ACTIVE = "active"
    SUSPENDED = "suspended"
    DISABLED = "streaming_disabled"


class Failure(StrEnum):
    """Named failures of an episode at ticket time (spec: Errors > Playback, per ticket)."""

    NO_PLAYABLE = "no_playable"  # 503 not_ready
    PROVIDER_TIMEOUT = "provider_timeout"  # 503 service_unavailable, Retry-After 2
    STREAM_ERROR = "stream_error"  # 502
    INTERNAL_ERROR = "internal_error"  # 500


@dataclass(frozen=True)
class Film:
    id: str
    slug: str
    title: str
    synopsis_short: str | None
    synopsis_full: str | None
    genres: tuple[str, ...]
    language: str | None
    poster_url: str | None
    display_order: int
    planned_episodes: int | None
    free_until_episode: int | None
    audience: str | None
    form: str | None
    setting: str | None
    code: str | None
    title_i18n: dict[str, str]
    synopsis_short_i18n: dict[str, str]
    synopsis_i18n: dict[str, str]
    content_rating: str | None
    is_completed: bool | None
    release_date: str | None
    default_lang: str | None
    tags: tuple[dict[str, Any], ...]
    people: tuple[dict[str, Any], ...]
    trailer_vid: str | None
    images: tuple[dict[str, Any], ...]
    materials: tuple[str, ...]  # artwork kinds copied into the caller's space
    metadata_version: str | None
    metadata_updated_at: int | None
    published: bool
    film_status: str | None
    tier: str | None
    updated_at: int


@dataclass(frozen=True)
class Episode:
    id: str
    film_id: str
    episode_no: int
    title: str | None
    synopsis: str | None
    duration_ms: int | None
    poster_url: str | None
    has_cover: bool
    vid: str | None  # video id stem; None until copied
    vid_ready: bool | None
    protection: str  # private-encrypted | signed-url-only
    stream_ready: bool
    subtitles: tuple[str, ...]  # languages, in lang order
    title_i18n: dict[str, str]
    updated_at: int
    failure: Failure | None = None

    def vid_for(self, space: str | None) -> str | None:
        """The video id in the caller's media space (own space, else the shared one)."""
        if self.vid is None:
            return None
        return f"{space or 'shared'}:{self.vid}"


@dataclass(frozen=True)
class Licence:
    state: LicenceState
    starts_at: int
    ends_at: int | None
    changed_at: int


@dataclass(frozen=True)
class Category:
    slug: str
    name: str
    withdrawn_at: int | None = None


@dataclass(frozen=True)
class Clip:
    id: str
    title: str
    description: str | None
    duration_ms: int | None
    muscle_groups: tuple[str, ...]
    equipment: tuple[str, ...]
    difficulty: str | None
    kcal_est: int | None
    order_code: str | None
    has_poster: bool


@dataclass(frozen=True)
class Playlist:
    code: str
    title: str
    description: str | None
    category: str
    group: tuple[str, str] | None
    clips: tuple[str, ...]
    updated_at: int
    withdrawn_at: int | None
    metadata_version: str


@dataclass(frozen=True)
class Video:
    id: str
    slug: str
    title: str
    order_code: str | None
    duration_ms: int | None
    muscle_groups: tuple[str, ...]
    equipment: tuple[str, ...]
    difficulty: str | None
    kcal_est: int | None
    has_720: bool
    ready: bool
    archived: bool = False
    broken: bool = False


@dataclass(frozen=True)
class Collection:
    code: str
    title: str
    published: bool
    videos: tuple[str, ...]
    broken: bool = False


@dataclass(frozen=True)
class Creative:
    id: str
    code: str | None
    org_id: str
    name: str
    status: str  # approved | pushed | draft | rejected
    created_at: int
    approved_at: int | None
    updated_at: int
    created_by: dict[str, Any] | None
    film_id: str | None
    episodes: tuple[int, ...]
    placement: str | None
    scenes: tuple[dict[str, Any], ...]
    formula: str | None
    rights_ends_at: int | None
    parent_id: str | None
    final_ready: bool
    share_token: str | None
    link_failure: bool = False

    @property
    def visible(self) -> bool:
        return self.status in ("approved", "pushed")


@dataclass
class Store:
    films: dict[str, Film]
    episodes: dict[str, Episode]
    licences: dict[tuple[str, str], Licence]
    categories: dict[str, Category]
    clips: dict[str, Clip]
    playlists: dict[str, Playlist]
    playlist_grants: dict[str, frozenset[str]]
    videos: dict[str, Video]
    collections: dict[str, Collection]
    collection_grants: dict[str, tuple[str, ...]]
    creatives: dict[str, Creative]
    fixtures: dict[str, str | int]
    anchor: int
    series_takedowns: dict[str, int] = field(default_factory=dict)
    playlist_withdrawals: dict[str, int] = field(default_factory=dict)
    withdrawn_episodes: set[str] = field(default_factory=set)
    revoked_links: set[str] = field(default_factory=set)  # creative ids (admin revoke-link)
    # Subtitles attached or replaced by the admin API: (episode id, lang) -> file; the episode
    # records they changed; what ticket requests serve meanwhile for an episode (faults only).
    subtitle_files: dict[tuple[str, str], str] = field(default_factory=dict)
    edited_episodes: dict[str, Episode] = field(default_factory=dict)
    held_subtitles: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    _by_film: dict[str, list[Episode]] = field(default_factory=dict)
    _by_slug: dict[str, Film] = field(default_factory=dict)
    _by_code: dict[str, Film] = field(default_factory=dict)
    _subtitles: dict[str, tuple[Episode, tuple[tuple[str, str], ...]]] = field(default_factory=dict)
    _seed_episodes: dict[str, Episode] = field(default_factory=dict)
    _seed_licences: dict[tuple[str, str], Licence] = field(default_factory=dict)
    _seed_films: dict[str, Film] = field(default_factory=dict)
    _seed_playlists: dict[str, Playlist] = field(default_factory=dict)
    _seed_creatives: dict[str, Creative] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._seed_episodes = dict(self.episodes)
        self._seed_licences = dict(self.licences)
        self._seed_films = dict(self.films)
        self._seed_playlists = dict(self.playlists)
        self._seed_creatives = dict(self.creatives)
        self._index_episodes()
        self._by_slug = {f.slug: f for f in self.films.values()}
        self._by_code = {f.code: f for f in self.films.values() if f.code}

    def share_licences(self, source: str, orgs: tuple[str, ...]) -> None:
        """Give each of `orgs` the seed licences of organisation `source` (the tenants of
        `--tenants N` license what the `limits` organisation does); a reset keeps them."""
        for (org, film), licence in list(self._seed_licences.items()):
            if org == source:
                for other in orgs:
                    self._seed_licences[(other, film)] = licence
        self.licences.update(self._seed_licences)

    def _index_episodes(self) -> None:
        """`episodes` and `_by_film` hold the published episodes: the seed less the withdrawn,
        as the admin API edited them."""
        self.episodes.clear()
        self.episodes.update(
            (k, self.edited_episodes.get(k, e))
            for k, e in self._seed_episodes.items()
            if k not in self.withdrawn_episodes
        )
        self._by_film = {}
        for episode in sorted(self.episodes.values(), key=lambda e: e.episode_no):
            self._by_film.setdefault(episode.film_id, []).append(episode)

    def reset(self) -> None:
        self.series_takedowns.clear()
        self.revoked_links.clear()
        if self.films != self._seed_films:
            self.films.clear()
            self.films.update(self._seed_films)
            self._by_code = {f.code: f for f in self.films.values() if f.code}
            self._by_slug = {f.slug: f for f in self.films.values()}
        if self.playlists != self._seed_playlists:
            self.playlists.clear()
            self.playlists.update(self._seed_playlists)
        self.playlist_withdrawals.clear()
        if self.creatives != self._seed_creatives:  # renamed by the admin API
            self.creatives.clear()
            self.creatives.update(self._seed_creatives)
        self.licences.clear()
        self.licences.update(self._seed_licences)
        self.subtitle_files.clear()
        self.held_subtitles.clear()
        if self.withdrawn_episodes or self.edited_episodes:
            self.withdrawn_episodes.clear()
            self.edited_episodes.clear()
            self._index_episodes()

    def restore_own_data(self, org: str) -> None:
        """Put back what `org` alone sees, as the seed has it: the films no other organisation
        licenses (titles, versions, episodes and their subtitles, series withdrawals, the
        licence) and the organisation's creatives. What others also see stays as it is (an
        organisation's restore, admin `POST /_sandbox/roles/{role}/restore`)."""
        licensees: dict[str, set[str]] = {}
        for holder, film_id in self._seed_licences:
            licensees.setdefault(film_id, set()).add(holder)
        own = {film_id for film_id, holders in licensees.items() if holders == {org}}
        for film_id in own:
            film = self._seed_films[film_id]
            if self.films.get(film_id) != film:
                self._put_film(film)
            if film.code:
                self.series_takedowns.pop(film.code, None)
            self.licences[(org, film_id)] = self._seed_licences[(org, film_id)]
        episodes = {e for e, episode in self._seed_episodes.items() if episode.film_id in own}
        if episodes & (self.withdrawn_episodes | set(self.edited_episodes)):
            self.withdrawn_episodes -= episodes
            for episode_id in episodes:
                self.edited_episodes.pop(episode_id, None)
            self._index_episodes()
        for key in [key for key in self.subtitle_files if key[0] in episodes]:
            del self.subtitle_files[key]
        for episode_id in episodes:
            self.held_subtitles.pop(episode_id, None)
        for creative_id, creative in self._seed_creatives.items():
            if creative.org_id == org:
                self.creatives[creative_id] = creative
                self.revoked_links.discard(creative_id)

    @property
    def seed_films(self) -> dict[str, Film]:
        """The films as seeded, before any admin change (faults: a value left where it was)."""
        return self._seed_films

    @property
    def seed_playlists(self) -> dict[str, Playlist]:
        """The playlists as seeded, before any admin change (faults)."""
        return self._seed_playlists

    def snapshot(self) -> Store:
        """A copy later changes to this store do not reach: its own containers, the same frozen
        records (legal variants: a server reading through a cache, state/views.py)."""
        copied = copy.copy(self)
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, dict | set):
                setattr(copied, name, copy.copy(value))
        copied._by_film = {film: list(rows) for film, rows in self._by_film.items()}
        return copied

    # -- admin changes (ARCHITECTURE: Sandbox admin API) ---------------------------------------

    def retitle_playlist(
        self, code: str, title: str, now: int, *, keep_time: bool, keep_version: bool
    ) -> Playlist:
        """Change a playlist's title: a change of its metadata, so its `updated_at` moves to now
        (unless `keep_time`, fault playlist_change_keeps_updated_at) and its `metadata_version`
        moves (spec: Playlist detail, the hash of the playlist metadata alone; unless
        `keep_version`, fault playlist_metadata_version_frozen); its code and Category stay, and
        the detail's `content_version`, a hash of the whole answer, moves with the title.
        KeyError: no such playlist.

        Requirements: PLS-045, PLS-046, PLS-047, PLS-048.
        """
        playlist = self.playlists[code]
        moved = playlist.updated_at if keep_time else max(now, playlist.updated_at + 1)
        version = playlist.metadata_version
        if not keep_version:
            version = _moved_hash(version, f"title:{title}")
        changed = replace(playlist, title=title, updated_at=moved, metadata_version=version)
        self.playlists[code] = changed
        return changed

    def retitle_film(self, film_id: str, title: str, now: int, keep_version: bool) -> Film:
        """Change a film's title: its metadata changed, so `metadata_version` and both change
        times move (unless `keep_version`, fault metadata_version_frozen), its English title
        with it; its `code` and `slug` stay. KeyError: no film.

        Requirements: CAT-082, CAT-084, CAT-085.
        """
        film = self.films[film_id]
        version = film.metadata_version
        if version is not None and not keep_version:
            version = _moved_hash(version, title)
        changed = replace(
            film,
            title=title,
            title_i18n={**film.title_i18n, "en": title},
            metadata_version=version,
            metadata_updated_at=now,
            updated_at=now,
        )
        self._put_film(changed)
        return changed

    def change_licence(self, org_id: str, film_id: str, action: str, now: int) -> Licence:
        """`end` (the window closes now), `suspend` or `restore` (the seed's licence) a licence.

        KeyError: the organisation holds no licence of the film; ValueError: unknown action.
        """
        key = (org_id, film_id)
        current, seeded = self.licences[key], self._seed_licences.get(key)
        if action == "end":
            changed = Licence(current.state, current.starts_at, now, now)
        elif action == "suspend":
            changed = Licence(LicenceState.SUSPENDED, current.starts_at, current.ends_at, now)
        elif action == "restore":
            if seeded is None:
                raise KeyError(film_id)
            changed = seeded
        else:
            raise ValueError(action)
        self.licences[key] = changed
        return changed

    def changed_licences(self) -> list[str]:
        """`org/film` of every licence that differs from the seed."""
        return sorted(
            f"{org}/{film}"
            for (org, film), licence in self.licences.items()
            if self._seed_licences.get((org, film)) != licence
        )

    def set_episode_published(
        self, episode_id: str, published: bool, now: int, *, keep_version: bool = False
    ) -> bool:
        """Withdraw or publish again an episode of the seed; False when the seed has none.

        The film's metadata covers its episodes (spec: Film, `metadata_version`), so a change
        of what is published moves the film's `metadata_version` (unless `keep_version`, fault
        film_version_ignores_episodes), `metadata_updated_at` and `updated_at`.

        Requirements: CAT-083.
        """
        episode = self._seed_episodes.get(episode_id)
        if episode is None:
            return False
        was_published = episode_id not in self.withdrawn_episodes
        if published:
            self.withdrawn_episodes.discard(episode_id)
        else:
            self.withdrawn_episodes.add(episode_id)
        self._index_episodes()
        film = self.films.get(episode.film_id)
        if film is not None and film.metadata_version is not None and published != was_published:
            change = f"{'published' if published else 'withdrawn'}:{episode_id}"
            version = film.metadata_version
            if not keep_version:  # the fault keeps the hash; the times of the change still move
                version = _moved_hash(version, change)
            self._put_film(
                replace(film, metadata_version=version, metadata_updated_at=now, updated_at=now)
            )
        return True

    def attach_subtitle(self, episode_id: str, lang: str, url: str, now: int) -> Episode | None:
        """Attach a subtitle to a published episode, or replace the file of one it has (spec:
        Limits > Freshness, a subtitle attached or replaced; POST /playback, `subtitles[]`;
        GET /config, `subtitles.languages`). Ticket requests and `/config` read the change at
        once: the clean sandbox is well within both 5-minute bounds. The episode's `updated_at`
        and its film's `metadata_version` move (the hash covers episodes and their subtitles).
        None: no such published episode.

        Requirements: FRESH-013, FRESH-015.
        """
        episode = self.episodes.get(episode_id)
        if episode is None:
            return None
        self.subtitle_files[(episode_id, lang)] = url
        changed = replace(
            episode,
            subtitles=tuple(sorted({*episode.subtitles, lang})),
            updated_at=max(now, episode.updated_at + 1),
        )
        self.put_episode(changed)
        film = self.films.get(episode.film_id)
        if film is not None and film.metadata_version is not None:
            version = _moved_hash(film.metadata_version, f"{episode_id}:{lang}:{url}")
            self._put_film(
                replace(film, metadata_version=version, metadata_updated_at=now, updated_at=now)
            )
        return changed

    def _put_film(self, film: Film) -> None:
        self.films[film.id] = self._by_slug[film.slug] = film
        if film.code:
            self._by_code[film.code] = film

    def put_episode(self, episode: Episode) -> None:
        """Serve `episode` in place of the seed's record of that id until the reset."""
        self.edited_episodes[episode.id] = episode
        self._index_episodes()

    # -- films and episodes --------------------------------------------------------------------

    def film_by_ref(self, ref: str) -> Film | None:
        """A film by id or slug (spec: POST /playback, `film_ref`). (PLAY-007, PLAY-008)"""
        return self.films.get(ref) or self._by_slug.get(ref)

    def film_by_code(self, code: str) -> Film | None:
        return self._by_code.get(code)

    def episode(self, episode_id: str) -> Episode | None:
        return self.episodes.get(episode_id)

    def episodes_of(self, film_id: str) -> list[Episode]:
        """Published episodes of a film, by `episode_no`."""
        return self._by_film.get(film_id, [])

    def episode_by_no(self, film_id: str, episode_no: int) -> Episode | None:
        for episode in self.episodes_of(film_id):
            if episode.episode_no == episode_no:
                return episode
        return None

    def licence_refusal(self, org_id: str, film_id: str, now: float) -> str | None:
        """None when the organisation may stream the film now, else the `not_entitled` reason.

        `org_suspended` is the caller's state and is checked by the caller first.

        Requirements: PLAY-078, PLAY-079, PLAY-080, PLAY-081.
        """
        licence = self.licences.get((org_id, film_id))
        if licence is None:
            return "entitlement_not_found"
        if licence.state is LicenceState.SUSPENDED:
            return "entitlement_suspended"
        if licence.state is LicenceState.DISABLED:
            return "streaming_disabled"
        if now < licence.starts_at or (licence.ends_at is not None and now >= licence.ends_at):
            return "outside_window"
        return None

    def licensed_films(self, org_id: str, now: float) -> list[Film]:
        """Published films with a current licence, by `display_order` (spec: GET /catalog).

        Requirements: CAT-055, CAT-056, CAT-057.

        Requirements: CAT-081.
        """
        films = [
            f
            for f in self.films.values()
            if f.published and self.licence_refusal(org_id, f.id, now) is None
        ]
        films.sort(key=lambda f: (f.display_order, f.id))
        return films

    def subtitle_url(self, episode: Episode, lang: str) -> str:
        """The subtitle file: the one the admin API attached, else the seed's."""
        attached = self.subtitle_files.get((episode.id, lang))
        return attached or f"https://subs.delivery.sandbox/{episode.id}/{lang}.vtt"

    def subtitle_pairs(self, episode: Episode) -> tuple[tuple[str, str], ...]:
        """(lang, url) of every subtitle of the episode, in its order; built once per episode
        (what a fault holds back for ticket requests, while it does)."""
        held = self.held_subtitles.get(episode.id)
        if held is not None:
            return held
        found = self._subtitles.get(episode.id)
        if found is None or found[0] is not episode:
            pairs = tuple((lang, self.subtitle_url(episode, lang)) for lang in episode.subtitles)
            found = self._subtitles[episode.id] = (episode, pairs)
        return found[1]

    # -- series (spec: States and transitions, Series) -----------------------------------------

    def series_state(
        self, org_id: str, film: Film, now: float
    ) -> tuple[str, int, int | None] | None:
        """(status, updated_at, withdrawn_at) of a series for the organisation; None: unlisted.

        Requirements: STATE-001, STATE-003, STATE-005, STATE-006, STATE-007.
        """
        licence = self.licences.get((org_id, film.id))
        if licence is None or film.code is None or not film.published:
            return None
        taken_down = self.series_takedowns.get(film.code)
        withdrawn_at: int | None = taken_down
        if withdrawn_at is None and licence.state is not LicenceState.ACTIVE:
            withdrawn_at = licence.changed_at
        if withdrawn_at is None and licence.ends_at is not None and now >= licence.ends_at:
            withdrawn_at = licence.ends_at
        if withdrawn_at is None:
            if now < licence.starts_at:
                return None
            return ("active", max(film.updated_at, licence.changed_at), None)
        if now - withdrawn_at >= WITHDRAWN_LISTED:
            return None
        return ("withdrawn", max(withdrawn_at, film.updated_at), withdrawn_at)

    # -- playlists -----------------------------------------------------------------------------

    def playlist_withdrawn_at(self, playlist: Playlist) -> int | None:
        """When a playlist left the library: its own withdrawal, an admin one, or its Category's.

        Requirements: STATE-009, STATE-015.
        """
        marks = [
            playlist.withdrawn_at,
            self.playlist_withdrawals.get(playlist.code),
            self.categories[playlist.category].withdrawn_at,
        ]
        found = [m for m in marks if m is not None]
        return min(found) if found else None

    def category_usable(self, slug: str, now: float) -> bool:
        """A Category filter works until 30 days after the Category is withdrawn.

        Requirements: PLS-035, STATE-016, STATE-017.
        """
        category = self.categories.get(slug)
        if category is None:
            return False
        return category.withdrawn_at is None or now - category.withdrawn_at < WITHDRAWN_LISTED

    # -- open videos ---------------------------------------------------------------------------

    def granted_collections(self, org_id: str) -> list[Collection]:
        return [
            self.collections[c]
            for c in self.collection_grants.get(org_id, ())
            if self.collections[c].published
        ]


def _moved_hash(version: str, change: str) -> str:
    """A new hash of the same length as `version` after `change` (its form is the seed's)."""
    return hashlib.sha256(f"{version}:{change}".encode()).hexdigest()[: len(version)]
