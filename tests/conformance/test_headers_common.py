"""Common response headers on every kind of answer, and the general rules seen in headers.

spec: What the service does (General rules items 1, 2, 3, 6) and Common response headers.
Readings followed (docs/reading-of-the-spec.md): HDR-010 (Service-Version names a served version
when no pin or header applies), HDR (the 308, 404 and 405 carry the common headers), HDR-012 (26
printable characters).
"""

from __future__ import annotations

import pytest
from config_support import config_api, listed_versions, reference
from expect_support import expect_header, expect_served_by, expect_without
from json_support import body_of, objs
from listing_support import first_refusal
from playback_support import BASIC_DEVICE, play_body, post
from timing_support import CATALOG_AGE, settle

from delivery_conformance.checks import CHECKS, assert_conforms, expect, expect_status
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import DeliveryClient

UNKNOWN_KEY = "svc_live_" + "Qx7" * 10 + "k2"
HEADER_CHECKS = tuple(
    CHECKS[name]
    for name in (
        "api_status",
        "service_version",
        "request_id",
        "cache_control",
        "no_cors",
        "no_cookies",
        "json_content",
        "rate_limit_headers",
        "retry_after",
    )
)

# One representative exchange per kind of answer: (case, method, path, role, fixture, body).
EXCHANGES = [
    ("catalog 200", "GET", "catalog", "films", None, None),
    ("config 200", "GET", "config", "films", None, None),
    ("creatives 200", "GET", "creatives", "films", None, None),
    ("creative 200", "GET", "creatives/{}", "films", "creative_id", None),
    ("creative file 302", "GET", "creatives/{}/file", "films", "creative_id", None),
    ("series 200", "GET", "series", "films", None, None),
    ("series detail 200", "GET", "series/{}", "films", "series_code", None),
    ("playlists 200", "GET", "playlists", "videos", None, None),
    ("playlist 200", "GET", "playlists/{}", "videos", "playlist_code", None),
    ("videos 200", "GET", "videos", "videos", None, None),
    ("video 200", "GET", "videos/{}", "videos", "video_id", None),
    ("playback 200", "POST", "playback", "films", "episode_encrypted", "ticket"),
    ("playback 400", "POST", "playback", "films", None, "not json"),
    ("catalog 401", "GET", "catalog", None, None, None),
    ("series 401", "GET", "series", None, None, None),
    ("catalog 403", "GET", "catalog", "films_playback", None, None),
    ("creatives 403", "GET", "creatives", "films_metadata", None, None),
    ("series 404", "GET", "series/ZZ999999", "films", None, None),
    ("series 422", "GET", "series?limit=0", "films", None, None),
    ("creatives 422", "GET", "creatives?limit=abc", "films", None, None),
    ("video 400", "GET", "videos/not-a-uuid", "videos", None, None),
    ("unknown path 404", "GET", "nope", None, None, None),
    ("wrong method 405", "DELETE", "catalog", "films", None, None),
    ("version 400", "GET", "catalog", "films", None, "bad version"),
    ("suspended 403", "GET", "config", "suspended", None, None),
    ("unverifiable 503", "GET", "catalog", "unverifiable", None, None),
]


def _send(client, key, fixture_id, method, path, role, fixture, body):
    if role:
        key(role)
    value = fixture_id(fixture) if fixture else ""
    version = "1999-01-01" if body == "bad version" else None
    if body == "ticket":
        return client.post(path, role=role, json={"episode_id": value, **BASIC_DEVICE})
    content = body if body == "not json" else None
    return client.request(method, path.format(value), role=role, content=content, version=version)


@pytest.mark.requirement(
    "HDR-001",
    "HDR-002",
    "HDR-003",
    "HDR-006",
    "HDR-011",
    "HDR-012",
    "HDR-014",
    "HDR-015",
    "HDR-028",
    "HDR-030",
    "GEN-002",
    "GEN-003",
    "GEN-005",
)
@pytest.mark.parametrize(
    ("case", "method", "path", "role", "fixture", "body"), EXCHANGES, ids=[e[0] for e in EXCHANGES]
)
def test_every_kind_of_answer_carries_the_common_headers(
    client, key, fixture_id, case, method, path, role, fixture, body
):
    response = _send(client, key, fixture_id, method, path, role, fixture, body)
    assert_conforms(response, *HEADER_CHECKS)


@pytest.mark.requirement("HDR-001", "HDR-002", "HDR-003", "HDR-011", "HDR-014", "HDR-015")
@pytest.mark.needs("bare_host")
def test_bare_host_redirect_carries_the_common_headers(client, profile):
    response = client.get("catalog", host=profile.bare_host)
    if response.status_code != 308:
        # Whether the bare host redirects is GEN-006's finding (test_every_path); here only
        # the headers of a 308 are judged.
        pytest.skip(
            f"not exercised: the bare host answered {response.status_code}, not 308 (GEN-006)"
        )
    assert_conforms(response, *HEADER_CHECKS)


@pytest.mark.requirement("HDR-004")
@pytest.mark.needs("role:videos")
def test_single_video_200_has_no_service_version(client, fixture_id):
    response = client.get(f"videos/{fixture_id('video_id')}", role="videos")
    expect_status("HDR-004", response, 200, expected=200)
    assert_conforms(response, CHECKS["service_version"])


@pytest.mark.requirement("HDR-005")
@pytest.mark.parametrize(
    ("case", "role", "fixture", "status"),
    [
        ("not a uuid", "videos", None, 400),
        ("no key", None, "video_id", 401),
        ("no scope", "films", "video_id", 403),
        ("not granted", "videos", "video_not_granted", 404),
        ("broken", "videos", "video_broken", 500),
        ("unverifiable", "unverifiable", "video_id", 503),
    ],
)
def test_single_video_errors_carry_service_version(
    client, key, fixture_id, case, role, fixture, status
):
    if role:
        key(role)
    target = fixture_id(fixture) if fixture else "not-a-uuid"
    response = client.get(f"videos/{target}", role=role)
    expect_status("HDR-005", response, status, expected=status)
    expect(
        "HDR-005",
        "service-version" in response.headers,
        expected="Service-Version present",
        actual="absent",
        response=response,
    )


@pytest.mark.requirement("HDR-007")
@pytest.mark.parametrize("role", ["films", "deprecated_pin"])
def test_service_version_names_the_key_pin(client, key, role):
    key(role)
    api, config = config_api(client, role)
    pinned = reference(api, "pinned_version")
    for response in (config, client.get("catalog", role=role, params={"limit": 1})):
        expect_header("HDR-007", response, "service-version", pinned)


@pytest.mark.requirement("HDR-008")
@pytest.mark.needs("role:films")
def test_service_version_names_the_requested_version(client):
    api, _ = config_api(client, "films")
    for version in listed_versions(api):
        response = client.get("catalog", role="films", version=version, params={"limit": 1})
        expect_served_by(
            "HDR-008", response, version, expected=f"200 with Service-Version {version}"
        )


@pytest.mark.requirement("HDR-010")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("case", ["no key", "unknown key", "bad version header", "unknown path"])
def test_service_version_without_pin_or_header_names_a_served_version(client, case):
    """docs/reading-of-the-spec.md (HDR-010): with no key pin and no valid version header the spec
    does not say which version produced the answer; any dated version the server serves (listed in
    `api.supported_versions` of /config) is accepted, the latest among them."""
    served = listed_versions(config_api(client, "films")[0])
    if case == "no key":
        response = client.get("catalog")
    elif case == "unknown key":
        response = client.get("catalog", key=UNKNOWN_KEY)
    elif case == "bad version header":
        response = client.get("catalog", role="films", version="1999-01-01")
    else:
        response = client.get("nope")
    named = response.headers.get("service-version")
    expect(
        "HDR-010",
        named in served,
        expected=f"Service-Version one of the served versions {served}",
        actual=named,
        response=response,
    )


@pytest.mark.requirement("HDR-013")
@pytest.mark.parametrize(
    ("case", "path", "role", "version"),
    [
        ("401", "catalog", None, None),
        ("404", "nope", None, None),
        ("400 version", "config", None, "1999-01-01"),
        ("envelope 4010", "series", None, None),
        ("envelope 4030", "creatives", "films_metadata", None),
    ],
)
def test_error_bodies_repeat_the_request_id(client, key, case, path, role, version):
    if role:
        key(role)
    response = client.get(path, role=role, version=version)
    header = response.headers.get("service-request-id")
    expect(
        "HDR-013",
        header is not None and body_of(response).get("request_id") == header,
        expected=f"request_id {header}",
        actual=body_of(response).get("request_id"),
        response=response,
    )


@pytest.mark.requirement("HDR-025", "HDR-026", "AUTH-021")
@pytest.mark.needs("role:unverifiable")
@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("GET", "catalog", "service_unavailable"),
        ("GET", "config", "service_unavailable"),
        ("POST", "playback", "service_unavailable"),
        ("GET", "series", 5031),
        ("GET", "creatives", 5031),
    ],
)
def test_unverifiable_key_answers_retryable_503(client, method, path, code):
    body = {"episode_id": "00000000-0000-4000-8000-000000000000"} if method == "POST" else None
    response = client.request(method, path, role="unverifiable", json=body)
    data = body_of(response)
    got = data.get("code") if isinstance(code, int) else data.get("error_code")
    expect(
        "AUTH-021",
        response.status_code == 503 and got == code,
        expected=f"503 {code}",
        actual=f"{response.status_code} {got!r}",
        response=response,
    )
    assert_conforms(response, CHECKS["retry_after"])
    expect(
        "HDR-025",
        "retry-after" in response.headers,
        expected="Retry-After",
        actual="absent",
        response=response,
    )


@pytest.mark.requirement("HDR-025", "HDR-026")
@pytest.mark.needs("role:films", "fixture:episode_provider_timeout")
def test_provider_timeout_503_carries_retry_after(client, fixture_id):
    response = post(client, play_body(fixture_id, "episode_provider_timeout", device=BASIC_DEVICE))
    expect_status("HDR-025", response, 503, expected=503)
    expect(
        "HDR-025",
        response.headers.get("retry-after") is not None,
        expected="Retry-After",
        actual="absent",
        response=response,
    )
    assert_conforms(response, CHECKS["retry_after"])


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("HDR-024", "HDR-026", "HDR-027", "HDR-029", "ERR-006")
@pytest.mark.needs("role:limits", "admin")
@pytest.mark.parametrize(
    ("counter", "path"), [("config", "config"), ("catalog", "catalog"), ("catalog", "series")]
)
def test_429_carries_retry_after_and_rate_limit_headers(client, admin, counter, path):
    admin.set_limit("limits", counter, 2)
    answers = [client.get(path, role="limits", params={"limit": 1}) for _ in range(4)]
    response = first_refusal("HDR-024", answers, limit=2)
    assert_conforms(
        response, CHECKS["retry_after"], CHECKS["rate_limit_headers"], CHECKS["flat_error"]
    )
    expect(
        "HDR-024",
        "retry-after" in response.headers,
        expected="Retry-After",
        actual="absent",
        response=response,
    )
    expect_header("HDR-027", response, "x-ratelimit-limit", "2", expected="X-RateLimit-Limit: 2")
    expect_without("ERR-006", response, "code", expected="flat body, no envelope code")


@pytest.mark.requirement("GEN-002")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("method", ["GET", "OPTIONS"])
def test_no_cors_headers_even_for_a_browser_origin(client, method):
    headers = {
        "Origin": "https://example.test",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization",
    }
    response = client.request(method, "config", role="films", headers=headers)
    assert_conforms(response, CHECKS["no_cors"])
    if method == "OPTIONS":
        expect_status("GEN-002", response, 405, expected="405 (OPTIONS is a wrong method)")


@pytest.mark.requirement("GEN-004")
@pytest.mark.needs("role:films", "role:films_metadata")
def test_two_keys_of_one_organisation_see_the_same_catalog(client):
    """Two keys may be served from caches of different ages (Limits > Freshness): the two
    catalogs are read again until they agree, for the catalog's 30 s."""

    def read():
        answers = [client.get("catalog", role=role) for role in ("films", "films_metadata")]
        return answers, [[f.get("id") for f in objs(body_of(r).get("films"))] for r in answers]

    answers, seen = settle(
        read, lambda pair: bool(pair[1][0]) and pair[1][0] == pair[1][1], CATALOG_AGE
    ).value
    for response in answers:
        expect_status("GEN-004", response, 200, expected=200)
    expect(
        "GEN-004",
        seen[0] == seen[1] and bool(seen[0]),
        expected="the same non-empty film ids",
        actual=f"{len(seen[0])} vs {len(seen[1])}",
    )


@pytest.mark.needs("role:films")
@pytest.mark.requirement("HDR-031")
def test_every_response_has_its_own_request_id(client: DeliveryClient) -> None:
    """spec: Common response headers: `Service-Request-Id` identifies one request."""
    answers = [client.get("config", role="films") for _ in range(5)]
    ids = [r.headers.get("service-request-id") for r in answers]
    repeated = sorted({i for i in ids if i is not None and ids.count(i) > 1})
    expect(
        "HDR-031",
        not repeated,
        expected="five different Service-Request-Id values",
        actual=f"repeated: {repeated}",
        response=answers[-1],
    )
