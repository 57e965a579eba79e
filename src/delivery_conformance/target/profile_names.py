"""The names a target profile may use: key roles and fixtures, each with what it is and unlocks.

One table, read by the profile loader (unknown names are refused with a did-you-mean), by
`check-profile` (what is missing), by the template `init-profile` writes, and by the self-test that
keeps ARCHITECTURE.md (Key roles, Fixtures) and docs/profile.md (Key roles and fixtures) in step.
The organisations and scopes follow the spec's Authentication section (scopes per endpoint).
"""

# The role and fixture tables hold one row a line, so their long rows are exempt from the line
# length (as the fault tables are).
# ruff: noqa: E501

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FIXTURES",
    "FIXTURE_GROUPS",
    "KEY_ENV_PREFIX",
    "LIMITS_TWIN_SUFFIXES",
    "OWN_ORGANISATION_ROLES",
    "ROLES",
    "TWIN_OF",
    "Fixture",
    "Role",
    "key_env",
]

# DELIVERY_KEY_<ROLE in capitals> overrides [keys] <role> (docs/profile.md > Target profile format).
KEY_ENV_PREFIX = "DELIVERY_KEY_"


@dataclass(frozen=True)
class Role:
    name: str
    what: str  # organisation and scopes of the key
    unlocks: str  # the scenarios that need it


@dataclass(frozen=True)
class Fixture:
    name: str
    group: str
    what: str  # what the id names, in the organisation of the role that reads it
    unlocks: str


# The suffixes of the twin pairs: roles `limits_<suffix>` and `limits_videos_<suffix>`.
LIMITS_TWIN_SUFFIXES = ("b", "c", "d")


def key_env(role: str) -> str:
    """The environment variable that overrides the key of `role`."""
    return KEY_ENV_PREFIX + role.upper()


_FILM_SCOPES = "metadata:read, playback, creatives:export"

ROLES: dict[str, Role] = {
    r.name: r
    for r in (
        Role("films", f"film-licensing test organisation; scopes {_FILM_SCOPES}", "most catalog, playback, creatives, series, headers and errors checks (main key)"),
        Role("films_metadata", "same organisation as films; scope metadata:read only", "scope checks (playback and creatives refused) and metadata reads"),
        Role("films_playback", "same organisation as films; scope playback only", "scope checks of POST /playback against the other endpoints"),
        Role("films_creatives", "same organisation as films; scope creatives:export only", "scope checks of the creatives endpoints against the others"),
        Role("webhooks", "same organisation as films; scope webhooks:manage only", "the check that this reserved scope opens GET /config and nothing else"),
        Role("revoked", "a revoked key of the films organisation (all film scopes)", "the 401 answers to a revoked key"),
        Role("videos", "video-partner test organisation; metadata:read and videos:read, bound to a registered app", "open videos, collections and granted playlists"),
        Role("videos_unbound", "same organisation as videos; same scopes, not bound to an app", "the app_not_registered refusals of GET /videos"),
        Role("videos_other", "a second video-partner test organisation (own grants and media space), bound to an app", "the answers that must differ per organisation"),
        Role("suspended", "a suspended test organisation; all scopes, bound to an app", "the org_suspended refusals on every endpoint"),
        Role("unlicensed", "film test organisation with no current licence; all film scopes", "the empty catalog and not_entitled answers"),
        Role("production", "a film organisation that is not a test organisation", "the check that Service-Simulate is ignored outside test organisations"),
        Role("unverifiable", "film test organisation whose key the server cannot verify in time", "the 503 service_unavailable answers with Retry-After"),
        Role("limits", "its own film test organisation (all film scopes); used by nothing else", "the rate-limit scenarios (counters, 429, Retry-After, shedding)"),
        Role("limits_videos", "its own video test organisation; videos:read, bound to an app", "the rate-limit scenarios of GET /videos"),
        Role("retired_pin", "film test organisation key pinned to a retired version", "the unsupported_version answers with upgrade_to (needs a retired version)"),
        Role("deprecated_pin", "film test organisation key pinned to a deprecated version", "the Deprecation, Sunset and Link headers (needs a deprecated version)"),
        Role("films_changes", "optional: its own film test organisation (all film scopes) with a film licensed to it alone; used by nothing else", "on several workers, the state model's film, episode and creative rules run beside the other scenarios"),
        *(
            role
            for suffix in LIMITS_TWIN_SUFFIXES
            for role in (
                Role(f"limits_{suffix}", "optional: another organisation like limits (all film scopes); used by nothing else", "on several workers, one more rate-limit scenario at a time (as limits)"),
                Role(f"limits_videos_{suffix}", "optional: another organisation like limits_videos, bound to its own app", f"on several workers, with limits_{suffix}: one more rate-limit scenario at a time"),
            )
        ),
    )
}  # fmt: skip

# The optional twins of the limits roles, and the role each stands in for (suite/exclusive.py).
TWIN_OF = {
    f"limits{kind}_{suffix}": f"limits{kind}"
    for suffix in LIMITS_TWIN_SUFFIXES
    for kind in ("", "_videos")
}

# The roles the table above gives an organisation no other role uses. The spec (Limits) counts
# per organisation, so each of them is paced on a budget of its own; every other role may share
# an organisation with another (the table says so of several), so those share one budget.
OWN_ORGANISATION_ROLES = frozenset({"limits", "limits_videos", "films_changes", *TWIN_OF})

FILMS = "Films and episodes (films organisation)"
SERIES = "Series and playlists"
CREATIVES = "Creatives (films organisation)"
VIDEOS = "Open videos (videos organisation)"
VERSIONS = "Versions"
FIXTURE_GROUPS = (FILMS, SERIES, CREATIVES, VIDEOS, VERSIONS)

FIXTURES: dict[str, Fixture] = {
    f.name: f
    for f in (
        Fixture("film_id", FILMS, "id of a licensed, published film", "catalog, series, freshness and playback-by-film checks"),
        Fixture("film_id_unpublished", FILMS, "id of a film licensed to films but not published", "the catalog leaves unpublished films out"),
        Fixture("film_slug", FILMS, "slug of a film with encrypted, ready episodes and subtitles in two or more languages", "playback by film_ref and subtitles"),
        Fixture("episode_encrypted", FILMS, "id of a ready private-encrypted episode", "most playback checks (tickets, device values, reuse, limits)"),
        Fixture("episode_encrypted_no", FILMS, "episode_no of that episode in film_slug", "playback by film_ref + episode_no"),
        Fixture("episode_signed", FILMS, "id of a ready signed-url-only episode", "signed-url playback, simulate and scope checks"),
        Fixture("episode_paged_film", FILMS, "id of a film whose last published episode is followed by planned ones", "placeholder rows, batch next and reuse checks"),
        Fixture("episode_last_no", FILMS, "episode_no of that film's last published episode", "batch next items past the last published episode"),
        Fixture("placeholder_episode_no", FILMS, "a planned episode_no of episode_paged_film", "placeholder rows and playback of a planned episode"),
        Fixture("episode_not_ready", FILMS, "id of a published episode with stream_ready false", "playback 404 not_ready"),
        Fixture("episode_no_playable", FILMS, "id of an episode with no playable version", "playback 503 not_ready"),
        Fixture("episode_provider_timeout", FILMS, "id of an episode whose provider times out", "playback 503 service_unavailable with Retry-After"),
        Fixture("episode_stream_error", FILMS, "id of an episode whose stream fails", "playback 502"),
        Fixture("episode_internal_error", FILMS, "id of an episode that fails inside", "playback 500"),
        Fixture("episode_outside_window", FILMS, "id of an episode outside its licence window", "playback 403 not_entitled (outside_window)"),
        Fixture("episode_entitlement_not_found", FILMS, "id of an episode with no entitlement", "playback 403 not_entitled (entitlement_not_found)"),
        Fixture("episode_entitlement_suspended", FILMS, "id of an episode whose entitlement is suspended", "playback 403 not_entitled (entitlement_suspended)"),
        Fixture("episode_streaming_disabled", FILMS, "id of an episode with streaming disabled", "playback 403 not_entitled (streaming_disabled)"),
        Fixture("changes_film_id", FILMS, "optional: id of a film licensed to films_changes alone (with two or more published episodes)", "with changes_episode and changes_creative_id: the state model's film rules beside the other scenarios"),
        Fixture("changes_episode", FILMS, "optional: id of a published episode of changes_film_id", "the state model's episode withdrawals and publications"),
        Fixture("series_code", SERIES, "code of a licensed series", "series list and detail, headers, scopes, withdrawal"),
        Fixture("series_code_long", SERIES, "code of a series with more than 100 episodes", "long series detail"),
        Fixture("series_code_withdrawn", SERIES, "code of a withdrawn series", "withdrawal of series"),
        Fixture("series_code_unlicensed", SERIES, "code of a series with no current licence", "series licence refusals"),
        Fixture("playlist_code", SERIES, "code of a playlist granted to videos", "playlist list and detail"),
        Fixture("playlist_code_not_granted", SERIES, "code of a playlist not granted to videos", "playlist grant refusals"),
        Fixture("playlist_code_withdrawn", SERIES, "code of a withdrawn playlist", "withdrawal of playlists"),
        Fixture("category_slug", SERIES, "slug of a playlist category", "the playlists category filter"),
        Fixture("category_withdrawn", SERIES, "slug of a withdrawn category", "withdrawal of categories"),
        Fixture("creative_id", CREATIVES, "id of a pushed creative whose final render is ready", "creative reads, file links, headers, limits"),
        Fixture("creative_not_ready", CREATIVES, "id of a creative whose final render is not ready", "creative file 409 4090"),
        Fixture("creative_rights_ended", CREATIVES, "id of a creative whose export rights ended", "creative 403 4032"),
        Fixture("creative_other_org", CREATIVES, "id of another organisation's creative", "creative 404 for a foreign id"),
        Fixture("creative_link_failure", CREATIVES, "id of a creative whose download link cannot be prepared", "creative file 503 5032"),
        Fixture("creative_hidden", CREATIVES, "id of a creative neither approved nor pushed", "nothing in the suite yet (the sandbox answers 404)"),
        Fixture("changes_creative_id", CREATIVES, "optional: id of an approved or pushed creative of the films_changes organisation", "the state model's creative renames"),
        Fixture("collection_code", VIDEOS, "code of a granted collection", "open video lists and paging"),
        Fixture("collection_not_granted", VIDEOS, "code of a collection not granted", "GET /videos 404 collection_not_found"),
        Fixture("collection_broken", VIDEOS, "code of a granted collection that cannot be read", "GET /videos 500"),
        Fixture("video_id", VIDEOS, "id of a granted, playable video", "single video reads, headers, scopes, limits"),
        Fixture("video_not_granted", VIDEOS, "id of a video in no granted collection", "GET /videos/{id} 404 video_not_found"),
        Fixture("video_broken", VIDEOS, "id of a video that cannot be read", "GET /videos/{id} 500"),
        Fixture("video_not_ready", VIDEOS, "id of a granted, published video not playable yet", "left out of lists; 404 video_not_found on the single read"),
        Fixture("video_two_collections", VIDEOS, "id of a video in two granted collections", "the collections of a single video read"),
        Fixture("deprecated_version", VERSIONS, "a deprecated dated version (YYYY-MM-DD)", "Deprecation and Sunset headers with a version header"),
        Fixture("retired_version", VERSIONS, "a retired dated version (YYYY-MM-DD)", "400 unsupported_version for a retired version header"),
    )
}  # fmt: skip
