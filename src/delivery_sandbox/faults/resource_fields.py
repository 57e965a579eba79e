"""Faults of the resource fields: each bends one field, value or order of a 200 JSON body, so
the one rule that names it fails; the clean sandbox is unchanged. Rows and changes are tables
of `body_tables.py` (`Row`: name, rule, summary, where, change), applied at the reply seam by
`bend_body` (faults/reply.py).

Spec sections: Resources and their fields (Film, Episode, Series, Playlist detail and list
item, Creative record, Open video row, Playback ticket); States and transitions (withdrawn
items); Endpoints (GET /catalog and its paging, GET /config, GET /series, GET /playlists,
GET /creatives/{id} and its file, GET /videos, POST /playback); Paging and envelopes; Limits.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["BODY_FAULTS", "FAULTS", "FAULT_ROWS", "bend_body"]

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


# -- withdrawn items, list items, placeholders, config ----------------------------------------


ENVELOPE_LISTS = ("series", "playlists", "creatives")


def _envelope_items(body: bt.Body) -> list[bt.Body]:
    return bt.rows(bt.data(body), "items")


def _withdrawn(field: str, value: object) -> Callable[[bt.Body], None]:
    def change(body: bt.Body) -> None:
        for item in _envelope_items(body):
            if item.get("status") == "withdrawn":
                item[field] = value

    return change


def _first_active(field: str, value: object) -> Callable[[bt.Body], None]:
    def change(body: bt.Body) -> None:
        for item in _envelope_items(body):
            if item.get("status") == "active":
                item[field] = value
                return

    return change


def _placeholder_films(body: bt.Body) -> set[str]:
    return {str(r.get("film_id")) for r in bt.episodes(body) if r.get("status") == "planned"}


def _completed_with_placeholders(body: bt.Body) -> None:
    planned = _placeholder_films(body)
    for film in bt.films(body):
        if film.get("id") in planned:
            film["is_completed"] = True


def _unplanned_with_placeholders(body: bt.Body) -> None:
    planned = _placeholder_films(body)
    for film in bt.films(body):
        if film.get("id") in planned:
            film["planned_episodes"] = None
            film["is_completed"] = None
            return


def _manifest_elsewhere(body: bt.Body) -> None:
    for ticket in bt.tickets(body):
        link = ticket.get("manifest_url")
        if isinstance(link, str) and "://" in link:
            scheme, rest = link.split("://", 1)
            ticket["manifest_url"] = f"{scheme}://play.elsewhere.test/{rest.partition('/')[2]}"


def _protection_short(body: bt.Body) -> None:
    playback = body.get("playback")
    listed = playback.get("protection") if isinstance(playback, dict) else None
    if isinstance(listed, list) and len(listed) > 1:
        listed.pop()


def _next_link_resized(body: bt.Body) -> None:
    links = body.get("links")
    if isinstance(links, dict) and isinstance(links.get("next"), str):
        links["next"] += "&limit=1"


def _granted_only(body: bt.Body) -> None:
    data = bt.data(body)
    if isinstance(data.get("items"), list):
        data["items"] = [i for i in _envelope_items(body) if i.get("granted") is not False]


def _envelope_list(parts: list[str]) -> bool:
    return parts[-1] in ENVELOPE_LISTS


# name -> (rule broken, summary, where, change)
BLOCK: tuple[bt.Row, ...] = (
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
    ("series_item_version_number", "SER-023", "an active series list item's content_version is a number", bt.at("series"), _first_active("content_version", 5)),
    ("playlist_item_status_number", "PLS-001", "an active playlist list item's status is a number", bt.at("playlists"), _first_active("status", 1)),
    ("series_withdrawn_keeps_version", "STATE-002", "withdrawn series list items keep a content_version", bt.at("series"), _withdrawn("content_version", "0" * 24)),
    ("playlist_withdrawn_keeps_count", "STATE-010", "withdrawn playlist list items keep a clip_count", bt.at("playlists"), _withdrawn("clip_count", 3)),
    ("playlist_withdrawn_listed_inactive", "STATE-009", "withdrawn playlists listed with status inactive", bt.at("playlists"), _withdrawn("status", "inactive")),
    ("catalog_completed_with_placeholders", "CAT-020", "films with placeholder rows say is_completed true", bt.at("catalog"), _completed_with_placeholders),
    ("catalog_unplanned_with_placeholders", "CAT-051", "a film with placeholder rows has planned_episodes null", bt.at("catalog"), _unplanned_with_placeholders),
    ("config_deprecations_missing", "CFG-001", "/config without deprecations", bt.at("config"), lambda b: b.pop("deprecations", None)),
    ("config_protection_short", "CFG-036", "playback.protection leaves out a level tickets carry", bt.at("config"), _protection_short),
    ("ticket_manifest_elsewhere", "CFG-035", "manifest links on a host /config does not list", bt.at("playback"), _manifest_elsewhere),
    ("envelope_next_link_resized", "PAGE-011", "links.next asks a page of one item", _envelope_list, _next_link_resized),
    ("playlists_granted_only", "PLS-017", "GET /playlists leaves out playlists not granted", bt.at("playlists"), _granted_only),
)  # fmt: skip
FAULT_ROWS = bt.rows_of(BLOCK)
FAULTS = declare(
    FAULT_ROWS,
    area="Resources and their fields",
    seam="reply",
    # Proven only once a Freshness bound has passed: a server with caches inside the bounds
    # must pass, so a comparison that never agrees fails only at the bound (30 s, 60 s).
    slow=(
        "series_episodes_reversed", "envelope_next_link_resized", "series_episode_count_off",
        "playlist_withdrawn_listed_inactive", "series_metadata_version_other",
        "catalog_page_film_missing", "catalog_page_row_missing",
    ),
)  # fmt: skip
BODY_FAULTS = bt.table_of(BLOCK)


def bend_body(status: int, body: bytes, faults: FaultSwitch, path: str) -> bytes | None:
    """The 200 JSON body of `path` with the switched-on faults of these rows applied, or None
    when none applies (the body is then left as it is)."""
    return bt.apply_table(BODY_FAULTS, status, body, faults, path)
