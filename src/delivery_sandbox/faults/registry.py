"""Deliberate deviations from the spec, one rule each (ARCHITECTURE: Faults).

`FAULTS` is the single table: name -> requirement IDs it breaks and a one-line summary (rows
from this file, `playback_rows.py`, `coverage_rows.py` and the `FAULT_ROWS` of each spec area's
module: `resource_fields.py`, `error_formats.py`, `deprecation.py`, `error_codes.py`,
`authentication.py`, `catalog.py`, `creatives.py`, `series_playlists.py`, `playback.py`,
`withdrawal.py`, `scopes.py`, `limits.py`, `freshness.py`). The harness learns it from
`GET /_sandbox/faults` (`catalogue`). Code asks `sandbox.faults.enabled(FaultName.<name>)`: one
typed `FaultSwitch` per sandbox (`switch.py`, which the fault modules import without this
table), which also keeps what a module derives from the switched-on set (`memo`), so no module
caches anything keyed by a sandbox.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from delivery_sandbox.faults import (
    authentication,
    catalog,
    creatives,
    deprecation,
    error_codes,
    error_formats,
    freshness,
    limits,
    playback,
    resource_fields,
    scopes,
    series_playlists,
    withdrawal,
)
from delivery_sandbox.faults.coverage_rows import REPLY_FAULTS, UNCHECKED_BEHAVIOUR_FAULTS
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.playback_rows import PLAYBACK_FAULTS
from delivery_sandbox.faults.rows import fault_rows
from delivery_sandbox.faults.switch import Collateral, Fault, FaultSwitch, UnknownFault, declare

__all__ = ["FAULTS", "Fault", "FaultSwitch", "UnknownFault", "catalogue", "markdown"]


def _by_heading(
    table: str,
    *,
    seam: str,
    seams: Mapping[str, str] | None = None,
    slow: Iterable[str] = (),
    collateral: Mapping[str, Collateral] | None = None,
    load_only: bool = False,
) -> tuple[Fault, ...]:
    """The records of a text table whose `# ...` lines head the spec area of the rows below
    them (`declare` for each area, with the declarations of its own rows)."""
    found: list[Fault] = []
    slow, seams, collateral = frozenset(slow), dict(seams or {}), dict(collateral or {})
    for heading, text in re.findall(r"^# (.*)\n((?:[^#].*\n?)*)", table, re.M):
        rows = fault_rows(text)
        names = {name for name, _, _ in rows}
        found += declare(
            rows,
            area=heading,
            seam=seam,
            seams={name: seams[name] for name in names & seams.keys()},
            slow=names & slow,
            collateral={name: collateral[name] for name in names & collateral.keys()},
            load_only=load_only,
        )
    declared = {fault.name for fault in found}
    if not (slow | seams.keys() | collateral.keys()) <= declared:
        raise ValueError(
            f"not a row here: {sorted((slow | seams.keys() | collateral.keys()) - declared)}"
        )
    return tuple(found)


# The rules these faults break, each bent at the seam its row names (at a step by default).
_TABLE: tuple[Fault, ...] = _by_heading(
    """
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
""",
    seam="step",
    # Moved to the seams: the common headers (faults/reply.py), error bodies as they are built
    # (faults/error_formats.py) and answers (control/front_faults.py) at the reply seam; the
    # request id at the request seam; the order of checks at its steps (faults/authentication.py).
    seams={
        **dict.fromkeys(
            (
                "api_status_missing",
                "service_version_missing",
                "video_single_version_header",
                "request_id_not_echoed",
                "cache_control_public",
                "deprecation_headers_missing",
                "ratelimit_limit_missing",
                "cors_header_sent",
                "cookie_set",
                "envelope_code_mismatch",
                "wrong_method_404",
                "cache_control_missing_on_422",
            ),
            "reply",
        ),
        "request_id_bad_format": "request",
        **dict.fromkeys(
            (
                "simulated_beyond_error_table",
                "org_suspended_with_error_code",
                "version_checked_after_key",
                "auth_scheme_lax",
                "revoked_key_accepted",
                "scope_not_enforced",
            ),
            "step",
        ),
        # At a step of the endpoints and the outage answer (faults/catalog.py, config.py,
        # creatives.py, series_playlists.py, playback.py, error_codes.py: `bend_outage`).
        **dict.fromkeys(
            (
                "config_lists_video_door",
                "config_test_org_string",
                "catalog_display_order_string",
                "catalog_sort_broken",
                "catalog_episode_order_broken",
                "catalog_placeholders_missing",
                "catalog_bad_cursor_accepted",
                "catalog_cursor_missing",
                "creative_updated_at_iso",
                "creatives_order_broken",
                "creatives_updated_since_inclusive",
                "creatives_empty_limit_accepted",
                "series_withdrawn_unlisted",
                "series_withdrawn_detail_served",
                "playlists_open_to_film_orgs",
                "playlists_full_page_without_cursor",
                "playlist_ungranted_media_shown",
                "videos_not_ready_listed",
                "videos_order_broken",
                "creatives_limit_max_500",
                "series_since_zero_refused",
                "videos_bad_limit_coded",
                "playlists_bad_category_404",
                "playlists_since_2038_500",
                "outage_retry_after_missing",
                "outage_envelope_500",
                "playlist_metadata_version_per_org",
                "video_not_ready_served",
            ),
            "step",
        ),
        "suspension_seen_late": "admin",  # faults/freshness.py: `suspend`
    },
    # Proven only once a Freshness bound has passed (30 s, 60 s).
    slow=(
        "playlist_metadata_version_per_org",
        "series_withdrawn_detail_served",
        "series_withdrawn_unlisted",
    ),
    # Requirements a fault legitimately breaks beside its own, each with the reason (kill rate,
    # blame precision): a failure of any other requirement under the fault is mis-blame.
    collateral={
        "service_version_missing": (
            ("HDR-005", "every response loses Service-Version, the errors of GET /videos/{id} too"),
        ),
        "request_id_not_echoed": (
            (
                "ERR-008",
                "envelope errors lose request_id, one of the four members ERR-008 requires",
            ),
        ),
        "org_suspended_with_error_code": (
            (
                "ERR-004",
                "org_suspended is a code carried in `error`: ERR-004 forbids error_code too",
            ),
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
        "auth_scheme_lax": (
            ("AUTH-036", "a lax scheme reads the last word, so a key after two spaces opens too"),
        ),
    },
) + _by_heading(  # subtle limiter deviations: only the load campaigns measure finely enough
    """# Limits (load campaigns only)
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
tenant_buckets_pooled    | LIM-002                                 | the organisations of --tenants draw on one bucket per counter, sized at the sum of their limits
tenant_refusals_drain_others | LIM-002                             | a request of a --tenants organisation at its ceiling spends a unit of every other tenant's counter (one burst starves the others)
""",
    seam="step",  # through the policies of the pure cores (faults/limits.py: `bend_policies`)
    load_only=True,
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _TABLE}


def register(*faults: Fault) -> None:
    """Add rows to the table (used by modules that own their faults)."""
    for fault in faults:
        if fault.name in FAULTS:
            raise ValueError(f"duplicate fault {fault.name}")
        FAULTS[fault.name] = fault


def markdown() -> str:
    """The fault catalogue as a Markdown table (docs/sandbox.md > Fault catalogue)."""
    rows = ["| Fault | Breaks | Summary |", "|---|---|---|"]
    rows += [
        f"| `{f.name}` | {', '.join(f.requirements)} | {f.summary}"
        f"{' (load campaigns only)' if f.load_only else ''}{' (slow: waits out its bound)' if f.slow else ''} |"
        for f in FAULTS.values()
    ]
    return "\n".join(rows)


def catalogue(switch: FaultSwitch) -> list[dict[str, object]]:
    """The catalogue as `GET /_sandbox/faults` shows it, with what `switch` has on."""
    return [
        {
            "name": f.name,
            "requirements": list(f.requirements),
            "summary": f.summary,
            "enabled": f.name in switch.on,
            "load_only": f.load_only,
            "slow": f.slow,
            "collateral": [{"requirement": rid, "reason": why} for rid, why in f.collateral],
        }
        for f in FAULTS.values()
    ]


# Rows of the playback/limits/simulation part (playback_rows.py) and rows proving the coverage
# of rules no other fault breaks (coverage_rows.py, two tables), appended to the same table.
register(*PLAYBACK_FAULTS, *REPLY_FAULTS, *UNCHECKED_BEHAVIOUR_FAULTS)

# The faults of each spec area, in the modules that define them.
for _module in (
    resource_fields, error_formats, deprecation, error_codes, authentication, catalog, creatives,
    series_playlists, playback, withdrawal, scopes, limits, freshness,
):  # fmt: skip
    register(*_module.FAULTS)

# names.py is written from the table (`names_source`); run as the writer, the check waits for it.
if set(FAULTS) != set(FaultName) and __name__ != "__main__":
    raise ImportError(
        f"fault names out of step: {sorted(set(FAULTS) ^ set(FaultName))}; "
        "rewrite names.py with `python -m delivery_sandbox.faults.registry`"
    )

NAMES_HEADER = '''"""Every fault name as a member of one enum: code asks for `FaultName.<name>`, never a string.

Written from the fault table by `python -m delivery_sandbox.faults.registry` (`names_source`):
never edit it by hand. A fault is declared once, by its row; this enum only gives mypy the names,
so a typo is a type error. tests/sandbox/test_fault_declarations.py fails when the file is not
what the table writes, and registry.py refuses to import when the two name different faults.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FaultName"]


class FaultName(StrEnum):
'''


def names_source() -> str:
    """The text of names.py: one member per row of `FAULTS`, in table order, under a comment
    naming the spec area of the rows that follow."""
    lines, area = [NAMES_HEADER.rstrip("\n")], None
    for fault in FAULTS.values():
        if fault.area != area:
            area = fault.area
            lines.append(f"    # {area}")
        lines.append(f'    {fault.name} = "{fault.name}"')
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from pathlib import Path

    Path(__file__).with_name("names.py").write_text(names_source(), encoding="utf-8")
