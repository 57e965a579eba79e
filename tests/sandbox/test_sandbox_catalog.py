"""GET /catalog (spec: GET /catalog; Resources > Film, Episode; Errors > Catalog)."""

from __future__ import annotations

from itertools import groupby

import pytest
from sandbox_api import Api


def walk(api: Api, limit: int | None) -> list[dict]:  # type: ignore[type-arg]
    pages, cursor = [], None
    for _ in range(100):
        params = {} if limit is None else {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        body = api.get("catalog", "films", params=params).json()
        pages.append(body)
        cursor = body["next_cursor"]
        if cursor is None:
            return pages
    raise AssertionError("walk did not end")


def test_whole_catalog_is_sorted_grouped_and_has_placeholders(api: Api) -> None:
    body = api.get("catalog", "films").json()
    assert set(body) == {"films", "episodes"}
    orders = [f["display_order"] for f in body["films"]]
    assert orders == sorted(orders) and len(orders) >= 120
    film_order = [f["id"] for f in body["films"]]
    groups = [
        (k, [e["episode_no"] for e in g])
        for k, g in groupby(body["episodes"], lambda e: e["film_id"])
    ]
    assert [k for k, _ in groups] == [k for k in film_order if k in dict(groups)]
    assert all(nos == sorted(nos) for _, nos in groups)
    paged = next(f for f in body["films"] if f["id"] == api.fx["episode_paged_film"])
    rows = [e for e in body["episodes"] if e["film_id"] == paged["id"]]
    assert [e["episode_no"] for e in rows] == list(range(1, paged["planned_episodes"] + 1))
    placeholder = rows[api.fx["placeholder_episode_no"] - 1]
    assert placeholder["status"] == "planned" and placeholder["id"] is None
    assert placeholder["stream_ready"] is False and placeholder["vid_ready"] is False


def test_paged_walk_equals_the_whole_catalog(api: Api) -> None:
    whole = api.get("catalog", "films").json()
    pages = walk(api, 10)
    assert len(pages) > 10 and all(len(p["films"]) <= 10 for p in pages)
    assert [f["id"] for p in pages for f in p["films"]] == [f["id"] for f in whole["films"]]
    assert sum(len(p["episodes"]) for p in pages) == len(whole["episodes"])
    assert pages[-1]["links"]["next"] is None and pages[0]["links"]["next"].startswith("http://")


def test_cursor_without_limit_pages_by_50(api: Api) -> None:
    first = api.get("catalog", "films", params={"limit": 1}).json()
    second = api.get("catalog", "films", params={"cursor": first["next_cursor"]}).json()
    assert len(second["films"]) == 50


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=201", "limit=", "limit=1.5", "cursor=abc", "cursor="]
)
def test_bad_limit_or_cursor_is_400_invalid_request(api: Api, query: str) -> None:
    response = api.get(f"catalog?{query}", "films")
    assert response.status_code == 400 and response.json()["error_code"] == "invalid_request"


def test_cursor_of_another_endpoint_is_refused(api: Api) -> None:
    cursor = api.get("creatives", "films", params={"limit": 1}).json()["data"]["next_cursor"]
    assert api.get("catalog", "films", params={"cursor": cursor}).status_code == 400


def test_unlicensed_organisation_gets_empty_arrays(api: Api) -> None:
    assert api.get("catalog", "unlicensed").json() == {"films": [], "episodes": []}


def test_films_outside_their_licence_are_left_out(api: Api) -> None:
    ids = {e["id"] for e in api.get("catalog", "films").json()["episodes"]}
    for name in (
        "episode_outside_window",
        "episode_entitlement_suspended",
        "episode_streaming_disabled",
        "episode_entitlement_not_found",
    ):
        assert api.fx[name] not in ids
    assert api.fx["episode_encrypted"] in ids
