"""A role's restore puts back what its organisation alone sees (the state model's film scenario
restores `films_changes` between its sequences, beside the other scenarios) and nothing that
another organisation sees too."""

from __future__ import annotations

from typing import Any

from sandbox_api import Api


def _film(api: Api, role: str, film_id: str) -> dict[str, Any]:
    body = api.get("catalog", role).json()
    return next(f for f in body["films"] if f["id"] == film_id)


def _listed(api: Api, role: str, episode_id: str) -> bool:
    return any(e["id"] == episode_id for e in api.get("catalog", role).json()["episodes"])


def _creative(api: Api, role: str, creative_id: str) -> dict[str, Any]:
    return api.get(f"creatives/{creative_id}", role).json()["data"]


def test_the_film_and_creative_of_films_changes_are_seen_by_that_organisation_alone(
    api: Api,
) -> None:
    fx = api.fx
    assert _listed(api, "films_changes", fx["changes_episode"])
    assert [f["id"] for f in api.get("catalog", "films_changes").json()["films"]] == [
        fx["changes_film_id"]
    ]
    for role in ("films", "limits", "unlicensed", "production"):
        films = api.get("catalog", role).json()["films"]
        assert fx["changes_film_id"] not in {f["id"] for f in films}
    assert api.get(f"creatives/{fx['changes_creative_id']}", "films").status_code == 404
    assert _creative(api, "films_changes", fx["changes_creative_id"])["creative_code"]


def test_a_restore_puts_back_the_organisations_own_data_and_nothing_shared(api: Api) -> None:
    fx = api.fx
    own_film, own_episode, own_creative = (
        fx["changes_film_id"], fx["changes_episode"], fx["changes_creative_id"]
    )  # fmt: skip
    before = _film(api, "films_changes", own_film), _creative(api, "films_changes", own_creative)
    shared = _film(api, "films", fx["film_id"])
    for path, body in (
        (f"films/{own_film}/retitle", {"title": "Changed"}),
        (f"episodes/{own_episode}/withdraw", None),
        (f"creatives/{own_creative}/retitle", {"title": "Changed"}),
        (f"series/{before[0]['code']}/withdraw", None),
        (f"films/{fx['film_id']}/retitle", {"title": "Shared change"}),
        (f"creatives/{fx['creative_id']}/retitle", {"title": "Shared change"}),
    ):
        assert api.admin("POST", path, body).is_success, path
    assert _film(api, "films_changes", own_film)["title"] == "Changed"
    assert not _listed(api, "films_changes", own_episode)

    assert api.admin("POST", "roles/films_changes/restore").is_success

    assert _film(api, "films_changes", own_film) == before[0]
    assert _listed(api, "films_changes", own_episode)
    assert _creative(api, "films_changes", own_creative) == before[1]
    assert api.get(f"series/{before[0]['code']}", "films_changes").json()["data"]["status"] != (
        "withdrawn"
    )
    assert _film(api, "films", fx["film_id"])["title"] == "Shared change" != shared["title"]
    assert _creative(api, "films", fx["creative_id"])["name"] == "Shared change"
    assert "own_data" in api.admin("GET", "state").json()["role_restore"]
