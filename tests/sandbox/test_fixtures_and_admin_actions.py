"""Fixtures, roles and admin actions the scenarios needed: `video_not_ready`, `videos_other`,
licence and episode actions, named outages (ARCHITECTURE: Fixtures, Key roles, admin API)."""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_api import Api, walk_envelope, walk_videos

DEVICE = {"union_info": "device-0001-abcd", "drm_kek": "kek-0001-abcdefgh"}


def test_video_not_ready_is_granted_skipped_in_lists_and_404_on_read(api: Api) -> None:
    vid = api.fx["video_not_ready"]
    video = api.sb.store.videos[vid]
    assert not video.ready and not video.archived
    assert vid in api.sb.store.collections[api.fx["collection_code"]].videos
    assert vid not in {r["id"] for r in walk_videos(api, "videos")}
    single = api.get(f"videos/{vid}", "videos")
    assert single.status_code == 404 and single.json()["error"] == "video_not_found"
    assert "error_code" not in single.json()
    api.admin("POST", "faults", {"enable": ["videos_not_ready_listed"]})
    assert vid in {r["id"] for r in walk_videos(api, "videos")}


def test_videos_other_is_a_second_video_organisation_with_other_grants(api: Api) -> None:
    code, other_code = api.fx["playlist_code"], api.fx["playlist_code_not_granted"]
    mine = api.get(f"playlists/{code}", "videos").json()["data"]
    theirs = api.get(f"playlists/{code}", "videos_other").json()["data"]
    assert mine["granted"] and theirs["granted"]
    assert mine["metadata_version"] == theirs["metadata_version"]
    assert mine["content_version"] != theirs["content_version"]  # own media spaces differ
    assert not api.get(f"playlists/{other_code}", "videos").json()["data"]["granted"]
    assert api.get(f"playlists/{other_code}", "videos_other").json()["data"]["granted"]
    config = api.get("config", "videos_other").json()
    assert sorted(config["key"]["scopes"]) == ["metadata:read", "videos:read"]
    assert api.get("videos", "videos_other").status_code == 200
    assert api.get("catalog", "videos_other").status_code == 200


def catalog_film_ids(api: Api) -> set[str]:
    return {f["id"] for f in api.get("catalog", "films").json()["films"]}


def series_item(api: Api, code: str) -> dict[str, Any] | None:
    items = walk_envelope(api, "series", "films", limit=100)
    return next((i for i in items if i["code"] == code), None)


@pytest.mark.parametrize(("action", "reason"), [("end", "outside_window"), ("suspend", None)])
def test_licence_end_or_suspend_withdraws_the_film_and_restore_brings_it_back(
    api: Api, action: str, reason: str | None
) -> None:
    film_id, code = api.fx["film_id"], api.fx["series_code"]
    assert film_id in catalog_film_ids(api)
    answer = api.admin("POST", f"licences/{film_id}/{action}")
    assert answer.status_code == 200
    assert film_id not in catalog_film_ids(api)
    item = series_item(api, code)
    assert item is not None and item["status"] == "withdrawn"
    assert item["withdrawn_at"] == int(api.sb.now()) and item["content_version"] is None
    assert api.get(f"series/{code}", "films").json()["code"] == 4040
    ticket = api.request(
        "POST", "playback", "films", json={"episode_id": api.fx["episode_encrypted"], **DEVICE}
    )
    assert ticket.status_code == 403
    assert ticket.json()["reason"] == (reason or "entitlement_suspended")
    assert api.sb.store.changed_licences() == [f"org_films/{film_id}"]
    api.admin("POST", f"licences/{film_id}/restore")
    assert film_id in catalog_film_ids(api)
    assert series_item(api, code)["status"] == "active"  # type: ignore[index]


def test_licence_actions_refuse_unknown_films_and_actions_and_reset_restores(api: Api) -> None:
    assert api.admin("POST", "licences/no-such-film/end").status_code == 404
    assert api.admin("POST", f"licences/{api.fx['film_id']}/cancel").status_code == 404
    unlicensed = api.sb.store.episodes[api.fx["episode_entitlement_not_found"]].film_id
    assert api.admin("POST", f"licences/{unlicensed}/suspend").status_code == 404
    api.admin("POST", f"licences/{api.fx['film_id']}/end")
    api.admin("POST", "reset")
    assert api.fx["film_id"] in catalog_film_ids(api)
    assert api.admin("GET", "state").json()["licences_changed"] == []


def test_episode_withdraw_and_publish(api: Api) -> None:
    film_id, episode_id = api.fx["film_id"], api.fx["episode_encrypted"]
    number = api.fx["episode_encrypted_no"]

    def row() -> dict[str, Any]:
        episodes = api.get("catalog", "films").json()["episodes"]
        return next(e for e in episodes if e["film_id"] == film_id and e["episode_no"] == number)

    assert row()["id"] == episode_id
    assert api.admin("POST", f"episodes/{episode_id}/withdraw").status_code == 200
    assert row()["status"] == "planned" and row()["id"] is None  # planned_episodes covers it
    body = {"episode_id": episode_id, **DEVICE}
    refused = api.request("POST", "playback", "films", json=body)
    assert refused.status_code == 404 and refused.json()["error_code"] == "not_ready"
    assert api.admin("GET", "state").json()["episodes_withdrawn"] == [episode_id]
    api.admin("POST", f"episodes/{episode_id}/publish")
    assert row()["id"] == episode_id
    assert api.request("POST", "playback", "films", json=body).status_code == 200
    assert api.admin("POST", "episodes/nope/withdraw").status_code == 404
    assert api.admin("POST", f"episodes/{episode_id}/hide").status_code == 404


OUTAGE_CASES = [
    ("catalog", "catalog", "films", None),
    ("config", "config", "films", None),
    ("series", "series", "films", 5030),
    ("series", "series/{series_code}", "films", 5030),
    ("playlists", "playlists", "videos", 5030),
    ("playlists", "playlists/{playlist_code}", "videos", 5030),
    ("creatives", "creatives", "films", 5030),
    ("creatives", "creatives/{creative_id}", "films", 5030),
    ("creatives", "creatives/{creative_id}/file", "films", 5030),
]


@pytest.mark.parametrize(("area", "path", "role", "code"), OUTAGE_CASES)
def test_outage_answers_the_spec_503_with_retry_after(
    api: Api, area: str, path: str, role: str, code: int | None
) -> None:
    url = path.format(**api.fx)
    assert api.admin("POST", "outages", {"area": area, "on": True}).status_code == 200
    down = api.get(url, role)
    assert down.status_code == 503 and int(down.headers["retry-after"]) >= 1
    body = down.json()
    if code is None:
        assert body["error_code"] == "service_unavailable"
    else:
        assert body["code"] == code and "data" not in body
    assert body["request_id"] == down.headers["service-request-id"]
    assert down.headers["cache-control"] == "no-store"
    assert api.admin("GET", "state").json()["outages"] == [area]
    api.admin("POST", "outages", {"area": area, "on": False})
    assert api.get(url, role).status_code in (200, 302)


def test_outage_touches_only_its_area_and_reset_ends_it(api: Api) -> None:
    api.admin("POST", "outages", {"area": "series", "on": True})
    assert api.get("catalog", "films").status_code == 200
    assert api.get("creatives", "films").status_code == 200
    ticket = api.request(
        "POST", "playback", "films", json={"episode_id": api.fx["episode_encrypted"], **DEVICE}
    )
    assert ticket.status_code == 200
    assert api.get("series", "films").status_code == 503
    assert api.get("series", "revoked").status_code == 401  # the key is checked first
    api.admin("POST", "reset")
    assert api.get("series", "films").status_code == 200


@pytest.mark.parametrize(
    "body", [{"area": "videos", "on": True}, {"area": "catalog"}, {"area": "catalog", "on": 1}]
)
def test_outage_refuses_bad_bodies(api: Api, body: dict[str, Any]) -> None:
    assert api.admin("POST", "outages", body).status_code == 400


def test_outage_faults_drop_retry_after_or_answer_500(api: Api) -> None:
    api.admin("POST", "outages", {"area": "catalog", "on": True})
    api.admin("POST", "outages", {"area": "series", "on": True})
    api.admin("POST", "faults", {"enable": ["outage_retry_after_missing", "outage_envelope_500"]})
    catalog = api.get("catalog", "films")
    assert catalog.status_code == 503 and "retry-after" not in catalog.headers
    series = api.get("series", "films")
    assert series.status_code == 500 and series.json()["code"] == 5000


def test_second_org_faults_change_metadata_version_and_serve_not_ready(api: Api) -> None:
    api.admin(
        "POST",
        "faults",
        {"enable": ["playlist_metadata_version_per_org", "video_not_ready_served"]},
    )
    code = api.fx["playlist_code"]
    mine = api.get(f"playlists/{code}", "videos").json()["data"]["metadata_version"]
    theirs = api.get(f"playlists/{code}", "videos_other").json()["data"]["metadata_version"]
    assert mine != theirs
    assert api.get(f"videos/{api.fx['video_not_ready']}", "videos").status_code == 200
