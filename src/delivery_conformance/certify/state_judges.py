"""What a partner's app shows or decides, judged on its exported state against what it was
served (pure: journal entries and exports in, results out).

The proxy keeps, beside each parsed answer, the few served facts these judges compare with
(`served_facts`): per film its `free_until_episode`, `default_lang`, `language`, `poster_url`
and `content_rating`; per episode its `poster_url`; per series detail its `content_rating` and
`tier`; per playlist its `granted`; per ticket its `protection`. The export fields are optional
(docs/certification.md, "State format"): a plan whose export leaves a field out gets "not
exercised" for the rule it shows, never "passed".

Spec: Resources > Film (`free_until_episode`, `default_lang`, `content_rating`), Episode
(`poster_url`), Series detail (`tier`), Playlist list item (`granted`, `group`); Endpoints >
POST /playback (`protection`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from delivery_conformance.certify.journal import Entry
from delivery_conformance.certify.observation import (
    FAILED,
    NOT_EXERCISED,
    PASSED,
    Observation,
    Verdict,
)

__all__ = ["STATE_JUDGES", "served_facts"]


PROTECTED = "private-encrypted"
# Resources > Series detail, `images[]`: the kinds the spec names (others are skipped)
IMAGE_KINDS = frozenset({"poster_3_4", "cover_9_16", "hero_16_9", "title_treatment"})
_FILM_FACTS = ("free_until_episode", "default_lang", "language", "poster_url", "content_rating",
               "title_i18n")  # fmt: skip


def _rows(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def served_facts(path: str, body: Any) -> dict[str, Any]:
    """The facts of one parsed 200 answer the state judges compare with (empty for others)."""
    if not isinstance(body, dict):
        return {}
    facts: dict[str, Any] = {}
    if path.endswith("/catalog") and isinstance(body.get("films"), list):
        facts["served_films"] = {
            f["id"]: {k: f.get(k) for k in _FILM_FACTS}
            for f in _rows(body["films"]) if isinstance(f.get("id"), str)
        }  # fmt: skip
        facts["served_episodes"] = {
            f"{e['film_id']}/{e['episode_no']}": e.get("poster_url")
            for e in _rows(body.get("episodes"))
            if isinstance(e.get("film_id"), str) and isinstance(e.get("episode_no"), int)
        }  # fmt: skip
    data = body.get("data")
    if "/series/" in path and isinstance(data, dict) and isinstance(data.get("code"), str):
        facts["served_series"] = {
            data["code"]: {
                "content_rating": data.get("content_rating"),
                "tier": data.get("tier"),
                "image_kinds": sorted({str(i.get("kind")) for i in _rows(data.get("images"))}),
                "tag_slugs": sorted({str(t.get("slug")) for t in _rows(data.get("tags"))}),
            }
        }
    if path.endswith("/creatives") and isinstance(data, dict):
        facts["served_targets"] = {
            str(i["creative_id"]): [_target(i), i.get("placement")]
            for i in _rows(data.get("items")) if "creative_id" in i
        }  # fmt: skip
    if path.endswith("/playlists") and isinstance(data, dict):
        facts["served_granted"] = {
            str(i["code"]): i.get("granted") for i in _rows(data.get("items")) if "code" in i
        }
    if path.endswith("/playback"):
        tickets = _rows(body.get("items")) if isinstance(body.get("items"), list) else [body]
        served = [[t.get("episode_id"), t.get("protection")] for t in tickets if "protection" in t]
        if served:
            facts["served_protection"] = served
    return facts


def _target(record: Mapping[str, Any]) -> list[Any] | None:
    final = record.get("final")
    target = final.get("target") if isinstance(final, dict) else None
    return [target.get("width"), target.get("height")] if isinstance(target, dict) else None


def _result(status: str, expected: str, actual: str = "", entries: tuple[Entry, ...] = ()
            ) -> Verdict:  # fmt: skip
    return status, expected, actual, entries


def _served(obs: Observation, name: str) -> tuple[dict[str, Any], list[Entry]]:
    """One served fact merged over the scenario's answers in order (the later answer wins)."""
    merged: dict[str, Any] = {}
    entries = []
    for entry in sorted(obs.entries, key=lambda e: e.started):
        value = entry.extra.get(name)
        if entry.status == 200 and isinstance(value, dict):
            merged.update(value)
            entries.append(entry)
    return merged, entries


def _export(obs: Observation) -> Any:
    return obs.runs[-1].export if obs.runs else None


def _at(data: Any, dotted: str) -> list[dict[str, Any]]:
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return _rows(data)


def _films(obs: Observation) -> list[dict[str, Any]]:
    return _at(_export(obs), "catalog.films")


def _verdict(
    expected: str, field: str, judged: int, wrong: list[str], entries: list[Entry], why: str = ""
) -> Verdict:
    if wrong:
        return _result(FAILED, expected, f"{len(wrong)} of {judged} wrong, e.g. {wrong[0]}",
                           tuple(entries[-1:]))  # fmt: skip
    if not judged:
        return _result(NOT_EXERCISED, expected, why or f"no exported `{field}` to judge")
    return _result(PASSED, expected, f"{judged} judged")


def free_episodes(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported episode's `free` follows its film's `free_until_episode` as served: free up
    to and including it, none when 0, every episode paid when null (CAT-077)."""
    expected = "episode `free` exactly when episode_no <= the film's free_until_episode"
    films, entries = _served(obs, "served_films")
    judged, wrong, kinds = 0, [], set()
    for film in _films(obs):
        served = films.get(str(film.get("id")))
        if served is None:
            continue
        limit = served.get("free_until_episode")
        for episode in _rows(film.get("episodes")):
            number = episode.get("episode_no")
            if "free" not in episode or not isinstance(number, int):
                continue
            want = isinstance(limit, int) and not isinstance(limit, bool) and number <= limit
            kinds.add("null" if limit is None else "0" if limit == 0 else "n")
            judged += 1
            if episode["free"] is not want:
                wrong.append(f"episode {number} with free_until_episode {limit}: "
                             f"free={episode['free']!r}")  # fmt: skip
    if judged and len(kinds) < 2 and not wrong:
        return _result(NOT_EXERCISED, expected, "every film served the same kind of "
                           "free_until_episode")  # fmt: skip
    return _verdict(expected, "free", judged, wrong, entries)


def audio_language(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported film's `audio_language` is its `default_lang` when served, preferred over
    `language`; with `default_lang` null, `language` or nothing (CLI-051)."""
    expected = "audio_language = default_lang (language only when default_lang is null)"
    films, entries = _served(obs, "served_films")
    judged, differ, wrong = 0, 0, []
    for film in _films(obs):
        served = films.get(str(film.get("id")))
        if served is None or "audio_language" not in film:
            continue
        default, language, shown = (
            served["default_lang"],
            served["language"],
            film["audio_language"],
        )
        judged += 1
        if default:
            differ += default != language
            if shown != default:
                wrong.append(f"film {film.get('id')}: default_lang {default!r}, language "
                             f"{language!r}, shown {shown!r}")  # fmt: skip
        elif shown not in (language, None):
            wrong.append(f"film {film.get('id')}: shown {shown!r}, served language {language!r}")
    if judged and not differ and not wrong:
        return _result(NOT_EXERCISED, expected, "no film served a default_lang that differs "
                           "from its language")  # fmt: skip
    return _verdict(expected, "audio_language", judged, wrong, entries)


def episode_poster(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported episode's `poster_url` is its own as served, or the film's when its own is
    null (CLI-052)."""
    expected = "episode poster_url = its own, else the film's poster_url"
    films, entries = _served(obs, "served_films")
    episodes, _ = _served(obs, "served_episodes")
    judged, fallbacks, wrong = 0, 0, []
    for film in _films(obs):
        served = films.get(str(film.get("id")))
        if served is None:
            continue
        for episode in _rows(film.get("episodes")):
            key = f"{film.get('id')}/{episode.get('episode_no')}"
            if "poster_url" not in episode or key not in episodes:
                continue
            own = episodes[key]
            want = own or served.get("poster_url")
            judged += 1
            fallbacks += not own and bool(want)
            if episode["poster_url"] != want:
                wrong.append(f"episode {key}: own poster {'set' if own else 'null'}, shown "
                             f"{episode['poster_url']!r}")  # fmt: skip
    if judged and not fallbacks and not wrong:
        return _result(NOT_EXERCISED, expected, "no episode needed the film's poster")
    return _verdict(expected, "poster_url", judged, wrong, entries)


def i18n_fallback(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported film's `title_shown` is its `title_i18n` text in the exported
    `display_lang`, or the `en` text when that key is missing (CLI-058). Exercised when some
    served film had `en` but not the display language."""
    expected = "title_shown in display_lang, else the en text"
    films, entries = _served(obs, "served_films")
    lang = _export(obs).get("catalog", {}).get("display_lang") if _export(obs) else None
    judged, fallbacks, wrong = 0, 0, []
    for film in _films(obs):
        served = films.get(str(film.get("id")))
        texts = served.get("title_i18n") if served else None
        if not isinstance(lang, str) or not isinstance(texts, dict) or "title_shown" not in film:
            continue
        if lang in texts:
            want = texts[lang]
        elif "en" in texts:
            want, fallbacks = texts["en"], fallbacks + 1
        else:
            continue  # neither: the spec names no text to show
        judged += 1
        if film["title_shown"] != want:
            wrong.append(f"film {film.get('id')}: {lang!r} {'missing' if lang not in texts else ''}"
                         f" shown {film['title_shown']!r}, want {want!r}")  # fmt: skip
    if not wrong and judged and not fallbacks:
        return _result(NOT_EXERCISED, expected, f"no served film lacked {lang!r} (export a "
                       "display_lang other than en)")  # fmt: skip
    return _verdict(expected, "title_shown", judged, wrong, entries)


def final_size(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported creative's `final_size` is the served `final.target` width and height,
    whatever its `placement` (CLI-057). Exercised when a placement other than reels_9x16 came."""
    expected = "final_size = final.target [width, height], not derived from placement"
    targets, entries = _served(obs, "served_targets")
    judged, other, wrong = 0, 0, []
    for item in _at(_export(obs), "creatives.items"):
        served = targets.get(str(item.get("creative_id")))
        if served is None or served[0] is None or "final_size" not in item:
            continue
        judged += 1
        other += served[1] not in (None, "reels_9x16")
        if list(item["final_size"] or ()) != served[0]:
            wrong.append(f"creative {item.get('creative_id')} placed {served[1]}: final_size "
                         f"{item['final_size']}, target {served[0]}")  # fmt: skip
    if judged and not other and not wrong:
        return _result(NOT_EXERCISED, expected, "every creative served was placed reels_9x16")
    return _verdict(expected, "final_size", judged, wrong, entries)


def age_rating(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported series item's `age_rating` is the `content_rating` its detail served (null
    when not rated), never its quality `tier` (CLI-053)."""
    expected = "age_rating = the served content_rating, never the tier"
    series, entries = _served(obs, "served_series")
    judged, wrong = 0, []
    for item in _at(_export(obs), "series.items"):
        served = series.get(str(item.get("code")))
        if served is None or "age_rating" not in item:
            continue
        judged += 1
        if item["age_rating"] != served["content_rating"]:
            tier = " (its tier)" if item["age_rating"] == served["tier"] else ""
            rating, shown = served["content_rating"], item["age_rating"]
            wrong.append(f"series {item.get('code')}: content_rating {rating!r}, shown "
                         f"{shown!r}{tier}")  # fmt: skip
    return _verdict(expected, "age_rating", judged, wrong, entries)


def series_artwork_and_tags(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported series item shows no image kind outside the four the spec names (unknown
    kinds skipped), and maps its tags by `slug`: its `tags` are the served slugs (CLI-036).
    Exercised when a served detail had an image kind the spec does not name."""
    expected = "no unknown image kind shown; tags mapped by slug"
    series, entries = _served(obs, "served_series")
    judged, odd, wrong = 0, 0, []
    for item in _at(_export(obs), "series.items"):
        served = series.get(str(item.get("code")))
        if served is None or "artwork" not in item:
            continue
        judged += 1
        unknown = set(served["image_kinds"]) - IMAGE_KINDS
        odd += bool(unknown)
        shown = set(item["artwork"] or ()) - IMAGE_KINDS
        if shown:
            wrong.append(f"series {item.get('code')}: shows image kinds {sorted(shown)}")
        elif "tags" in item and sorted(item["tags"] or ()) != served["tag_slugs"]:
            wrong.append(f"series {item.get('code')}: tags {sorted(item['tags'] or ())[:3]}, "
                         f"served slugs {served['tag_slugs'][:3]}")  # fmt: skip
    if judged and not odd and not wrong:
        return _result(NOT_EXERCISED, expected, "no served image kind was unknown")
    return _verdict(expected, "artwork", judged, wrong, entries)


def playlist_licensed(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each exported playlist's `licensed` is its own `granted` as served, whatever its `group`
    or Category (CLI-054). Exercised only when both granted and not granted playlists came."""
    expected = "licensed exactly when the playlist's own granted is true"
    granted, entries = _served(obs, "served_granted")
    judged, wrong = 0, []
    for item in _at(_export(obs), "playlists.items"):
        code = str(item.get("code"))
        if code not in granted or "licensed" not in item:
            continue
        judged += 1
        if item["licensed"] is not (granted[code] is True):
            wrong.append(f"playlist {code}: granted {granted[code]!r}, licensed "
                         f"{item['licensed']!r}")  # fmt: skip
    if judged and len(set(granted.values())) < 2 and not wrong:
        return _result(NOT_EXERCISED, expected, "every playlist served had the same granted")
    return _verdict(expected, "licensed", judged, wrong, entries)


def sellable_only_encrypted(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """No exported ticket is `sellable_as_paid` unless the protection served for it is
    `private-encrypted` (PLAY-097); an unknown protection value is not that."""
    expected = "sellable_as_paid only on a private-encrypted ticket"
    entries = [e for e in obs.entries if e.status == 200 and e.extra.get("served_protection")]
    served: dict[Any, set[Any]] = {}
    for entry in entries:
        for episode, protection in entry.extra["served_protection"]:
            served.setdefault(episode, set()).add(protection)
    everything = {p for values in served.values() for p in values}
    judged, wrong = 0, []
    for ticket in _at(_export(obs), "playback.tickets"):
        if "sellable_as_paid" not in ticket or ticket.get("status") != 200:
            continue
        protections = served.get(ticket.get("episode_id"), everything)
        if not protections:
            continue
        judged += 1
        if ticket["sellable_as_paid"] is True and protections != {PROTECTED}:
            wrong.append(f"episode {ticket.get('episode_id')}: protection "
                         f"{sorted(map(str, protections))}, sellable_as_paid true")  # fmt: skip
    return _verdict(expected, "sellable_as_paid", judged, wrong, entries,
                    "no issued ticket exported with sellable_as_paid")  # fmt: skip


STATE_JUDGES: dict[str, Callable[[Observation, Mapping[str, Any]], Verdict]] = {
    "free_episodes": free_episodes,
    "audio_language": audio_language,
    "episode_poster": episode_poster,
    "age_rating": age_rating,
    "playlist_licensed": playlist_licensed,
    "series_artwork_and_tags": series_artwork_and_tags,
    "i18n_fallback": i18n_fallback,
    "final_size": final_size,
    "sellable_only_encrypted": sellable_only_encrypted,
}
