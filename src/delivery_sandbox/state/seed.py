"""Deterministic seed data (spec: Resources and their fields; ARCHITECTURE: Fixtures).

`build_store(seed, now)` always builds the same rows for the same seed; times are placed
relative to the start day (`now` floored to a UTC day) so that licence windows and the 30-day
withdrawal rule hold whenever the sandbox starts. Special rows come first and are named in
`Store.fixtures`; the rest vary every optional field.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from typing import Any

import orjson

from delivery_sandbox.state.accounts import CHANGES_ORGANISATION, LIMITS_TWINS
from delivery_sandbox.state.store import (
    DAY,
    Category,
    Clip,
    Collection,
    Creative,
    Episode,
    Failure,
    Film,
    Licence,
    LicenceState,
    Playlist,
    Store,
    Video,
)

__all__ = ["build_store"]

# The twins of `org_limits_videos`: granted what it is granted.
LIMITS_VIDEOS_TWINS = tuple(
    t for t, source in LIMITS_TWINS.items() if source == "org_limits_videos"
)

N_FILMS = 130  # licensed to the film organisations
LANGS = ("de", "en", "es", "fr", "ja", "pt")
GENRES = ("romance", "revenge", "drama", "comedy", "thriller", "fantasy")
AUDIENCES = ("women", "men", "lgbtq", "teens")  # `teens`: a value clients must accept
FORMS = ("live_action", "anime")
SETTINGS = ("modern", "city", "fantasy", "campus", "palace")
RATINGS = ("all", "13+", "16+", "18+")
IMAGE_KINDS = (
    ("poster_3_4", 900, 1200),
    ("cover_9_16", 1080, 1920),
    ("hero_16_9", 1920, 1080),
    ("title_treatment", 1200, 400),
)
FILM_ORGS = ("org_films", "org_suspended", "org_production", "org_limits")
PLACEMENTS = (("reels_9x16", "9:16"), ("feed_4x5", "4:5"), ("square_1x1", "1:1"))
ACTIONS = (
    "reveal",
    "argue",
    "slap",
    "kiss",
    "embrace",
    "cry",
    "kneel",
    "walk_away",
    "violence",
    "dance",
)
MUSCLES = ("core", "legs", "glutes", "back", "chest", "arms", "shoulders")
EQUIPMENT = ("mat", "dumbbells", "kettlebell", "band", "bench")
DIFFICULTIES = ("beginner", "intermediate", "advanced")


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _hash(value: Any) -> str:
    return hashlib.sha256(
        orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)
    ).hexdigest()[:16]


def _maybe(rng: random.Random, value: Any, p: float = 0.8) -> Any:
    return value if rng.random() < p else None


class _Seeder:
    def __init__(self, seed: int, now: float) -> None:
        self.rng = random.Random(seed)
        self.anchor = int(now // DAY * DAY)
        self.films: dict[str, Film] = {}
        self.episodes: dict[str, Episode] = {}
        self.licences: dict[tuple[str, str], Licence] = {}
        self.fixtures: dict[str, str | int] = {}

    def ago(self, days: float) -> int:
        return int(self.anchor - days * DAY)

    # -- films ---------------------------------------------------------------------------------

    def film(
        self,
        index: int,
        *,
        published_eps: int,
        planned: int | str | None = "auto",
        full: bool | None = None,
        protection: str = "private-encrypted",
        subtitles: tuple[str, ...] | None = None,
        published: bool = True,
        code: bool | None = None,
    ) -> Film:
        """One seeded film: slug `film-<index>`, so slugs are URL-safe and unique; tags with one
        main.

        Requirements: CAT-004, CAT-005, CAT-023.
        """
        rng = self.rng
        fid, slug = _uuid(rng), f"film-{index:03d}"
        full = rng.random() < 0.6 if full is None else full
        if planned == "auto":
            planned = _maybe(rng, published_eps + rng.choice((0, 0, 2, 4)), 0.7 if full else 0.3)
        assert planned is None or isinstance(planned, int)
        title = f"Sandbox Film {index:03d}"
        updated = self.ago(rng.uniform(1, 90))
        tags = (
            (
                {
                    "slug": "revenge",
                    "name": "Revenge",
                    "name_i18n": {"en": "Revenge", "es": "Venganza"},
                    "type": "genre",
                    "is_main": True,
                },
                {
                    "slug": "ceo",
                    "name": "CEO",
                    "name_i18n": {"en": "CEO"},
                    "type": "theme",
                    "is_main": False,
                },
                {
                    "slug": "hot",
                    "name": "Hot",
                    "name_i18n": {"en": "Hot"},
                    "type": "system",
                    "is_main": False,
                },
            )
            if full
            else ()
        )
        people = (
            (
                {
                    "name": "Ana Lead",
                    "role": "lead",
                    "description": "The heiress",
                    "avatar_url": f"https://img.delivery.sandbox/people/{index}-1.jpg",
                },
                {"name": "Bo Support", "role": "support", "description": None, "avatar_url": None},
            )
            if full
            else ()
        )
        images = (
            tuple(
                {
                    "kind": k,
                    "lang": "en" if k == "title_treatment" else None,
                    "url": f"https://img.delivery.sandbox/films/{slug}/{k}.jpg",
                    "width": w,
                    "height": h,
                }
                for k, w, h in IMAGE_KINDS
                if full or k == "poster_3_4"
            )
            if full or rng.random() < 0.5
            else ()
        )
        with_code = full or rng.random() < 0.9 if code is None else code
        record: dict[str, Any] = dict(
            id=fid,
            slug=slug,
            title=title,
            synopsis_short=f"Short synopsis {index}" if full else None,
            synopsis_full=f"Full synopsis of film {index}." if full else None,
            genres=tuple(rng.sample(GENRES, 2)) if full else (),
            language=rng.choice(("English", "en", "es")) if full else None,
            poster_url=f"https://img.delivery.sandbox/films/{slug}/poster.jpg" if full else None,
            display_order=index * 10,
            planned_episodes=planned,
            free_until_episode=rng.choice((0, 1, 3)) if full else None,
            audience=rng.choice(AUDIENCES) if full else None,
            form=rng.choice(FORMS) if full else None,
            setting=rng.choice(SETTINGS) if full else None,
            code=f"SB{index:06d}" if with_code else None,
            title_i18n={"en": title, "es": f"Película {index:03d}"}
            if full
            else ({"en": title} if rng.random() < 0.5 else {}),
            synopsis_short_i18n={"en": f"Short synopsis {index}"} if full else {},
            synopsis_i18n={"en": f"Full synopsis of film {index}."} if full else {},
            content_rating=rng.choice(RATINGS) if full else None,
            is_completed=None if planned is None else planned == published_eps,
            release_date=f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}" if full else None,
            default_lang=rng.choice(("en", "es", "pt-BR")) if full else None,
            tags=tags,
            people=people,
            trailer_vid=f"trailer{index:04d}" if full else None,
            images=images,
            materials=("poster_3_4", "cover_9_16") if full and rng.random() < 0.7 else (),
            published=published,
            film_status="published" if published else "draft",
            tier=rng.choice("SABCDF") if full else None,
            updated_at=updated,
        )
        eps = []
        for no in range(1, published_eps + 1):
            ready = rng.random() < 0.95
            eid = _uuid(rng)
            langs = (
                subtitles
                if subtitles is not None
                else tuple(sorted(rng.sample(LANGS, rng.randint(0, 3))))
            )
            eps.append(
                Episode(
                    id=eid,
                    film_id=fid,
                    episode_no=no,
                    title=f"Episode {no}" if rng.random() < 0.9 else None,
                    synopsis=_maybe(rng, f"Episode {no} of film {index}.", 0.3),
                    duration_ms=_maybe(rng, rng.randint(60, 180) * 1000, 0.95),
                    poster_url=_maybe(rng, f"https://img.delivery.sandbox/eps/{eid}.jpg", 0.7),
                    has_cover=rng.random() < 0.7,
                    vid=f"{eid[:8]}{no:03d}" if ready else None,
                    vid_ready=ready if rng.random() < 0.97 else None,
                    protection=protection,
                    stream_ready=ready,
                    subtitles=langs,
                    title_i18n={"en": f"Episode {no}"},
                    updated_at=updated,
                )
            )
        meta = {
            k: v for k, v in record.items() if k not in ("display_order", "published", "updated_at")
        }
        meta["episodes"] = [(e.id, e.title, e.subtitles) for e in eps]
        film = Film(
            **record,
            metadata_version=_hash(meta) if rng.random() < 0.95 else None,
            metadata_updated_at=updated,
        )
        if film.metadata_version is None:
            film = Film(**{**film.__dict__, "metadata_updated_at": None})
        self.films[fid] = film
        for e in eps:
            self.episodes[e.id] = e
        return film

    def replace_episode(self, film: Film, no: int, **changes: Any) -> Episode:
        old = next(e for e in self.episodes.values() if e.film_id == film.id and e.episode_no == no)
        new = Episode(**{**old.__dict__, **changes})
        self.episodes[old.id] = new
        return new

    def unrated_with_tier(self, films: list[Film]) -> list[Film]:
        """Give the first unrated series among `films` (a code, no `content_rating`) a quality
        `tier`, so an unrated series with a tier is served (Resources > Series detail: `tier` is
        not an age rating; CLI-053). No random draw, so the rest of the seed is unchanged."""
        film = next(f for f in films if f.code and f.content_rating is None and f.tier is None)
        tiered = Film(**{**film.__dict__, "tier": "C"})
        self.films[film.id] = tiered
        return [tiered if f.id == film.id else f for f in films]

    def licence(
        self,
        org: str,
        film: Film,
        state: LicenceState = LicenceState.ACTIVE,
        *,
        starts: int | None = None,
        ends: int | None = None,
        changed: int | None = None,
    ) -> None:
        self.licences[(org, film.id)] = Licence(
            state,
            self.ago(400) if starts is None else starts,
            ends,
            self.ago(100) if changed is None else changed,
        )

    def build_films(self) -> None:
        f = self.fixtures
        main = self.film(
            0, published_eps=12, planned=12, full=True, subtitles=("en", "es", "fr"), code=True
        )
        f["film_id"], f["film_slug"], f["series_code"] = main.id, main.slug, str(main.code)
        enc = self.replace_episode(main, 2, stream_ready=True, vid_ready=True, vid="main00002")
        f["episode_encrypted"], f["episode_encrypted_no"] = enc.id, enc.episode_no
        paged = self.film(1, published_eps=6, planned=10, full=True, code=True)
        f["episode_paged_film"], f["episode_last_no"], f["placeholder_episode_no"] = paged.id, 6, 8
        for no in range(1, 7):
            self.replace_episode(paged, no, stream_ready=True, vid_ready=True, vid=f"paged{no:04d}")
        long = self.film(2, published_eps=120, planned=None, full=True, code=True)
        f["series_code_long"] = str(long.code)
        signed = self.film(3, published_eps=4, full=True, protection="signed-url-only", code=True)
        f["episode_signed"] = self.replace_episode(
            signed, 1, stream_ready=True, vid_ready=True, vid="signed0001"
        ).id
        broken = self.film(4, published_eps=6, planned=6, full=True, code=True)
        self.replace_episode(broken, 1, stream_ready=True, vid_ready=True, vid="broken0001")
        f["episode_not_ready"] = self.replace_episode(
            broken, 2, stream_ready=False, vid=None, vid_ready=False
        ).id
        for no, failure, name in (
            (3, Failure.NO_PLAYABLE, "episode_no_playable"),
            (4, Failure.PROVIDER_TIMEOUT, "episode_provider_timeout"),
            (5, Failure.STREAM_ERROR, "episode_stream_error"),
            (6, Failure.INTERNAL_ERROR, "episode_internal_error"),
        ):
            f[name] = self.replace_episode(
                broken,
                no,
                stream_ready=True,
                vid_ready=True,
                vid=f"broken{no:04d}",
                failure=failure,
            ).id
        self.film(5, published_eps=2, planned=None, full=False, code=False)
        general = [self.film(i, published_eps=self.rng.randint(1, 10)) for i in range(6, N_FILMS)]
        general = self.unrated_with_tier(general)
        licensed = [self.films[k] for k in list(self.films)[:6]] + general
        for org in FILM_ORGS:
            for film in licensed:
                self.licence(org, film, ends=None if film.display_order % 20 else self.ago(-365))
        # Films with a licence problem for the film organisation (spec: Errors > Playback, reasons).
        specials = (
            ("episode_outside_window", dict(starts=self.ago(-10))),
            (
                "episode_entitlement_suspended",
                dict(state=LicenceState.SUSPENDED, changed=self.ago(60)),
            ),
            ("episode_streaming_disabled", dict(state=LicenceState.DISABLED, changed=self.ago(60))),
            ("episode_entitlement_not_found", None),
        )
        for offset, (name, licence) in enumerate(specials):
            film = self.film(N_FILMS + offset, published_eps=3, full=True, code=True)
            f[name] = self.replace_episode(
                film, 1, stream_ready=True, vid_ready=True, vid=f"lic{offset:04d}"
            ).id
            if licence is not None:
                self.licence("org_films", film, **licence)  # type: ignore[arg-type]
            else:
                f["series_code_unlicensed"] = str(film.code)
        withdrawn = self.film(N_FILMS + 4, published_eps=3, full=True, code=True)
        self.licence("org_films", withdrawn, ends=self.ago(5))
        f["series_code_withdrawn"] = str(withdrawn.code)
        old = self.film(N_FILMS + 5, published_eps=3, full=True, code=True)
        self.licence("org_films", old, ends=self.ago(40))
        draft = self.film(N_FILMS + 6, published_eps=2, full=True, code=True, published=False)
        self.licence("org_films", draft)
        f["film_id_unpublished"] = draft.id
        for film in licensed[:5]:  # a licence that ended long ago: no current licence
            self.licence("org_unlicensed", film, ends=self.ago(60))

    # -- playlists -----------------------------------------------------------------------------

    def build_playlists(
        self,
    ) -> tuple[
        dict[str, Category], dict[str, Clip], dict[str, Playlist], dict[str, frozenset[str]]
    ]:
        rng, f = self.rng, self.fixtures
        categories = {
            c.slug: c
            for c in (
                Category("strength", "Strength"),
                Category("yoga", "Yoga"),
                Category("cardio", "Cardio"),
                Category("mobility", "Mobility", withdrawn_at=self.ago(10)),
                Category("pilates-classic", "Pilates (old)", withdrawn_at=self.ago(45)),
            )
        }
        f["category_slug"], f["category_withdrawn"] = "strength", "mobility"
        clips = {}
        for i in range(220):
            cid = _uuid(rng)
            clips[cid] = Clip(
                cid,
                f"Clip {i:03d}",
                _maybe(rng, f"Clip {i} description", 0.5),
                _maybe(rng, rng.choice((12, 20, 29, 30, 45, 90, 300)) * 1000, 0.95),
                tuple(rng.sample(MUSCLES, rng.randint(0, 3))),
                tuple(rng.sample(EQUIPMENT, rng.randint(0, 2))),
                _maybe(rng, rng.choice(DIFFICULTIES)),
                _maybe(rng, rng.randint(5, 120)),
                _maybe(rng, f"OC-{i:05d}", 0.6),
                rng.random() < 0.8,
            )
        pool = list(clips)
        playlists: dict[str, Playlist] = {}
        slugs = ("strength", "yoga", "cardio", "mobility", "pilates-classic")
        for i in range(75):
            code = f"PL{i:04d}"
            cat = slugs[i % 3] if i < 66 else slugs[3 + i % 2]
            withdrawn = self.ago(5) if i == 60 else self.ago(40) if i == 61 else None
            n = 130 if i == 7 else rng.randint(3, 8)
            chosen = tuple(pool[(i * 3 + k) % len(pool)] for k in range(n))
            meta = {"code": code, "title": f"Playlist {i}", "clips": chosen}
            playlists[code] = Playlist(
                code,
                f"Playlist {i:02d}",
                _maybe(rng, f"About playlist {i}", 0.6),
                cat,
                (f"G{i % 4}", f"Group {i % 4}") if i % 5 else None,
                chosen,
                self.ago(rng.uniform(1, 60)) if withdrawn is None else withdrawn,
                withdrawn,
                _hash(meta),
            )
        granted = frozenset(c for i, c in enumerate(playlists) if i % 3 != 2)
        f["playlist_code"], f["playlist_code_not_granted"], f["playlist_code_withdrawn"] = (
            "PL0000",
            "PL0002",
            "PL0060",
        )
        other = frozenset(c for i, c in enumerate(playlists) if i % 3 != 1)  # videos_other role
        grants = {
            "org_videos": granted,
            "org_limits_videos": granted,
            **dict.fromkeys(LIMITS_VIDEOS_TWINS, granted),
            "org_suspended": granted,
            "org_videos_other": other,
        }
        return categories, clips, playlists, grants

    # -- open videos ---------------------------------------------------------------------------

    def build_videos(
        self,
    ) -> tuple[dict[str, Video], dict[str, Collection], dict[str, tuple[str, ...]]]:
        rng, f = self.rng, self.fixtures
        videos: dict[str, Video] = {}
        sizes = (
            ("col-strength", 100),
            ("col-yoga", 80),
            ("col-cardio", 60),
            ("col-locked", 20),
            ("col-draft", 8),
            ("col-broken", 5),
        )
        collections: dict[str, Collection] = {}
        n = 0
        for code, size in sizes:
            ids = []
            for _ in range(size):
                vid = _uuid(rng)
                videos[vid] = Video(
                    vid,
                    f"video-{n:04d}",
                    f"Video {n:04d}",
                    _maybe(rng, f"ORD-{n:05d}", 0.7),
                    _maybe(rng, rng.randint(20, 900) * 1000, 0.95),
                    tuple(rng.sample(MUSCLES, rng.randint(0, 3))),
                    tuple(rng.sample(EQUIPMENT, rng.randint(0, 2))),
                    _maybe(rng, rng.choice(DIFFICULTIES)),
                    _maybe(rng, rng.randint(5, 200)),
                    has_720=rng.random() < 0.7,
                    ready=rng.random() < 0.93 or n < 5,
                )
                ids.append(vid)
                n += 1
            collections[code] = Collection(
                code,
                code.split("-")[1].title(),
                code != "col-draft",
                tuple(ids),
                code == "col-broken",
            )
        strength, yoga = collections["col-strength"], collections["col-yoga"]
        shared = yoga.videos[0]
        collections["col-strength"] = Collection(
            strength.code, strength.title, True, (*strength.videos, shared)
        )
        f["collection_code"], f["collection_not_granted"], f["collection_broken"] = (
            "col-strength",
            "col-locked",
            "col-broken",
        )
        f["video_id"] = strength.videos[0]
        f["video_two_collections"] = shared
        f["video_not_granted"] = collections["col-locked"].videos[0]
        broken = strength.videos[1]
        videos[broken] = Video(**{**videos[broken].__dict__, "broken": True, "ready": True})
        f["video_broken"] = broken
        for vid in strength.videos[2:4]:
            videos[vid] = Video(**{**videos[vid].__dict__, "has_720": False, "ready": True})
        videos[strength.videos[4]] = Video(
            **{**videos[strength.videos[4]].__dict__, "archived": True}
        )
        videos[shared] = Video(**{**videos[shared].__dict__, "ready": True, "has_720": True})
        unready = [v for v in strength.videos[5:] if not videos[v].ready]
        if not unready:  # another seed drew none: make one
            unready = [strength.videos[5]]
            videos[unready[0]] = Video(**{**videos[unready[0]].__dict__, "ready": False})
        f["video_not_ready"] = unready[0]  # granted, published, not playable yet
        grants = {
            "org_videos": ("col-strength", "col-yoga", "col-cardio", "col-draft", "col-broken"),
            "org_limits_videos": ("col-strength",),
            **dict.fromkeys(LIMITS_VIDEOS_TWINS, ("col-strength",)),
            "org_suspended": ("col-strength",),
            "org_videos_other": ("col-yoga",),
        }
        return videos, collections, grants

    # -- creatives -----------------------------------------------------------------------------

    def creative(self, i: int, org: str, status: str, *, final: bool, **over: Any) -> Creative:
        rng = self.rng
        film = (
            rng.choice([x for x in self.films.values() if x.published][:60])
            if rng.random() < 0.9
            else None
        )
        placement = rng.choice(PLACEMENTS) if rng.random() < 0.85 else None
        scenes = []
        t = 0
        for _ in range(rng.randint(0, 4) if film else 0):
            d = rng.randint(1, 8) * 1000
            scenes.append(
                {
                    "episode_no": _maybe(rng, rng.randint(1, 5), 0.9),
                    "start_ms": t,
                    "end_ms": t + d,
                    "duration_ms": d,
                    "action": _maybe(rng, rng.choice(ACTIONS), 0.8),
                    "line": _maybe(rng, f"Line {i}", 0.6),
                }
            )
            t += d
        created = self.ago(rng.uniform(20, 120))
        updated = (
            self.ago(i // 3 * 0.1 + 0.01) if "updated_at" not in over else over.pop("updated_at")
        )
        values: dict[str, Any] = dict(
            id=_uuid(rng),
            code=_maybe(rng, f"CR-{i:05d}", 0.8),
            org_id=org,
            name=f"Creative {i:03d}",
            status=status,
            created_at=created,
            approved_at=_maybe(rng, created + 3600, 0.95),
            updated_at=updated,
            created_by=_maybe(
                rng, {"email": f"maker{i}@example.test", "name": _maybe(rng, f"Maker {i}")}, 0.8
            ),
            film_id=film.id if film else None,
            episodes=tuple(sorted({s["episode_no"] for s in scenes if s["episode_no"]})),
            placement=placement[0] if placement else None,
            scenes=tuple(scenes),
            formula=_maybe(rng, rng.choice(("cliffhanger", "reveal-first", "three-beat")), 0.6),
            rights_ends_at=_maybe(rng, self.ago(-rng.randint(30, 400)), 0.6),
            parent_id=None,
            final_ready=final,
            share_token="".join(rng.choice("abcdefghijkmnopqrstuvwxyz23456789") for _ in range(24))
            if final
            else None,
        )
        values.update(over)
        return Creative(**values)

    def build_creatives(self) -> dict[str, Creative]:
        f = self.fixtures
        out: list[Creative] = []
        for i in range(130):
            status = "pushed" if i % 3 else "approved"
            out.append(
                self.creative(i, "org_films", status, final=status == "pushed" or i % 2 == 0)
            )
        out[1] = Creative(
            **{**out[1].__dict__, "status": "pushed", "final_ready": True, "parent_id": out[0].id}
        )
        f["creative_id"] = out[1].id
        out[3] = Creative(
            **{**out[3].__dict__, "status": "approved", "final_ready": False, "share_token": None}
        )
        f["creative_not_ready"] = out[3].id
        out[4] = Creative(
            **{
                **out[4].__dict__,
                "status": "pushed",
                "final_ready": True,
                "rights_ends_at": self.ago(10),
                "share_token": out[4].share_token or "rightsended0000000000000",
            }
        )
        f["creative_rights_ended"] = out[4].id
        out[5] = Creative(
            **{
                **out[5].__dict__,
                "status": "pushed",
                "final_ready": True,
                "link_failure": True,
                "rights_ends_at": None,
                "share_token": out[5].share_token or "linkfailure0000000000000",
            }
        )
        f["creative_link_failure"] = out[5].id
        for i, status in enumerate(("draft", "draft", "rejected")):
            out.append(self.creative(200 + i, "org_films", status, final=False))
        f["creative_hidden"] = out[-1].id
        for i in range(5):
            out.append(self.creative(300 + i, "org_production", "pushed", final=True))
        f["creative_other_org"] = out[-1].id
        return {c.id: c for c in out}

    def build_changing_film(self) -> dict[str, Creative]:
        """A film licensed to the `films_changes` organisation alone, and creatives of that
        organisation made from it (`changes_creative_id` and two more): what the state model
        and the walk scenarios change beside the other scenarios (its restore puts them back).
        Drawn after everything else, so nothing else moves."""
        f = self.fixtures
        film = self.film(N_FILMS + 7, published_eps=4, planned=4, full=True, code=True)
        f["changes_film_id"] = film.id
        f["changes_episode"] = self.replace_episode(
            film, 2, stream_ready=True, vid_ready=True, vid="changes0002"
        ).id
        self.licence(CHANGES_ORGANISATION, film)
        creative = self.creative(
            400, CHANGES_ORGANISATION, "pushed", final=True, film_id=film.id, code="CR-00400"
        )
        if creative.approved_at is None:  # every first moment set, as a pushed one has
            creative = Creative(**{**creative.__dict__, "approved_at": creative.created_at + 3600})
        f["changes_creative_id"] = creative.id
        made = {creative.id: creative}
        for i in (401, 402):  # a feed of several pages at limit=1 (the walk scenarios)
            more = self.creative(i, CHANGES_ORGANISATION, "approved", final=False, film_id=film.id)
            made[more.id] = more
        return made


def build_store(seed: int, now: float) -> Store:
    s = _Seeder(seed, now)
    s.build_films()
    categories, clips, playlists, playlist_grants = s.build_playlists()
    videos, collections, collection_grants = s.build_videos()
    creatives = s.build_creatives()
    creatives.update(s.build_changing_film())
    return Store(
        films=s.films,
        episodes=s.episodes,
        licences=s.licences,
        categories=categories,
        clips=clips,
        playlists=playlists,
        playlist_grants=playlist_grants,
        videos=videos,
        collections=collections,
        collection_grants=collection_grants,
        creatives=creatives,
        fixtures=s.fixtures,
        anchor=s.anchor,
    )
