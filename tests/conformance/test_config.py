"""GET /config: every documented field, its errors, and its agreement with real answers.

spec: GET /config (response table); Errors > Config; Limits (constants and doors); Versioning.
Readings followed (docs/reading-of-the-spec.md): CFG-008/CFG-026 (dates are `YYYY-MM-DD`; six links
end with their endpoint path), LIM-010 (units ticket(s) for playback, request(s) otherwise), CFG-035
(a domain matches its host and its subdomains).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from config_support import listed_versions, version_entries
from expect_support import expect_answered, expect_equal, expect_without
from json_support import arr, at, body_of, obj, objs
from playback_support import BASIC_DEVICE, play_body, post

from delivery_conformance.checks import CHECKS, assert_conforms, expect, expect_status
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import DeliveryClient

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
UNKNOWN_KEY = "svc_live_" + "Cf8" * 10 + "x9"
DOORS = ("catalog", "playback", "creatives", "videos", "config")
LINKS = (
    "self",
    "catalog",
    "playback",
    "creatives",
    "videos",
    "config",
    "docs",
    "evolution",
    "changes",
)


@pytest.fixture
def config(client, key):
    key("films")
    response = client.get("config", role="films")
    expect_status("CFG-001", response, 200, expected=200)
    return response


def _field(config, dotted: str):
    value = body_of(config)
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


@pytest.mark.requirement("CFG-001")
def test_config_holds_every_section(config):
    missing = [
        name
        for name in ("api", "key", "rate_limits", "playback", "subtitles", "deprecations", "links")
        if name not in body_of(config)
    ]
    expect(
        "CFG-001",
        not missing,
        expected="api, key, rate_limits, playback, subtitles, deprecations, links",
        actual=f"missing {missing}",
        response=config,
    )


# (requirement, dotted field, predicate, what is due)
FIELD_RULES = [
    ("CFG-002", "api.status", lambda v: v == "beta", "beta"),
    ("CFG-003", "api.path_version", lambda v: v == "v1", "v1"),
    (
        "CFG-006",
        "api.latest_version",
        lambda v: isinstance(v, str) and DATE.fullmatch(v),
        "a YYYY-MM-DD string",
    ),
    ("CFG-007", "api.version_header", lambda v: v == "Service-Version", "Service-Version"),
    ("CFG-012", "key.test_organisation", lambda v: v is True, "true"),
    ("CFG-014", "rate_limits.window_seconds", lambda v: v == 60 and type(v) is int, "60"),
    (
        "CFG-018",
        "playback.domains",
        lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "an array of strings",
    ),
    (
        "CFG-018",
        "playback.protection",
        lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "an array of strings",
    ),
    ("CFG-019", "playback.grant_ttl_seconds", lambda v: v == 1800 and type(v) is int, "1800"),
    ("CFG-020", "playback.manifest_url_ttl_seconds", lambda v: v == 900 and type(v) is int, "900"),
    ("CFG-021", "playback.batch.max_episodes", lambda v: v == 3 and type(v) is int, "3"),
    ("CFG-021", "playback.batch.max_next", lambda v: v == 2 and type(v) is int, "2"),
    ("CFG-022", "subtitles.format", lambda v: v == "webvtt", "webvtt"),
    (
        "CFG-023",
        "subtitles.languages",
        lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "an array of strings",
    ),
    ("CFG-024", "deprecations", lambda v: isinstance(v, list), "an array"),
]


@pytest.mark.parametrize(
    ("rid", "dotted", "rule", "due"),
    [
        pytest.param(*r, id=f"{r[0]}-{r[1]}", marks=pytest.mark.requirement(r[0]))
        for r in FIELD_RULES
    ],
)
def test_config_field_has_the_documented_value(config, profile, rid, dotted, rule, due):
    if rid == "CFG-012" and not profile.test_organisation:
        pytest.skip("not exercised: the profile is not a test organisation")
    value = _field(config, dotted)
    expect(rid, bool(rule(value)), expected=f"{dotted}: {due}", actual=value, response=config)


@pytest.mark.requirement("CFG-004", "CFG-005", "CFG-009")
@pytest.mark.parametrize("role", ["films", "deprecated_pin"])
def test_config_versions_agree_with_the_headers(client, key, role):
    key(role)
    plain = client.get("config", role=role)
    api = _field(plain, "api")
    api = api if isinstance(api, dict) else {}
    listed = listed_versions(api)
    expect_equal(
        "CFG-004", api.get("version"), plain.headers.get("service-version"), response=plain
    )
    expect(
        "CFG-009",
        api.get("pinned_version") in listed and api.get("version") in listed,
        expected=f"pin and version among {listed}",
        actual=f"{api.get('pinned_version')}, {api.get('version')}",
        response=plain,
    )
    for other in listed:
        response = client.get("config", role=role, version=other)
        inner = _field(response, "api")
        inner = inner if isinstance(inner, dict) else {}
        expect(
            "CFG-004",
            inner.get("version") == response.headers.get("service-version") == other,
            expected=f"api.version {other}",
            actual=inner.get("version"),
            response=response,
        )
        expect_equal(
            "CFG-005",
            inner.get("pinned_version"),
            api.get("pinned_version"),
            what="pinned_version",
            response=response,
        )


@pytest.mark.requirement("CFG-008", "CFG-006")
def test_supported_versions_have_the_documented_items(config):
    versions = _field(config, "api.supported_versions")
    expect(
        "CFG-008",
        isinstance(versions, list) and bool(versions),
        expected="a non-empty array",
        actual=versions,
        response=config,
    )
    for entry in versions:
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("version"), str)
            and isinstance(entry.get("summary"), str)
            and isinstance(entry.get("released_at"), str)
            and DATE.fullmatch(entry["released_at"])
            and all(
                entry.get(k) is None or (isinstance(entry.get(k), str) and DATE.fullmatch(entry[k]))
                for k in ("deprecated_at", "sunset_at")
            )
            and {"deprecated_at", "sunset_at"} <= set(entry)
        )
        expect(
            "CFG-008",
            bool(ok),
            expected="version, released_at, deprecated_at, sunset_at, "
            "summary with YYYY-MM-DD dates",
            actual=entry,
            response=config,
        )
    latest = _field(config, "api.latest_version")
    expect(
        "CFG-006",
        latest in [e.get("version") for e in versions],
        expected="latest_version listed",
        actual=latest,
        response=config,
    )


@pytest.mark.requirement("CFG-010")
def test_deprecated_at_marks_the_deprecated_version_only(client, config, profile):
    entries = version_entries(_field(config, "api") or {})
    latest = _field(config, "api.latest_version")
    if not isinstance(latest, str) or latest not in entries:
        # Not listed at all is CFG-006's finding; nothing here to read deprecated_at from.
        pytest.skip(
            f"not exercised: api.latest_version {latest!r} has no entry in "
            "api.supported_versions (CFG-006)"
        )
    expect(
        "CFG-010",
        entries[latest].get("deprecated_at") is None,
        expected=f"{latest} deprecated_at null",
        actual=entries[latest],
        response=config,
    )
    deprecated = profile.fixtures.get("deprecated_version")
    if deprecated is not None:
        expect(
            "CFG-010",
            entries.get(deprecated, {}).get("deprecated_at") is not None,
            expected=f"{deprecated} deprecated_at set",
            actual=entries.get(deprecated),
            response=config,
        )


@pytest.mark.requirement("CFG-013")
@pytest.mark.needs("role:production")
def test_production_key_is_not_a_test_organisation(client):
    response = client.get("config", role="production")
    value = _field(response, "key.test_organisation")
    expect("CFG-013", value is False, expected="false", actual=value, response=response)


def _doors(client, key, role: str) -> tuple:
    """GET /config for the role's key and its `rate_limits.doors`."""
    key(role)
    response = client.get("config", role=role)
    return response, _field(response, "rate_limits.doors")


@pytest.mark.requirement("CFG-015", "CFG-016")
@pytest.mark.parametrize("role", ["films", "videos"])
def test_rate_limit_doors_list_the_five_counters(client, key, role):
    response, doors = _doors(client, key, role)
    expect(
        "CFG-015",
        isinstance(doors, dict)
        and all(
            isinstance(doors.get(n), dict)
            and type(doors[n].get("limit")) is int
            and isinstance(doors[n].get("unit"), str)
            for n in DOORS
        ),
        expected="doors catalog, playback, creatives, videos, config as {limit, unit}",
        actual=doors,
        response=response,
    )
    expect(
        "CFG-016",
        "video" not in doors,
        expected="no single-video door",
        actual=sorted(doors),
        response=response,
    )


@pytest.mark.requirement("LIM-008", "LIM-010")
@pytest.mark.parametrize("role", ["films", "videos"])
def test_doors_name_every_counter_but_single_video_with_its_unit(client, key, role):
    """spec: Limits (GET /config reports every counter except the single-video one; units)."""
    response, doors = _doors(client, key, role)
    names = sorted(doors) if isinstance(doors, dict) else doors
    expect(
        "LIM-008",
        isinstance(doors, dict) and set(DOORS) <= set(doors) and "video" not in doors,
        expected=f"doors {sorted(DOORS)} and no 'video'",
        actual=names,
        response=response,
    )
    # docs/reading-of-the-spec.md (LIM-010): the spec names the units in words, not as values: the
    # Limits table's word, singular or plural, in any letter case.
    units = {name: obj(doors.get(name)).get("unit") for name in DOORS}
    wanted = {name: "ticket" if name == "playback" else "request" for name in DOORS}
    wrong = {
        name: unit
        for name, unit in units.items()
        if not isinstance(unit, str) or unit.lower().removesuffix("s") != wanted[name]
    }
    expect(
        "LIM-010",
        not wrong,
        expected="unit tickets for playback, requests for the other doors",
        actual=wrong,
        response=response,
    )


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("CFG-017", "CFG-032")
@pytest.mark.needs("role:limits", "admin")
def test_config_door_follows_the_limit_and_refuses_past_it(client, admin):
    admin.set_limit("limits", "config", 3)
    first = client.get("config", role="limits")
    limit = _field(first, "rate_limits.doors.config.limit")
    expect_equal("CFG-017", limit, 3, expected="doors.config.limit 3", response=first)
    answers = [client.get("config", role="limits") for _ in range(3)]
    last = answers[-1]
    expect_answered("CFG-032", last, 429, "error_code", "rate_limited", why=" on the fourth call")
    assert_conforms(last, CHECKS["flat_error"], CHECKS["rate_limit_headers"])


@pytest.mark.requirement("CFG-023", "FRESH-015")
@pytest.mark.needs("role:films")
def test_subtitle_languages_cover_the_catalog(client, config):
    languages = {v for v in arr(_field(config, "subtitles.languages")) if isinstance(v, str)}
    catalog = body_of(client.get("catalog", role="films"))
    used = {
        s.get("lang")
        for e in objs(catalog.get("episodes"))
        for s in objs(e.get("subtitles"))
        if isinstance(s.get("lang"), str)
    }
    expect(
        "CFG-023",
        used <= languages,
        expected=f"every catalog language in {sorted(languages)}",
        actual=sorted(used - languages),
    )


@pytest.mark.requirement("CFG-025", "CFG-026")
def test_links_are_absolute_and_name_their_endpoints(config):
    links = obj(_field(config, "links"))
    for name in LINKS:
        parts = urlsplit(str(links.get(name) or ""))
        expect(
            "CFG-025",
            parts.scheme in ("http", "https") and bool(parts.netloc),
            expected=f"links.{name} an absolute URL",
            actual=links.get(name),
            response=config,
        )
    for name in ("catalog", "playback", "creatives", "videos", "config"):
        expect(
            "CFG-026",
            urlsplit(links[name]).path.endswith(f"/api/delivery/v1/{name}"),
            expected=f"links.{name} ending /api/delivery/v1/{name}",
            actual=links[name],
            response=config,
        )
    expect(
        "CFG-026",
        urlsplit(links["self"]).path.endswith("/api/delivery/v1/config"),
        expected="links.self ending /api/delivery/v1/config",
        actual=links["self"],
        response=config,
    )


@pytest.mark.requirement("CFG-028")
@pytest.mark.parametrize("case", ["unknown", "retired header", "retired pin"])
def test_config_refuses_unknown_and_retired_versions(client, key, fixture_id, case):
    if case == "retired pin":
        key("retired_pin")
        response = client.get("config", role="retired_pin")
    else:
        version = "1999-01-01" if case == "unknown" else fixture_id("retired_version")
        key("films")
        response = client.get("config", role="films", version=version)
    expect_answered("CFG-028", response, 400, "error_code", "unsupported_version")


@pytest.mark.requirement("CFG-029", "CFG-030")
@pytest.mark.parametrize("credential", ["none", "unknown", "revoked"])
def test_config_refuses_a_missing_or_bad_key(client, key, credential):
    secret = None if credential == "none" else UNKNOWN_KEY
    if credential == "revoked":
        secret = key("revoked")
    response = client.get("config", key=secret)
    rid = "CFG-029" if credential == "none" else "CFG-030"
    expect_without(rid, response, "error_code", status=401, expected="401 without error_code")


@pytest.mark.requirement("CFG-031")
@pytest.mark.needs("role:suspended")
def test_config_refuses_a_suspended_organisation(client):
    response = client.get("config", role="suspended")
    expect_without(
        "CFG-031",
        response,
        "error_code",
        status=403,
        error="org_suspended",
        expected="403 error org_suspended, no error_code",
    )


@pytest.mark.requirement("CFG-033")
@pytest.mark.needs("role:unverifiable")
def test_config_unverifiable_key_is_503(client):
    response = client.get("config", role="unverifiable")
    expect_answered("CFG-033", response, 503, "error_code", "service_unavailable")


@pytest.mark.requirement("CFG-035", "CFG-036")
@pytest.mark.needs("fixture:episode_signed", "fixture:episode_encrypted")
def test_tickets_agree_with_playback_domains_and_protection(client, config, fixture_id):
    domains = [d.lower() for d in arr(_field(config, "playback.domains")) if isinstance(d, str)]
    levels = arr(_field(config, "playback.protection"))
    signed = post(client, {"episode_id": fixture_id("episode_signed")})
    host = (urlsplit(str(body_of(signed).get("manifest_url") or "")).hostname or "").lower()
    expect(
        "CFG-035",
        signed.status_code == 200 and any(host == d or host.endswith("." + d) for d in domains),
        expected=f"manifest host within {domains}",
        actual=host or signed.status_code,
        response=signed,
    )
    encrypted = post(client, play_body(fixture_id, device=BASIC_DEVICE))
    for ticket in (signed, encrypted):
        protection = body_of(ticket).get("protection")
        expect(
            "CFG-036",
            ticket.status_code == 200 and protection in levels,
            expected=f"protection among {levels}",
            actual=protection,
            response=ticket,
        )


# spec: Limits (the table): the limit per 60 s an organisation starts with, per counter.
TABLE_LIMITS = {"playback": 10_800, "catalog": 3_000, "creatives": 3_000, "videos": 3_000,
                "config": 600}  # fmt: skip


@pytest.mark.needs("role:films")
@pytest.mark.requirement("CFG-037")
def test_config_doors_are_the_limits_table_or_above(client: DeliveryClient) -> None:
    """spec: Limits; Endpoints > GET /config: the doors report the table's limits, or more where
    they were raised (decision CFG-037)."""
    response = client.get("config", role="films")
    expect_status("CFG-001", response, 200, expected="200 for GET /config")
    doors = at(response.json_body(), "rate_limits.doors")
    doors = doors if isinstance(doors, dict) else {}
    low = {
        name: (doors.get(name) or {}).get("limit") if isinstance(doors.get(name), dict) else None
        for name in TABLE_LIMITS
    }
    low = {n: v for n, v in low.items() if not (type(v) is int and v >= TABLE_LIMITS[n])}
    expect(
        "CFG-037",
        not low,
        expected=f"door limits at least {TABLE_LIMITS}",
        actual=f"below the table or missing: {low}",
        response=response,
    )
