"""Variants on the shapes the spec does not show: another server may fill them its own way.

- `batch_echo_shape`: the `request` echo of each batch item (POST /playback, batch response:
  "its inner shape: not shown") nests the episode reference and the options.
- `deprecations_shape`: the entries of `/config` `deprecations[]` (Versioning 5: "Shape of
  `deprecations[]` entries: not shown") in another layout. Seen with `--versions extended`, where
  a deprecated version exists.
- `trailer_fields`: the film `trailer` object (catalog and series detail) carries more than
  `vid` (Film `trailer`: "Other fields of the trailer object: not shown").
"""

from __future__ import annotations

from typing import Any

__all__ = ["reshape_batch_echo", "reshape_deprecations", "widen_trailers"]

OPTIONS = frozenset({"intent", "next"})
TRAILER_EXTRA = {"kind": "teaser", "duration_sec": 75, "aspect": "9:16"}


def _echo(request: dict[str, Any]) -> dict[str, Any]:
    episode = {k: v for k, v in request.items() if k not in OPTIONS}
    options = {k: v for k, v in request.items() if k in OPTIONS}
    return {"episode": episode, "options": options}


def reshape_batch_echo(doc: Any, endpoint: str, status: int) -> None:
    """Every batch item's `request` as `{episode: {...}, options: {intent, next}}`."""
    if endpoint != "playback" or not isinstance(doc, dict):
        return
    for item in doc.get("items") or ():
        if isinstance(item, dict) and isinstance(item.get("request"), dict):
            item["request"] = _echo(item["request"])


def _deprecation(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "subject": {"type": entry.get("kind"), "id": entry.get("version")},
        "announced": {"on": entry.get("deprecated_at"), "header": entry.get("deprecation")},
        "removal_on": entry.get("sunset_at"),
        "see": entry.get("link"),
    }


def reshape_deprecations(doc: Any, endpoint: str, status: int) -> None:
    """Each `/config` `deprecations[]` entry in another layout."""
    if endpoint != "config" or status != 200 or not isinstance(doc, dict):
        return
    entries = doc.get("deprecations")
    if isinstance(entries, list):
        doc["deprecations"] = [_deprecation(e) if isinstance(e, dict) else e for e in entries]


def _widen(trailer: Any) -> None:
    if isinstance(trailer, dict):
        trailer.update(TRAILER_EXTRA)


def widen_trailers(doc: Any, endpoint: str, status: int) -> None:
    """Every non-null film `trailer` with more fields beside `vid`."""
    if status != 200 or not isinstance(doc, dict):
        return
    if endpoint == "catalog":
        for film in doc.get("films") or ():
            _widen(film.get("trailer"))
    elif endpoint == "series_one" and isinstance(doc.get("data"), dict):
        _widen(doc["data"].get("trailer"))
