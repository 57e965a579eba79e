"""Each sandbox fault changes what it claims: the rule holds clean and breaks with the fault on."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sandbox_api import Api, make_api

from delivery_sandbox.faults.registry import FAULTS
from delivery_sandbox.http.versions import VersionSetName


def _status(api: Api, path: str, role: str | None = None, **kw) -> int:  # type: ignore[no-untyped-def]
    return api.get(path, role, **kw).status_code


def _items(api: Api, path: str, role: str) -> list[dict]:  # type: ignore[type-arg]
    items, params = [], {"limit": "100"}
    for _ in range(10):
        data = api.get(path, role, params=params).json()["data"]
        items += data["items"]
        if data["next_cursor"] is None:
            break
        params["cursor"] = data["next_cursor"]
    return items


def _strictly_after(api: Api) -> bool:
    pivot = api.get("creatives?limit=10", "films").json()["data"]["items"][5]["updated_at"]
    later = api.get(f"creatives?limit=100&updated_since={pivot}", "films").json()["data"]["items"]
    return all(c["updated_at"] > pivot for c in later)


def _last_playlist_page_has_cursor(api: Api) -> bool:
    total = len([i for i in api.get("playlists?limit=100", "videos").json()["data"]["items"]])
    data = api.get("playlists", "videos", params={"limit": total}).json()["data"]
    return len(data["items"]) == total and data["next_cursor"] is not None


def _rate_limited(api: Api) -> dict[str, str]:
    api.admin("POST", "roles/films/limits", {"counter": "config", "limit": 1})
    api.get("config", "films")
    return dict(api.get("config", "films").headers)


def _ordered(values: list) -> bool:  # type: ignore[type-arg]
    return values == sorted(values)


# fault -> a check that is True while the rule it names holds.
RULES: dict[str, Callable[[Api], bool]] = {
    "api_status_missing": lambda a: "service-api-status" in a.get("config", "films").headers,
    "service_version_missing": lambda a: "service-version" in a.get("config", "films").headers,
    "video_single_version_header": lambda a: (
        "service-version" not in a.get(f"videos/{a.fx['video_id']}", "videos").headers
    ),
    "request_id_bad_format": lambda a: (
        a.get("config").headers["service-request-id"].startswith("req_")
    ),
    "request_id_not_echoed": lambda a: "request_id" in a.get("catalog").json(),
    "cache_control_public": lambda a: (
        a.get("config", "films").headers["cache-control"] == "no-store"
    ),
    "deprecation_headers_missing": lambda a: (
        "deprecation" in a.get("config", "deprecated_pin").headers
    ),
    "ratelimit_limit_missing": lambda a: "x-ratelimit-limit" in _rate_limited(a),
    "cors_header_sent": lambda a: (
        not any(
            h.startswith("access-control")
            for h in a.get("config", "films", headers={"Origin": "https://x.test"}).headers
        )
    ),
    "cookie_set": lambda a: "set-cookie" not in a.get("config", "films").headers,
    "envelope_code_mismatch": lambda a: str(a.get("series").json()["code"]).startswith("401"),
    "wrong_method_404": lambda a: a.request("POST", "catalog").status_code == 405,
    "org_suspended_with_error_code": lambda a: (
        "error_code" not in a.get("config", "suspended").json()
    ),
    "version_checked_after_key": lambda a: (
        _status(a, "config", headers={"Service-Version": "1999-01-01"}) == 400
    ),
    "auth_scheme_lax": lambda a: (
        _status(a, "config", headers={"Authorization": f"Basic {a.key('films')}"}) == 401
    ),
    "revoked_key_accepted": lambda a: _status(a, "config", "revoked") == 401,
    "scope_not_enforced": lambda a: _status(a, "catalog", "webhooks") == 403,
    "config_lists_video_door": lambda a: (
        "video" not in a.get("config", "films").json()["rate_limits"]["doors"]
    ),
    "config_test_org_string": lambda a: (
        a.get("config", "films").json()["key"]["test_organisation"] is True
    ),
    "catalog_display_order_string": lambda a: all(
        isinstance(f["display_order"], int)
        for f in a.get("catalog?limit=5", "films").json()["films"]
    ),
    "catalog_sort_broken": lambda a: _ordered(
        [f["display_order"] for f in a.get("catalog", "films").json()["films"]]
    ),
    "catalog_episode_order_broken": lambda a: _ordered(
        [e["episode_no"] for e in a.get("catalog?limit=1", "films").json()["episodes"]]
    ),
    "catalog_placeholders_missing": lambda a: any(
        e["status"] == "planned" for e in a.get("catalog", "films").json()["episodes"]
    ),
    "catalog_bad_cursor_accepted": lambda a: _status(a, "catalog?cursor=forged", "films") == 400,
    "catalog_cursor_missing": lambda a: (
        a.get("catalog?limit=5", "films").json()["next_cursor"] is not None
    ),
    "creative_updated_at_iso": lambda a: all(
        isinstance(c["updated_at"], int)
        for c in a.get("creatives", "films").json()["data"]["items"]
    ),
    "creatives_order_broken": lambda a: _ordered(
        [
            (c["updated_at"], c["creative_id"])
            for c in a.get("creatives", "films").json()["data"]["items"]
        ]
    ),
    "creatives_updated_since_inclusive": _strictly_after,
    "creatives_empty_limit_accepted": lambda a: _status(a, "creatives?limit=", "films") == 422,
    "series_withdrawn_unlisted": lambda a: any(
        i["status"] == "withdrawn" for i in _items(a, "series", "films")
    ),
    "series_withdrawn_detail_served": lambda a: (
        _status(a, f"series/{a.fx['series_code_withdrawn']}", "films") == 404
    ),
    "playlists_open_to_film_orgs": lambda a: _status(a, "playlists", "films") == 403,
    "playlists_full_page_without_cursor": _last_playlist_page_has_cursor,
    "playlist_ungranted_media_shown": lambda a: (
        a.get(f"playlists/{a.fx['playlist_code_not_granted']}", "videos").json()["data"]["media"]
        is None
    ),
    "videos_not_ready_listed": lambda a: all(
        a.sb.store.videos[r["id"]].ready for r in a.get("videos?limit=200", "videos").json()["rows"]
    ),
    "videos_order_broken": lambda a: _ordered(
        [r["position"] for r in a.get("videos?collection=col-strength", "videos").json()["rows"]]
    ),
}


def test_every_fault_of_this_part_has_a_rule_check() -> None:
    assert set(RULES) <= set(FAULTS) and len(RULES) >= 30


@pytest.mark.parametrize("name", sorted(RULES))
def test_fault_breaks_the_rule_it_names(name: str) -> None:
    for enabled, holds in ((False, True), (True, False)):
        api = make_api(versions=VersionSetName.EXTENDED, faults=(name,) if enabled else ())
        try:
            assert RULES[name](api) is holds, f"{name} enabled={enabled}"
        finally:
            api.close()


def test_admin_switches_faults_and_reset_restores_the_start_set(api: Api) -> None:
    catalogue = api.admin("GET", "faults").json()
    assert {f["name"] for f in catalogue} == set(FAULTS)
    assert api.admin("POST", "faults", {"enable": ["cookie_set"]}).status_code == 200
    assert "set-cookie" in api.get("config", "films").headers
    assert api.admin("POST", "faults", {"enable": ["no_such_fault"]}).status_code == 400
    api.admin("POST", "reset")
    assert "set-cookie" not in api.get("config", "films").headers
