"""Ninth block of coverage faults (issue 13; README: Requirement proofs): authentication and its
order, versions, the bare host, error bodies and a few /config fields, one rule each. A row that
names several rules breaks one rule the spec states in several places.

Spec sections: Authentication (where the key is read, order of checks, scopes, rotation);
Versioning; Common response headers; General (path prefix, bare host); Errors > Formats and
Every path; Endpoints > Paging; Config.

This module holds the block's rows and its two hooks that need nothing above `faults/`:
`request_key_9` (app.py, before the answer: where the key is read from) and `rotate_9`
(admin.py, key rotation). The rows marked "answer" bend the finished answer with the request
and the whole sandbox at hand; that part builds error answers and reads the playback body, so it
lives above them, in `control/coverage_faults_9.py` (`mangle_reply_9`, called by app.py).
"""

# The fault table holds one row a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import dataclasses
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from delivery_sandbox.faults.names import FaultName

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch
    from delivery_sandbox.state.context import Sandbox

__all__ = ["ANSWER_FAULTS_9", "COVERAGE_FAULT_ROWS_9", "request_key_9", "rotate_9"]

KEY_NAMES = ("api_key", "key", "access_token")

# name -> (rules, where it acts: "answer" (control/coverage_faults_9.py), "request" or
# "rotation" (the hooks below), summary)
_ROWS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("missing_key_403_on_config", ("AUTH-001",), "answer", "GET /config without Authorization answers 403"),
    ("query_key_accepted", ("AUTH-003",), "request", "a key in the query string (api_key, key, access_token) is accepted"),
    ("cookie_key_accepted", ("AUTH-004",), "request", "a key in a cookie (api_key, key) is accepted"),
    ("unknown_key_403_on_catalog", ("AUTH-006",), "answer", "GET /catalog with a well-formed unknown key answers 403"),
    ("invalid_key_before_version", ("AUTH-011",), "answer", "a bad Service-Version with an unknown or revoked key answers 401 (catalog, config)"),
    ("rate_limit_before_org", ("AUTH-016",), "answer", "a suspended organisation's exhausted catalog counter answers 429, not 403"),
    ("playback_body_before_limit", ("AUTH-017",), "answer", "POST /playback reads the body before the rate limit: 400, not 429"),
    ("playback_body_before_key", ("AUTH-018",), "answer", "POST /playback reads the body before the key: 400, not 401"),
    ("playback_body_before_scope", ("AUTH-019",), "answer", "POST /playback reads the body before the scope: 400, not 403"),
    ("playback_body_before_org", ("AUTH-020",), "answer", "POST /playback reads the body before the organisation: 400, not 403"),
    ("config_needs_metadata_scope", ("AUTH-031",), "answer", "GET /config refuses 403 a key without metadata:read"),
    ("rotated_key_refused", ("AUTH-033",), "rotation", "after rotation the new secret is refused 401 as well"),
    ("rotation_drops_a_scope", ("AUTH-034",), "rotation", "a rotated key loses its first scope"),
    ("keys_path_served", ("AUTH-035",), "answer", "/keys answers 200 with a list of keys (key management in the API)"),
    ("production_key_test_org", ("CFG-013",), "answer", "/config key.test_organisation is true for every key"),
    ("config_suspended_forbidden", ("CFG-031",), "answer", "GET /config for a suspended organisation has error set to the scope message"),
    ("unsupported_version_error_null", ("ERR-001",), "answer", "the 400 unsupported_version has error: null"),
    ("unsupported_version_code_list", ("ERR-002",), "answer", "the 400 unsupported_version has its error_code in a list"),
    ("app_not_registered_with_error_code", ("ERR-004",), "answer", "403 app_not_registered also carries error_code"),
    ("video_not_found_in_array", ("ERR-005",), "answer", "404 video_not_found is a JSON array holding the error object"),
    ("unknown_path_405", ("ERR-013",), "answer", "an unknown path answers 405 (Allow: GET) to methods other than GET"),
    ("wrong_method_404_without_key", ("ERR-017",), "answer", "a wrong method without Authorization answers 404 not_found (the path hidden from callers without a key), neither 405 nor 401"),
    ("videos_list_missing", ("GEN-001",), "answer", "GET /videos answers 404 not_found (no such path under /v1/)"),
    ("bare_host_query_dropped", ("GEN-006",), "answer", "the bare host's 308 Location drops the query"),
    ("bare_host_307_for_writes", ("GEN-007",), "answer", "the bare host answers 307 to methods other than GET"),
    ("video_errors_unversioned", ("HDR-005",), "answer", "errors of GET /videos/{id} carry no Service-Version"),
    ("service_version_latest_not_pin", ("HDR-007", "VER-002"), "answer", "without a request version, answers outside /config name the latest version, not the key's pin"),
    ("service_version_pin_not_requested", ("HDR-008",), "answer", "GET /catalog with a supported Service-Version names the key's pin"),
    ("service_version_fallback_retired", ("HDR-010",), "answer", "errors without a known key name 2026-05-01, a version the server does not serve (retired in the extended set)"),
    ("retryable_503_without_retry_after", ("HDR-025",), "answer", "every 503 leaves out Retry-After"),
    ("catalog_last_cursor_not_null", ("PAGE-002",), "answer", "the last page of the paged catalog has next_cursor 'end'"),
    ("config_without_2026_10_02", ("VER-001",), "answer", "/config api.supported_versions leaves out 2026-10-02"),
    ("version_header_moves_pin", ("VER-003",), "answer", "a request with a supported Service-Version moves the key's pin to it"),
    ("current_pin_upgrade_to", ("VER-009",), "answer", "a 400 unsupported_version for a keyed request always carries upgrade_to"),
    ("retired_pin_header_ignored", ("VER-010",), "answer", "a key with a retired pin is refused 400 even with a supported Service-Version"),
    ("rotation_resets_pin", ("VER-011",), "rotation", "a rotated key is pinned to the latest version"),
    ("config_status_stable", ("CFG-002",), "answer", "/config api.status is stable"),
    ("config_path_version_v2", ("CFG-003",), "answer", "/config api.path_version is v2"),
    ("config_version_header_other", ("CFG-007",), "answer", "/config api.version_header is X-Service-Version"),
    ("config_window_30", ("CFG-014",), "answer", "/config rate_limits.window_seconds is 30"),
    ("config_domains_string", ("CFG-018",), "answer", "/config playback.domains is one comma-separated string"),
    ("config_grant_ttl_3600", ("CFG-019",), "answer", "/config playback.grant_ttl_seconds is 3600"),
    ("config_manifest_ttl_1800", ("CFG-020",), "answer", "/config playback.manifest_url_ttl_seconds is 1800"),
    ("config_batch_max_episodes_5", ("CFG-021",), "answer", "/config playback.batch.max_episodes is 5"),
    ("config_subtitles_srt", ("CFG-022",), "answer", "/config subtitles.format is srt"),
    ("config_deprecations_null", ("CFG-024",), "answer", "/config deprecations is null when none is announced"),
)  # fmt: skip
# Collateral (kill rate, blame precision): name -> (ID also broken, why).
_COLLATERAL: dict[str, tuple[tuple[str, str], ...]] = {
    "keys_path_served": (
        ("ERR-012", "/keys is no path of the Endpoints table, so its 200 breaks the 404 rule too"),
    ),
    "unsupported_version_code_list": (
        ("ERR-007", "ERR-007 reads that same error_code, which is no longer unsupported_version"),
    ),
    "video_not_found_in_array": (
        ("ERR-004", "the error string is in no top-level object, so its check cannot find it"),
        ("HDR-013", "nor can the request_id be read from an array"),
    ),
    "wrong_method_404_without_key": (
        ("ERR-015", "a wrong method that answers 404 does not answer the 405 ERR-015 wants"),
    ),
}
COVERAGE_FAULT_ROWS_9: tuple[
    tuple[str, tuple[str, ...], str, bool, tuple[tuple[str, str], ...]], ...
] = tuple(
    (name, rules, summary, False, _COLLATERAL.get(name, ())) for name, rules, _, summary in _ROWS
)
ANSWER_FAULTS_9: frozenset[str] = frozenset(
    name for name, _, where, _ in _ROWS if where == "answer"
)


def request_key_9(
    scope: dict[str, Any], authorization: str | None, faults: FaultSwitch
) -> str | None:
    """The Authorization the sandbox reads: under `query_key_accepted` or `cookie_key_accepted`
    a key sent in the query string or a cookie stands in for a missing header."""
    if authorization is not None:
        return authorization
    found: list[str] = []
    if faults.enabled(FaultName.query_key_accepted):
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        found += [v for name in KEY_NAMES for v in query.get(name, [])]
    if faults.enabled(FaultName.cookie_key_accepted):
        for name, value in scope["headers"]:
            if name == b"cookie":
                cookie: SimpleCookie = SimpleCookie(value.decode("latin-1"))
                found += [cookie[n].value for n in KEY_NAMES if n in cookie]
    return f"Bearer {found[0]}" if found else None


def rotate_9(sb: Sandbox, role: str) -> str:
    """Rotate the key of `role` (state/accounts.py), then apply this block's rotation faults."""
    new: str = sb.accounts.rotate(role)
    record = sb.accounts.keys[new]
    if sb.faults.enabled(FaultName.rotation_drops_a_scope) and record.scopes:
        record = dataclasses.replace(record, scopes=record.scopes - {sorted(record.scopes)[0]})
    if sb.faults.enabled(FaultName.rotation_resets_pin):
        record = dataclasses.replace(record, pin=sb.versions.latest)
    sb.accounts.keys[new] = record
    if sb.faults.enabled(FaultName.rotated_key_refused):
        del sb.accounts.keys[new]
    return new
