"""Rules that hold on every path: unknown paths, wrong methods, the bare host, error formats.

spec: What the service does (General rules items 7 and 8); Errors > Every path; Errors > Formats.
Readings followed (docs/reading-of-the-spec.md): ERR-014/ERR-017 (without a valid key, 404/405 or
401), ERR-016 (Allow names the one method, HEAD tolerated), ERR-003 ("none" = no `error_code`
member), ERR-009 (envelope `code` is an integer), GEN (bare host keeps path and query).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from expect_support import expect_equal, expect_without
from host_support import require_host_passed_through
from json_support import body_of
from playback_support import BASIC_DEVICE, play_body, post

from delivery_conformance.checks import CHECKS, assert_conforms, expect, expect_status
from delivery_conformance.spec.endpoints import ENDPOINTS, Endpoint

UNKNOWN_KEY = "svc_live_" + "Zz9" * 10 + "Q1"
DUMMY_ID = "00000000-0000-4000-8000-000000000000"
DUMMY_CODE = "ZZ999999"
# HEAD is not sent to GET endpoints: HTTP lets a server answer HEAD like GET
# (docs/reading-of-the-spec.md (ERR-016)).
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
UNKNOWN_PATHS = ("nope", "catalog/extra", "config/", "v2/catalog", "creatives/x/file/more", "keys")
ERROR_CHECKS = (CHECKS["flat_error"], CHECKS["envelope_error"], CHECKS["error_request_id"])


def _path(endpoint: Endpoint) -> str:
    """A concrete path of the endpoint (ids need not exist: methods are judged by path)."""
    return endpoint.template.lstrip("/").replace("{id}", DUMMY_ID).replace("{code}", DUMMY_CODE)


WRONG_METHODS = [
    pytest.param(endpoint, method, id=f"{method}-{endpoint.operation}")
    for endpoint in ENDPOINTS
    for method in (*METHODS, *(("HEAD",) if endpoint.method == "POST" else ()))
    if method != endpoint.method
]


@pytest.mark.requirement("ERR-015", "ERR-016")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize(("endpoint", "method"), WRONG_METHODS)
def test_wrong_method_answers_405_empty_with_allow(client, endpoint, method):
    response = client.request(method, _path(endpoint), role="films")
    assert_conforms(response, CHECKS["wrong_method"])


@pytest.mark.requirement("ERR-017")
@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("GET", "playback", "POST"), ("DELETE", "catalog", "GET"), ("PUT", "series", "GET")],
)
@pytest.mark.parametrize("credential", ["no key", "unknown key"])
def test_wrong_method_without_a_valid_key_is_405_or_401(client, method, path, allowed, credential):
    """docs/reading-of-the-spec.md (ERR-014, ERR-017): the spec does not order the method check
    against the key check, so a 401 is accepted too; a 405 must still name the right method in
    `Allow`."""
    key = UNKNOWN_KEY if credential == "unknown key" else None
    response = client.request(method, path, key=key)
    expect(
        "ERR-017",
        response.status_code in (405, 401),
        expected="405 (or 401: no valid key)",
        actual=response.status_code,
        response=response,
    )
    if response.status_code == 401:
        return
    allow = {m.strip().upper() for m in response.headers.get("allow", "").split(",")}
    expect(
        "ERR-017",
        allowed in allow,
        expected=f"Allow naming {allowed}",
        actual=response.headers.get("allow"),
        response=response,
    )


@pytest.mark.requirement("ERR-012")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("path", UNKNOWN_PATHS)
def test_unknown_path_answers_404_not_found(client, path):
    response = client.get(path, role="films")
    assert_conforms(response, CHECKS["unknown_path"])
    expect(
        "ERR-012",
        response.headers.get("content-type", "").startswith("application/json"),
        expected="a flat JSON body",
        actual=response.headers.get("content-type"),
        response=response,
    )


@pytest.mark.requirement("ERR-013")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("method", [m for m in METHODS if m != "GET"])
def test_unknown_path_answers_404_for_every_method(client, method):
    body = {} if method != "OPTIONS" else None
    response = client.request(method, "nope", role="films", json=body)
    assert_conforms(response, CHECKS["unknown_path"])


@pytest.mark.requirement("ERR-014")
@pytest.mark.parametrize("credential", ["no key", "unknown key", "malformed header"])
def test_unknown_path_without_a_valid_key_is_404_not_found_or_401(client, credential):
    """docs/reading-of-the-spec.md (ERR-014, ERR-017): the spec does not order the path check
    against the key check, so a 401 is accepted too; a 404 must still be the flat `not_found`."""
    headers = {"Authorization": "Token nothing"} if credential == "malformed header" else None
    key = UNKNOWN_KEY if credential == "unknown key" else None
    response = client.get("nope", key=key, headers=headers)
    code = body_of(response).get("error_code")
    expect(
        "ERR-014",
        response.status_code == 401 or (response.status_code, code) == (404, "not_found"),
        expected="404 not_found (or 401: no valid key)",
        actual=f"{response.status_code} {code!r}",
        response=response,
    )


@pytest.mark.requirement("AUTH-035")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_no_key_management_path_exists(client, method):
    response = client.request(method, "keys", role="films", json={} if method == "POST" else None)
    expect_status("AUTH-035", response, 404, expected="404 not_found on /keys")


# Each endpoint with a key holding its scope and the fixture its path needs.
OPEN_CALLS = [
    ("getCatalog", "films", "catalog", None),
    ("getConfig", "films", "config", None),
    ("listCreatives", "films", "creatives", None),
    ("getCreative", "films", "creatives/{}", "creative_id"),
    ("getCreativeFile", "films", "creatives/{}/file", "creative_id"),
    ("postPlayback", "films", "playback", "episode_signed"),
    ("listPlaylists", "videos", "playlists", None),
    ("getPlaylist", "videos", "playlists/{}", "playlist_code"),
    ("listSeries", "films", "series", None),
    ("getSeries", "films", "series/{}", "series_code"),
    ("listVideos", "videos", "videos", None),
    ("getVideo", "videos", "videos/{}", "video_id"),
]


@pytest.mark.requirement("GEN-001")
@pytest.mark.parametrize(
    ("operation", "role", "template", "fixture"), OPEN_CALLS, ids=[c[0] for c in OPEN_CALLS]
)
def test_every_endpoint_answers_under_the_v1_prefix(
    client, key, fixture_id, operation, role, template, fixture
):
    key(role)
    value = fixture_id(fixture) if fixture else ""
    if operation == "postPlayback":
        response = client.post(template, role=role, json={"episode_id": value})
    else:
        response = client.get(template.format(value), role=role)
    code = body_of(response).get("error_code")
    expect(
        "GEN-001",
        response.status_code not in (404, 405) or code not in ("not_found", None),
        expected="the endpoint exists (no 404 not_found, no 405)",
        actual=f"{response.status_code} {code!r}",
        response=response,
    )
    expect(
        "GEN-001",
        response.status_code in (200, 302),
        expected="200 (302 for the file)",
        actual=response.status_code,
        response=response,
    )


def _expect_www_redirect(requirement: str, response, client, profile, path_and_query: str) -> None:
    require_host_passed_through(client, profile, response)
    bare_host = profile.bare_host
    expect_status(requirement, response, 308, expected="308 from the bare host")
    location = urlsplit(response.headers.get("location", ""))
    bare = bare_host.split(":")[0].lower()
    expect(
        requirement,
        (location.hostname or "").lower() == f"www.{bare}",
        expected=f"Location on www.{bare}",
        actual=response.headers.get("location"),
        response=response,
    )
    kept = location.path + (f"?{location.query}" if location.query else "")
    expect_equal(requirement, kept, path_and_query, what="same path and query", response=response)


@pytest.mark.requirement("GEN-006")
@pytest.mark.needs("bare_host", "role:films")
@pytest.mark.parametrize(
    ("method", "path", "params"),
    [("GET", "catalog", {"limit": 2}), ("GET", "config", None), ("POST", "playback", None)],
)
def test_bare_host_redirects_to_www_with_path_and_query(client, profile, method, path, params):
    body = {"episode_id": DUMMY_ID} if method == "POST" else None
    response = client.request(
        method, path, role="films", host=profile.bare_host, params=params, json=body
    )
    query = "?limit=2" if params else ""
    _expect_www_redirect("GEN-006", response, client, profile, f"/api/delivery/v1/{path}{query}")


@pytest.mark.requirement("GEN-007")
@pytest.mark.needs("bare_host", "role:films", "fixture:episode_signed")
@pytest.mark.parametrize(
    ("method", "path", "role"),
    [
        ("POST", "playback", "films"),
        ("GET", "nope", "films"),
        ("DELETE", "catalog", None),
        ("GET", "catalog", None),
    ],
)
def test_bare_host_never_serves_the_request(client, profile, fixture_id, method, path, role):
    body = {"episode_id": fixture_id("episode_signed")} if method == "POST" else None
    response = client.request(method, path, role=role, host=profile.bare_host, json=body)
    _expect_www_redirect("GEN-007", response, client, profile, f"/api/delivery/v1/{path}")
    served = {"manifest_url", "play_auth_token", "vid", "films"} & set(body_of(response))
    expect(
        "GEN-007",
        not served,
        expected="no ticket or data from the bare host",
        actual=sorted(served),
        response=response,
    )


# --- Error formats (spec: Errors > Formats) ---------------------------------------------------


@pytest.mark.requirement("ERR-007", "ERR-001", "ERR-002", "ERR-005", "HDR-013")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.operation for e in ENDPOINTS])
def test_unsupported_version_is_flat_on_every_endpoint(client, endpoint):
    body = {"episode_id": DUMMY_ID} if endpoint.method == "POST" else None
    response = client.request(
        endpoint.method, _path(endpoint), role="films", version="1999-01-01", json=body
    )
    data = body_of(response)
    expect(
        "ERR-007",
        response.status_code == 400 and data.get("error_code") == "unsupported_version",
        expected="400 flat error_code unsupported_version",
        actual=f"{response.status_code} {data.get('error_code')!r}",
        response=response,
    )
    expect(
        "ERR-007",
        "code" not in data and "message" not in data,
        expected="no envelope members",
        actual=sorted(data),
        response=response,
    )
    assert_conforms(response, CHECKS["flat_error"], CHECKS["error_request_id"])


ENVELOPE_ERRORS = [
    ("GET", "series", None, None, 4010),
    ("GET", "playlists", None, None, 4010),
    ("GET", "creatives", "films_metadata", None, 4030),
    ("GET", "series/{}", "films", "unknown series", 4040),
    ("GET", "creatives/{}", "films", "creative_other_org", 4040),
]


@pytest.mark.requirement("ERR-008", "ERR-009", "HDR-013")
@pytest.mark.parametrize(
    ("method", "template", "role", "fixture", "code"),
    ENVELOPE_ERRORS,
    ids=[f"{e[1]}-{e[4]}" for e in ENVELOPE_ERRORS],
)
def test_envelope_errors_have_code_message_time_and_request_id(
    client, key, fixture_id, method, template, role, fixture, code
):
    if role:
        key(role)
    value = DUMMY_CODE if fixture == "unknown series" else (fixture_id(fixture) if fixture else "")
    response = client.request(method, template.format(value), role=role)
    data = body_of(response)
    # A code whose first digits are not the (right) status is ERR-009's finding.
    prefix = response.status_code == code // 10 and str(data.get("code"))[:3] != str(code // 10)
    expect(
        "ERR-009" if prefix else "ERR-008",
        data.get("code") == code,
        expected=f"envelope code {code}",
        actual=f"{response.status_code} {data.get('code')!r}",
        response=response,
    )
    assert_conforms(response, *ERROR_CHECKS)
    expect(
        "ERR-008",
        isinstance(data.get("message"), str) and isinstance(data.get("server_time"), int),
        expected="message string and server_time integer",
        actual={k: data.get(k) for k in ("message", "server_time")},
        response=response,
    )


@pytest.mark.requirement("ERR-003")
@pytest.mark.parametrize(
    ("case", "method", "path", "role", "payload", "status"),
    [
        ("catalog 401", "GET", "catalog", None, None, 401),
        ("config 401", "GET", "config", None, None, 401),
        ("catalog 403 scope", "GET", "catalog", "films_playback", None, 403),
        ("catalog 403 suspended", "GET", "catalog", "suspended", None, 403),
        ("config 403 suspended", "GET", "config", "suspended", None, 403),
        ("playback 400 not json", "POST", "playback", "films", "not json", 400),
        ("playback 400 no episode", "POST", "playback", "films", "{}", 400),
        ("videos 403 scope", "GET", "videos", "films", None, 403),
    ],
)
def test_errors_listed_without_code_carry_no_error_code(
    client, key, case, method, path, role, payload, status
):
    if role:
        key(role)
    response = client.request(method, path, role=role, content=payload)
    expect_status("ERR-003", response, status, expected=status)
    expect_without("ERR-003", response, "error_code", expected="no error_code member")


@pytest.mark.requirement("ERR-003")
@pytest.mark.needs("role:films", "fixture:episode_stream_error")
def test_playback_502_carries_no_error_code(client, fixture_id):
    response = post(client, play_body(fixture_id, "episode_stream_error", device=BASIC_DEVICE))
    expect_without("ERR-003", response, "error_code", status=502, expected="502 without error_code")


@pytest.mark.requirement("ERR-004", "ERR-001", "ERR-005")
@pytest.mark.parametrize(
    ("path", "role", "fixture", "error"),
    [
        ("catalog", "suspended", None, "org_suspended"),
        ("config", "suspended", None, "org_suspended"),
        ("videos", "videos_unbound", None, "app_not_registered"),
        ("videos?collection={}", "videos", "collection_not_granted", "collection_not_found"),
        ("videos/{}", "videos", "video_not_granted", "video_not_found"),
    ],
    ids=["catalog-suspended", "config-suspended", "unbound", "collection", "video"],
)
def test_codes_carried_in_error_are_the_whole_string(
    client, key, fixture_id, path, role, fixture, error
):
    key(role)
    target = path.format(fixture_id(fixture)) if fixture else path
    where, _, query = target.partition("?")
    params = dict([query.split("=", 1)]) if query else None
    response = client.get(where, role=role, params=params)
    data = body_of(response)
    expect(
        "ERR-004",
        data.get("error") == error and "error_code" not in data,
        expected=f"error {error!r}, no error_code",
        actual={k: data.get(k) for k in ("error", "error_code")},
        response=response,
    )
    assert_conforms(response, CHECKS["flat_error"])
