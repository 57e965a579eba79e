"""Dated versions: the key's pin, the request header, unknown and retired versions, deprecation.

spec: Versioning (items 2 and 5); Common response headers (Service-Version, Deprecation, Sunset,
Link); Errors > Formats (`unsupported_version` with `supported_versions`, `latest_version`,
`upgrade_to`); GET /config (`api`, `deprecations`).
Readings followed (docs/reading-of-the-spec.md): VER-005/VER-009/VER-010 (a non-date header is
unknown; `upgrade_to` only for a retired pin; a supported header replaces a retired pin),
HDR-018/HDR-023 (Deprecation is a moment of the UTC day `deprecated_at`; `rel="sunset"` whenever
Sunset is sent).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re

import pytest
from config_support import config_api, dig, listed_versions, reference, version_entries
from expect_support import expect_answered, expect_header, expect_served_by
from json_support import body_of
from timing_support import CREATED, settle

from delivery_conformance.checks import expect

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
DEPRECATION = re.compile(r"@(\d+)")


def _api(client, role: str, **kwargs) -> dict:
    """The `api` object of GET /config (not exercised without one: CFG scenarios judge it)."""
    return config_api(client, role, **kwargs)[0]


def _version_entry(client, version: str) -> dict:
    entries = version_entries(_api(client, "films"))
    expect(
        "CFG-009",
        version in entries,
        expected=f"{version} listed in api.supported_versions",
        actual=sorted(entries),
    )
    return entries[version]


def _rels(response) -> set[str]:
    link = response.headers.get("link", "")
    return {m.lower() for m in re.findall(r'rel="?([A-Za-z-]+)"?', link)}


def _expect_link_rel(rid: str, response, rel: str) -> None:
    expect(
        rid,
        rel in _rels(response),
        expected=f'Link with rel="{rel}"',
        actual=response.headers.get("link"),
        response=response,
    )


def _expect_unsupported(rid: str, response) -> dict:
    data = body_of(response)
    expect_answered(rid, response, 400, "error_code", "unsupported_version")
    return data


@pytest.mark.requirement("VER-001")
@pytest.mark.needs("role:films")
def test_config_lists_the_2026_10_02_version(client):
    listed = listed_versions(_api(client, "films"))
    expect("VER-001", "2026-10-02" in listed, expected="2026-10-02 listed", actual=listed)


@pytest.mark.requirement("VER-002")
@pytest.mark.parametrize("role", ["films", "films_metadata", "deprecated_pin"])
def test_responses_name_the_pinned_version(client, key, role):
    key(role)
    pinned = reference(_api(client, role), "pinned_version")
    response = client.get("catalog", role=role, params={"limit": 1})
    expect_header("VER-002", response, "service-version", pinned)


@pytest.mark.requirement("VER-003")
@pytest.mark.needs("role:films")
def test_version_header_serves_one_request_without_moving_the_pin(client):
    before = _api(client, "films")
    pinned = reference(before, "pinned_version")
    others = [version for version in listed_versions(before) if version != pinned]
    if not others:
        pytest.skip("not exercised: the target lists no second supported version")
    during = _api(client, "films", version=others[0])
    expect(
        "VER-003",
        during.get("version") == others[0] and during.get("pinned_version") == pinned,
        expected=f"version {others[0]}, pin {pinned}",
        actual=f"version {during.get('version')}, pin {during.get('pinned_version')}",
    )
    after = client.get("config", role="films")
    expect_header("VER-003", after, "service-version", pinned, expected=f"back to {pinned}")


@pytest.mark.requirement("VER-004", "VER-009")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("path", ["catalog", "config", "series"])
def test_unknown_date_is_unsupported_without_upgrade_to(client, path):
    data = _expect_unsupported("VER-004", client.get(path, role="films", version="1999-01-01"))
    expect(
        "VER-009",
        "upgrade_to" not in data,
        expected="no upgrade_to for a current pin",
        actual=data.get("upgrade_to"),
    )


@pytest.mark.requirement("VER-005")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("value", ["latest", "2026-13-45", "2026-10-2", "v1", "20261002"])
def test_malformed_version_header_is_unsupported(client, value):
    _expect_unsupported("VER-005", client.get("catalog", role="films", version=value))


@pytest.mark.requirement("VER-006")
@pytest.mark.needs("role:films", "fixture:retired_version")
@pytest.mark.parametrize("path", ["catalog", "config", "creatives"])
def test_retired_version_header_is_unsupported(client, fixture_id, path):
    response = client.get(path, role="films", version=fixture_id("retired_version"))
    _expect_unsupported("VER-006", response)


@pytest.mark.requirement("VER-007")
@pytest.mark.needs("role:films")
def test_unsupported_version_lists_the_supported_ones(client):
    data = _expect_unsupported("VER-007", client.get("catalog", role="films", version="1999-01-01"))
    raw, latest = data.get("supported_versions"), data.get("latest_version")
    # docs/reading-of-the-spec.md (VER-007): strings, or objects with `version` as in /config; both
    # are accepted.
    listed = [v.get("version") if isinstance(v, dict) else v for v in raw or []]
    expect(
        "VER-007",
        isinstance(raw, list)
        and bool(listed)
        and all(isinstance(v, str) and DATE.fullmatch(v) for v in listed),
        expected="supported_versions: YYYY-MM-DD strings (or objects with version)",
        actual=raw,
    )
    expect(
        "VER-007",
        isinstance(latest, str) and latest in listed,
        expected="latest_version among supported_versions",
        actual=latest,
    )
    configured = listed_versions(_api(client, "films"))
    expect(
        "VER-007",
        sorted(listed) == sorted(configured),
        expected=f"the versions /config lists: {configured}",
        actual=listed,
    )


@pytest.mark.requirement("VER-008")
@pytest.mark.needs("role:retired_pin")
@pytest.mark.parametrize("path", ["catalog", "config", "series"])
def test_retired_pin_is_unsupported_with_upgrade_to(client, path):
    data = _expect_unsupported("VER-008", client.get(path, role="retired_pin"))
    expect(
        "VER-008",
        data.get("upgrade_to") in (data.get("supported_versions") or []),
        expected="upgrade_to naming a supported version",
        actual=data.get("upgrade_to"),
    )


@pytest.mark.requirement("VER-010")
@pytest.mark.needs("role:retired_pin", "role:films")
def test_supported_header_serves_a_retired_pin(client):
    latest = reference(_api(client, "films"), "latest_version")
    response = client.get("config", role="retired_pin", version=latest)
    expect_served_by("VER-010", response, latest, expected=f"200 served by {latest}")


@pytest.mark.requirement("VER-011")
@pytest.mark.needs("role:deprecated_pin", "admin")
def test_rotation_keeps_the_version_pin(client, admin):
    pinned = reference(_api(client, "deprecated_pin"), "pinned_version")
    new_key = admin.rotate("deprecated_pin")
    # A new secret is usable within 5 s (Limits > Freshness, something just created).
    response = settle(
        lambda: client.get("config", key=new_key), lambda r: r.status_code == 200, CREATED.catalog
    ).value
    expect(
        "VER-011",
        response.status_code == 200
        and dig(body_of(response), "api.pinned_version") == pinned
        and response.headers.get("service-version") == pinned,
        expected=f"the new key pinned to {pinned}",
        actual=f"{response.status_code} {response.headers.get('service-version')}",
        response=response,
    )


@pytest.mark.requirement("VER-014")
@pytest.mark.needs("role:deprecated_pin")
def test_config_announces_deprecations_when_a_version_is_deprecated(client):
    response = client.get("config", role="deprecated_pin")
    deprecations = body_of(response).get("deprecations")
    expect(
        "VER-014",
        isinstance(deprecations, list) and len(deprecations) > 0,
        expected="a non-empty deprecations array",
        actual=deprecations,
        response=response,
    )


@pytest.mark.requirement("HDR-016")
@pytest.mark.needs("role:films")
@pytest.mark.parametrize("path", ["catalog", "config", "series", "creatives"])
def test_current_version_has_no_deprecation_headers(client, path):
    response = client.get(path, role="films", params={"limit": 1})
    found = [h for h in ("deprecation", "sunset") if h in response.headers]
    found += sorted(_rels(response) & {"deprecation", "sunset"})
    expect(
        "HDR-016",
        response.status_code == 200 and not found,
        expected="200 without Deprecation, Sunset or a deprecation Link",
        actual=f"{response.status_code} {found}",
        response=response,
    )


def _deprecated_answers(client, key, profile):
    """200s served by a deprecated version: by the pin and by the request header."""
    key("films")
    answers = []
    if "deprecated_pin" in profile.keys:
        answers.append(client.get("config", role="deprecated_pin"))
        answers.append(client.get("catalog", role="deprecated_pin", params={"limit": 1}))
    if "deprecated_version" in profile.fixtures:
        version = profile.fixtures["deprecated_version"]
        answers.append(client.get("config", role="films", version=version))
    if not answers:
        pytest.skip("not exercised: the profile has no deprecated_pin or deprecated_version")
    return answers


@pytest.mark.requirement("HDR-017", "HDR-018", "HDR-022")
def test_deprecated_version_sends_deprecation_and_link(client, key, profile):
    for response in _deprecated_answers(client, key, profile):
        served = response.headers.get("service-version", "")
        value = response.headers.get("deprecation", "")
        match = DEPRECATION.fullmatch(value)
        expect(
            "HDR-017",
            response.status_code == 200 and match is not None,
            expected="200 with Deprecation: @<seconds>",
            actual=value or "absent",
            response=response,
        )
        deprecated_at = _version_entry(client, served).get("deprecated_at")
        seconds = int(match.group(1)) if match else -1
        day = dt.datetime.fromtimestamp(seconds, dt.UTC)
        expect(
            "HDR-018",
            day.date().isoformat() == deprecated_at,
            expected=f"a moment of {deprecated_at} (UTC)",
            actual=day.isoformat(),
            response=response,
        )
        _expect_link_rel("HDR-022", response, "deprecation")


@pytest.mark.requirement("HDR-020", "HDR-021", "HDR-023")
def test_sunset_follows_the_version_stop_date(client, key, profile):
    for response in _deprecated_answers(client, key, profile):
        entry = _version_entry(client, response.headers.get("service-version", ""))
        sunset = response.headers.get("sunset")
        expect(
            "HDR-020",
            (sunset is not None) == (entry.get("sunset_at") is not None),
            expected=f"Sunset present exactly when sunset_at ({entry.get('sunset_at')}) is set",
            actual=sunset or "absent",
            response=response,
        )
        if sunset is None:
            continue
        expect(
            "HDR-020",
            "deprecation" in response.headers,
            expected="Sunset with Deprecation",
            actual="no Deprecation",
            response=response,
        )
        try:
            when = email.utils.parsedate_to_datetime(sunset)
        except (TypeError, ValueError):
            when = None
        expect(
            "HDR-021",
            when is not None and sunset.endswith(" GMT"),
            expected="an IMF-fixdate",
            actual=sunset,
            response=response,
        )
        expect(
            "HDR-021",
            when is not None and when.date().isoformat() == entry.get("sunset_at"),
            expected=f"the date {entry.get('sunset_at')}",
            actual=sunset,
            response=response,
        )
        _expect_link_rel("HDR-023", response, "sunset")


@pytest.mark.requirement("HDR-019", "HDR-020")
@pytest.mark.needs("role:deprecated_pin")
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "playback"), ("GET", "videos"), ("GET", "creatives/not-a-uuid"), ("GET", "nope")],
)
def test_deprecation_headers_never_on_errors(client, method, path):
    response = client.request(method, path, role="deprecated_pin")
    found = [h for h in ("deprecation", "sunset") if h in response.headers]
    found += sorted(_rels(response) & {"deprecation", "sunset"})
    expect(
        "HDR-019",
        response.status_code >= 400 and not found,
        expected="an error without Deprecation, Sunset or deprecation Link",
        actual=f"{response.status_code} {found}",
        response=response,
    )
