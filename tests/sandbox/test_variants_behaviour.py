"""Legal variants of behaviour: caches within the Freshness bounds, reuse, counters, paging and
the alternative readings (variants/caches.py, reuse.py, counters.py, paging.py, readings.py).

Each variant shows its behaviour; the default sandbox, asked the same, does not. Time moves
through the sandbox clock (`sb.clock.advance`, as time passing, not an admin change).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sandbox_api import Api, plays
from sandbox_playback_support import DEVICE

from delivery_sandbox.playback.policies import DEFAULT_BASES
from delivery_sandbox.state.context import Settings, build_sandbox
from delivery_sandbox.variants.caches import ADMIN_CHANGES, BOUNDS, LAGGING, Change, admin_change
from delivery_sandbox.variants.catalogue import VariantName as V
from delivery_sandbox.variants.paging import FULL_PAGES, PagePolicy


def post(api: Api, body: Any, role: str = "films") -> httpx.Response:
    return api.request("POST", "playback", role, json=body)


def ticket(api: Api, episode: str, **extra: Any) -> httpx.Response:
    return post(api, {"episode_id": episode, **DEVICE, **extra})


def catalog_ids(api: Api) -> set[str]:
    return {e["id"] for e in api.get("catalog", "films").json()["episodes"] if e["id"]}


def pages(
    api: Api, path: str, role: str, params: dict[str, Any], later: dict[str, Any] | None = None
) -> list[tuple[list[Any], bool]]:
    """(items, cursor given) of every page of a walk, in order (at most 300 pages); `later`:
    the query of the pages after the first, with the cursor (default: the first's)."""
    found: list[tuple[list[Any], bool]] = []
    query = params
    for _ in range(300):
        body = api.get(path, role, params=query).json()
        page = body.get("data", body)
        items = page.get("items", page.get("rows", page.get("films")))
        found.append((items, page["next_cursor"] is not None))
        if page["next_cursor"] is None:
            return found
        query = {**(params if later is None else later), "cursor": page["next_cursor"]}
    raise AssertionError("walk did not end")


def test_the_default_sandbox_plays_no_variant_policy() -> None:
    sb = build_sandbox(Settings())
    assert sb.bases is DEFAULT_BASES and sb.paging is FULL_PAGES and sb.views is None
    assert sb.serving("catalog") is sb


# -- reuse (POST /playback > Server-side reuse: best effort only) -------------------------------


@plays(V.no_reuse)
def test_no_reuse_mints_and_counts_a_new_ticket_for_every_repeat(
    variant: Api, default: Api
) -> None:
    for api, reused in ((variant, False), (default, True)):
        episode, org = api.fx["episode_encrypted"], api.sb.accounts.org_of("films")
        bucket = api.sb.limits.bucket(org)
        before = bucket.level(api.sb.now())
        first, again = (ticket(api, episode, viewer_ref="viewer-1") for _ in range(2))
        assert first.status_code == again.status_code == 200
        same = first.json()["play_auth_token"] == again.json()["play_auth_token"]
        assert same is reused
        assert before - bucket.level(api.sb.now()) == pytest.approx(1 if reused else 2)


@plays(V.short_reuse_window)
def test_short_reuse_window_reuses_only_while_20_minutes_are_left(
    variant: Api, default: Api
) -> None:
    for api, late_reuse in ((variant, False), (default, True)):
        episode = api.fx["episode_encrypted"]
        first = ticket(api, episode, viewer_ref="viewer-1").json()["play_auth_token"]
        assert ticket(api, episode, viewer_ref="viewer-1").json()["play_auth_token"] == first
        api.sb.clock.advance(11 * 60)  # 19 minutes of the 30 left
        later = ticket(api, episode, viewer_ref="viewer-1").json()["play_auth_token"]
        assert (later == first) is late_reuse


# -- caches (Limits > Freshness) -----------------------------------------------------------------


def test_every_lag_of_the_cache_is_inside_its_freshness_row() -> None:
    for change, (catalog, tickets) in BOUNDS.items():
        for bound in (catalog, tickets):
            assert bound is None or LAGGING.lag(change) < bound, change
    assert LAGGING.max_age < 30
    assert set(ADMIN_CHANGES.values()) <= set(Change)
    assert LAGGING.lag(Change.CREATED) <= 3 and LAGGING.lag(Change.SUBTITLE) == 0


def test_admin_actions_map_to_their_freshness_rows() -> None:
    assert admin_change(["licences", "f", "suspend"]) is Change.LICENCE
    assert admin_change(["licences", "f", "restore"]) is Change.CREATED  # the shorter reading
    assert admin_change(["episodes", "e", "publish"]) is Change.CREATED
    assert admin_change(["episodes", "e", "withdraw"]) is Change.PUBLICATION
    assert admin_change(["reset"]) is Change.CONTROL  # dropped at once instead: renew
    assert admin_change(["faults"]) is admin_change(["clock"]) is Change.CONTROL


def _withdrawn_seen(api: Api, episode: str) -> tuple[bool, int]:
    """(gone from the catalog, status of a ticket request) for `episode`."""
    return episode not in catalog_ids(api), ticket(api, episode).status_code


@plays(V.catalog_cache)
def test_catalog_cache_takes_a_withdrawal_in_within_20_s_and_a_publication_within_3_s(
    variant: Api, default: Api
) -> None:
    episode = variant.fx["episode_encrypted"]
    assert _withdrawn_seen(variant, episode) == (False, 200)  # the copy is taken here
    variant.admin("POST", f"episodes/{episode}/withdraw")
    variant.sb.clock.advance(19.5)
    assert _withdrawn_seen(variant, episode) == (False, 200)
    variant.sb.clock.advance(0.5)
    assert _withdrawn_seen(variant, episode) == (True, 404)
    variant.admin("POST", f"episodes/{episode}/publish")
    variant.sb.clock.advance(2.9)
    assert _withdrawn_seen(variant, episode) == (True, 404)
    variant.sb.clock.advance(0.1)
    assert _withdrawn_seen(variant, episode) == (False, 200)
    default.admin("POST", f"episodes/{episode}/withdraw")
    assert _withdrawn_seen(default, episode) == (True, 404)


@plays(V.catalog_cache)
def test_catalog_cache_takes_a_reset_in_at_once_and_renews_when_the_clock_goes_back(
    variant: Api,
) -> None:
    episode = variant.fx["episode_encrypted"]
    catalog_ids(variant)  # the copy is taken
    now = int(variant.sb.now())
    variant.sb.store.set_episode_published(episode, False, now)  # a change no copy has noted
    assert episode in catalog_ids(variant)
    variant.sb.clock.advance(-1)
    assert episode not in catalog_ids(variant)
    variant.admin("POST", "reset")  # the harness's way back to the start state: every copy
    assert episode in catalog_ids(variant)  # dropped (no Freshness row speaks of a reset)
    assert variant.sb.views is not None and variant.sb.views.copies[0] is not None


@plays(V.catalog_cache)
def test_catalog_cache_keeps_suspensions_and_keys_fresh(variant: Api) -> None:
    catalog_ids(variant)
    variant.admin("POST", "roles/films/suspend")
    assert variant.get("catalog", "films").status_code == 403  # checked apart from the store
    assert ticket(variant, variant.fx["episode_encrypted"]).status_code == 403
    variant.admin("POST", "roles/films_metadata/revoke")
    assert variant.get("catalog", "films_metadata").status_code == 401


@plays(V.catalog_cache)
def test_catalog_cache_serves_config_creatives_and_videos_fresh(variant: Api) -> None:
    episode = variant.fx["episode_signed"]
    variant.get("config", "films")
    catalog_ids(variant)
    variant.admin(
        "POST", f"episodes/{episode}/subtitles", {"lang": "nl", "url": "https://s/nl.vtt"}
    )
    assert "nl" in variant.get("config", "films").json()["subtitles"]["languages"]
    assert "nl" in [s["lang"] for s in ticket(variant, episode).json()["subtitles"]]


@plays(V.two_servers)
def test_two_servers_answer_in_turn_so_calls_seconds_apart_differ(
    variant: Api, default: Api
) -> None:
    for api, differ in ((variant, True), (default, False)):
        episode = api.fx["episode_encrypted"]
        catalog_ids(api), catalog_ids(api)  # both servers have read once
        api.admin("POST", f"episodes/{episode}/withdraw")
        api.sb.clock.advance(2)
        seen = [episode in catalog_ids(api) for _ in range(4)]
        assert (seen != [False] * 4) is differ
        assert (len(set(seen)) == 2) is differ
        api.sb.clock.advance(20)
        assert not any(episode in catalog_ids(api) for _ in range(2))


# -- counters (Limits) ---------------------------------------------------------------------------


def _admitted(api: Api, path: str, role: str, most: int) -> tuple[int, httpx.Response]:
    """How many requests pass before the first 429 (at most `most`), and that 429."""
    for count in range(most):
        answer = api.get(path, role)
        if answer.status_code == 429:
            return count, answer
    raise AssertionError(f"no 429 within {most} requests")


@plays(V.counting_high)
def test_counting_high_refuses_up_to_2_5_percent_early_and_never_a_small_limit(
    variant: Api, default: Api
) -> None:
    for api, admitted in ((variant, 586), (default, 600)):
        api.admin("POST", "roles/limits/limits", {"counter": "config", "limit": 600})
        count, refusal = _admitted(api, "config", "limits", 700)
        assert count == admitted and refusal.headers["x-ratelimit-limit"] == "600"
        api.admin("POST", "roles/limits/limits", {"counter": "catalog", "limit": 10})
        assert _admitted(api, "catalog", "limits", 20)[0] == 10
    org = variant.sb.accounts.org_of("films")
    assert variant.sb.limits.bucket(org).capacity == 10_537  # ceil(10,800 / 1.025)


@plays(V.raised_limits)
def test_raised_limits_show_in_config_and_the_admin_api_still_sets_exact_values(
    variant: Api, default: Api
) -> None:
    doors = variant.get("config", "films").json()["rate_limits"]["doors"]
    assert {name: door["limit"] for name, door in doors.items()} == {
        "catalog": 4_500,
        "playback": 16_200,
        "creatives": 4_500,
        "videos": 4_500,
        "config": 900,
    }
    assert default.get("config", "films").json()["rate_limits"]["doors"]["config"]["limit"] == 600
    variant.admin("POST", "roles/limits/limits", {"counter": "config", "limit": 50})
    assert variant.get("config", "limits").json()["rate_limits"]["doors"]["config"]["limit"] == 50
    assert _admitted(variant, "config", "limits", 100)[0] == 49  # one spent reading /config


@plays(V.shed_earlier)
def test_shed_earlier_sheds_prefetches_with_22_percent_left(variant: Api, default: Api) -> None:
    for api, shed in ((variant, True), (default, False)):
        api.admin("POST", "roles/limits/limits", {"counter": "playback", "limit": 100})
        api.admin("POST", "roles/limits/reset-limits")
        episode = api.fx["episode_encrypted"]
        for _ in range(79):
            assert ticket_as(api, "limits", episode, "play").status_code == 200
        prefetch = ticket_as(api, "limits", episode, "prefetch")  # 21 of 100 left
        assert (prefetch.status_code == 429) is shed
        if shed:
            assert prefetch.json()["reason"] == "prefetch_shed"


def ticket_as(api: Api, role: str, episode: str, intent: str) -> httpx.Response:
    return post(api, {"episode_id": episode, "intent": intent, **DEVICE}, role)


@plays(V.retry_after_three)
def test_retry_after_three_on_continuous_counters_only(variant: Api, default: Api) -> None:
    for api, wait in ((variant, "3"), (default, "1")):
        api.admin("POST", "roles/limits/limits", {"counter": "catalog", "limit": 60})  # 1 a second
        _, refusal = _admitted(api, "catalog", "limits", 70)
        assert refusal.headers["retry-after"] == wait
        api.admin("POST", "roles/limits/limits", {"counter": "config", "limit": 1})
        _, minute = _admitted(api, "config", "limits", 5)
        assert int(minute.headers["retry-after"]) == 60 - int(api.sb.now()) % 60


# -- paging (Paging and envelopes) ---------------------------------------------------------------

LISTS = (
    ("series", "films", {"limit": 10}),
    ("playlists", "videos", {"limit": 10}),
    ("creatives", "films", {"limit": 10}),
    ("videos", "videos", {"limit": 40}),
    ("catalog", "films", {"limit": 20}),
)


def _rows(walk: list[tuple[list[Any], bool]]) -> list[Any]:
    return [row for items, _ in walk for row in items]


@plays(V.short_pages)
@pytest.mark.parametrize(("path", "role", "params"), LISTS)
def test_short_pages_serve_half_a_limit_while_more_follow_and_the_same_rows(
    variant: Api, default: Api, path: str, role: str, params: dict[str, Any]
) -> None:
    mine, theirs = pages(variant, path, role, params), pages(default, path, role, params)
    assert _rows(mine) == _rows(theirs)
    limit = params["limit"]
    assert max(len(items) for items, _ in mine) <= (limit + 1) // 2 < limit
    assert len(mine) > len(theirs)


@plays(V.short_pages)
def test_short_pages_cut_the_catalog_cursor_page_under_50(variant: Api) -> None:
    walk = pages(variant, "catalog", "films", {"limit": 1}, later={})
    assert [len(items) for items, _ in walk[1:3]] == [25, 25]


@plays(V.empty_pages)
@pytest.mark.parametrize(("path", "role", "params"), LISTS)
def test_empty_pages_in_the_middle_and_at_the_end_of_every_walk(
    variant: Api, default: Api, path: str, role: str, params: dict[str, Any]
) -> None:
    mine, theirs = pages(variant, path, role, params), pages(default, path, role, params)
    assert _rows(mine) == _rows(theirs)
    assert mine[1] == ([], True) and mine[-1] == ([], False)
    assert theirs[1][0]


def test_the_default_page_policy_cuts_pages_as_the_sandbox_always_did() -> None:
    for total in range(6):
        for start in range(total + 1):
            for limit in (1, 2, 3, 5):
                for full in (False, True):
                    window = FULL_PAGES.window(start, total, limit, 0, full)
                    page = min(start + limit, total) - start
                    more = start + limit < total or (full and page == limit)
                    assert window.stop == start + page
                    assert (window.next_state is not None) is (page > 0 and more)
    assert FULL_PAGES.join([1, "a"], 0) == [1, "a"] and FULL_PAGES.split([1, "a"]) == ([1, "a"], 0)
    assert PagePolicy(empty=True).split([1, "a"]) is None  # a cursor without the walk's place


# -- readings ------------------------------------------------------------------------------------


@plays(V.device_fields_values)
def test_device_fields_values_lists_the_rejected_values(variant: Api, default: Api) -> None:
    body = {"episode_id": default.fx["episode_encrypted"], "union_info": " nil ", "drm_kek": 7}
    for api, fields in ((variant, [" nil ", "7"]), (default, ["union_info", "drm_kek"])):
        answer = post(api, body)
        assert answer.status_code == 400 and answer.json()["fields"] == fields


@plays(V.category_unknown_404)
@pytest.mark.parametrize("category", ["Upper-Case", "a--b", "-edge", "under_score"])
def test_category_unknown_404_reads_a_plausible_slug_as_an_unknown_category(
    variant: Api, default: Api, category: str
) -> None:
    for api, code in ((variant, 4040), (default, 4220)):
        assert api.get("playlists", "videos", params={"category": category}).json()["code"] == code
    for api in (variant, default):
        assert api.get("playlists", "videos", params={"category": "Not A Slug!"}).status_code == 422


@plays(V.episode_id_not_uuid_400)
def test_episode_id_not_uuid_400_reads_it_as_no_episode_id(variant: Api, default: Api) -> None:
    single, batch = {"episode_id": "not-a-uuid", **DEVICE}, {"episodes": [{"episode_id": "x"}]}
    refused = post(variant, single)
    assert refused.status_code == 400 and "error_code" not in refused.json()
    assert post(variant, batch).json()["error_code"] == "invalid_request"
    assert post(default, single).json()["error_code"] == "not_ready"
    assert post(default, batch).json()["items"][0]["status"] == 404


@plays(V.suspended_batch_per_item)
def test_suspended_batch_per_item_refuses_every_item_of_a_batch(variant: Api, default: Api) -> None:
    fx = default.fx
    batch = {"episodes": [{"episode_id": fx["episode_encrypted"]}, {"episode_id": "x"}], **DEVICE}
    items = post(variant, batch, "suspended")
    assert items.status_code == 200
    assert [(i["status"], i["error_code"], i["reason"]) for i in items.json()["items"]] == [
        (403, "not_entitled", "org_suspended")
    ] * 2
    whole = post(default, batch, "suspended")
    assert whole.status_code == 403 and whole.json()["reason"] == "org_suspended"
    single = post(variant, {"episode_id": fx["episode_encrypted"], **DEVICE}, "suspended")
    malformed = variant.request("POST", "playback", "suspended", content=b"not json")
    for answer in (single, malformed):
        assert answer.status_code == 403 and answer.json()["reason"] == "org_suspended"


@plays(V.unpaged_null_cursor)
def test_unpaged_null_cursor_adds_null_paging_fields(variant: Api, default: Api) -> None:
    mine, theirs = variant.get("catalog", "films").json(), default.get("catalog", "films").json()
    assert mine == {**theirs, "next_cursor": None, "links": {"next": None}}
    assert list(theirs) == ["films", "episodes"]


@plays(V.list_since_12_digits)
def test_list_since_12_digits_accepts_12_digits_on_series_and_playlists_only(
    variant: Api, default: Api
) -> None:
    since = {"updated_since": "100000000000"}
    for path, role in (("series", "films"), ("playlists", "videos")):
        answer = variant.get(path, role, params=since).json()
        assert answer["code"] == 0 and answer["data"]["items"] == []
        assert default.get(path, role, params=since).json()["code"] == 4220
        assert variant.get(path, role, params={"updated_since": "1" * 13}).status_code == 422
    assert variant.get("creatives", "films", params=since).json()["code"] == 4221
