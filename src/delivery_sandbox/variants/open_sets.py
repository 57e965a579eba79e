"""The variant `open_sets_grow`: new values wherever the spec says the set is open.

Each open set of Resources and their fields shows a value the default sandbox never sends:

- catalog `films[].audience`, `form`, `setting` (Film: "more may be added"): one film in three
  takes a new value;
- `tags[].type` (Film `tags`: "more may be added"; catalog films and series detail): a tag of a
  new type is appended;
- series `film_status`, list and detail (Series: "more may be added"): one series in three
  takes a new value;
- `images[].kind` (Series `images[]`: "skip unknown kinds"; Film `images`: one entry per kind
  available, kinds not listed): an image of a new kind is appended, in the catalog and the
  series detail alike;
- playlist detail `images[].source` (Playlist detail: "more may be added"): a cover from a new
  source is appended; one clip `poster` in three comes from that source ("skip unknown
  sources");
- creatives `scenes[].action` and `hook.action` (Creative record: "new labels may be added"):
  one label is renamed everywhere;
- `status` of playlist list items (Playlist list item: "more may be added"): one active
  playlist in three shows a new value; its detail, whose `status` is always `active`, is served
  as before (the series list's own new status is the variant `series_status_grows`).

What is chosen depends only on stable keys (film code, clip id), so every endpoint that shows
the same thing shows it the same way. A new source carries no `url` (the spec gives a `url` only
with `wandura_cdn`); everything else a record says stays as it was.
"""

from __future__ import annotations

import copy
import zlib
from typing import Any

__all__ = ["grow", "picked"]

FILM_VALUES = {"audience": "families", "form": "motion_comic", "setting": "space_station"}
NEW_TAG: dict[str, Any] = {
    "slug": "mood-slow-burn",
    "name": "Slow burn",
    "name_i18n": {"en": "Slow burn"},
    "type": "mood",
    "is_main": False,
}
NEW_FILM_STATUS = "remastering"
NEW_IMAGE_KIND = "banner_21_9"
NEW_SOURCE = "partner_archive"
ACTION_RENAMES = {"walk_away": "storm_off"}
NEW_LIST_STATUS = "featured"


def picked(key: object) -> bool:
    """One record in three, chosen by a stable key."""
    return isinstance(key, str) and zlib.crc32(key.encode()) % 3 == 0


def _tags(record: dict[str, Any]) -> None:
    tags = record.get("tags")
    if isinstance(tags, list) and tags and NEW_TAG not in tags:
        tags.append(copy.deepcopy(NEW_TAG))


def _film_status(record: dict[str, Any]) -> None:
    if picked(record.get("code")) and record.get("film_status") is not None:
        record["film_status"] = NEW_FILM_STATUS


def _catalog(doc: dict[str, Any]) -> None:
    for film in doc.get("films") or ():
        if picked(film.get("id")):
            film.update(FILM_VALUES)
        _tags(film)
        _new_image(film)


def _new_image(record: dict[str, Any]) -> None:
    """An image of a new kind for a film with a code, the same in the catalog and the series
    detail (the same URL on the host of its other images)."""
    images, code = record.get("images"), record.get("code")
    if not isinstance(images, list) or not images or not isinstance(code, str):
        return
    host = str(images[0].get("url") or "").split("/")[2:3]
    if host and not any(i.get("kind") == NEW_IMAGE_KIND for i in images):
        url = f"https://{host[0]}/series/{code}/{NEW_IMAGE_KIND}.jpg"
        images.append(
            {"kind": NEW_IMAGE_KIND, "lang": None, "url": url, "width": 2520, "height": 1080}
        )


def _new_source(uri_tail: str, image: dict[str, Any]) -> dict[str, Any]:
    return {
        **image,
        "source": NEW_SOURCE,
        "url": None,
        "expires_at": None,
        "space": None,
        "uri": f"archive://{uri_tail}",
    }


def _playlist(data: dict[str, Any]) -> None:
    images = data.get("images")
    if isinstance(images, list) and not any(i.get("source") == NEW_SOURCE for i in images):
        images.append(_new_source(f"playlists/{data.get('code')}.jpg", {"kind": "cover"}))
    for clip in data.get("clips") or ():
        poster = clip.get("poster")
        if isinstance(poster, dict) and picked(clip.get("id")):
            clip["poster"] = _new_source(f"clips/{clip.get('id')}.jpg", poster)


def _rename_action(holder: Any) -> None:
    action = holder.get("action") if isinstance(holder, dict) else None
    if isinstance(action, str) and action in ACTION_RENAMES:
        holder["action"] = ACTION_RENAMES[action]


def _creative(record: dict[str, Any]) -> None:
    for scene in record.get("scenes") or ():
        _rename_action(scene)
    _rename_action(record.get("hook"))


def _list_status(item: dict[str, Any]) -> None:
    if item.get("status") == "active" and picked(item.get("code")):
        item["status"] = NEW_LIST_STATUS


def grow(doc: Any, endpoint: str, status: int) -> None:
    """Show the new values in one 200 answer (in place)."""
    if status != 200 or not isinstance(doc, dict):
        return
    data = doc.get("data")
    if endpoint == "catalog":
        _catalog(doc)
    elif endpoint == "series_one" and isinstance(data, dict):
        _film_status(data)
        _tags(data)
        _new_image(data)
    elif endpoint == "series" and isinstance(data, dict):
        for item in data.get("items") or ():
            _film_status(item)
    elif endpoint == "playlists" and isinstance(data, dict):
        for item in data.get("items") or ():
            _list_status(item)
    elif endpoint == "playlist" and isinstance(data, dict):
        _playlist(data)
    elif endpoint == "creative" and isinstance(data, dict):
        _creative(data)
    elif endpoint == "creatives" and isinstance(data, dict):
        for item in data.get("items") or ():
            _creative(item)
