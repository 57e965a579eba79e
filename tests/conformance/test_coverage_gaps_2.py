"""Behaviours the suite had no check for (issue 13, second block): each scenario charges the
exact rule it judges, so a server breaking only that rule fails it.

spec: Authentication (key form, the header's form, a key acting for its whole organisation);
Limits (the table `/config` reports); Resources > Creative record (`final.file_url`).
Links are secrets: opened only through a client whose redactor hides their tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import listing_support as listing
import pytest
from json_support import at
from timing_support import CATALOG_AGE, settle

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.evidence.redact import Redactor
from delivery_conformance.target.client import DeliveryClient, Response


def _key_forms(key: str) -> dict[str, str]:
    """Keys not of the form `svc_live_` + 32 characters, built from a real one."""
    secret = key.removeprefix("svc_live_")
    return {
        "wrong prefix": "svc_test_" + secret,
        "one character more": key + "x",
        "one character less": key[:-1],
        "empty": "",
    }


@pytest.mark.needs("role:films")
@pytest.mark.requirement("AUTH-005")
def test_a_key_not_of_the_key_form_is_refused(client: DeliveryClient, key: Any) -> None:
    """spec: Authentication: a key is `svc_live_` then 32 characters; a value of another form
    is no key of the organisation, even when a real key's secret sits inside it."""
    opened = {}
    for form, value in _key_forms(key("films")).items():
        # An empty key is sent as `Bearer` alone: HTTP trims the space that would follow it.
        header = f"Bearer {value}".rstrip()
        response = client.get("catalog", headers={"Authorization": header})
        if response.status_code != 401:
            opened[form] = response.status_code
    expect(
        "AUTH-005",
        not opened,
        expected="401 for each malformed key",
        actual=f"answered {opened}",
    )


@pytest.mark.needs("role:films")
@pytest.mark.requirement("AUTH-036")
@pytest.mark.parametrize("spacing", ["  ", "\t"], ids=["two spaces", "tab"])
def test_bearer_then_anything_but_one_space_is_refused(
    client: DeliveryClient, key: Any, spacing: str
) -> None:
    """spec: Authentication: the header is `Bearer`, one space, the key (decision AUTH-036)."""
    response = client.get("catalog", headers={"Authorization": f"Bearer{spacing}{key('films')}"})
    expect_status("AUTH-036", response, 401, expected=f"401 for Bearer{spacing!r}<key>")


def _listed(client: DeliveryClient, path: str, role: str, field: str) -> tuple[Response, list]:
    """The whole list in order (pages may be short or empty while more follow), by `field`."""
    pages = listing.envelope_walk(client, path, role, "GEN-012", limit=100)
    return pages[-1].response, [i.get(field) for i in listing.items_of(pages)]


# (path, the role holding only that scope, the field naming an item)
ONE_SCOPE_KEYS = (
    ("series", "films_metadata", "code"),
    ("creatives", "films_creatives", "creative_id"),
)


@pytest.mark.needs("role:films", "role:films_metadata", "role:films_creatives")
@pytest.mark.requirement("GEN-012")
@pytest.mark.parametrize(("path", "role", "field"), ONE_SCOPE_KEYS, ids=["series", "creatives"])
def test_two_keys_of_one_organisation_see_the_same_list(
    client: DeliveryClient, path: str, role: str, field: str
) -> None:
    """spec: Authentication: a key acts for its whole organisation, on every endpoint its scope
    opens (GEN-004 judges the catalog). Two keys may be served from caches of different ages
    (Limits > Freshness): the walks are compared again until they agree, for 30 s."""
    seen = settle(
        lambda: (_listed(client, path, "films", field), _listed(client, path, role, field)),
        lambda pair: bool(pair[0][1]) and pair[0][1] == pair[1][1],
        CATALOG_AGE,
    )
    (_, mine), (second, theirs) = seen.value
    expect(
        "GEN-012",
        seen.settled,
        expected=f"the same non-empty /{path} for films and {role}",
        actual=f"{len(mine)} vs {len(theirs)} items",
        response=second,
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


def _open(profile: Any, url: str) -> Response:
    """GET a keyless link (share or download) through a client that hides its secret parts."""
    parts = urlsplit(url)
    secrets = [parts.path.rsplit("/", 1)[-1], *(v for _, v in parse_qsl(parts.query))]
    with DeliveryClient(profile) as private:
        private.redactor = Redactor([*profile.keys.values(), *secrets])
        return private.get(parts.path + (f"?{parts.query}" if parts.query else ""))


@pytest.mark.needs("admin", "role:films", "fixture:creative_id")
@pytest.mark.requirement("CRE-023")
def test_a_share_link_download_lives_15_minutes(
    client: DeliveryClient, admin: Any, fixture_id: Any, profile: Any
) -> None:
    """spec: Resources > Creative record (`final.file_url`: each open redirects to a fresh
    download link valid 15 minutes); Limits > Other constants. The target's clock is moved
    with the admin API: the link opens at 14 min 50 s and is refused at 15 min 10 s."""
    record = client.get(f"creatives/{fixture_id('creative_id')}", role="films").json_body()
    url = at(record, "data.final.file_url")
    if not isinstance(url, str) or not url.startswith(profile.base_url):
        pytest.skip(NOT_EXERCISED_PREFIX + "the ready creative has no file_url on the target")
    redirect = _open(profile, url)
    location = redirect.headers.get("location") or ""
    expect(
        "CRE-023",
        redirect.status_code in (301, 302, 303, 307, 308) and location.startswith(profile.base_url),
        expected="a redirect to a download link on the target",
        actual=redirect.status_code,
    )
    admin.clock(advance=890)
    early = _open(profile, location).status_code
    admin.clock(advance=20)
    late = _open(profile, location).status_code
    expect(
        "CRE-023",
        early == 200 and late != 200,
        expected="the download link opens at 890 s and not at 910 s",
        actual=f"{early} at 890 s, {late} at 910 s",
    )


@pytest.mark.needs("admin", "role:films", "fixture:creative_id")
@pytest.mark.requirement("CRE-063", "CRE-064")
def test_a_revoked_share_link_is_gone_and_reads_null(
    client: DeliveryClient, admin: Any, fixture_id: Any, profile: Any
) -> None:
    """spec: Resources > Creative record (`final.file_url`: revocable by an organisation admin,
    null when revoked); Endpoints > GET /creatives/{id} (a 410 on a stored link: read the
    creative again, null if revoked). Sandbox admin action `creatives/{id}/revoke-link`."""
    creative = fixture_id("creative_id")
    url = at(client.get(f"creatives/{creative}", role="films").json_body(), "data.final.file_url")
    if not isinstance(url, str) or not url.startswith(profile.base_url):
        pytest.skip(NOT_EXERCISED_PREFIX + "the ready creative has no file_url on the target")
    admin.call("POST", f"creatives/{creative}/revoke-link", {})
    opened = _open(profile, url).status_code
    expect("CRE-063", opened == 410, expected="410 for the revoked link", actual=opened)
    again = client.get(f"creatives/{creative}", role="films")
    expect_status("CRE-034", again, 200, expected="200 for the creative")
    final = at(again.json_body(), "data.final")
    expect(
        "CRE-064",
        isinstance(final, dict) and "file_url" in final and final["file_url"] is None,
        expected="final.file_url null once revoked",
        actual="a link" if isinstance(final, dict) and final.get("file_url") else final,
        response=again,
    )


@pytest.mark.needs("role:films", "fixture:film_id_unpublished")
@pytest.mark.requirement("CAT-081")
def test_a_licensed_film_not_published_is_never_in_the_catalog(
    client: DeliveryClient, fixture_id: Any
) -> None:
    """spec: Endpoints > GET /catalog: films with a current licence and published status are
    listed; a draft one is not, even with its licence current."""
    draft = fixture_id("film_id_unpublished")
    response = client.get("catalog", role="films")
    expect_status("CAT-001", response, 200, expected="200 for GET /catalog")
    body = response.json_body()
    body = body if isinstance(body, dict) else {}
    films = [f.get("id") for f in body.get("films") or [] if isinstance(f, dict)]
    rows = [e.get("film_id") for e in body.get("episodes") or [] if isinstance(e, dict)]
    expect(
        "CAT-081",
        bool(films) and draft not in films and draft not in rows,
        expected=f"film {draft} absent from films[] and episodes[]",
        actual=f"{films.count(draft)} films, {rows.count(draft)} episode rows",
        response=response,
    )


def _retitle(
    admin: Any, action: str, read: Callable[[], Any], stamp: tuple[str, type], where: str
) -> tuple[Any, Response, dict[str, Any]]:
    """The item's `stamp` field (name, type) before, then the title changed with the sandbox
    admin `action` (README: Admin API) and the item read again (`read`) until the new title
    shows: the catalog and the other metadata endpoints are up to 30 s old (GET /catalog; Limits
    > Freshness). Not exercised when the item has no such stamp, or when the new title does not
    show in `where` within those 30 s."""
    _, before = read()
    value = before.get(stamp[0])
    if not isinstance(value, stamp[1]):
        pytest.skip(NOT_EXERCISED_PREFIX + f"the {where} item has no {stamp[0]} to compare")
    title = f"{before.get('title') or 'Item'} (retitled)"
    admin.call("POST", action, {"title": title})
    seen = settle(read, lambda pair: pair[1].get("title") == title, CATALOG_AGE)
    response, after = seen.value
    if not seen.settled:
        pytest.skip(
            NOT_EXERCISED_PREFIX
            + f"the new title does not show in the {where} in {CATALOG_AGE:g} s"
        )
    return value, response, after


def _film(client: DeliveryClient, film_id: str) -> tuple[Response, dict[str, Any]]:
    response = client.get("catalog", role="films")
    expect_status("CAT-001", response, 200, expected="200 for GET /catalog")
    films = at(response.json_body(), "films")
    found = [f for f in films or [] if isinstance(f, dict) and f.get("id") == film_id]
    return response, found[0] if found else {}


@pytest.mark.needs("admin", "role:films", "fixture:film_id")
@pytest.mark.requirement("CAT-082")
def test_metadata_version_moves_when_the_metadata_changes(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """spec: Resources > Film (`metadata_version` changes when the metadata changes). The
    title is changed with the sandbox admin action `films/{id}/retitle` (README: Admin API)."""
    film_id = fixture_id("film_id")
    read = partial(_film, client, film_id)
    version, response, after = _retitle(
        admin, f"films/{film_id}/retitle", read, ("metadata_version", str), "catalog"
    )
    expect(
        "CAT-082",
        after.get("metadata_version") != version,
        expected="a metadata_version other than the one before the title changed",
        actual=f"unchanged {version!r}",
        response=response,
    )


def _playlist(client: DeliveryClient, code: str) -> tuple[Response, dict[str, Any]]:
    response = client.get(f"playlists/{code}", role="videos")
    expect_status("PLS-026", response, 200, expected=f"200 for playlist {code}")
    data = at(response.json_body(), "data")
    return response, data if isinstance(data, dict) else {}


@pytest.mark.needs("admin", "role:videos", "fixture:playlist_code")
@pytest.mark.requirement("PLS-045")
def test_a_playlist_that_changes_moves_its_updated_at(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """spec: Resources > Playlist list item and detail (`updated_at`: the last change), read with
    Endpoints > GET /playlists (`updated_since` syncs rely on it). The title is changed with the
    sandbox admin action `playlists/{code}/retitle` (README: Admin API)."""
    code = fixture_id("playlist_code")
    read = partial(_playlist, client, code)
    stamp, response, after = _retitle(
        admin, f"playlists/{code}/retitle", read, ("updated_at", int), "playlist"
    )
    moved = after.get("updated_at")
    expect(
        "PLS-045",
        isinstance(moved, int) and moved > stamp,
        expected=f"updated_at later than {stamp} once the playlist changed",
        actual=moved,
        response=response,
    )
