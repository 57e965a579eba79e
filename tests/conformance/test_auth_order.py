"""Authentication and the order of its checks, proven by combinations of two faults at once.

spec: Authentication (items 1, 2, 4, 5); Errors (Catalog, Series and playlists, Playback, Config).
The order is: version header, key present, key valid, pinned version, scope, organisation, rate
limit, body. Each pair below breaks two adjacent (or farther) steps and expects the earlier one.
Readings followed (docs/reading-of-the-spec.md): AUTH-002 (Bearer only), AUTH-020 (suspended
playback refused whole with the per-ticket shape), LIM (order) (429 before the body is read).
"""

from __future__ import annotations

import re

import pytest
from expect_support import expect_answered, expect_equal
from json_support import body_of
from listing_support import expect_exhausted
from playback_support import expect_refused_whole
from timing_support import KEY, ORGANISATION, settle

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.spec.endpoints import ENDPOINTS, ErrorFormat
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION

UNKNOWN_KEY = "svc_live_" + "Uk4" * 10 + "n0"
BAD_VERSION = "1999-01-01"
DUMMY_ID = "00000000-0000-4000-8000-000000000000"


def _path(endpoint) -> str:
    return endpoint.template.lstrip("/").replace("{id}", DUMMY_ID).replace("{code}", "ZZ999999")


def _send(client, endpoint, **kwargs):
    body = {"episode_id": DUMMY_ID} if endpoint.method == "POST" else None
    return client.request(endpoint.method, _path(endpoint), json=body, **kwargs)


def _expect_status(rid: str, response, status: int, envelope: int | None = None) -> None:
    data = body_of(response)
    expect_status(rid, response, status, expected=status)
    if envelope is not None:
        expect_equal(rid, data.get("code"), envelope, what="envelope code", response=response)


def _envelope(endpoint, code: int) -> int | None:
    return code if endpoint.error_format is ErrorFormat.ENVELOPE else None


def _after_a_change(send, shown, bound: float):
    """`send()` until `shown(answer)` or `bound` passed: an organisation suspended or a key
    revoked shows within 30 s (Limits > Freshness, "about 1 s, always within 30 s"); one answer
    when it shows at once. The last answer is judged."""
    return settle(send, shown, bound).value


def _expect_version_refusal(rid: str, response) -> None:
    expect_answered(rid, response, 400, "error_code", "unsupported_version")


@pytest.mark.requirement("AUTH-001")
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.operation for e in ENDPOINTS])
def test_missing_authorization_is_401_on_every_endpoint(client, endpoint):
    _expect_status("AUTH-001", _send(client, endpoint), 401, _envelope(endpoint, 4010))


@pytest.mark.requirement("AUTH-002")
@pytest.mark.parametrize("scheme", ["{key}", "Basic {key}", "Token {key}"])
def test_key_without_the_bearer_scheme_is_refused(client, key, scheme):
    value = scheme.format(key=key("films"))
    response = client.get("catalog", headers={"Authorization": value})
    _expect_status("AUTH-002", response, 401)


@pytest.mark.requirement("AUTH-003")
@pytest.mark.parametrize("name", ["api_key", "key", "access_token"])
def test_key_in_the_query_string_is_refused(client, key, name):
    response = client.get("catalog", params={name: key("films")})
    _expect_status("AUTH-003", response, 401)


@pytest.mark.requirement("AUTH-004")
def test_key_in_a_cookie_is_refused(client, key):
    films = key("films")
    response = client.get("catalog", headers={"Cookie": f"api_key={films}; key={films}"})
    _expect_status("AUTH-004", response, 401)


@pytest.mark.requirement("AUTH-006")
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.operation for e in ENDPOINTS])
def test_unknown_well_formed_key_is_401(client, endpoint):
    _expect_status(
        "AUTH-006", _send(client, endpoint, key=UNKNOWN_KEY), 401, _envelope(endpoint, 4011)
    )


@pytest.mark.requirement("AUTH-007")
@pytest.mark.needs("role:revoked")
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.operation for e in ENDPOINTS])
def test_revoked_key_is_401(client, endpoint):
    _expect_status(
        "AUTH-007", _send(client, endpoint, role="revoked"), 401, _envelope(endpoint, 4011)
    )


@pytest.mark.requirement("AUTH-010")
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.operation for e in ENDPOINTS])
def test_bad_version_header_is_judged_before_a_missing_key(client, endpoint):
    _expect_version_refusal("AUTH-010", _send(client, endpoint, version=BAD_VERSION))


@pytest.mark.requirement("AUTH-011")
@pytest.mark.parametrize("credential", ["unknown", "revoked"])
@pytest.mark.parametrize("path", ["catalog", "series", "config"])
def test_bad_version_header_is_judged_before_key_validity(client, key, credential, path):
    secret = UNKNOWN_KEY if credential == "unknown" else key("revoked")
    _expect_version_refusal("AUTH-011", client.get(path, key=secret, version=BAD_VERSION))


@pytest.mark.requirement("AUTH-012", "VER-008")
@pytest.mark.needs("role:retired_pin", "admin")
def test_retired_pin_is_judged_only_for_a_valid_key(client, admin):
    _expect_version_refusal("AUTH-012", client.get("catalog", role="retired_pin"))
    admin.revoke("retired_pin")
    revoked = _after_a_change(
        lambda: client.get("catalog", role="retired_pin"),
        lambda r: r.status_code == 401,
        KEY.catalog,
    )
    _expect_status("AUTH-012", revoked, 401)


@pytest.mark.requirement("AUTH-013")
@pytest.mark.needs("role:retired_pin")
@pytest.mark.parametrize("path", ["videos", "playlists"])
def test_retired_pin_is_judged_before_the_scope(client, path):
    _expect_version_refusal("AUTH-013", client.get(path, role="retired_pin"))


@pytest.mark.requirement("AUTH-014")
@pytest.mark.needs("role:revoked")
@pytest.mark.parametrize(("path", "envelope"), [("videos", None), ("playlists", 4011)])
def test_revoked_key_is_401_before_the_scope(client, path, envelope):
    _expect_status("AUTH-014", client.get(path, role="revoked"), 401, envelope)


@pytest.mark.requirement("AUTH-015")
@pytest.mark.needs("role:webhooks", "admin")
def test_scope_is_judged_before_the_organisation(client, admin):
    admin.suspend("webhooks")
    response = client.get("catalog", role="webhooks")
    _expect_status("AUTH-015", response, 403)
    expect(
        "AUTH-015",
        body_of(response).get("error") != "org_suspended",
        expected="the plain scope 403",
        actual=body_of(response).get("error"),
        response=response,
    )
    series = client.get("series", role="webhooks")
    _expect_status("AUTH-015", series, 403, 4030)
    config = _after_a_change(
        lambda: client.get("config", role="webhooks"),
        lambda r: body_of(r).get("error") == "org_suspended",
        ORGANISATION.catalog,
    )
    expect_answered("AUTH-015", config, 403, "error", "org_suspended", why=" once the scope passes")


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("AUTH-016")
@pytest.mark.needs("role:limits", "admin")
def test_organisation_is_judged_before_the_rate_limit(client, admin):
    admin.set_limit("limits", "catalog", 1)
    answers = [client.get("catalog", role="limits", params={"limit": 1}) for _ in range(3)]
    expect_exhausted("AUTH-016", answers, expected="counter exhausted (429)")
    admin.suspend("limits")
    response = _after_a_change(
        lambda: client.get("catalog", role="limits", params={"limit": 1}),
        lambda r: r.status_code != 429,
        ORGANISATION.catalog,
    )
    expect_answered("AUTH-016", response, 403, "error", "org_suspended", why=", not 429")


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("AUTH-017")
@pytest.mark.needs("role:limits", "admin")
def test_rate_limit_is_judged_before_the_body(client, admin):
    admin.set_limit("limits", "playback", 1)
    first = client.post("playback", role="limits", content="not json")
    _expect_status("AUTH-017", first, 400)
    second = client.post("playback", role="limits", content="not json")
    expect_status("AUTH-017", second, 429, expected="429 before the body is read")


@pytest.mark.requirement("AUTH-018")
@pytest.mark.parametrize("credential", ["none", "unknown", "revoked"])
def test_key_is_judged_before_the_body(client, key, credential):
    secret = None if credential == "none" else UNKNOWN_KEY
    if credential == "revoked":
        secret = key("revoked")
    response = client.post("playback", key=secret, content="not json")
    _expect_status("AUTH-018", response, 401)


@pytest.mark.requirement("AUTH-019")
@pytest.mark.parametrize("role", ["films_metadata", "films_creatives", "webhooks", "videos"])
def test_scope_is_judged_before_the_body(client, key, role):
    key(role)
    response = client.post("playback", role=role, content="not json")
    _expect_status("AUTH-019", response, 403)
    expect(
        "AUTH-019",
        body_of(response).get("error_code") is None,
        expected="the plain scope 403 (no error_code)",
        actual=body_of(response).get("error_code"),
        response=response,
    )


@pytest.mark.requirement("AUTH-020")
@pytest.mark.needs("role:suspended")
@pytest.mark.parametrize("payload", ["not json", '{"episodes": []}'])
def test_organisation_is_judged_before_the_body(client, payload):
    response = client.post("playback", role="suspended", content=payload)
    expect_refused_whole("AUTH-020", response, "org_suspended")


@pytest.mark.requirement("AUTH-005")
@pytest.mark.needs("role:films_metadata", "admin")
def test_rotated_key_has_the_documented_form(admin):
    new_key = admin.rotate("films_metadata")
    expect(
        "AUTH-005",
        re.fullmatch(r"svc_live_[!-~]{32}", new_key) is not None,
        expected="svc_live_ + 32 characters",
        actual=f"{len(new_key)} characters",
    )
