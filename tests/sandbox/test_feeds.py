"""Creatives, series, playlists and open videos (spec: those endpoints and their error tables)."""

from __future__ import annotations

import pytest
from sandbox_api import Api, walk_envelope, walk_videos


def test_creatives_are_ordered_and_updated_since_is_strict(api: Api) -> None:
    items = walk_envelope(api, "creatives", "films", limit=10)
    keys = [(c["updated_at"], c["creative_id"]) for c in items]
    assert keys == sorted(keys) and len(keys) >= 120
    assert len({c["creative_id"] for c in items}) == len(items)
    pivot = items[40]["updated_at"]
    later = walk_envelope(api, "creatives", "films", updated_since=pivot, limit=100)
    assert later and all(c["updated_at"] > pivot for c in later)
    assert api.fx["creative_other_org"] not in {c["creative_id"] for c in items}


@pytest.mark.parametrize(
    ("query", "code"),
    [("limit=", 4220), ("limit=101", 4220), ("updated_since=abc", 4221), ("cursor=zz", 4222)],
)
def test_creatives_list_validation_codes(api: Api, query: str, code: int) -> None:
    response = api.get(f"creatives?{query}", "films")
    assert response.status_code == 422 and response.json()["code"] == code
    assert "data" not in response.json()


@pytest.mark.parametrize(
    ("fixture", "status", "code"),
    [
        ("creative_not_ready", 409, 4090),
        ("creative_rights_ended", 403, 4032),
        ("creative_link_failure", 503, 5032),
        ("creative_other_org", 404, 4040),
        ("creative_hidden", 404, 4040),
    ],
)
def test_creative_file_error_rows(api: Api, fixture: str, status: int, code: int) -> None:
    response = api.get(f"creatives/{api.fx[fixture]}/file", "films")
    assert (response.status_code, response.json()["code"]) == (status, code)


def test_creative_file_redirects_or_answers_json(api: Api) -> None:
    cid = api.fx["creative_id"]
    redirect = api.get(f"creatives/{cid}/file", "films")
    assert redirect.status_code == 302 and redirect.headers["location"].startswith("http")
    data = api.get(f"creatives/{cid}/file?redirect=0", "films").json()["data"]
    assert data["expires_at"] == int(api.sb.now()) + 900
    record = api.get(f"creatives/{cid}", "films").json()["data"]
    assert record["final"]["ready"] is True and record["final"]["file_url"].endswith(".mp4")
    assert api.get("creatives/not-a-uuid", "films").json()["code"] == 4040


def test_series_list_keeps_withdrawn_and_detail_hides_them(api: Api) -> None:
    items = walk_envelope(api, "series", "films", limit=10)
    by_code = {i["code"]: i for i in items}
    withdrawn = by_code[api.fx["series_code_withdrawn"]]
    assert withdrawn["status"] == "withdrawn" and withdrawn["content_version"] is None
    assert withdrawn["episode_count"] is None and isinstance(withdrawn["withdrawn_at"], int)
    assert api.fx["series_code_unlicensed"] not in by_code
    assert api.get(f"series/{api.fx['series_code_withdrawn']}", "films").json()["code"] == 4040
    assert api.get(f"series/{api.fx['series_code_unlicensed']}", "films").json()["code"] == 4040
    detail = api.get(f"series/{api.fx['series_code_long']}", "films").json()["data"]
    names = [p["name"] for p in detail["media"]["playlists"]]
    assert names[:2] == [detail["code"], f"{detail['code']}-2"]
    assert by_code[detail["code"]]["content_version"] == detail["content_version"]


def test_admin_withdraw_moves_a_series_to_withdrawn(api: Api) -> None:
    code = api.fx["series_code"]
    assert api.admin("POST", f"series/{code}/withdraw").status_code == 200
    assert api.get(f"series/{code}", "films").status_code == 404
    api.admin("POST", "clock", {"advance": 31 * 86400})
    codes = {i["code"] for i in walk_envelope(api, "series", "films", limit=100)}
    assert code not in codes


def test_playlists_full_page_carries_a_cursor_and_last_page_may_be_empty(api: Api) -> None:
    total = len(walk_envelope(api, "playlists", "videos", limit=100))
    data = api.get("playlists", "videos", params={"limit": total}).json()["data"]
    assert len(data["items"]) == total and data["next_cursor"] is not None
    last = api.get("playlists", "videos", params={"limit": total, "cursor": data["next_cursor"]})
    assert last.json()["data"] == {"items": [], "next_cursor": None}


def test_playlists_categories_and_film_orgs(api: Api) -> None:
    assert api.get("playlists?category=nope", "videos").json()["code"] == 4040
    assert api.get("playlists?category=Not_A_Slug", "videos").json()["code"] == 4220
    withdrawn = walk_envelope(api, "playlists", "videos", category=api.fx["category_withdrawn"])
    assert withdrawn and all(i["status"] == "withdrawn" for i in withdrawn)
    assert api.get("playlists?category=pilates-classic", "videos").status_code == 404
    assert api.get("playlists", "films").json()["code"] == 4032
    assert api.get(f"playlists/{api.fx['playlist_code']}", "films").json()["code"] == 4032


def test_playlist_detail_granted_and_not(api: Api) -> None:
    granted = api.get(f"playlists/{api.fx['playlist_code']}", "videos").json()["data"]
    assert granted["granted"] is True and granted["media"] is not None
    assert all(c["ready"] and c["vid"] for c in granted["clips"])
    locked = api.get(f"playlists/{api.fx['playlist_code_not_granted']}", "videos").json()["data"]
    assert locked["media"] is None
    assert all(c["ready"] is False and c["vid"] is None for c in locked["clips"])
    assert (
        api.get(f"playlists/{api.fx['playlist_code_withdrawn']}", "videos").json()["code"] == 4040
    )


def test_videos_walk_skips_not_ready_and_links_expire_in_an_hour(api: Api) -> None:
    params = {"collection": api.fx["collection_code"], "limit": 10}
    rows = walk_videos(api, "videos", **params)
    body = api.get("videos", "videos", params=params).json()
    collection = api.sb.store.collections[api.fx["collection_code"]]
    ready = [
        v
        for v in collection.videos
        if api.sb.store.videos[v].ready and not api.sb.store.videos[v].archived
    ]
    assert [r["id"] for r in rows] == ready
    assert any(r["mp4"]["p720"] is None for r in rows) and all(r["mp4"]["p480"] for r in rows)
    assert body["expires_at"] > body["refresh_before"]


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("videos?collection=col-locked", 404, "collection_not_found"),
        ("videos?collection=col-draft", 404, "collection_not_found"),
        ("videos?limit=201", 400, None),
        ("videos?cursor=bad", 400, None),
        ("videos/not-a-uuid", 400, None),
        ("videos?collection=col-broken", 500, None),
    ],
)
def test_videos_error_rows(api: Api, path: str, status: int, error: str | None) -> None:
    response = api.get(path, "videos")
    assert response.status_code == status and "error_code" not in response.json()
    if error:
        assert response.json()["error"] == error


def test_video_single_read_lists_both_collections(api: Api) -> None:
    body = api.get(f"videos/{api.fx['video_two_collections']}", "videos").json()
    assert body["collections"][0] == body["row"]["collection"] and len(body["collections"]) == 2
    assert (
        api.get(f"videos/{api.fx['video_not_granted']}", "videos").json()["error"]
        == "video_not_found"
    )
    assert api.get(f"videos/{api.fx['video_broken']}", "videos").status_code == 500
