"""The scope matrix: every endpoint against every key role, as one table.

spec: Authentication (scope table; `videos:read` needs a key bound to an app; `webhooks:manage`
grants nothing); Endpoints (scope column); Errors (plain 403 on flat endpoints, 4030 on envelope
ones, 4032 for a film organisation on playlists, `app_not_registered`).
Readings followed (docs/reading-of-the-spec.md): VID-023 (scope before app binding), PLS-032/PLS-042
(scope 4030 before the film-organisation 4032).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from json_support import at, body_of
from playback_support import BASIC_DEVICE

from delivery_conformance.checks import expect


@dataclass(frozen=True)
class Role:
    name: str
    scopes: frozenset[str]
    video_org: bool = False
    bound: bool = True


# ARCHITECTURE.md > Key roles (the roles a profile names, with the scopes their keys carry).
ROLES = (
    Role("films", frozenset({"metadata:read", "playback", "creatives:export"})),
    Role("films_metadata", frozenset({"metadata:read"})),
    Role("films_playback", frozenset({"playback"})),
    Role("films_creatives", frozenset({"creatives:export"})),
    Role("webhooks", frozenset({"webhooks:manage"})),
    Role("videos", frozenset({"metadata:read", "videos:read"}), video_org=True),
    Role(
        "videos_unbound", frozenset({"metadata:read", "videos:read"}), video_org=True, bound=False
    ),
)

# operation -> (path template, fixture in the path, scope, status when open)
CALLS = {
    "getCatalog": ("catalog", None, "metadata:read", 200),
    "getConfig": ("config", None, None, 200),
    "listCreatives": ("creatives", None, "creatives:export", 200),
    "getCreative": ("creatives/{}", "creative_id", "creatives:export", 200),
    "getCreativeFile": ("creatives/{}/file", "creative_id", "creatives:export", 302),
    "postPlayback": ("playback", "episode_signed", "playback", 200),
    "listPlaylists": ("playlists", None, "metadata:read", 200),
    "getPlaylist": ("playlists/{}", "playlist_code", "metadata:read", 200),
    "listSeries": ("series", None, "metadata:read", 200),
    "getSeries": ("series/{}", "series_code", "metadata:read", 200),
    "listVideos": ("videos", None, "videos:read", 200),
    "getVideo": ("videos/{}", "video_id", "videos:read", 200),
}
ENVELOPE = {
    "listCreatives",
    "getCreative",
    "getCreativeFile",
    "listPlaylists",
    "getPlaylist",
    "listSeries",
    "getSeries",
}
PLAYLISTS = {"listPlaylists", "getPlaylist"}
SERIES = {"listSeries", "getSeries"}
VIDEOS = {"listVideos", "getVideo"}
SPECIAL_403 = {"org_suspended", "app_not_registered"}
CREATIVES = {"listCreatives", "getCreative", "getCreativeFile"}


@dataclass(frozen=True)
class Cell:
    """What one role must get from one endpoint: status, code, and the IDs the cell proves."""

    statuses: frozenset[int]
    code: str | int | None  # envelope code, or the whole `error` string; None: plain
    requirements: tuple[str, ...]


# The rule a cell proves, by what the cell is (expected() looks it up): a refusal by the role
# refused (or the videos scope missing), an opening by the endpoints opened. parametrize reads
# this table, so the requirement marker of every row is known without collecting the tests.
RULES = {
    "getConfig": "AUTH-031",
    "webhooks refused": "AUTH-032",
    "no videos:read": "AUTH-030",
    "films_metadata refused": "AUTH-024",
    "films_playback refused": "AUTH-026",
    "films_creatives refused": "AUTH-028",
    "listPlaylists by a film organisation": "PLS-033",
    "getPlaylist by a film organisation": "PLS-034",
    "playlists": "AUTH-023",
    "videos unbound": "VID-024",
    "videos by a bound key": "AUTH-029",
    "catalog and series": "AUTH-022",
    "creatives": "AUTH-027",
    "playback": "AUTH-025",
}


def expected(role: Role, operation: str, rules: dict[str, str]) -> Cell | None:
    """The policy table, row by row (None: a cell no requirement speaks about)."""
    _, _, scope, ok = CALLS[operation]
    if operation == "getConfig":
        return Cell(frozenset({200}), None, (rules[operation],))
    has = scope in role.scopes
    if role.name == "webhooks":
        return Cell(
            frozenset({403}), 4030 if operation in ENVELOPE else None, (rules["webhooks refused"],)
        )
    if not has:
        code = 4030 if operation in ENVELOPE else None
        if operation in VIDEOS:
            return Cell(frozenset({403}), None, (rules["no videos:read"],))
        owner = rules.get(f"{role.name} refused")
        return Cell(frozenset({403}), code, (owner,)) if owner else None
    if operation in PLAYLISTS:
        if not role.video_org:
            return Cell(frozenset({403}), 4032, (rules[f"{operation} by a film organisation"],))
        return Cell(frozenset({ok}), None, (rules["playlists"],))
    if operation in VIDEOS:
        if not role.bound:
            return Cell(frozenset({403}), "app_not_registered", (rules["videos unbound"],))
        return Cell(frozenset({ok}), None, (rules["videos by a bound key"],))
    if operation in SERIES or operation == "getCatalog":
        # A video organisation holds metadata:read too; its series detail may be 404 (not
        # streamable by the caller), never a refusal of the key.
        statuses = {ok, 404} if role.video_org and operation == "getSeries" else {ok}
        return Cell(frozenset(statuses), None, (rules["catalog and series"],))
    if operation in CREATIVES:
        return Cell(frozenset({ok}), None, (rules["creatives"],))
    return Cell(frozenset({ok}), None, (rules["playback"],))


def _matrix(rules: dict[str, str]) -> list:
    params = []
    for role in ROLES:
        for operation in CALLS:
            cell = expected(role, operation, rules)
            if cell is None:
                continue
            params.append(
                pytest.param(
                    role,
                    operation,
                    cell,
                    id=f"{role.name}-{operation}",
                    marks=[
                        pytest.mark.requirement(*cell.requirements),
                        pytest.mark.needs(f"role:{role.name}"),
                    ],
                )
            )
    return params


@pytest.mark.parametrize(("role", "operation", "cell"), _matrix(RULES))
def test_scope_matrix(client, fixture_id, role, operation, cell):
    template, fixture, _, _ = CALLS[operation]
    value = fixture_id(fixture) if fixture else ""
    if operation == "postPlayback":
        response = client.post(
            "playback", role=role.name, json={"episode_id": value, **BASIC_DEVICE}
        )
    else:
        response = client.get(template.format(value), role=role.name)
    rid = cell.requirements[0]
    expect(
        rid,
        response.status_code in cell.statuses,
        expected=" or ".join(str(s) for s in sorted(cell.statuses)),
        actual=response.status_code,
        response=response,
        title=f"{role.name} on {operation}",
    )
    data = body_of(response)
    if response.status_code == 403:
        if cell.code is None:
            plain = "error_code" not in data and data.get("error") not in SPECIAL_403
            expect(
                rid,
                plain,
                expected="the plain scope 403 (no error_code)",
                actual={k: data.get(k) for k in ("error", "error_code")},
                response=response,
                title=f"{role.name} on {operation}",
            )
        else:
            got = data.get("code") if isinstance(cell.code, int) else data.get("error")
            expect(
                rid,
                got == cell.code,
                expected=f"403 {cell.code}",
                actual=got,
                response=response,
                title=f"{role.name} on {operation}",
            )
    if operation == "postPlayback" and response.status_code == 200:
        expect(
            rid,
            "manifest_url" in data or "play_auth_token" in data,
            expected="a ticket",
            actual=sorted(data),
            response=response,
        )


@pytest.mark.requirement("CFG-011")
@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_config_names_the_scopes_of_the_key(client, key, role):
    key(role.name)
    response = client.get("config", role=role.name)
    scopes = at(body_of(response), "key.scopes")
    expect(
        "CFG-011",
        isinstance(scopes, list)
        and all(isinstance(s, str) for s in scopes)
        and set(scopes) == role.scopes
        and len(scopes) == len(role.scopes),
        expected=sorted(role.scopes),
        actual=scopes,
        response=response,
    )
