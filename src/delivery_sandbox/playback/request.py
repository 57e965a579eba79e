"""The body of POST /playback, parsed and validated, pure (spec: POST /playback; Errors > Playback).

`parse` turns the raw body into a `PlaybackRequest` (single form, batch form A with `episodes`,
batch form B with an anchor and `next`) or a `BodyError` naming the whole-request 400:

- 400 without `error_code`: the body is not a JSON object, or there is neither `episode_id` nor
  `film_ref` with an `episode_no` that is a whole JSON number of 1 or more;

A `viewer_ref` longer than 256 characters, or not a string, is ignored: the request is served
without reuse (docs/reading-of-the-spec.md (PLAY-024)).
- 400 `invalid_request`: one device value without the other; a malformed batch;
- 400 `invalid_device_info` with `fields` naming the rejected device fields (or, under the
  `fields_as_values` rule of a legal variant, listing the rejected values).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from delivery_sandbox.playback.admission import IntentClass, classify_intent, recorded_intent

__all__ = [
    "NULL_WORDS",
    "BodyError",
    "BodyRules",
    "ItemRequest",
    "PlaybackRequest",
    "parse",
]

# spec: POST /playback, union_info: values that only look like a device id.
NULL_WORDS = frozenset({"(null)", "null", "nil", "undefined", "nan", "<null>", "none"})
DEVICE_MIN = 8
VIEWER_REF_MAX = 256
MAX_EPISODES = 3
MAX_NEXT = 2
EPISODE_FIELDS = ("episode_id", "film_ref", "episode_no")
UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")

MSG_NOT_JSON = "body must be a JSON object"
MSG_NO_EPISODE = "send episode_id, or film_ref with a numeric episode_no"
MSG_DEVICE_PAIR = "send union_info and drm_kek together"
MSG_DEVICE_INFO = "a device value looks empty or is too short"
MSG_BATCH_SIZE = "episodes must hold 1 to 3 items"
MSG_BATCH_ITEM = "every item of episodes needs episode_id, or film_ref with episode_no"
MSG_BATCH_MIXED = "episodes cannot be combined with top-level episode fields or next"
MSG_NEXT = "next must be a whole number from 0 to 2, with an anchor episode"


@dataclass(frozen=True)
class BodyRules:
    """Validation knobs; the defaults follow the spec, faults change them."""

    trim_device_values: bool = True
    null_words_any_case: bool = True
    later_items_default: str = "prefetch"
    next_items_intent: str = "prefetch"  # how items added by `next` are recorded (PLAY-038)
    fields_as_values: bool = False  # `fields` lists the rejected values (variant readings.py)
    episode_id_uuid_only: bool = False  # a non-UUID episode_id is no episode (variant)


@dataclass(frozen=True)
class BodyError:
    error: str
    error_code: str | None = None
    fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class ItemRequest:
    """One asked-for ticket. `next_offset` > 0: the anchor's episode_no plus that offset."""

    echo: dict[str, Any]
    episode_id: str | None
    film_ref: str | None
    episode_no: int | float | None
    intent: str  # recorded: play, prefetch or unknown
    next_offset: int = 0

    @property
    def intent_class(self) -> IntentClass:
        return classify_intent(self.intent)

    @property
    def ident(self) -> tuple[str, ...]:
        """How the episode was asked for, for the reuse key."""
        if self.episode_id is not None:
            return ("episode_id", self.episode_id, str(self.next_offset))
        return ("film_ref", str(self.film_ref), repr(self.episode_no), str(self.next_offset))


@dataclass(frozen=True)
class PlaybackRequest:
    items: tuple[ItemRequest, ...]
    batch: bool
    union_info: str | None
    drm_kek: str | None
    viewer_ref: str | None

    @property
    def has_device(self) -> bool:
        return self.union_info is not None


Anchor = tuple[str | None, str | None, int | float | None]


def _episode_no(value: object) -> int | None:
    """A JSON number that is a whole number of 1 or more.

    docs/reading-of-the-spec.md (PLAY-010, PLAY-030). (PLAY-009)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value < 1 or value != int(value):
        return None
    return int(value)


def _episode_of(obj: dict[str, Any], rules: BodyRules) -> Anchor | None:
    """(episode_id, film_ref, episode_no) with episode_id taking precedence, or None (also for a
    non-UUID episode_id when the rules read it as no episode id).

    Requirements: PLAY-005, PLAY-006, PLAY-007, PLAY-008, PLAY-069.
    """
    episode_id = obj.get("episode_id")
    if isinstance(episode_id, str):
        if rules.episode_id_uuid_only and not UUID.fullmatch(episode_id):
            return None
        return episode_id, None, None
    film_ref, episode_no = obj.get("film_ref"), _episode_no(obj.get("episode_no"))
    if isinstance(film_ref, str) and episode_no is not None:
        return None, film_ref, episode_no
    return None


def _echo(episode: Anchor, intent: str) -> dict[str, Any]:
    episode_id, film_ref, episode_no = episode
    if episode_id is not None:
        return {"episode_id": episode_id, "intent": intent}
    return {"film_ref": film_ref, "episode_no": episode_no, "intent": intent}


def _device_rejected(value: object, rules: BodyRules) -> bool:
    """A device value shorter than 8 once trimmed, or a null-like word in any case, is refused.

    Requirements: PLAY-013, PLAY-014, PLAY-015, PLAY-016, PLAY-017, PLAY-018.
    """
    if not isinstance(value, str):
        return True
    text = value.strip() if rules.trim_device_values else value
    word = text.lower() if rules.null_words_any_case else text
    return len(text) < DEVICE_MIN or word in NULL_WORDS


def _shown(value: object) -> str:
    """A rejected device value as `fields` lists it: the string, or the JSON of another value."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _batch_a(
    body: dict[str, Any], top_intent: str, rules: BodyRules
) -> list[ItemRequest] | BodyError:
    """Form A: 1 to 3 `episodes`, alone; item 0 takes the top-level intent, later ones `prefetch`.

    Requirements: PLAY-026, PLAY-028, PLAY-029, PLAY-031, PLAY-039.
    """
    if any(name in body for name in (*EPISODE_FIELDS, "next")):
        return BodyError(MSG_BATCH_MIXED, "invalid_request")
    episodes = body["episodes"]
    if not isinstance(episodes, list) or not 1 <= len(episodes) <= MAX_EPISODES:
        return BodyError(MSG_BATCH_SIZE, "invalid_request")
    items: list[ItemRequest] = []
    for index, entry in enumerate(episodes):
        episode = _episode_of(entry, rules) if isinstance(entry, dict) else None
        if episode is None:
            return BodyError(MSG_BATCH_ITEM, "invalid_request")
        default = top_intent if index == 0 else rules.later_items_default
        intent = recorded_intent(entry["intent"]) if "intent" in entry else default
        items.append(ItemRequest(_echo(episode, intent), *episode, intent=intent))
    return items


def _batch_b(
    body: dict[str, Any], anchor: Anchor, intent: str, rules: BodyRules
) -> list[ItemRequest] | BodyError:
    """Form B: an anchor and `next` 0 to 2 following episodes, recorded as prefetch.

    Requirements: PLAY-033, PLAY-035, PLAY-036, PLAY-038.
    """
    count = body["next"]
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_NEXT:
        return BodyError(MSG_NEXT, "invalid_request")
    items = [ItemRequest(_echo(anchor, intent), *anchor, intent=intent)]
    for offset in range(1, count + 1):
        later = rules.next_items_intent
        echo = {**_echo(anchor, later), "next": offset}
        items.append(ItemRequest(echo, *anchor, intent=later, next_offset=offset))
    return items


def parse(raw: bytes, rules: BodyRules | None = None) -> PlaybackRequest | BodyError:
    """Validate the body in the order of the spec's whole-request table.

    Requirements: PLAY-004, PLAY-012, PLAY-019, PLAY-021, PLAY-022, PLAY-032, PLAY-034, PLAY-068,
    PLAY-069.
    """
    rules = rules or BodyRules()
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return BodyError(MSG_NOT_JSON)
    if not isinstance(body, dict):
        return BodyError(MSG_NOT_JSON)
    top_intent = recorded_intent(body.get("intent"))
    if "episodes" in body:
        items = _batch_a(body, top_intent, rules)
        batch = True
    else:
        anchor = _episode_of(body, rules)
        if "next" in body:
            if anchor is None:
                return BodyError(MSG_NEXT, "invalid_request")
            items = _batch_b(body, anchor, top_intent, rules)
            batch = True
        elif anchor is None:
            return BodyError(MSG_NO_EPISODE)
        else:
            items = [ItemRequest(_echo(anchor, top_intent), *anchor, intent=top_intent)]
            batch = False
    if isinstance(items, BodyError):
        return items
    union_info, drm_kek = body.get("union_info"), body.get("drm_kek")
    if (union_info is None) != (drm_kek is None):
        return BodyError(MSG_DEVICE_PAIR, "invalid_request")
    viewer_ref = body.get("viewer_ref")
    if not isinstance(viewer_ref, str) or len(viewer_ref) > VIEWER_REF_MAX:
        viewer_ref = None  # docs/reading-of-the-spec.md (PLAY-024): served without reuse
    rejected: tuple[str, ...] = ()
    for name, value in (("union_info", union_info), ("drm_kek", drm_kek)):
        if value is not None and _device_rejected(value, rules):
            rejected += (_shown(value) if rules.fields_as_values else name,)
    if rejected:
        return BodyError(MSG_DEVICE_INFO, "invalid_device_info", rejected)
    return PlaybackRequest(
        tuple(items),
        batch,
        union_info if isinstance(union_info, str) else None,
        drm_kek if isinstance(drm_kek, str) else None,
        viewer_ref,
    )
