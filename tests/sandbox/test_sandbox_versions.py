"""Dated versions (spec: Versioning; Common response headers, Deprecation/Sunset/Link)."""

from __future__ import annotations

from sandbox_api import Api


def test_retired_pin_answers_400_with_upgrade_to(ext: Api) -> None:
    response = ext.get("catalog", "retired_pin")
    assert response.status_code == 400
    body = response.json()
    assert body["upgrade_to"] == body["latest_version"] == "2026-10-02"
    assert "2026-05-01" not in body["supported_versions"]


def test_a_supported_header_serves_a_retired_pin(ext: Api) -> None:
    response = ext.get("config", "retired_pin", headers={"Service-Version": "2026-10-02"})
    assert response.status_code == 200
    assert response.json()["api"]["version"] == "2026-10-02"


def test_deprecated_version_sends_deprecation_headers_on_200_only(ext: Api) -> None:
    ok = ext.get("config", "deprecated_pin")
    assert ok.headers["service-version"] == "2026-08-01"
    assert ok.headers["deprecation"].startswith("@")
    assert ok.headers["sunset"].endswith("GMT")
    assert 'rel="deprecation"' in ok.headers["link"] and 'rel="sunset"' in ok.headers["link"]
    assert ok.json()["deprecations"][0]["version"] == "2026-08-01"
    error = ext.get("videos", "deprecated_pin")
    assert error.status_code == 403 and "deprecation" not in error.headers


def test_latest_version_has_no_deprecation_header(ext: Api) -> None:
    assert "deprecation" not in ext.get("config", "films").headers


def test_malformed_and_retired_headers_are_unsupported(ext: Api) -> None:
    for value in ("2026-5-1", "latest", "2026-05-01", "2099-01-01"):
        response = ext.get("config", "films", headers={"Service-Version": value})
        assert (
            response.status_code == 400 and response.json()["error_code"] == "unsupported_version"
        )
        assert response.headers["service-version"] == "2026-10-02"


def test_config_reports_version_pin_and_scopes(api: Api) -> None:
    body = api.get("config", "webhooks", headers={"Service-Version": "2026-10-02"}).json()
    assert body["api"]["pinned_version"] == body["api"]["version"] == "2026-10-02"
    assert body["key"] == {"scopes": ["webhooks:manage"], "test_organisation": True}
    assert set(body["rate_limits"]["doors"]) == {
        "catalog",
        "playback",
        "creatives",
        "videos",
        "config",
    }
    assert body["links"]["self"] == "http://127.0.0.1:8123/api/delivery/v1/config"
    assert api.get("config", "production").json()["key"]["test_organisation"] is False
