"""Faults that prove rules the suite already checks but no fault broke (issue 13, third block;
README: Requirement proofs). Each bends one field, value or order of a 200 body, so the one rule
that names it fails; the rows join the single table of `faults.py`.

Spec sections: Resources and their fields (Film, Episode, Series, Playlist detail, Creative
record, Open video row, Playback ticket); Endpoints (GET /catalog, GET /config, GET /series,
GET /playlists, GET /creatives/{id}/file, GET /videos); Paging and envelopes; Limits.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from delivery_sandbox.faults import body_tables as bt

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch

__all__ = ["BODY_FAULTS_3", "COVERAGE_FAULT_ROWS_3", "mangle_body_3"]

FOREIGN_FILM = "00000000-0000-4000-8000-00000000dead"


# -- catalog ---------------------------------------------------------------------------------


def _completed_without_plan(body: bt.Body) -> None:
    for film in bt.films(body):
        if film.get("planned_episodes") is None and "is_completed" in film:
            film["is_completed"] = True


def _metadata_time_epoch(body: bt.Body) -> None:
    for film in bt.films(body):
        if isinstance(film.get("metadata_updated_at"), str):
            film["metadata_updated_at"] = 1790000000


def _image_repeated(body: bt.Body) -> None:
    for film in bt.films(body):
        images = film.get("images")
        if isinstance(images, list) and images:
            images.append(dict(images[0]))
            return


def _rows_scattered(body: bt.Body) -> None:
    rows = body.get("episodes")
    if not isinstance(rows, list) or len(rows) < 3:
        return
    first = rows[0].get("film_id")
    mine = [i for i, r in enumerate(rows) if r.get("film_id") == first]
    if len(mine) >= 2 and mine[-1] + 1 < len(rows):
        rows.append(rows.pop(mine[-1]))


def _row_repeated(body: bt.Body) -> None:
    rows = body.get("episodes")
    if isinstance(rows, list) and rows:
        copy = dict(rows[0])
        if copy.get("id"):
            copy["id"] = "00000000-0000-4000-8000-0000000c0b1e"
        rows.insert(1, copy)


def _published_row_without_id(body: bt.Body) -> None:
    for row in bt.episodes(body):
        if row.get("status") == "published" and row.get("id"):
            row["id"] = None
            return


def _row_foreign_film(body: bt.Body) -> None:
    rows = bt.episodes(body)
    if rows:
        rows[-1]["film_id"] = FOREIGN_FILM


def _poster_expiry_missing(body: bt.Body) -> None:
    for row in bt.episodes(body):
        if row.get("poster_signed_url"):
            row["poster_expires_at"] = None
            return


def _placeholder_subtitled(body: bt.Body) -> None:
    for row in bt.episodes(body):
        if row.get("status") == "planned":
            row["subtitles"] = [{"lang": "en"}]
            return


def _unpaged_cursor(body: bt.Body) -> None:
    if "next_cursor" not in body and "films" in body:
        body["next_cursor"] = "bW9yZQ"
        body["links"] = {"next": None}


def _next_link_missing(body: bt.Body) -> None:
    if body.get("next_cursor") and isinstance(body.get("links"), dict):
        body["links"]["next"] = None


# -- config ----------------------------------------------------------------------------------


def _summaries_missing(body: bt.Body) -> None:
    for item in bt.rows(bt.api(body), "supported_versions"):
        item.pop("summary", None)


def _current_deprecated(body: bt.Body) -> None:
    for item in bt.rows(bt.api(body), "supported_versions"):
        if item.get("deprecated_at") is None:
            item["deprecated_at"] = "2026-10-01"


def _languages_short(body: bt.Body) -> None:
    languages = (body.get("subtitles") or {}).get("languages")
    if isinstance(languages, list) and languages:
        languages.pop()


def _flat_with_code(body: bt.Body) -> None:
    body.update(code=0, message="ok", server_time=0)


# -- series, playlists, creatives, videos, tickets ---------------------------------------------


def _series_code_other(body: bt.Body) -> None:
    data = bt.data(body)
    if isinstance(data.get("code"), str):
        data["code"] += "X"


def _cover_differs(body: bt.Body) -> None:
    for image in bt.rows(bt.data(body), "images"):
        if image.get("kind") == "cover_9_16" and isinstance(image.get("url"), str):
            image["url"] += "?v=2"


def _reverse(name: str) -> Callable[[bt.Body], None]:
    def change(body: bt.Body) -> None:
        items = bt.data(body).get(name)
        if isinstance(items, list):
            items.reverse()

    return change


def _episode_count_off(body: bt.Body) -> None:
    for item in bt.rows(bt.data(body), "items"):
        if isinstance(item.get("episode_count"), int):
            item["episode_count"] += 1


def _granted_flipped(body: bt.Body) -> None:
    for item in bt.rows(bt.data(body), "items"):
        if isinstance(item.get("granted"), bool):
            item["granted"] = not item["granted"]


def _self_link_other(body: bt.Body) -> None:
    data = bt.data(body)
    for record in [data, *bt.rows(data, "items")]:
        links = record.get("links")
        if isinstance(links, dict) and isinstance(links.get("self"), str):
            links["self"] = links["self"].rstrip("/") + "0"


def _file_url_missing(body: bt.Body) -> None:
    data = bt.data(body)
    if "url" in data and "expires_at" in data:
        data["url"] = None


def _server_time_hour_behind(body: bt.Body) -> None:
    if body.get("code") == 0 and isinstance(body.get("server_time"), int):
        body["server_time"] -= 3600


def _envelope_next_null(body: bt.Body) -> None:
    links = body.get("links")
    if bt.data(body).get("next_cursor") and isinstance(links, dict):
        links["next"] = None


def _two_hours(body: bt.Body) -> None:
    value = body.get("expires_at")
    if isinstance(value, str) and "T" in value:
        hour = int(value[11:13])
        body["expires_at"] = f"{value[:11]}{(hour + 1) % 24:02d}{value[13:]}"


def _collection_not_first(body: bt.Body) -> None:
    row = body.get("row")
    if isinstance(row, dict):
        row["collection"] = "col-elsewhere"


def _subtitle_format_vtt(body: bt.Body) -> None:
    for ticket in bt.tickets(body):
        for subtitle in bt.rows(ticket, "subtitles"):
            subtitle["format"] = "vtt"


def _ticket_expiry_epoch(body: bt.Body) -> None:
    for ticket in bt.tickets(body):
        if isinstance(ticket.get("expires_at"), str):
            ticket["expires_at"] = 1790000000


# name -> (rule broken, summary, where, change)
_BLOCK: tuple[bt.Row, ...] = (
    ("catalog_completed_without_plan", "CAT-019", "is_completed true on films with planned_episodes null", bt.at("catalog"), _completed_without_plan),
    ("catalog_metadata_time_epoch", "CAT-028", "films[].metadata_updated_at in epoch seconds", bt.at("catalog"), _metadata_time_epoch),
    ("catalog_image_repeated", "CAT-031", "a film lists its first image twice", bt.at("catalog"), _image_repeated),
    ("catalog_rows_scattered", "CAT-033", "the first film's last episode row moved to the end", bt.at("catalog"), _rows_scattered),
    ("catalog_row_repeated", "CAT-035", "the first episode row repeated (same film_id and episode_no)", bt.at("catalog"), _row_repeated),
    ("catalog_published_row_without_id", "CAT-036", "a published row has id null", bt.at("catalog"), _published_row_without_id),
    ("catalog_row_foreign_film", "CAT-037", "the last episode row names a film not in the response", bt.at("catalog"), _row_foreign_film),
    ("catalog_poster_expiry_missing", "CAT-043", "a row with a poster link has poster_expires_at null", bt.at("catalog"), _poster_expiry_missing),
    ("catalog_placeholder_subtitled", "CAT-050", "a placeholder row lists a subtitle", bt.at("catalog"), _placeholder_subtitled),
    ("catalog_unpaged_cursor", "CAT-059", "the unpaged catalog carries a next_cursor", bt.at("catalog"), _unpaged_cursor),
    ("catalog_next_link_missing", "CAT-063", "a catalog page with a next_cursor has links.next null", bt.at("catalog"), _next_link_missing),
    ("config_latest_unlisted", "CFG-006", "api.latest_version names a version not listed", bt.at("config"), lambda b: bt.api(b).update(latest_version="2099-12-31")),
    ("config_version_summary_missing", "CFG-008", "api.supported_versions[] without summary", bt.at("config"), _summaries_missing),
    ("config_current_version_deprecated", "CFG-010", "every supported version shows a deprecated_at", bt.at("config"), _current_deprecated),
    ("config_door_unit_missing", "CFG-015", "the creatives door has no unit", bt.at("config"), lambda b: bt.doors(b).get("creatives", {}).pop("unit", None)),
    ("config_subtitle_language_missing", "CFG-023", "subtitles.languages leaves one out", bt.at("config"), _languages_short),
    ("config_docs_link_missing", "CFG-025", "/config links without docs", bt.at("config"), lambda b: bt.links(b).pop("docs", None)),
    ("config_catalog_link_wrong", "CFG-026", "links.catalog ends with /catalogue", bt.at("config"), lambda b: bt.links(b).update(catalog=str(bt.links(b).get("catalog")) + "ue")),
    ("config_playback_unit_requests", "LIM-010", "the playback door's unit is requests", bt.at("config"), lambda b: bt.doors(b).get("playback", {}).update(unit="requests")),
    ("config_flat_with_code", "PAGE-012", "/config carries code, message and server_time", bt.at("config"), _flat_with_code),
    ("series_code_other", "SER-001", "the series detail code differs from the path", bt.detail("series"), _series_code_other),
    ("series_status_paused", "SER-002", "the series detail status is paused", bt.detail("series"), lambda b: bt.data(b).update(status="paused")),
    ("series_cover_differs", "SER-015", "the cover_9_16 image differs from poster.url", bt.detail("series"), _cover_differs),
    ("series_episodes_reversed", "SER-021", "series episodes[] by ep_number descending", bt.detail("series"), _reverse("episodes")),
    ("series_episode_count_off", "SER-025", "series list items count one episode more", bt.at("series"), _episode_count_off),
    ("series_list_reversed", "SER-027", "GET /series pages newest change first", bt.at("series"), _reverse("items")),
    ("playlist_clips_reversed", "PLS-012", "playlist clips[] in reverse position order", bt.detail("playlists"), _reverse("clips")),
    ("playlist_list_reversed", "PLS-018", "GET /playlists pages newest change first", bt.at("playlists"), _reverse("items")),
    ("playlist_granted_flipped", "PLS-003", "playlist list items with granted flipped", bt.at("playlists"), _granted_flipped),
    ("creative_self_link_other", "CRE-002", "creative records' links.self names another id", lambda p: "creatives" in p[-2:] and p[-1] != "file", _self_link_other),
    ("creative_file_url_missing", "CRE-039", "redirect=0 answers data.url null", bt.at("file"), _file_url_missing),
    ("envelope_server_time_hour_behind", "PAGE-008", "success envelopes' server_time an hour behind", lambda p: p[-1] in ("series", "playlists", "creatives") or bt.detail("series")(p), _server_time_hour_behind),
    ("envelope_next_link_null", "PAGE-010", "list envelopes with a next_cursor have links.next null", lambda p: p[-1] in ("series", "playlists", "creatives"), _envelope_next_null),
    ("videos_expiry_two_hours", "VID-010", "GET /videos expires_at two hours ahead", bt.at("videos"), _two_hours),
    ("video_expiry_two_hours", "VID-017", "GET /videos/{id} expires_at two hours ahead", bt.detail("videos"), _two_hours),
    ("video_collection_not_first", "VID-015", "the single read's row.collection is not collections[0]", bt.detail("videos"), _collection_not_first),
    ("ticket_subtitle_format_vtt", "PLAY-057", "ticket subtitles with format vtt", bt.at("playback"), _subtitle_format_vtt),
    ("ticket_expiry_epoch", "PLAY-050", "ticket expires_at in epoch seconds", bt.at("playback"), _ticket_expiry_epoch),
)  # fmt: skip


COVERAGE_FAULT_ROWS_3 = bt.rows_of(_BLOCK)
BODY_FAULTS_3 = bt.table_of(_BLOCK)


def mangle_body_3(status: int, body: bytes, faults: FaultSwitch, path: str) -> bytes | None:
    """The 200 JSON body of `path` with this block's switched-on faults applied, or None when
    none applies (the body is then left as it is)."""
    return bt.apply_table(BODY_FAULTS_3, status, body, faults, path)
