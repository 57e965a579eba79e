"""Legal variants on JSON bodies: layout, added fields, open sets, shapes not shown, reworded
messages, opaque values in another form, and a series listed with a new status.

Each variant shows its behaviour; the default sandbox, asked the same, does not; what the spec
fixes (values, equalities, the texts that are codes) stays as the default sandbox sends it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sandbox_api import Api, _walk, plays
from sandbox_playback_support import DEVICE

from delivery_sandbox.variants.bodies import ADDED_FIELD, reversed_keys
from delivery_sandbox.variants.catalogue import VariantName as V
from delivery_sandbox.variants.opaque import unwrap_cursor, wrap_cursor


def objects(node: Any, key: str | None = None) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """Every object under `node`, with the key it sits under."""
    if isinstance(node, list):
        for item in node:
            yield from objects(item, key)
    elif isinstance(node, dict):
        yield key, node
        for child_key, child in node.items():
            yield from objects(child, child_key)


@plays(V.reformatted_json)
def test_reformatted_json_indents_and_reverses_keys_with_the_same_values(
    variant: Api, default: Api
) -> None:
    mine, theirs = variant.get("config", "films"), default.get("config", "films")
    assert mine.text.startswith('{\n  "links": {') and theirs.text.startswith('{"api":')
    assert mine.json() == theirs.json()
    assert list(mine.json()) == list(reversed(list(theirs.json())))
    assert reversed_keys({"a": [{"b": 1, "c": 2}]}) == {"a": [{"c": 2, "b": 1}]}


@plays(V.json_escapes)
def test_json_escapes_writes_non_ascii_and_slashes_escaped(variant: Api, default: Api) -> None:
    mine, theirs = variant.get("catalog", "films"), default.get("catalog", "films")
    assert mine.content.isascii() and b"\\u00ed" in mine.content and b"https:\\/\\/" in mine.content
    assert not theirs.content.isascii()
    assert mine.json() == theirs.json()


@plays(V.additive_fields)
def test_additive_fields_reach_every_object_but_maps_and_the_frozen_feed(
    variant: Api, default: Api
) -> None:
    fx = variant.fx
    for path, role in (
        ("catalog", "films"),
        (f"series/{fx['series_code']}", "films"),
        (f"playlists/{fx['playlist_code']}", "videos"),
        ("creatives", "films_creatives"),
        ("config", "films"),
        ("catalog", None),
        ("series/XX000000", "films"),
    ):
        for key, obj in objects(variant.get(path, role).json()):
            maps = key is not None and (key.endswith("_i18n") or key in ("doors", ADDED_FIELD))
            empty_links = key == "links" and not any(isinstance(v, str) for v in obj.values())
            assert (ADDED_FIELD in obj) is not (maps or empty_links), (path, key, obj)
    assert ADDED_FIELD not in default.get("catalog", "films").text
    videos = variant.get("videos", "videos", params={"collection": fx["collection_code"]})
    assert ADDED_FIELD not in videos.text and videos.json()["rows"]


@plays(V.frozen_feed_additions)
def test_frozen_feed_additions_touch_only_the_videos_answers(variant: Api) -> None:
    fx = variant.fx
    page = variant.get("videos", "videos", params={"collection": fx["collection_code"]}).json()
    assert ADDED_FIELD in page and all(ADDED_FIELD in row for row in page["rows"])
    assert all(ADDED_FIELD in row["mp4"] for row in page["rows"])
    one = variant.get(f"videos/{fx['video_id']}", "videos").json()
    assert ADDED_FIELD in one and ADDED_FIELD in one["row"]
    assert ADDED_FIELD not in variant.get("catalog", "films").text


@plays(V.open_sets_grow)
def test_open_sets_grow_shows_new_values_the_same_way_everywhere(
    variant: Api, default: Api
) -> None:
    fx = variant.fx
    films = variant.get("catalog", "films").json()["films"]
    assert {"families", "motion_comic", "space_station"} <= {
        v for f in films for v in (f["audience"], f["form"], f["setting"])
    }
    assert any(t["type"] == "mood" for f in films for t in f["tags"])
    series = variant.get(f"series/{fx['series_code']}", "films").json()["data"]
    assert series["tags"][-1]["type"] == "mood" and series["images"][-1]["kind"] == "banner_21_9"
    items = variant.get("series", "films", params={"limit": 100}).json()["data"]["items"]
    assert "remastering" in {i["film_status"] for i in items}
    for item in items[:10]:
        if item["status"] == "active":
            detail = variant.get(f"series/{item['code']}", "films").json()["data"]
            assert detail["film_status"] == item["film_status"]
    playlist = variant.get(f"playlists/{fx['playlist_code']}", "videos").json()["data"]
    new = [i for i in playlist["images"] if i["source"] == "partner_archive"]
    assert new and new[0]["url"] is None and new[0]["kind"] == "cover"
    assert any(
        c["poster"] and c["poster"]["source"] == "partner_archive" for c in playlist["clips"]
    )
    listed = variant.get("playlists", "videos", params={"limit": 100}).json()["data"]["items"]
    featured = [i for i in listed if i["status"] == "featured"]
    assert featured and {i["status"] for i in listed} <= {"active", "withdrawn", "featured"}
    again = variant.get(f"playlists/{featured[0]['code']}", "videos").json()["data"]
    assert again["status"] == "active"
    creatives = variant.get("creatives", "films_creatives", params={"limit": 100}).json()
    actions = {s["action"] for c in creatives["data"]["items"] for s in c["scenes"]}
    assert "storm_off" in actions and "walk_away" not in actions
    plain = default.get("catalog", "films").text
    assert "motion_comic" not in plain and '"mood"' not in plain


@plays(V.series_status_grows)
def test_series_status_grows_lists_a_scheduled_series_whose_detail_is_404(
    variant: Api, default: Api
) -> None:
    items = _walk(variant, "series", "films", {"limit": 100}, envelope=True)
    scheduled = [i for i in items if i["status"] == "scheduled"]
    assert len(scheduled) == 1 and scheduled[0]["content_version"] is None
    assert scheduled[0]["withdrawn_at"] is None and scheduled[0]["episode_count"] == 3
    detail = variant.get(f"series/{scheduled[0]['code']}", "films")
    assert detail.status_code == 404 and detail.json()["code"] == 4040
    plain = _walk(default, "series", "films", {"limit": 100}, envelope=True)
    assert {i["status"] for i in plain} == {"active", "withdrawn"}


@plays(V.batch_echo_shape)
def test_batch_echo_shape_nests_the_request_echo(variant: Api, default: Api) -> None:
    body = {"episodes": [{"episode_id": variant.fx["episode_encrypted"]}], **DEVICE}
    mine = variant.request("POST", "playback", "films", json=body).json()["items"][0]["request"]
    theirs = default.request("POST", "playback", "films", json=body).json()["items"][0]["request"]
    assert mine == {
        "episode": {"episode_id": variant.fx["episode_encrypted"]},
        "options": {"intent": theirs["intent"]},
    }
    assert "episode" not in theirs


@plays(V.reworded_messages)
def test_reworded_messages_keep_the_texts_that_are_codes(variant: Api, default: Api) -> None:
    fx = variant.fx
    flat = variant.get("catalog")
    assert (
        flat.status_code == 401 and flat.json()["error"] != default.get("catalog").json()["error"]
    )
    envelope = variant.get("series/XX000000", "films").json()
    assert envelope["code"] == 4040
    assert envelope["message"] != default.get("series/XX000000", "films").json()["message"]
    assert variant.get("series", "films").json()["message"] == "ok"
    assert variant.get("videos/" + fx["video_not_granted"], "videos").json()["error"] == (
        "video_not_found"
    )
    assert variant.get("catalog", "suspended").json()["error"] == "org_suspended"
    refused = variant.request(
        "POST", "playback", "films", json={"episode_id": fx["episode_outside_window"], **DEVICE}
    ).json()
    assert refused["error_code"] == "not_entitled" and refused["error"] == refused["reason"]


@plays(V.deprecations_shape)
def test_deprecations_shape_lays_entries_out_another_way(variant: Api, default: Api) -> None:
    mine = variant.get("config", "films").json()["deprecations"]
    theirs = default.get("config", "films").json()["deprecations"]
    assert mine and len(mine) == len(theirs)
    assert mine[0]["subject"] == {"type": "version", "id": theirs[0]["version"]}
    assert "subject" not in theirs[0]


@plays(V.trailer_fields)
def test_trailer_fields_widen_every_trailer(variant: Api, default: Api) -> None:
    trailers = [f["trailer"] for f in variant.get("catalog", "films").json()["films"]]
    shown = [t for t in trailers if t is not None]
    assert shown and all(t["vid"] and t["kind"] == "teaser" for t in shown)
    plain = [f["trailer"] for f in default.get("catalog", "films").json()["films"]]
    assert all(set(t) == {"vid"} for t in plain if t is not None)


@plays(V.hash_format)
def test_hash_format_keeps_every_equality(variant: Api, default: Api) -> None:
    code = variant.fx["series_code"]
    item = next(
        i
        for i in variant.get("series", "films", params={"limit": 100}).json()["data"]["items"]
        if i["code"] == code
    )
    detail = variant.get(f"series/{code}", "films").json()["data"]
    film = next(f for f in variant.get("catalog", "films").json()["films"] if f["code"] == code)
    assert item["content_version"] == detail["content_version"]
    assert detail["metadata_version"] == film["metadata_version"]
    plain = default.get(f"series/{code}", "films").json()["data"]
    assert detail["content_version"] != plain["content_version"]
    assert detail["content_version"].startswith("v2-")


@plays(V.cursor_format)
def test_cursor_format_walks_the_same_pages_and_refuses_foreign_cursors(
    variant: Api, default: Api
) -> None:
    def walk(api: Api) -> tuple[list[str], list[str]]:
        ids, cursors, params = [], [], {"limit": 40}
        while True:
            page = api.get("catalog", "films", params=params).json()
            ids += [f["id"] for f in page["films"]]
            if page["next_cursor"] is None:
                return ids, cursors
            assert f"cursor={page['next_cursor']}" in page["links"]["next"]
            cursors.append(page["next_cursor"])
            params = {"cursor": page["next_cursor"]}

    mine, wrapped = walk(variant)
    theirs, plain = walk(default)
    assert mine == theirs and set(wrapped).isdisjoint(plain)
    refused = variant.get("catalog", "films", params={"cursor": plain[0]})
    assert refused.status_code == 400
    assert default.get("catalog", "films", params={"cursor": wrapped[0]}).status_code == 400


def test_a_wrapped_cursor_edited_in_its_unused_bits_is_not_unwrapped() -> None:
    # base64 text whose length is not a multiple of 4 ends in a character with unused bits:
    # every spelling of those bits decodes to the same bytes, yet only one was sent (CAT-068)
    inner = "abcd"  # with the 4-byte mark, 8 bytes: 11 characters, 2 bits unused
    sent = wrap_cursor(inner)
    assert len(sent) % 4 and unwrap_cursor(sent) == inner
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    edited = [sent[:-1] + c for c in alphabet if c != sent[-1]]
    assert all(unwrap_cursor(cursor) != inner for cursor in edited)


@plays(V.iso_time_offset)
def test_iso_time_offset_writes_utc_as_a_zero_offset(variant: Api, default: Api) -> None:
    body = {"episode_id": variant.fx["episode_encrypted"], **DEVICE}
    mine = variant.request("POST", "playback", "films", json=body).json()["expires_at"]
    theirs = default.request("POST", "playback", "films", json=body).json()["expires_at"]
    assert theirs.endswith("Z") and mine == theirs[:-1] + "+00:00"
    films = variant.get("catalog", "films").json()["films"]
    stamps = [f["metadata_updated_at"] for f in films if f["metadata_updated_at"]]
    assert stamps and all(s.endswith("+00:00") for s in stamps)
    assert all(f["release_date"] is None or len(f["release_date"]) == 10 for f in films)
