"""Safe catalog sync, pure and over MockTransport (spec: Limits > Freshness (upper bounds),
"Catalog paging"; GET /catalog; Resources > Film, Episode)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_support import Rig, json_response, list_and_detail_server

from delivery_client import RetriesExhausted
from delivery_client.catalog import FilmRecord, apply_walk, merge_pages
from delivery_client.rules import is_free
from delivery_client.state import State
from delivery_client.sync import sync_catalog


def film(film_id: str, title: str = "t", **extra: object) -> dict:
    return {"id": film_id, "title": title, "slug": f"s-{film_id}", **extra}


def episode(film_id: str, number: int, **extra: object) -> dict:
    return {
        "id": f"{film_id}-{number}",
        "film_id": film_id,
        "episode_no": number,
        "status": "published",
        "stream_ready": True,
        "vid_ready": True,
        **extra,
    }


def test_duplicates_across_pages_keep_the_later_copy_cli_044_cat_066() -> None:
    pages = [
        {"films": [film("a", "old")], "episodes": [episode("a", 1)]},
        {"films": [film("b"), film("a", "new")], "episodes": [episode("b", 1), episode("a", 2)]},
    ]
    walk = merge_pages(pages)
    assert walk["a"][0]["title"] == "new" and [e["episode_no"] for e in walk["a"][1]] == [2]


def test_a_film_becomes_unavailable_only_after_two_complete_walks_without_it_cli_046_cat_066() -> (
    None
):
    view = apply_walk({}, merge_pages([{"films": [film("a"), film("b")], "episodes": []}]))
    walk_without_b = merge_pages([{"films": [film("a")], "episodes": []}])
    once = apply_walk(view, walk_without_b)
    assert once["b"].available and once["b"].missed == 1
    twice = apply_walk(once, walk_without_b)
    assert not twice["b"].available and twice["b"].missed == 2
    back = apply_walk(twice, merge_pages([{"films": [film("a"), film("b")], "episodes": []}]))
    assert back["b"].available and back["b"].missed == 0


def test_null_vid_ready_kept_and_signed_links_never_stored_cat_078_cli_039() -> None:
    first = apply_walk({}, merge_pages([{"films": [film("a")], "episodes": [episode("a", 1)]}]))
    signed = "https://cdn.test/cover.jpg?sig=abc&exp=1"
    page = {
        "films": [film("a", materials=[{"kind": "poster", "url": signed, "mid": "m"}])],
        "episodes": [episode("a", 1, vid_ready=None, poster_signed_url=signed)],
    }
    second = apply_walk(first, merge_pages([page]))
    row = second["a"].episodes[0]
    assert row["vid_ready"] is True and "poster_signed_url" not in row
    assert second["a"].film["materials"] == [{"kind": "poster", "mid": "m"}]


def test_unknown_enum_values_and_missing_optional_fields_are_kept_cli_002_gen_010() -> None:
    page = {
        "films": [{"id": "a", "audience": "martians", "status": "brand_new"}],
        "episodes": [{"film_id": "a", "episode_no": 1, "status": "teaser"}],
    }
    view = apply_walk({}, merge_pages([page]))
    assert view["a"].film["audience"] == "martians" and view["a"].episodes[0]["status"] == "teaser"


@pytest.mark.parametrize(
    ("free_until", "free"),
    [
        (2, [True, True, False]),
        (0, [False, False, False]),
        (None, [False, False, False]),
        ("2", [False] * 3),
    ],
)
def test_free_episodes_follow_free_until_episode_cat_077(
    free_until: object, free: list[bool]
) -> None:
    assert [is_free({"free_until_episode": free_until}, n) for n in (1, 2, 3)] == free


def catalog_server(
    pages: dict[str | None, httpx.Response], log: list[str]
) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        log.append(str(request.url.query.decode()))
        return pages[request.url.params.get("cursor")]

    return handler


def test_sync_prefers_one_unpaged_response_cli_043(rig: Callable[..., Rig], tmp_path: Path) -> None:
    log: list[str] = []
    r = rig(catalog_server({None: json_response(200, {"films": [film("a")], "episodes": []})}, log))
    state = State(tmp_path / "s.sqlite")
    sync_catalog(r.client, state)
    assert log == [""]  # no limit, no cursor: one consistent snapshot
    assert set(state.films()) == {"a"}


def test_a_walk_with_a_failed_page_applies_nothing_cli_045(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    state = State(tmp_path / "s.sqlite")
    state.replace_films(
        {
            "a": FilmRecord("a", film("a"), (), True, 0),
            "b": FilmRecord("b", film("b"), (), True, 1),
        },
        3,
    )
    pages = {
        None: json_response(200, {"films": [film("a")], "episodes": [], "next_cursor": "p2"}),
        "p2": json_response(500, {"error": "x"}),
    }
    r = rig(catalog_server(pages, []))
    with pytest.raises(RetriesExhausted):
        sync_catalog(r.client, state, paged=True)
    assert state.films()["b"].available and state.films()["b"].missed == 1
    assert state.meta("catalog_walks") == "3"


def test_paged_walk_deduplicates_in_the_store_cli_044(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    pages = {
        None: json_response(200, {"films": [film("a", "v1")], "episodes": [], "next_cursor": "p2"}),
        "p2": json_response(200, {"films": [film("a", "v2")], "episodes": [], "next_cursor": None}),
    }
    state = State(tmp_path / "s.sqlite")
    sync_catalog(rig(catalog_server(pages, [])).client, state, paged=True)
    assert {k: v.film["title"] for k, v in state.films().items()} == {"a": "v2"}


def test_watch_polls_on_a_schedule_of_minutes_cli_048(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    from delivery_client.sync import watch_catalog

    r = rig(catalog_server({None: json_response(200, {"films": [film("a")], "episodes": []})}, []))
    results = watch_catalog(r.client, State(tmp_path / "s.sqlite"), 3, interval=5.0)
    assert len(results) == 3 and r.clock.sleeps == [60.0, 60.0]  # never closer than a minute


def series_server(
    versions: dict[str, str], log: list[str]
) -> Callable[[httpx.Request], httpx.Response]:
    items = [
        {"code": code, "status": "active", "content_version": v} for code, v in versions.items()
    ]
    items.append({"code": "GONE", "status": "withdrawn", "content_version": None})
    return list_and_detail_server(log, "/series", items, series_detail)


def series_detail(code: str) -> dict[str, Any]:
    return {
        "code": code,
        "tags": [{"slug": "revenge", "name": "Revenge"}, {"slug": "ceo", "name": "CEO"}],
        "images": [
            {"kind": "poster_3_4", "url": "https://img.test/p.jpg"},
            {"kind": "hologram_3d", "url": "https://img.test/h.jpg"},
        ],
        "episodes": [
            {"ep_number": 1, "subtitles": [{"lang": "en", "url": "https://s.test/1.vtt"}]}
        ],
    }


def test_series_detail_is_read_only_when_content_version_changed_cli_035_cli_036(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    state, log = State(tmp_path / "s.sqlite"), []
    from delivery_client.listings import sync_series

    versions = {"SB000001": "v1", "SB000002": "v1"}
    assert sync_series(rig(series_server(versions, log)).client, state) == (3, 2)
    versions["SB000002"] = "v2"
    log.clear()
    assert sync_series(rig(series_server(versions, log)).client, state) == (3, 1)
    assert log == ["/api/delivery/v1/series", "/api/delivery/v1/series/SB000002"]
    detail = json.loads(
        state._db.execute("SELECT detail FROM series WHERE code='SB000002'").fetchone()[0]
    )
    assert sorted(detail["tags"]) == ["ceo", "revenge"]  # mapped by slug
    assert [i["kind"] for i in detail["images"]] == ["poster_3_4"]  # the unknown kind is skipped
    assert "https://" not in json.dumps(detail)  # no image or subtitle link stored


def test_an_identical_walk_takes_the_fast_path_and_still_counts_missed_walks_cli_046(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    both = json_response(200, {"films": [film("a"), film("b")], "episodes": [episode("a", 1)]})
    only_a = {"films": [film("a")], "episodes": [episode("a", 1)]}
    state = State(tmp_path / "s.sqlite")
    sync_catalog(rig(catalog_server({None: both}, [])).client, state)
    first = state.meta("catalog_digest")
    sync_catalog(rig(catalog_server({None: json_response(200, only_a)}, [])).client, state)
    assert state.meta("catalog_digest") != first and state.films()["b"].missed == 1
    result = sync_catalog(rig(catalog_server({None: json_response(200, only_a)}, [])).client, state)
    assert (result.films_seen, result.available, result.unavailable) == (1, 1, 1)
    assert not state.films()["b"].available and state.films()["b"].missed == 2
    assert state.films()["a"].available and state.meta("catalog_walks") == "3"
