"""Fourth block of coverage faults (issue 13; README: Requirement proofs): like the third, each
bends one field, value or order of a 200 body so the one rule naming it fails. Helpers and the
way a row acts come from `body_tables.py`.

Spec sections: Resources and their fields (Film, Series, Playlist detail, Creative record, Open
video row, Playback ticket); Endpoints (GET /catalog paging, GET /config, GET /series/{code},
GET /playlists/{code}, GET /creatives/{id}, GET /videos, POST /playback).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from delivery_sandbox.faults import body_tables as bt

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch

__all__ = ["BODY_FAULTS_4", "COVERAGE_FAULT_ROWS_4", "mangle_body_4"]


# -- catalog paging ----------------------------------------------------------------------------


def _paged(body: bt.Body) -> bool:
    return "next_cursor" in body


def _page_row_missing(body: bt.Body) -> None:
    rows = body.get("episodes")
    if _paged(body) and isinstance(rows, list) and rows:
        rows.pop()


def _page_film_missing(body: bt.Body) -> None:
    films, rows = body.get("films"), body.get("episodes")
    if _paged(body) and isinstance(films, list) and films and isinstance(rows, list):
        gone = films.pop(0).get("id")
        body["episodes"] = [r for r in rows if r.get("film_id") != gone]


def _unpaged_film_twice(body: bt.Body) -> None:
    films = body.get("films")
    if not _paged(body) and isinstance(films, list) and films:
        films.append(dict(films[0]))


def _code_elsewhere(body: bt.Body) -> None:
    for film in bt.films(body):
        if isinstance(film.get("code"), str):
            film["code"] = "ZZ" + film["code"]


# -- config ------------------------------------------------------------------------------------


def _pin_follows_header(body: bt.Body) -> None:
    api = bt.api(body)
    if api.get("pinned_version") is not None:
        api["pinned_version"] = api.get("version")


def _pin_unlisted(body: bt.Body) -> None:
    api = bt.api(body)
    pin, listed = api.get("pinned_version"), api.get("supported_versions")
    if pin and pin != api.get("latest_version") and isinstance(listed, list):
        api["supported_versions"] = [v for v in listed if v.get("version") != pin]


# -- series, playlists, creatives --------------------------------------------------------------


def _tag_main_text(body: bt.Body) -> None:
    for tag in bt.rows(bt.data(body), "tags"):
        if isinstance(tag.get("is_main"), bool):
            tag["is_main"] = str(tag["is_main"]).lower()


def _series_metadata_other(body: bt.Body) -> None:
    data = bt.data(body)
    if isinstance(data.get("metadata_version"), str):
        data["metadata_version"] = "f" * len(data["metadata_version"])


def _media(body: bt.Body) -> bt.Body:
    media = bt.data(body).get("media")
    return media if isinstance(media, dict) else {}


def _media_name_other(body: bt.Body) -> None:
    media = _media(body)
    if isinstance(media.get("playlist_name"), str):
        media["playlist_name"] += "-x"


def _self_link_wrong(body: bt.Body) -> None:
    links = body.get("links")
    if isinstance(links, dict) and isinstance(links.get("self"), str):
        links["self"] += "x"


def _images(body: bt.Body) -> list[bt.Body]:
    data = bt.data(body)
    found = bt.rows(data, "images")
    for clip in bt.rows(data, "clips"):
        if isinstance(clip.get("poster"), dict):
            found.append(clip["poster"])
    return found


def _cdn_link_on_media_space(body: bt.Body) -> None:
    for image in _images(body):
        if image.get("source") == "media_space":
            image["url"] = "https://cdn.delivery.sandbox/elsewhere.jpg"
            return


def _cdn_two_hours(body: bt.Body) -> None:
    for image in _images(body):
        if image.get("source") == "wandura_cdn" and isinstance(image.get("expires_at"), int):
            image["expires_at"] += 3600


def _clip_format_flipped(body: bt.Body) -> None:
    flip = {"hls": "mp4", "mp4": "hls"}
    for clip in bt.rows(bt.data(body), "clips"):
        if clip.get("format") in flip:
            clip["format"] = flip[clip["format"]]


def _single_name_differs(body: bt.Body) -> None:
    data = bt.data(body)
    if isinstance(data.get("name"), str):
        data["name"] += " (single read)"


def _drop_cursor(body: bt.Body) -> None:
    bt.data(body).pop("next_cursor", None)


# -- videos ------------------------------------------------------------------------------------


def _rows_elsewhere(body: bt.Body) -> None:
    for row in bt.rows(body, "rows"):
        row["collection"] = "col-elsewhere"


# -- tickets -----------------------------------------------------------------------------------


def _ticket(kind: str, change: Callable[[bt.Body], None]) -> Callable[[bt.Body], None]:
    def apply(body: bt.Body) -> None:
        for ticket in bt.tickets(body):
            if kind in ticket:
                change(ticket)

    return apply


def _items(status: int | None, change: Callable[[bt.Body], None]) -> Callable[[bt.Body], None]:
    def apply(body: bt.Body) -> None:
        for item in bt.rows(body, "items"):
            if status is None or item.get("status") == status:
                change(item)

    return apply


def _subtitle_without_url(ticket: bt.Body) -> None:
    for subtitle in bt.rows(ticket, "subtitles"):
        subtitle.pop("url", None)


BLOCK_4: tuple[bt.Row, ...] = (
    ("catalog_page_row_missing", "CAT-064", "a catalog page leaves out its last episode row", bt.at("catalog"), _page_row_missing),
    ("catalog_page_film_missing", "CAT-065", "each catalog page leaves out its first film", bt.at("catalog"), _page_film_missing),
    ("catalog_unpaged_film_twice", "FRESH-019", "the unpaged catalog lists its first film twice", bt.at("catalog"), _unpaged_film_twice),
    ("catalog_code_elsewhere", "CAT-015", "films[].code is no key of GET /series/{code}", bt.at("catalog"), _code_elsewhere),
    ("config_pin_follows_header", "CFG-005", "api.pinned_version follows the request header", bt.at("config"), _pin_follows_header),
    ("config_pin_unlisted", "CFG-009", "api.supported_versions leaves out the key's older pin", bt.at("config"), _pin_unlisted),
    ("series_tag_main_text", "SER-012", "series tags[].is_main as text", bt.detail("series"), _tag_main_text),
    ("series_metadata_version_other", "SER-017", "series metadata_version differs from the catalog's", bt.detail("series"), _series_metadata_other),
    ("series_media_name_other", "SER-019", "series media.playlist_name differs from the code", bt.detail("series"), _media_name_other),
    ("series_self_link_wrong", "SER-032", "series detail links.self names another path", bt.detail("series"), _self_link_wrong),
    ("playlist_self_link_wrong", "PLS-026", "playlist detail links.self names another path", bt.detail("playlists"), _self_link_wrong),
    ("playlist_media_space_missing", "PLS-007", "a granted playlist's media has no space", bt.detail("playlists"), lambda b: _media(b).pop("space", None)),
    ("playlist_cdn_link_on_media_space", "PLS-010", "a media_space image carries a url", bt.detail("playlists"), _cdn_link_on_media_space),
    ("playlist_cdn_link_two_hours", "PLS-011", "wandura_cdn links expire after two hours", bt.detail("playlists"), _cdn_two_hours),
    ("playlist_clip_format_flipped", "PLS-015", "clip format hls and mp4 swapped", bt.detail("playlists"), _clip_format_flipped),
    ("creative_single_name_differs", "CRE-035", "the single read's name differs from the list's", bt.detail("creatives"), _single_name_differs),
    ("creative_single_links_missing", "CRE-034", "the single read has no links", bt.detail("creatives"), lambda b: b.pop("links", None)),
    ("creatives_cursor_missing", "CRE-032", "GET /creatives without data.next_cursor", bt.at("creatives"), _drop_cursor),
    ("series_cursor_missing", "SER-030", "GET /series without data.next_cursor", bt.at("series"), _drop_cursor),
    ("playlists_cursor_missing", "PLS-023", "GET /playlists without data.next_cursor", bt.at("playlists"), _drop_cursor),
    ("videos_rows_elsewhere", "VID-003", "open video rows name another collection", bt.at("videos"), _rows_elsewhere),
    ("videos_refresh_missing", "VID-009", "GET /videos without refresh_before", bt.at("videos"), lambda b: b.pop("refresh_before", None)),
    ("video_collections_missing", "VID-014", "GET /videos/{id} without collections", bt.detail("videos"), lambda b: b.pop("collections", None)),
    ("ticket_both_kinds", "PLAY-001", "an encrypted ticket also carries a manifest_url", bt.at("playback"), _ticket("play_auth_token", lambda t: t.update(manifest_url="https://play.delivery.sandbox/m"))),
    ("ticket_protection_private", "PLAY-053", "an encrypted ticket's protection is private", bt.at("playback"), _ticket("play_auth_token", lambda t: t.update(protection="private"))),
    ("ticket_manifest_protection_none", "PLAY-054", "a manifest_url ticket's protection is none", bt.at("playback"), _ticket("manifest_url", lambda t: t.update(protection="none"))),
    ("ticket_subtitle_without_url", "PLAY-055", "ticket subtitles without url", bt.at("playback"), _ticket("subtitles", _subtitle_without_url)),
    ("batch_item_request_null", "PLAY-040", "batch items carry request null", bt.at("playback"), _items(None, lambda i: i.update(request=None))),
    ("batch_item_without_number", "PLAY-041", "issued batch items have no episode_no", bt.at("playback"), _items(200, lambda i: i.pop("episode_no", None))),
    ("batch_error_item_with_episode", "PLAY-042", "refused batch items carry an episode_id", bt.at("playback"), _items(404, lambda i: i.update(episode_id="00000000-0000-4000-8000-0"))),
    ("batch_item_retry_after_text", "PLAY-043", "a 503 batch item's retry_after is text", bt.at("playback"), _items(503, lambda i: i.update(retry_after="2"))),
    ("batch_item_403_without_reason", "PLAY-044", "a 403 batch item has no reason", bt.at("playback"), _items(403, lambda i: i.pop("reason", None))),
)  # fmt: skip
COVERAGE_FAULT_ROWS_4 = bt.rows_of(BLOCK_4)
BODY_FAULTS_4 = bt.table_of(BLOCK_4)


def mangle_body_4(status: int, body: bytes, faults: FaultSwitch, path: str) -> bytes | None:
    """The 200 JSON body of `path` with this block's switched-on faults applied, or None."""
    return bt.apply_table(BODY_FAULTS_4, status, body, faults, path)
