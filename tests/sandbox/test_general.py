"""Headers, paths, hosts (spec: General rules; Common response headers; Errors > Every path)."""

from __future__ import annotations

import re

import pytest
from sandbox_api import Api

REQUEST_ID = re.compile(r"\Areq_[0-9A-HJKMNP-TV-Z]{26}\Z")
COMMON = ("service-api-status", "service-version", "service-request-id", "cache-control")


def assert_common(response) -> None:  # type: ignore[no-untyped-def]
    assert response.headers["service-api-status"] == "beta"
    assert response.headers["cache-control"] == "no-store"
    assert REQUEST_ID.match(response.headers["service-request-id"])
    assert "access-control-allow-origin" not in response.headers
    assert "set-cookie" not in response.headers


@pytest.mark.parametrize(
    ("method", "path", "role", "status"),
    [
        ("GET", "config", "films", 200),
        ("GET", "catalog", None, 401),
        ("GET", "nowhere", None, 404),
        ("DELETE", "catalog", "films", 405),
        ("GET", "creatives", "films", 200),
        ("GET", "videos", "videos", 200),
    ],
)
def test_every_response_carries_the_common_headers(api: Api, method, path, role, status) -> None:  # type: ignore[no-untyped-def]
    response = api.request(method, path, role, headers={"Origin": "https://example.test"})
    assert response.status_code == status
    assert_common(response)
    assert response.headers["service-version"] == "2026-10-02"


def test_error_bodies_echo_the_request_id(api: Api) -> None:
    for path, role in (("catalog", None), ("creatives", None), ("videos", "videos_unbound")):
        response = api.get(path, role)
        assert response.json()["request_id"] == response.headers["service-request-id"]


def test_unknown_path_is_flat_404_for_any_method(api: Api) -> None:
    for method in ("GET", "POST", "PUT", "OPTIONS"):
        response = api.request(method, "films/unknown")
        assert response.status_code == 404
        assert response.json()["error_code"] == "not_found"


def test_wrong_method_is_405_with_allow_and_empty_body(api: Api) -> None:
    response = api.request("OPTIONS", "catalog", headers={"Origin": "https://x.test"})
    assert response.status_code == 405
    assert response.content == b""
    assert response.headers["allow"] == "GET"
    assert "content-type" not in response.headers
    assert api.request("GET", "playback").headers["allow"] == "POST"


def test_bare_host_redirects_to_www_with_path_and_query(api: Api) -> None:
    response = api.get("catalog?limit=3", headers={"Host": "delivery.sandbox:8123"})
    assert response.status_code == 308
    assert (
        response.headers["location"]
        == "http://www.delivery.sandbox:8123/api/delivery/v1/catalog?limit=3"
    )
    assert_common(response)
    post = api.request("POST", "playback", headers={"Host": "delivery.sandbox"})
    assert post.status_code == 308


def test_video_single_read_200_has_no_service_version_but_its_errors_do(api: Api) -> None:
    ok = api.get(f"videos/{api.fx['video_id']}", "videos")
    assert ok.status_code == 200
    assert "service-version" not in ok.headers
    missing = api.get(f"videos/{api.fx['video_not_granted']}", "videos")
    assert missing.status_code == 404
    assert missing.headers["service-version"] == "2026-10-02"


def test_simulate_header_on_catalog_and_config_for_test_organisations(api: Api) -> None:
    simulated = api.get("catalog", "films", headers={"Service-Simulate": "service_unavailable"})
    assert simulated.status_code == 503
    assert simulated.headers["service-simulated"] == "service_unavailable"
    real = api.get("config", "production", headers={"Service-Simulate": "rate_limited"})
    assert real.status_code == 200 and "service-simulated" not in real.headers
    unknown = api.get("config", "films", headers={"Service-Simulate": "no_such_scenario"})
    assert unknown.status_code == 200
    bad_key = api.get("catalog", "revoked", headers={"Service-Simulate": "rate_limited"})
    assert bad_key.status_code == 401 and "service-simulated" not in bad_key.headers
