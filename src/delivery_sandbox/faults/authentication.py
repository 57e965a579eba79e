"""Faults of authentication and its order, versions, the bare host, error bodies and a few
/config fields, one rule each. A row that
names several rules breaks one rule the spec states in several places.

Spec sections: Authentication (where the key is read, order of checks, scopes, rotation);
Versioning; Common response headers; General (path prefix, bare host); Errors > Formats and
Every path; Endpoints > Paging; Config.

This module holds the rows and the hooks that need nothing above `faults/`: `bend_step` (the
step seam of authentication, auth.py: each step of the order of checks runs through it; the
rows of registry.py and coverage_rows.py that bend the order, the key's form, the version
lookup and how a refusal is answered act there, with the scope faults of scopes.py and the
counter faults of series_playlists.py), `request_key` (the request seam,
control/front_faults.py: where the key is read from), `rotate_key` (faults/freshness.py, key
rotation). The rows marked "answer" bend the finished answer with the request and the whole
sandbox at hand, in `faults/authentication_answers.py` (`bend_answer`, at the reply seam of
control/front_faults.py, which hands it the error builders and the playback body parser).
"""

# The fault table holds one row a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import parse_qs

import orjson

from delivery_sandbox.faults import scopes as scope_faults
from delivery_sandbox.faults import series_playlists as series_playlist_faults
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Check, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = [
    "ANSWER_FAULTS",
    "FAULTS",
    "FAULT_ROWS",
    "bearer_key_tolerant",
    "bend_step",
    "request_key",
    "rotate_key",
]

KEY_NAMES = ("api_key", "key", "access_token")

# name -> (rules, where it acts: "answer" (faults/authentication_answers.py), "request" or
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
FAULT_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = tuple(
    (name, rules, summary) for name, rules, _, summary in _ROWS
)
_SEAMS = {"answer": "reply", "request": "request", "rotation": "admin"}
FAULTS = declare(
    FAULT_ROWS,
    area="Authentication; Versioning; General; Errors",
    seam="reply",
    seams={name: _SEAMS[where] for name, _, where, _ in _ROWS},
    collateral=_COLLATERAL,
    slow=("rate_limit_before_org",),  # seen only once the 30 s freshness bound has passed
)
ANSWER_FAULTS: frozenset[str] = frozenset(name for name, _, where, _ in _ROWS if where == "answer")


def request_key(
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


def rotate_key(sb: Server, role: str) -> str:
    """Rotate the key of `role` (state/accounts.py), then apply the rotation faults."""
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


# -- the step seam: the order of checks (auth.py: STEPS) as these faults bend it -----------------

UNSUPPORTED = "unsupported_version"  # auth.py: Refusal.problem, beside the http/errors.py Problems
AUTH_MISSING, KEY_INVALID, KEY_UNVERIFIABLE = "auth_missing", "key_invalid", "key_unverifiable"
SCOPE_MISSING, ORG_SUSPENDED = "scope_missing", "org_suspended"
DATED = re.compile(r"\A\d{4}-\d{2}-\d{2}\Z")  # a version that is a date (http/versions.py)
KEY_PREFIX = "svc_live_"
SECRET_LENGTH = 32
SPACING = re.compile(r"Bearer[ \t]+(\S+)\Z")

Outcome = TypeVar("Outcome")
Bend = Callable[["Check", Callable[[], Any]], Any]


def bend_step(step: str, check: Check, run: Callable[[], Outcome]) -> Outcome:
    """The step seam of authentication: run `step` of the order of checks for `check`, as the
    switched-on faults bend it (run it, skip it, answer before it, or change what it weighs or
    how its refusal is answered). With no fault on, the step just runs."""
    if not check.faults.on:
        return run()
    bend = _BENDS.get(step)
    outcome = run() if bend is None else bend(check, run)
    if _refuses(outcome, UNSUPPORTED):
        return cast("Outcome", _unsupported(check, outcome))
    return cast("Outcome", outcome)


def _on(check: Check, name: FaultName) -> bool:
    return check.faults.enabled(name)


def _refuses(outcome: Any, problem: str) -> bool:
    return getattr(outcome, "problem", None) == problem


def _version_header(check: Check, run: Callable[[], Any]) -> Any:
    """`version_checked_after_key` moves the step after the key's (see `_key_valid`)."""
    if check.version_header is not None and _on(check, FaultName.version_checked_after_key):
        return None
    return _served(check, run())


def _served(check: Check, outcome: Any) -> Any:
    """Three faults serve the latest version for a header the step refuses (the value echoed
    when it is a date): a retired one, an unknown date, a value that is no date."""
    value = check.version_header
    if value is None or not _refuses(outcome, UNSUPPORTED):
        return outcome
    versions = check.versions
    known, dated = versions.get(value), DATED.match(value) is not None
    served = (
        (known is not None and known.retired and _on(check, FaultName.retired_version_served))
        or (known is None and dated and _on(check, FaultName.unknown_version_served))
        or (not dated and _on(check, FaultName.malformed_version_served))
    )
    latest = versions.usable(versions.latest)
    if not served or latest is None:
        return outcome
    check.use_version(dataclasses.replace(latest, version=value) if dated else latest)
    return None


def _key_present(check: Check, run: Callable[[], Any]) -> Any:
    """`auth_scheme_lax` reads the last word of any Authorization, `bearer_spacing_tolerated`
    any run of blanks after `Bearer`; `missing_key_flat_error_code` codes the flat 401."""
    header = check.authorization
    if header is not None and _on(check, FaultName.auth_scheme_lax):
        check.key = header.split(" ")[-1] or None
        outcome = None if check.key is not None else check.refusal(AUTH_MISSING)
    else:
        outcome = run()
    if outcome is not None and header and _on(check, FaultName.bearer_spacing_tolerated):
        check.key = bearer_key_tolerant(header)
        outcome = None if check.key is not None else outcome
    flat = check.format == "flat"
    if outcome is not None and flat and _on(check, FaultName.missing_key_flat_error_code):
        return check.answer(outcome, error_code="unauthorized")
    return outcome


def _out_of_scope(check: Check) -> bool:
    """The key's own scopes lack the endpoint's (as the checks run early weigh it)."""
    record = check.record
    return record is not None and check.endpoint.scope not in (None, *record.scopes)


def _key_valid(check: Check, run: Callable[[], Any]) -> Any:
    """The lookup (`key_secret_only_lookup`), checks run before it for a revoked key (scope,
    retired pin), a revoked key accepted, an unverifiable one refused 401, the 401's code, and
    after it the Service-Version check moved there and the scope checked before the pin."""
    if check.key is not None and _on(check, FaultName.key_secret_only_lookup):
        secret = check.key.split("_", 2)[-1][:SECRET_LENGTH]
        check.key = KEY_PREFIX + secret if len(secret) == SECRET_LENGTH else None
    outcome = run()
    record = check.record
    if record is not None and record.revoked:
        if _out_of_scope(check) and _on(check, FaultName.scope_checked_before_key):
            return check.refusal(SCOPE_MISSING)
        retired_pin = check.version_header is None and check.versions.usable(record.pin) is None
        if retired_pin and _on(check, FaultName.pin_checked_before_key):
            return check.refusal(UNSUPPORTED, upgrade=True)
        if _on(check, FaultName.revoked_key_accepted):
            outcome = check.refusal(KEY_UNVERIFIABLE) if record.unverifiable else None
    if _refuses(outcome, KEY_UNVERIFIABLE) and _on(check, FaultName.unverifiable_key_401):
        outcome = check.refusal(KEY_INVALID)
    if _refuses(outcome, KEY_INVALID):
        if check.format == "flat" and _on(check, FaultName.unknown_key_flat_error_code):
            return check.answer(outcome, error_code="unauthorized")
        if check.format == "envelope" and _on(check, FaultName.unknown_key_envelope_4010):
            return check.answer(outcome, code=4010)
    if outcome is not None:
        return outcome
    if check.version_header is not None and _on(check, FaultName.version_checked_after_key):
        moved = _served(check, check.step("version_header"))
        if moved is not None:
            return moved
    if _out_of_scope(check) and _on(check, FaultName.scope_checked_before_pin):
        return check.refusal(SCOPE_MISSING)
    return None


def _scope(check: Check, run: Callable[[], Any]) -> Any:
    """The organisation checked first (`org_checked_before_scope`), the scopes weighed as the
    scope faults bend them (faults/scopes.py; `scope_not_enforced`), the flat 403's code."""
    org_first = _on(check, FaultName.org_checked_before_scope)
    if org_first and _out_of_scope(check) and check.caller.suspended:
        return check.refusal(ORG_SUSPENDED)
    check.scopes = scope_faults.weighed_scopes(check.faults, check.endpoint.name, check.caller)
    metadata = "metadata:read"
    if check.endpoint.scope == metadata and _on(check, FaultName.scope_not_enforced):
        check.scopes = check.scopes | {metadata}
    return _flat_coded(check, run(), FaultName.scope_flat_error_code, SCOPE_MISSING, "forbidden")


def _organisation(check: Check, run: Callable[[], Any]) -> Any:
    """`org_suspended_with_error_code` codes the flat org_suspended 403."""
    fault = FaultName.org_suspended_with_error_code
    return _flat_coded(check, run(), fault, ORG_SUSPENDED, "org_suspended")


def _flat_coded(check: Check, outcome: Any, fault: FaultName, refusal: str, code: str) -> Any:
    """A flat refusal `refusal` answered with `error_code` `code` while `fault` is on."""
    if check.format == "flat" and _on(check, fault) and _refuses(outcome, refusal):
        return check.answer(outcome, error_code=code)
    return outcome


def _simulated(check: Check, run: Callable[[], Any]) -> Any:
    """A production organisation's scenario honoured, `internal_error` beyond the table."""
    test = check.caller.organisation.test or _on(check, FaultName.production_honours_simulate)
    beyond = _on(check, FaultName.simulated_beyond_error_table)
    return check.simulate(test, beyond_table=beyond)


def _rate_limit(check: Check, run: Callable[[], Any]) -> Any:
    """The counter drawn from, as the counter faults move it (faults/series_playlists.py)."""
    caller, endpoint = check.caller, check.endpoint
    if endpoint.counter is not None:
        check.counter = series_playlist_faults.counter_key(
            check.faults, caller.org_id, caller.role, endpoint.name, endpoint.counter
        )
    return run()


def _unsupported(check: Check, refusal: Any) -> Any:
    """How the 400 unsupported_version is answered: an envelope on envelope endpoints, without
    `upgrade_to` for a retired pin, without `latest_version`."""
    if check.format == "envelope" and _on(check, FaultName.unsupported_version_in_envelope):
        return check.answer(refusal, code=4000)
    if _on(check, FaultName.retired_pin_no_upgrade_to):
        refusal = check.refusal(UNSUPPORTED, upgrade=False)
    if not _on(check, FaultName.unsupported_version_no_latest):
        return refusal
    reply = check.answer(refusal)
    body = orjson.loads(reply.body)
    body.pop("latest_version", None)
    reply.body = orjson.dumps(body)
    return reply


_BENDS: dict[str, Bend] = {
    "version_header": _version_header,
    "key_present": _key_present,
    "key_valid": _key_valid,
    "scope": _scope,
    "organisation": _organisation,
    "simulated": _simulated,
    "rate_limit": _rate_limit,
}


def bearer_key_tolerant(header: str) -> str | None:
    """`Bearer` then any run of spaces or tabs then the key (fault bearer_spacing_tolerated)."""
    found = SPACING.match(header.strip())
    return found.group(1) if found else None
