"""Fault rows proving the coverage of rules no other fault breaks: name, requirement IDs, summary.

Plain data, one row a line (`rows.py`), that `registry.py` appends to the sandbox's single fault
table. What the reply rows change is in `reply.py`; the unchecked-behaviour rows act
in the hooks named above them.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

__all__ = [
    "REPLY_FAULTS",
    "REPLY_FAULT_ROWS",
    "UNCHECKED_BEHAVIOUR_FAULTS",
    "UNCHECKED_BEHAVIOUR_ROWS",
]

REPLY_FAULT_ROWS: tuple[FaultRow, ...] = fault_rows("""
envelope_server_time_missing        | PAGE-005                                                          | success envelopes leave out server_time
envelope_code_string                | PAGE-006                                                          | success envelopes carry code "0" (a string)
envelope_message_wrong              | PAGE-007                                                          | success envelopes carry message "OK"
envelope_self_link_missing          | PAGE-009                                                          | list envelopes have no links.self
api_status_not_beta                 | HDR-002                                                           | Service-API-Status: stable
service_version_not_a_date          | HDR-006                                                           | Service-Version: v1 (not a date)
request_id_missing                  | HDR-011                                                           | no Service-Request-Id header
cache_control_missing               | HDR-014                                                           | no Cache-Control header
retry_after_missing_on_429          | HDR-024                                                           | a 429 without Retry-After
retry_after_http_date               | HDR-026                                                           | Retry-After given as an HTTP date
ratelimit_limit_everywhere          | HDR-028                                                           | X-RateLimit-Limit outside a 429 too
ratelimit_window_everywhere         | HDR-030                                                           | X-RateLimit-Window outside a 429 too
ratelimit_window_30                 | HDR-029                                                           | X-RateLimit-Window: 30 on a 429
content_type_text                   | GEN-005                                                           | JSON bodies labelled text/plain
allow_missing_on_405                | ERR-016                                                           | a 405 without Allow
missing_key_flat_error_code         | CAT-070 CFG-029 PLAY-071                                          | a flat 401 for a missing Authorization carries error_code unauthorized
scope_flat_error_code               | CAT-072 PLAY-073                                                  | a flat 403 for a missing scope carries error_code forbidden
malformed_version_served            | VER-005                                                           | a Service-Version that is no date is served
unknown_version_served              | VER-004 CAT-069 CFG-028 PLAY-070                                  | an unknown dated Service-Version is served as the latest
retired_version_served              | VER-006                                                           | a retired Service-Version is served as the latest
unsupported_version_in_envelope     | ERR-007                                                           | unsupported_version on envelope endpoints is an envelope (code 4000)
unsupported_version_no_latest       | VER-007                                                           | unsupported_version without latest_version
retired_pin_no_upgrade_to           | VER-008                                                           | a retired pin's 400 without upgrade_to
catalog_carries_manifest_url        | CAT-054                                                           | a catalog episode carries a manifest_url
poster_expiry_30_minutes            | CAT-044                                                           | poster_expires_at 30 minutes after the response
catalog_slug_duplicate              | CAT-005                                                           | two films share a slug
catalog_two_main_tags               | CAT-023                                                           | every tag of a film is_main
catalog_support_before_lead         | CAT-025                                                           | people listed support before lead
config_limit_doubled                | CFG-017                                                           | /config reports twice the config limit
config_scopes_extra                 | CFG-011                                                           | /config key.scopes names a scope the key lacks
config_api_version_wrong            | CFG-004                                                           | /config api.version differs from the header
playlist_list_carries_playback_link | PLS-024                                                           | a playlist item has a manifest_url
series_item_content_version_stale   | SER-024                                                           | a series item's content_version stale
playlist_item_content_version_stale | PLS-004                                                           | a playlist list item's content_version stale
download_link_30_minutes            | CRE-040                                                           | redirect=0 download links expire after 30 minutes
reuse_skips_organisation_check      | PLAY-066                                                          | while tickets are kept for reuse, a suspended organisation is served its old ticket
catalog_per_key                     | GEN-004                                                           | the films_metadata key sees one film fewer
metadata_version_per_read           | CAT-029                                                           | metadata_version changes on every read
not_granted_playlist_404            | PLS-025                                                           | a playlist not granted answers 404 4040
request_id_repeated                 | HDR-031                                                           | every response carries the same Service-Request-Id
vid_ready_without_vid               | CAT-079                                                           | a catalog row with vid_ready true has vid null
poster_host_outside_domains         | CAT-080                                                           | poster links on a host /config does not list
ready_clip_without_vid              | PLS-044                                                           | a ready playlist clip has vid null
playlist_split_at_120               | PLS-008                                                           | clips 101 to 120 stay in the first media playlist
licence_timeout_refused             | PLAY-095                                                          | a licence check that times out answers 403 entitlement_not_found instead of 503
pin_checked_before_key              | AUTH-012                                                          | a revoked key pinned to a retired version answers 400 instead of 401
scope_checked_before_pin            | AUTH-013                                                          | a key with a retired pin outside its scopes answers 403 instead of 400
scope_checked_before_key            | AUTH-014                                                          | a revoked key outside its scopes answers 403 instead of 401
org_checked_before_scope            | AUTH-015                                                          | a suspended organisation's key outside its scopes answers org_suspended
unknown_key_flat_error_code         | CAT-071 PLAY-072 CFG-030 VID-022                                  | a flat 401 for an unknown or revoked key carries error_code unauthorized
unknown_key_envelope_4010           | CRE-046 SER-038 PLS-030                                           | an envelope 401 for an unknown or revoked key carries code 4010 instead of 4011
unverifiable_key_401                | AUTH-021 CAT-075 PLAY-077 CFG-033 CRE-060 SER-046 PLS-042 VID-030 | a key that cannot be verified in time is refused 401 instead of 503
""")
REPLY_FAULTS = declare(
    REPLY_FAULT_ROWS,
    area="Paging and envelopes; Common response headers; Authentication; Versioning; Errors",
    seam="reply",
    # The few that change a decision act where it is made: the steps of the order of checks
    # (faults/authentication.py: `bend_step`) and of POST /playback; the request id at the
    # request seam.
    seams={
        **dict.fromkeys(
            (
                "missing_key_flat_error_code",
                "scope_flat_error_code",
                "malformed_version_served",
                "unknown_version_served",
                "retired_version_served",
                "unsupported_version_in_envelope",
                "unsupported_version_no_latest",
                "retired_pin_no_upgrade_to",
                "pin_checked_before_key",
                "scope_checked_before_pin",
                "scope_checked_before_key",
                "org_checked_before_scope",
                "unknown_key_flat_error_code",
                "unknown_key_envelope_4010",
                "unverifiable_key_401",
            ),
            "step",
        ),
        "request_id_repeated": "request",
        # steps of POST /playback (faults/playback.py: `org_suspended`, `bend_items`)
        **dict.fromkeys(("reuse_skips_organisation_check", "licence_timeout_refused"), "step"),
    },
    # Proven only once a Freshness bound has passed (30 s, 60 s).
    slow=(
        "playlist_item_content_version_stale",
        "catalog_per_key",
        "pin_checked_before_key",
        "series_item_content_version_stale",
        "reuse_skips_organisation_check",
    ),
    collateral={
        "unsupported_version_in_envelope": (
            ("ERR-001", "the envelope it sends has no `error` string, which the flat body due has"),
        ),
        "not_granted_playlist_404": (
            ("PLS-026", "the not-granted playlist's content scenario reads its detail, due a 200"),
        ),
        "metadata_version_per_read": (
            (
                "SER-017",
                "the series detail keeps one metadata_version, which the catalog's, new "
                "on every read, never equals",
            ),
        ),
    },
)

# Behaviours the suite had no check for; they act in
# `faults/authentication.py`, `faults/creatives.py`, `faults/catalog.py` and `faults/reply.py`.
UNCHECKED_BEHAVIOUR_ROWS: tuple[FaultRow, ...] = fault_rows("""
key_secret_only_lookup           | AUTH-005 | a key is looked up by its 32 characters after the prefix: a wrong prefix or extra characters still open
bearer_spacing_tolerated         | AUTH-036 | Authorization read as Bearer, any run of spaces or tabs, then the key
list_per_key                     | GEN-012  | keys films_metadata and films_creatives see one series and one creative fewer
config_playback_door_per_second  | CFG-037  | /config reports the playback door at 180 (its refill per second) instead of 10,800
revoked_link_still_opens         | CRE-063  | a revoked share link still redirects to a download link
revoked_link_still_listed        | CRE-064  | a creative whose share link was revoked still carries it in final.file_url
catalog_lists_unpublished        | CAT-081  | the catalog lists licensed films that are not published (drafts) with their episodes
metadata_version_frozen          | CAT-082  | a film whose title changed keeps its metadata_version
playlist_change_keeps_updated_at | PLS-045  | a playlist whose title changed keeps its updated_at
playlist_metadata_version_frozen | PLS-046  | a playlist whose title changed keeps its metadata_version
film_version_ignores_episodes    | CAT-083  | a film one of whose episodes was withdrawn keeps its metadata_version
film_metadata_updated_at_frozen     | CAT-084  | the catalog shows each film's first metadata_updated_at, whatever changed since
series_metadata_updated_at_frozen   | SER-048  | the series detail shows its film's first metadata_updated_at, whatever changed since
series_hash_ignores_metadata        | SER-049  | the series detail content_version leaves out titles, metadata version and times
playlist_hash_ignores_title         | PLS-047  | the playlist detail content_version leaves out its title, metadata version and time
creative_rename_restamps_created_at | CRE-065  | a renamed creative gets the rename time as its created_at
creative_rename_restamps_approved_at | CRE-065 | a renamed creative gets the rename time as its approved_at
creative_rename_recodes             | CRE-005  | a renamed creative gets another creative_code
metadata_change_reslugs_film        | CAT-002  | the catalog gives a film whose metadata changed (a retitle, an episode withdrawn) another slug
retitle_recodes_film                | CAT-085  | the catalog gives a film whose title changed another code
retitle_reslugs_category            | PLS-048  | the playlist list gives a playlist whose title changed another Category slug
withdrawn_at_follows_the_clock      | STATE-021 | a withdrawn playlist's withdrawn_at is the moment of each read
share_download_link_30_minutes   | CRE-023  | a share link redirects to a download link valid 30 minutes
""")
UNCHECKED_BEHAVIOUR_FAULTS = declare(
    UNCHECKED_BEHAVIOUR_ROWS,
    area="Authentication; Limits; Creatives; GET /catalog; Series and playlists; States",
    seam="reply",
    seams={
        **dict.fromkeys(
            (
                "key_secret_only_lookup",
                "bearer_spacing_tolerated",
                "revoked_link_still_opens",
                "revoked_link_still_listed",
                "share_download_link_30_minutes",
            ),
            "step",
        ),
        "catalog_lists_unpublished": "step",  # faults/catalog.py: `films`
        **dict.fromkeys(  # faults/freshness.py: `retitle_film`, `retitle_playlist`, `renamed`
            (
                "metadata_version_frozen",
                "playlist_change_keeps_updated_at",
                "playlist_metadata_version_frozen",
                "creative_rename_restamps_created_at",
                "creative_rename_restamps_approved_at",
                "creative_rename_recodes",
            ),
            "admin",
        ),
        "film_version_ignores_episodes": "admin",  # faults/freshness.py: `publish_episode`
    },
    # Proven only once a Freshness bound has passed (30 s, 60 s).
    slow=("list_per_key", "playlist_change_keeps_updated_at"),
    collateral={
        "series_hash_ignores_metadata": (
            (
                "SER-024",
                "the series list item keeps the content_version of the whole detail, which "
                "the detail's own, hashed without its metadata, no longer equals",
            ),
        ),
    },
)
