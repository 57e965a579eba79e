"""Authentication order, scopes and key states (spec: Authentication; Errors)."""

from __future__ import annotations

import pytest
from sandbox_api import Api

# role -> endpoints it opens (spec: Authentication, scopes table); config opens for everyone.
OPENS = {
    "films": {"catalog", "series", "creatives"},
    "films_metadata": {"catalog", "series"},
    "films_playback": set(),
    "films_creatives": {"creatives"},
    "webhooks": set(),
    "videos": {"catalog", "series", "videos"},
}
ENDPOINTS = ("catalog", "series", "creatives", "videos", "config")


@pytest.mark.parametrize("role", sorted(OPENS))
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_scopes_open_exactly_their_endpoints(api: Api, role: str, endpoint: str) -> None:
    response = api.get(endpoint, role)
    expected = endpoint == "config" or endpoint in OPENS[role]
    assert (response.status_code == 200) is expected, response.text
    if not expected:
        assert response.status_code == 403
        body = response.json()
        assert body.get("code", 4030) == 4030 and "error_code" not in body


def test_missing_and_malformed_authorization_are_401(api: Api) -> None:
    key = api.key("films")
    for header in (None, key, f"Basic {key}", f"bearer {key}", f"Bearer  {key}", "Bearer "):
        headers = {} if header is None else {"Authorization": header}
        response = api.get("catalog", headers=headers)
        assert response.status_code == 401
        assert "error_code" not in response.json()
    assert api.get(f"catalog?api_key={key}").status_code == 401


def test_envelope_families_tell_missing_from_invalid(api: Api) -> None:
    assert api.get("series").json()["code"] == 4010
    assert api.get("series", "revoked").json()["code"] == 4011
    bad = api.get("creatives", headers={"Authorization": "Bearer svc_live_" + "x" * 32})
    assert (bad.status_code, bad.json()["code"]) == (401, 4011)


def test_bad_version_header_wins_over_missing_key(api: Api) -> None:
    response = api.get("series", headers={"Service-Version": "2020-01-01"})
    assert response.status_code == 400
    body = response.json()
    assert body["error_code"] == "unsupported_version"
    assert body["supported_versions"] == ["2026-10-02"] and "upgrade_to" not in body


def test_unverifiable_key_is_503_with_retry_after(api: Api) -> None:
    flat = api.get("config", "unverifiable")
    assert flat.status_code == 503 and flat.json()["error_code"] == "service_unavailable"
    assert flat.headers["retry-after"].isdigit()
    envelope = api.get("creatives", "unverifiable")
    assert (envelope.status_code, envelope.json()["code"]) == (503, 5031)


def test_suspended_organisation_after_scope_in_both_formats(api: Api) -> None:
    flat = api.get("catalog", "suspended")
    assert flat.status_code == 403
    assert flat.json()["error"] == "org_suspended" and "error_code" not in flat.json()
    assert api.get("series", "suspended").json()["code"] == 4031
    assert api.get("videos", "suspended").json()["error"] == "org_suspended"


def test_videos_need_a_key_bound_to_an_app(api: Api) -> None:
    response = api.get("videos", "videos_unbound")
    assert response.status_code == 403
    assert response.json()["error"] == "app_not_registered" and "error_code" not in response.json()


def test_rate_limit_comes_last_and_renders_flat_429(api: Api) -> None:
    api.admin("POST", "roles/films/limits", {"counter": "creatives", "limit": 2})
    assert [api.get("creatives", "films").status_code for _ in range(2)] == [200, 200]
    refused = api.get("creatives", "films")
    assert refused.status_code == 429
    assert refused.json()["error_code"] == "rate_limited" and "code" not in refused.json()
    assert refused.headers["x-ratelimit-limit"] == "2"
    assert refused.headers["x-ratelimit-window"] == "60"
    assert int(refused.headers["retry-after"]) >= 1
    assert api.get("creatives").status_code == 401  # invalid requests are not counted


def test_rotation_and_revocation_take_effect_at_once(api: Api) -> None:
    old = api.key("films")
    new = api.admin("POST", "roles/films/rotate").json()["key"]
    assert new.startswith("svc_live_") and len(new) == 41
    assert api.get("config", headers={"Authorization": f"Bearer {old}"}).status_code == 401
    assert api.get("config", headers={"Authorization": f"Bearer {new}"}).status_code == 200
    api.admin("POST", "roles/films/revoke")
    assert api.get("config", headers={"Authorization": f"Bearer {new}"}).status_code == 401
    assert api.admin("POST", "roles/films/rotate").status_code == 400
