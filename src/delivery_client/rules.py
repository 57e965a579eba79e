"""Small pure rules a client applies to what it received (no I/O, `now` passed in)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "PROTECTED",
    "RIGHTS_GRACE",
    "age_rating",
    "artwork",
    "audio_language",
    "episode_poster",
    "final_size",
    "i18n_text",
    "is_free",
    "licensed",
    "may_sell_paid",
    "usable",
]

PROTECTED = "private-encrypted"
RIGHTS_GRACE = 86_400  # seconds: the whole last day of export rights is included


def is_free(film: Mapping[str, Any], episode_no: int) -> bool:
    """Film `free_until_episode` (Resources > Film; CAT-077): episodes up to and including it are
    free, 0 means none, null means every episode is paid; a non-integer counts as null."""
    limit = film.get("free_until_episode")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return False
    return 1 <= episode_no <= limit


def may_sell_paid(ticket: Mapping[str, Any]) -> bool:
    """POST /playback (PLAY-097): a paid episode is sold only on a `private-encrypted` ticket;
    an unknown protection value is not that."""
    return ticket.get("protection") == PROTECTED


def usable(creative: Mapping[str, Any], now: float) -> bool:
    """Creative record `rights.ends_at` (CLI-034): the whole last day is included, so the
    creative is usable until `ends_at` + 86400; null means no end date on record."""
    rights = creative.get("rights")
    ends_at = rights.get("ends_at") if isinstance(rights, Mapping) else None
    if not isinstance(ends_at, int) or isinstance(ends_at, bool):
        return True
    return now < ends_at + RIGHTS_GRACE


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def audio_language(film: Mapping[str, Any]) -> str | None:
    """Film `default_lang` (Resources > Film; CLI-051): the audio language shown is
    `default_lang`, preferred over the free-text `language`, which is shown only when
    `default_lang` is null."""
    return _text(film.get("default_lang")) or _text(film.get("language"))


def episode_poster(episode: Mapping[str, Any], film: Mapping[str, Any]) -> str | None:
    """Episode `poster_url` (Resources > Episode; CLI-052): the episode's own image, or the
    film's `poster_url` when it is null; `poster_uri` is a reference, never shown."""
    return _text(episode.get("poster_url")) or _text(film.get("poster_url"))


def age_rating(record: Mapping[str, Any]) -> str | None:
    """The age rating shown for a film or a series is its `content_rating` (null: not rated);
    a series `tier` is a quality tier, never an age rating (Resources > Series; CLI-053)."""
    return _text(record.get("content_rating"))


def licensed(item: Mapping[str, Any]) -> bool:
    """A playlist is offered only when its own `granted` is true (GET /playlists: the whole
    library is listed; `group` is a filter label, not a unit of licence; CLI-054)."""
    return item.get("granted") is True


def artwork(detail: Mapping[str, Any]) -> list[str]:
    """The artwork kinds the app shows for a stored series detail: the images kept, whose kinds
    are the known ones (unknown kinds were skipped when the detail was stored; CLI-036)."""
    images = detail.get("images")
    return sorted(
        {str(i["kind"]) for i in images if isinstance(i, Mapping) and "kind" in i}
        if isinstance(images, list)
        else set()
    )


def i18n_text(record: Mapping[str, Any], field: str, lang: str) -> str | None:
    """A `*_i18n` object read for the app's language (Resources > Film, `title_i18n`; CLI-058): a
    missing key means no text in that language, so the `en` text is shown; an object with
    neither gives nothing."""
    texts = record.get(field)
    if not isinstance(texts, Mapping):
        return None
    return _text(texts.get(lang)) or _text(texts.get("en"))


def final_size(creative: Mapping[str, Any]) -> list[int] | None:
    """The final video's [width, height] from `final.target`, which does not follow `placement`
    (Resources > Creative record; CLI-057); None when the record has no target."""
    final = creative.get("final")
    target = final.get("target") if isinstance(final, Mapping) else None
    if not isinstance(target, Mapping):
        return None
    width, height = target.get("width"), target.get("height")
    return [width, height] if isinstance(width, int) and isinstance(height, int) else None
