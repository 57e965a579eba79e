"""What the admin API's changes move, and that the reset takes every one of them back (spec:
Resources and their fields > Film `metadata_version`, Playlist detail `metadata_version`,
Creative record; docs/sandbox.md: Admin API)."""

from __future__ import annotations

from sandbox_api import Api


def playlist(api: Api) -> dict:
    response = api.get(f"playlists/{api.fx['playlist_code']}", "videos")
    assert response.status_code == 200, response.text
    detail: dict = response.json()["data"]
    return detail


def film(api: Api, film_id: str) -> dict:
    return next(f for f in api.get("catalog", "films").json()["films"] if f["id"] == film_id)


def test_a_retitled_playlist_moves_its_metadata_version_and_updated_at_until_the_reset(
    api: Api,
) -> None:
    before = playlist(api)
    answer = api.admin("POST", f"playlists/{before['code']}/retitle", {"title": "Core, again"})
    assert answer.status_code == 200
    after = playlist(api)
    assert after["title"] == "Core, again"
    assert after["metadata_version"] != before["metadata_version"]
    assert answer.json()["metadata_version"] == after["metadata_version"]
    assert after["updated_at"] > before["updated_at"]
    api.admin("POST", "reset")
    assert playlist(api) == before


def test_a_withdrawn_episode_moves_its_films_metadata_version_and_so_does_its_return(
    api: Api,
) -> None:
    episode = api.fx["episode_encrypted"]
    film_id = api.sb.store.episodes[episode].film_id
    before = film(api, film_id)
    assert api.admin("POST", f"episodes/{episode}/withdraw").status_code == 200
    withdrawn = film(api, film_id)
    assert withdrawn["metadata_version"] != before["metadata_version"]
    assert withdrawn["metadata_updated_at"] is not None
    assert api.admin("POST", f"episodes/{episode}/publish").status_code == 200
    assert film(api, film_id)["metadata_version"] != withdrawn["metadata_version"]
    api.admin("POST", "reset")
    assert film(api, film_id) == before


def test_the_reset_gives_a_renamed_creative_its_name_back(api: Api) -> None:
    creative = api.fx["creative_id"]
    before = api.get(f"creatives/{creative}", "films").json()["data"]
    answer = api.admin("POST", f"creatives/{creative}/retitle", {"title": "Renamed"})
    assert answer.status_code == 200
    assert api.get(f"creatives/{creative}", "films").json()["data"]["name"] == "Renamed"
    api.admin("POST", "reset")
    assert api.get(f"creatives/{creative}", "films").json()["data"] == before


def _config_limit(api: Api, role: str) -> int:
    response = api.get("config", role)
    assert response.status_code == 200, response.text
    limit: int = response.json()["rate_limits"]["doors"]["config"]["limit"]
    return limit


def test_restore_puts_back_only_the_roles_organisation(api: Api) -> None:
    """`roles/{role}/restore`: start limits, full counters, not suspended; other roles untouched."""
    for role in ("limits", "films"):
        assert api.admin(
            "POST", f"roles/{role}/limits", {"counter": "config", "limit": 7}
        ).is_success
    api.admin("POST", "roles/limits/suspend")
    assert api.get("config", "limits").status_code == 403
    assert api.admin("POST", "roles/limits/restore").is_success
    assert _config_limit(api, "limits") == 600  # the start limit, and answered: not suspended
    assert _config_limit(api, "films") == 7
    assert api.admin("POST", "reset").is_success
