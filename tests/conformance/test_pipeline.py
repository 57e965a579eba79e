"""GET /config for every valid key, through the whole harness pipeline (client, cross-cutting
checks, typed violations, reports). spec: Authentication (any valid key opens GET /config);
Common response headers; Versioning item 2 (the response names the key's pinned version)."""

from __future__ import annotations

import pytest
from expect_support import expect_header

from delivery_conformance.checks import assert_conforms, expect
from delivery_conformance.target.client import DeliveryClient

# Keys that are valid, in organisations in good standing (ARCHITECTURE > Key roles).
VALID_ROLES = (
    "films",
    "films_metadata",
    "films_playback",
    "films_creatives",
    "webhooks",
    "videos",
    "videos_unbound",
)


@pytest.mark.requirement(
    "AUTH-031", "VER-002", "HDR-001", "HDR-002", "HDR-003", "HDR-006", "HDR-011", "HDR-012",
    "HDR-014", "HDR-015", "GEN-002", "GEN-003", "GEN-005",
)  # fmt: skip
@pytest.mark.parametrize(
    "role", [pytest.param(r, marks=pytest.mark.needs(f"role:{r}")) for r in VALID_ROLES]
)
def test_config_answers_every_valid_key_with_the_common_headers(
    client: DeliveryClient, role: str
) -> None:
    response = client.get("config", role=role, headers={"Origin": "https://browser.example"})
    expect("AUTH-031", response.status_code == 200, expected="200", actual=response.status_code,
           response=response, title="GET /config refused a valid key")  # fmt: skip
    assert_conforms(response)
    body = response.json_body()
    api = body.get("api") if isinstance(body, dict) else None
    pinned = api.get("pinned_version") if isinstance(api, dict) else None
    expect_header(
        "VER-002",
        response,
        "service-version",
        pinned,
        expected=f"Service-Version equal to api.pinned_version {pinned!r}",
    )
