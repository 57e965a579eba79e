"""The admin client's licence, episode and outage calls (ARCHITECTURE: Sandbox admin API)."""

from __future__ import annotations

import json

import httpx
import pytest
from harness_support import client_for, make_profile

from delivery_conformance.exceptions import HarnessFailure
from delivery_conformance.target.admin import (
    AdminClient,
    has_organisation_clocks,
    restores_own_data,
)


def recording_admin(status: int = 200) -> tuple[AdminClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json={"ok": True})

    profile = make_profile()
    assert profile.admin is not None
    return AdminClient(profile.admin, client_for(handler)), seen


def test_admin_posts_licence_episode_and_outage_actions_with_the_admin_token() -> None:
    admin, seen = recording_admin()
    admin.licence("film-1", "suspend")
    admin.episode("ep-1", "withdraw")
    admin.outage("series", True)
    assert [(r.method, r.url.path) for r in seen] == [
        ("POST", "/_sandbox/licences/film-1/suspend"),
        ("POST", "/_sandbox/episodes/ep-1/withdraw"),
        ("POST", "/_sandbox/outages"),
    ]
    assert json.loads(seen[2].content) == {"area": "series", "on": True}
    assert all(r.headers["authorization"] == "Bearer admin-token-123456" for r in seen)


def test_admin_action_refused_by_the_target_is_a_harness_failure() -> None:
    admin, _ = recording_admin(status=404)
    with pytest.raises(HarnessFailure, match="outages answered 404"):
        admin.outage("catalog", False)


@pytest.mark.parametrize(
    ("organisation_clocks", "sent", "changed"),
    [
        (True, {"advance": 10, "role": "limits"}, {"role:limits"}),
        (False, {"advance": 10}, {"clock"}),  # the admin API has one clock: the whole target's
    ],
)
def test_a_role_clock_is_asked_for_only_where_the_admin_api_keeps_one(
    organisation_clocks: bool, sent: dict[str, object], changed: set[str]
) -> None:
    admin, seen = recording_admin()
    admin.organisation_clocks = organisation_clocks
    admin.clock(advance=10, role="limits")
    assert json.loads(seen[0].content) == sent
    assert admin.changed == changed  # what the test must hold alone: its organisation, or all


@pytest.mark.parametrize(
    ("state", "clocks"),
    [
        ({"clock": {"now": 1.0, "offset": 0, "roles": {"films": 1.0, "limits": 61.0}}}, True),
        ({"clock": {"now": 1.0, "offset": 0}}, False),  # an admin API with one clock
        ({"clock": {"now": 1.0, "roles": {}}}, False),
        ({"clock": {"now": 1.0, "roles": {"films": "soon"}}}, False),
        ({"clock": {"now": 1.0, "roles": {"films": True}}}, False),
        (["not", "a", "state"], False),
        (None, False),
    ],
)
def test_organisation_clocks_are_read_from_the_admin_state(state: object, clocks: bool) -> None:
    assert has_organisation_clocks(state) is clocks


@pytest.mark.parametrize(
    ("state", "own_data"),
    [
        ({"role_restore": ["limits", "clock", "own_data"]}, True),
        ({"role_restore": ["limits", "clock"]}, False),  # a restore of keys and counters only
        ({"role_restore": "own_data"}, False),  # not a list
        ({"clock": {"now": 1.0}}, False),
        (None, False),
    ],
)
def test_an_own_data_restore_is_read_from_the_admin_state(state: object, own_data: bool) -> None:
    assert restores_own_data(state) is own_data


def test_a_twin_role_is_acted_on_and_the_asked_role_is_what_changed() -> None:
    admin, seen = recording_admin()
    admin.organisation_clocks = True
    admin.role_aliases = {"limits": "limits_b"}
    admin.set_limit("limits", "catalog", 3)
    admin.clock(advance=5, role="limits")
    admin.restore("films")  # not aliased: stays
    assert [r.url.path for r in seen] == [
        "/_sandbox/roles/limits_b/limits",
        "/_sandbox/clock",
        "/_sandbox/roles/films/restore",
    ]
    assert json.loads(seen[1].content) == {"advance": 5, "role": "limits_b"}
    assert admin.changed == {"role:limits", "role:films"}  # what the test declared it holds
