"""Deliberate deviations from the spec, one rule each (ARCHITECTURE: Faults).

`FAULTS` is the single table: name -> requirement IDs it breaks and a one-line summary (rows
from this file, `playback_rows.py` and `coverage_rows.py`). The harness learns it from
`GET /_sandbox/faults`. Code asks `sandbox.faults.enabled(FaultName.<name>)`: one typed
`FaultSwitch` per sandbox, which also keeps what a module derives from the switched-on set
(`memo`), so no module caches anything keyed by a sandbox.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from delivery_sandbox.faults.coverage_rows import COVERAGE_FAULT_ROWS, COVERAGE_FAULT_ROWS_2
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.playback_rows import PLAYBACK_FAULT_ROWS
from delivery_sandbox.faults.rows import fault_rows

__all__ = ["FAULTS", "Fault", "FaultSwitch", "UnknownFault", "markdown"]


@dataclass(frozen=True)
class Fault:
    name: str
    requirements: tuple[str, ...]
    summary: str
    # Caught by a load campaign only (tests/harness/test_load_smoke.py proves it); the kill rate
    # of the conformance suite leaves it out.
    load_only: bool = False
    # Requirements this fault legitimately breaks too, each with the reason: (ID, why). The
    # kill rate's blame precision counts a failure of these as exact, of any other ID as not.
    collateral: tuple[tuple[str, str], ...] = ()
    # Proven only by waiting out a freshness bound (coverage_faults_17.py): `make test` runs its
    # targeted kill rate in processes of their own beside the main one (tests/harness/killrate_support.py).
    slow: bool = False


class UnknownFault(ValueError):
    """A fault name that is not in `FAULTS`."""


_TABLE: tuple[Fault, ...] = (
    *(
        Fault(*row)
        for row in fault_rows("""
# Headers and general rules
api_status_missing                 | HDR-001                    | Service-API-Status left out of every response
service_version_missing            | HDR-003                    | Service-Version left out of every response
video_single_version_header        | HDR-004                    | Service-Version sent on 200 of GET /videos/{id}
request_id_bad_format              | HDR-012                    | Service-Request-Id without the req_ prefix
request_id_not_echoed              | HDR-013                    | error bodies carry no request_id
cache_control_public               | HDR-015                    | Cache-Control: public, max-age=60 instead of no-store
deprecation_headers_missing        | HDR-017                    | no Deprecation/Sunset/Link on 200 of a deprecated version
ratelimit_limit_missing            | HDR-027                    | 429 without X-RateLimit-Limit
cors_header_sent                   | GEN-002                    | Access-Control-Allow-Origin: * on every response
simulated_beyond_error_table       | SIM-008                    | Service-Simulate: internal_error answers 500 on GET /catalog and GET /config too
cookie_set                         | GEN-003                    | a Set-Cookie header on every response
# Errors and every-path rules
envelope_code_mismatch             | ERR-009                    | envelope error code whose first three digits are not the status
wrong_method_404                   | ERR-015                    | wrong method on a real path answers 404 not_found instead of 405
org_suspended_with_error_code      | ERR-003                    | flat org_suspended 403 carries error_code
# Authentication and versions
version_checked_after_key          | AUTH-010                   | bad Service-Version checked after the key (401 wins)
auth_scheme_lax                    | AUTH-002                   | a key is accepted without the Bearer scheme
revoked_key_accepted               | AUTH-007                   | a revoked key is still accepted
scope_not_enforced                 | AUTH-026 AUTH-028 AUTH-032 | metadata:read not enforced
# Config
config_lists_video_door            | CFG-016                    | rate_limits.doors lists the single-video counter
config_test_org_string             | CFG-012                    | key.test_organisation is the string 'true'
# Catalog
catalog_display_order_string       | CAT-009                    | film display_order is a string
catalog_sort_broken                | CAT-010                    | films sorted by title descending
catalog_episode_order_broken       | CAT-034                    | episodes of a film in descending episode_no
catalog_placeholders_missing       | CAT-052                    | no placeholder rows for planned episodes
catalog_bad_cursor_accepted        | CAT-068                    | a forged catalog cursor answers the first page
catalog_cursor_missing             | CAT-062 PAGE-001           | paged catalog never returns a next_cursor
# Creatives
creative_updated_at_iso            | CRE-008                    | creative updated_at is a string
creatives_order_broken             | CRE-027                    | creatives newest first
creatives_updated_since_inclusive  | CRE-028                    | updated_since includes records of that second
creatives_empty_limit_accepted     | CRE-055                    | an empty limit= is read as the default
# Series and playlists
series_withdrawn_unlisted          | STATE-001                  | withdrawn series vanish from GET /series at once
series_withdrawn_detail_served     | STATE-004                  | GET /series/{code} of a withdrawn series answers 200
playlists_open_to_film_orgs        | PLS-033 PLS-034            | film organisations may read playlists
playlists_full_page_without_cursor | PLS-022                    | a full last page of playlists has no cursor
playlist_ungranted_media_shown     | PLS-016                    | media object filled on a playlist not granted
# Open videos
videos_not_ready_listed            | VID-012                    | videos not ready to play are listed
videos_order_broken                | VID-007                    | rows of a page in reverse collection order
# Property tests (tests/properties): faults a hand-written scenario is unlikely to meet
creatives_limit_max_500            | CRE-030                    | GET /creatives?limit=100 answers 500
series_since_zero_refused          | SER-042                    | GET /series?updated_since=0 is 422 4220
videos_bad_limit_coded             | VID-019                    | a bad limit on GET /videos carries error_code
playlists_bad_category_404         | PLS-039                    | a malformed category is 404, not 4220
cache_control_missing_on_422       | HDR-014                    | no Cache-Control on 422 answers only
playlists_since_2038_500           | PLS-037                    | GET /playlists?updated_since past 2147483647 (after 2038-01-19) answers 500
# Outages, second organisation, not-ready videos (admin outages, videos_other, video_not_ready)
outage_retry_after_missing         | CAT-076 CFG-034            | a catalog or config outage 503 has no Retry-After
outage_envelope_500                | SER-045 PLS-041 CRE-059    | a series, playlists or creatives outage answers 500 5000 instead of 503 5030
playlist_metadata_version_per_org  | PLS-006                    | a playlist's metadata_version differs by organisation
video_not_ready_served             | VID-027                    | GET /videos/{id} serves a video not ready yet
# A `should` alone (the severity proof: a warning, exit 0; --strict: exit 1)
suspension_seen_late               | FRESH-007                  | an organisation suspension takes effect 4 s after it is made (within 30 s, not about 1 s)
""")
    ),
    # Subtle limiter deviations: only the load campaigns measure finely enough (load_only)
    *(
        Fault(*row, load_only=True)
        for row in fault_rows("""
bucket_capacity_5pc_low  | LIM-014 LIM-007                         | buckets hold 95 % of the limit
bucket_capacity_5pc_high | LIM-014 LIM-006                         | buckets hold 105 % of the limit
bucket_refill_5pc_slow   | LIM-013 LIM-007                         | refill at 95 % of limit/60
bucket_refill_5pc_fast   | LIM-013 LIM-006                         | refill at 105 % of limit/60
shed_at_15pc             | LIM-035                                 | prefetch is shed with 15 % of the allowance left
shed_at_25pc             | LIM-035                                 | prefetch is shed with 25 % of the allowance left
play_hold_1s             | LIM-043                                 | a play request is held up to 1 s
minute_counter_5pc_low   | LIM-022 LIM-025 LIM-026 LIM-028 LIM-007 | clock-minute counters admit 95 % of their limit
simulated_limit_285      | SIM-005                                 | the simulated-response limit is 285 (x scale)
config_spends_catalog    | LIM-021                                 | GET /config also spends the catalog counter
""")
    ),
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _TABLE}


def register(*faults: Fault) -> None:
    """Add rows to the table (used by modules that own their faults)."""
    for fault in faults:
        if fault.name in FAULTS:
            raise ValueError(f"duplicate fault {fault.name}")
        FAULTS[fault.name] = fault


def markdown() -> str:
    """The fault catalogue as a Markdown table (README: Fault catalogue)."""
    rows = ["| Fault | Breaks | Summary |", "|---|---|---|"]
    rows += [
        f"| `{f.name}` | {', '.join(f.requirements)} | {f.summary}"
        f"{' (load campaigns only)' if f.load_only else ''}{' (slow: waits out its bound)' if f.slow else ''} |"
        for f in FAULTS.values()
    ]
    return "\n".join(rows)


class FaultSwitch:
    """The faults switched on in one sandbox, and what modules derive from them."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._on: frozenset[FaultName] = frozenset()
        self._memo: dict[str, Any] = {}
        self.only(names)

    @staticmethod
    def _checked(names: Iterable[str]) -> frozenset[FaultName]:
        wanted = frozenset(names)
        unknown = sorted(wanted - FAULTS.keys())
        if unknown:
            raise UnknownFault(", ".join(unknown))
        return frozenset(FaultName(name) for name in wanted)

    def enabled(self, fault: FaultName) -> bool:
        return fault in self._on

    def _set(self, on: frozenset[FaultName]) -> None:
        if on != self._on:
            self._on = on
            self._memo.clear()

    def only(self, names: Iterable[str]) -> None:
        self._set(self._checked(names))

    def switch(self, enable: Iterable[str] = (), disable: Iterable[str] = ()) -> None:
        on, off = self._checked(enable), self._checked(disable)
        self._set((self._on | on) - off)

    @property
    def on(self) -> frozenset[FaultName]:
        return self._on

    def memo(self, key: str, build: Callable[[frozenset[FaultName]], Any]) -> Any:
        """`build(on)` once per switch state: derived policies live as long as the state."""
        if key not in self._memo:
            self._memo[key] = build(self._on)
        return self._memo[key]

    def catalogue(self) -> list[dict[str, object]]:
        return [
            {
                "name": f.name,
                "requirements": list(f.requirements),
                "summary": f.summary,
                "enabled": f.name in self._on,
                "load_only": f.load_only,
                "slow": f.slow,
                "collateral": [{"requirement": rid, "reason": why} for rid, why in f.collateral],
            }
            for f in FAULTS.values()
        ]


# Rows of the playback/limits/simulation part (playback_rows.py) and rows proving the coverage
# of rules no other fault breaks (coverage_rows.py, two blocks), appended to the same table.
register(
    *(Fault(*row) for row in (*PLAYBACK_FAULT_ROWS, *COVERAGE_FAULT_ROWS, *COVERAGE_FAULT_ROWS_2))
)

# Third block: rules checked but broken by no other fault (coverage_faults_3.py).
from delivery_sandbox.faults.coverage_faults_3 import COVERAGE_FAULT_ROWS_3  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_3))

# Fourth block, the same kind (coverage_faults_4.py).
from delivery_sandbox.faults.coverage_faults_4 import COVERAGE_FAULT_ROWS_4  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_4))

# Fifth block, the same kind (coverage_faults_5.py).
from delivery_sandbox.faults.coverage_faults_5 import COVERAGE_FAULT_ROWS_5  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_5))

# Sixth block: error answers bent after they are built (coverage_faults_6.py).
from delivery_sandbox.faults.coverage_faults_6 import COVERAGE_FAULT_ROWS_6  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_6))

# Seventh block: deprecation headers and a few body rules (coverage_faults_7.py).
from delivery_sandbox.faults.coverage_faults_7 import COVERAGE_FAULT_ROWS_7  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_7))

# Eighth block: codes and headers of error answers (coverage_faults_8.py).
from delivery_sandbox.faults.coverage_faults_8 import COVERAGE_FAULT_ROWS_8  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_8))

# Ninth block: authentication, versions, bare host, error bodies (coverage_faults_9.py).
from delivery_sandbox.faults.coverage_faults_9 import COVERAGE_FAULT_ROWS_9  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_9))

# Tenth block: GET /catalog fields, inclusion and paging; simulations (coverage_faults_10.py).
from delivery_sandbox.faults.coverage_faults_10 import COVERAGE_FAULT_ROWS_10  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_10))

# Eleventh block: the creatives endpoints, records, codes and hooks (coverage_faults_11.py).
from delivery_sandbox.faults.coverage_faults_11 import COVERAGE_FAULT_ROWS_11  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_11))

# Thirteenth block: series and playlists fields, lists, error codes (coverage_faults_13.py).
from delivery_sandbox.faults.coverage_faults_13 import COVERAGE_FAULT_ROWS_13  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_13))

# Twelfth block: POST /playback body, tickets and errors; open videos (coverage_faults_12.py).
from delivery_sandbox.faults.coverage_faults_12 import COVERAGE_FAULT_ROWS_12, SLOW_12  # noqa: E402

register(*(Fault(*row, slow=row[0] in SLOW_12) for row in COVERAGE_FAULT_ROWS_12))

# Fourteenth block: withdrawal of series, playlists and Categories (coverage_faults_14.py).
from delivery_sandbox.faults.coverage_faults_14 import COVERAGE_FAULT_ROWS_14  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_14))

# Fifteenth block: the scope matrix, one cell a fault (coverage_faults_15.py).
from delivery_sandbox.faults.coverage_faults_15 import COVERAGE_FAULT_ROWS_15  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_15))

# Sixteenth block: what the counters count, the playback ceiling (coverage_faults_16.py).
from delivery_sandbox.faults.coverage_faults_16 import COVERAGE_FAULT_ROWS_16  # noqa: E402

register(*(Fault(*row) for row in COVERAGE_FAULT_ROWS_16))

# Seventeenth block: freshness bounds, admin changes that land late (coverage_faults_17.py).
from delivery_sandbox.faults.coverage_faults_17 import (  # noqa: E402
    COLLATERAL_17,
    COVERAGE_FAULT_ROWS_17,
    SLOW_17,
)

register(
    *(
        Fault(*row, slow=row[0] in SLOW_17, collateral=COLLATERAL_17.get(row[0], ()))
        for row in COVERAGE_FAULT_ROWS_17
    )
)

# Eighteenth block: subtitle freshness, the 5-minute bounds (coverage_faults_18.py).
from delivery_sandbox.faults.coverage_faults_18 import COVERAGE_FAULT_ROWS_18, SLOW_18  # noqa: E402

register(*(Fault(*row, slow=row[0] in SLOW_18) for row in COVERAGE_FAULT_ROWS_18))

# Collateral (kill rate, blame precision): requirements a fault legitimately breaks beside its
# own, each with the reason. A failure of any other requirement under the fault is mis-blame.
COLLATERAL: dict[str, tuple[tuple[str, str], ...]] = {
    "service_version_missing": (
        ("HDR-005", "every response loses Service-Version, the errors of GET /videos/{id} too"),
    ),
    "request_id_not_echoed": (
        ("ERR-008", "envelope errors lose request_id, one of the four members ERR-008 requires"),
    ),
    "org_suspended_with_error_code": (
        ("ERR-004", "org_suspended is a code carried in `error`: ERR-004 forbids error_code too"),
    ),
    "creatives_order_broken": (
        (
            "CRE-033",
            "the cursor resumes after the last record in ascending order, so a "
            "newest-first feed never ends its walk",
        ),
    ),
    "creatives_limit_max_500": (
        ("ERR-008", "its 500 has a flat body on an endpoint whose errors are envelopes"),
    ),
    "outage_retry_after_missing": (
        ("HDR-025", "the outage 503 is retryable: HDR-025 wants its Retry-After as well"),
    ),
    "device_value_untrimmed": tuple(
        (rid, "its rows send null-like words padded with spaces: untrimmed, none is recognised")
        for rid in ("PLAY-016", "PLAY-017", "PLAY-018")
    ),
    "null_words_case_sensitive": (
        ("PLAY-018", "the drm_kek row sends a mixed-case null-like word"),
    ),
    "unsupported_version_in_envelope": (
        ("ERR-001", "the envelope it sends has no `error` string, which the flat body due has"),
    ),
    "batch_item_intent_play": (
        ("LIM-040", "later items recorded as play are not shed as prefetch: no prefetch_shed"),
        ("PLAY-090", "the same unshed item, as Errors > Playback states the rule"),
    ),
    "auth_scheme_lax": (
        ("AUTH-036", "a lax scheme reads the last word, so a key after two spaces opens too"),
    ),
    "videos_error_without_request_id": (
        ("HDR-013", "HDR-013 wants request_id in every error body, the open videos' too"),
    ),
    "ratelimit_envelope_on_envelope_paths": (
        ("ERR-001", "the envelope it sends has no `error` string, which the flat 429 due has"),
    ),
    "prefetch_shed_without_retry_after": (
        ("HDR-024", "the 429 it strips is a 429, and HDR-024 wants Retry-After on every 429"),
    ),
    **{
        name: (("ERR-006", "ERR-006 wants error_code rate_limited on every 429, this one too"),)
        for name in ("catalog_429_code_wrong", "config_429_code_wrong", "videos_429_code_wrong")
    },
    "videos_400_with_error_code": (
        ("VID-016", "a slug sent as the id is refused by the same 400, now with an error_code"),
    ),
    "not_granted_playlist_404": (
        ("PLS-026", "the not-granted playlist's content scenario reads its detail, due a 200"),
    ),
}
for _name, _extra in COLLATERAL.items():
    FAULTS[_name] = replace(FAULTS[_name], collateral=_extra)

# Faults proven only by a scenario that polls until a Freshness bound has passed: a server with
# caches inside the bounds must pass, so a comparison that never agrees fails only at the bound
# (30 s, 60 s). Each costs its bound in sleep, so `make test` runs it beside the main kill rate
# like the slow faults of the blocks above (tests/harness/killrate_support.py).
WAITS_OUT_A_BOUND = frozenset(
    {
        "catalog_cursor_page_one", "catalog_page_film_missing", "catalog_page_row_missing",
        "catalog_per_key", "envelope_next_link_resized", "episode_id_first_episode",
        "film_ref_id_next_episode", "film_ref_slug_next_episode", "film_ref_wins_over_episode_id",
        "licence_suspension_reason_other", "list_per_key", "pin_checked_before_key",
        "play_hold_too_long", "playlist_clip_ids_per_read", "playlist_item_content_version_stale",
        "playlist_change_keeps_updated_at", "playlist_metadata_version_per_org",
        "playlist_withdrawal_keeps_updated_at",
        "playlist_withdrawn_listed_inactive", "playlists_withdrawn_gone_at_29_days",
        "rate_limit_before_org", "reuse_skips_organisation_check",
        "series_content_version_per_read", "series_episode_count_off",
        "series_episodes_reversed", "series_item_content_version_stale",
        "series_licence_change_ignored", "series_metadata_version_other",
        "series_null_member_404", "series_taken_down_listed_forever",
        "series_withdrawal_keeps_updated_at", "series_withdrawn_detail_served",
        "series_withdrawn_gone_at_29_days", "series_withdrawn_unlisted",
    }
)  # fmt: skip
for _name in WAITS_OUT_A_BOUND:
    FAULTS[_name] = replace(FAULTS[_name], slow=True)

if set(FAULTS) != set(FaultName):  # names.py and the table are one list, kept in step
    raise ImportError(f"fault names out of step: {sorted(set(FAULTS) ^ set(FaultName))}")
