"""The admin client's licence, episode and outage calls (ARCHITECTURE: Sandbox admin API)."""

from __future__ import annotations

import json

import httpx
import pytest
from harness_support import client_for, make_profile

from delivery_conformance.exceptions import HarnessFailure
from delivery_conformance.target.admin import AdminClient


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
