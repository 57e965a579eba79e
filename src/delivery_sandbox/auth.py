"""Authentication in the spec's order (spec: Authentication 4; Versioning 2).

Order: `Service-Version` header, key present, key valid, pinned version, scope (and, for open
videos, the app binding), organisation, rate limit. The body comes last and is the endpoint's
business. `Endpoint` rows hold what the steps need: scope, error family, counter.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import orjson

from delivery_sandbox.faults.coverage_faults_13 import counter_key_13
from delivery_sandbox.faults.coverage_faults_15 import scopes_15
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.registry import FaultSwitch
from delivery_sandbox.http import errors
from delivery_sandbox.http.coverage_faults_2 import bearer_key_tolerant, key_lookup
from delivery_sandbox.http.errors import Family, Problem
from delivery_sandbox.http.headers import Exchange, Reply, bearer_key
from delivery_sandbox.http.versions import DATE_PATTERN, Version, VersionSet
from delivery_sandbox.playback import simulate
from delivery_sandbox.state.accounts import Caller
from delivery_sandbox.state.context import Sandbox

__all__ = ["Endpoint", "authenticate", "bearer_key"]


@dataclass(frozen=True)
class Endpoint:
    """One row of the endpoints table (spec: Endpoints; Authentication, scopes).

    Requirements: AUTH-022, AUTH-023, AUTH-024, AUTH-025, AUTH-026, AUTH-027, AUTH-028, AUTH-029,
    AUTH-031, AUTH-032.
    """

    name: str
    scope: str | None  # None: any valid key
    family: Family
    counter: str | None  # rate-limit counter; None: counted by the handler (playback)
    app_bound: bool = False
    checks_org: bool = True  # playback renders its own organisation refusal per ticket
    simulates: bool = False  # honours Service-Simulate (README: SIM endpoints)


def authenticate(
    sb: Sandbox,
    exchange: Exchange,
    endpoint: Endpoint,
    version_header: str | None,
    authorization: str | None,
    simulate_header: str | None = None,
) -> Caller | Reply:
    """Run the checks in order; the first failure is the answer.

    Requirements: AUTH-001, AUTH-006, AUTH-007, AUTH-010, AUTH-011, AUTH-012, AUTH-013, AUTH-014,
    AUTH-015, AUTH-016, AUTH-017, AUTH-018, AUTH-019, AUTH-020, AUTH-021, AUTH-030, AUTH-033,
    CAT-069, CAT-070, CAT-071, CAT-072, CAT-073, CAT-074, CAT-075, CFG-028, CFG-029, CFG-030,
    CFG-031, CFG-032, CFG-033, CRE-044, CRE-045, CRE-046, CRE-047, CRE-048, CRE-058, CRE-060,
    HDR-007, HDR-008, HDR-010, PLS-028, PLS-029, PLS-030, PLS-031, PLS-032, PLS-040, PLS-042,
    SER-036, SER-037, SER-038, SER-039, SER-040, SER-044, SER-046, VER-002, VER-003, VER-010,
    VID-021, VID-022, VID-023, VID-024, VID-025, VID-028, VID-030.
    """
    faults, now, family = sb.faults, sb.now(), endpoint.family
    versions = sb.versions
    # 1. Service-Version header: a bad value is answered before the key is looked at.
    if version_header is not None and not faults.enabled(FaultName.version_checked_after_key):
        found = _usable_version(versions, version_header, faults)
        if found is None:
            return _unsupported(exchange, faults, family, versions, now)
        exchange.version, exchange.version_info = found.version, found
    # 2. Key present.
    key = bearer_key(authorization, lax=faults.enabled(FaultName.auth_scheme_lax))
    if key is None and authorization and faults.enabled(FaultName.bearer_spacing_tolerated):
        key = bearer_key_tolerant(authorization)
    if key is None:
        if family is Family.FLAT and faults.enabled(FaultName.missing_key_flat_error_code):
            return errors.flat(exchange, faults, 401, errors.MSG_AUTH_MISSING, "unauthorized")
        return errors.problem(exchange, faults, family, Problem.AUTH_MISSING, now)
    # 3. Key valid.
    record = key_lookup(sb.accounts.keys, key, faults)
    out_of_scope = record is not None and endpoint.scope not in (None, *record.scopes)
    if record is not None and record.revoked:  # two coverage faults: checks out of order
        if out_of_scope and faults.enabled(FaultName.scope_checked_before_key):
            return errors.problem(exchange, faults, family, Problem.SCOPE_MISSING, now)
        retired_pin = version_header is None and versions.usable(record.pin) is None
        if retired_pin and faults.enabled(FaultName.pin_checked_before_key):
            return _unsupported(exchange, faults, family, versions, now, upgrade=True)
    if record is None or (record.revoked and not faults.enabled(FaultName.revoked_key_accepted)):
        return _key_invalid(exchange, faults, family, now)
    if record.unverifiable:
        if faults.enabled(FaultName.unverifiable_key_401):
            return _key_invalid(exchange, faults, family, now)
        return errors.problem(exchange, faults, family, Problem.KEY_UNVERIFIABLE, now)
    if version_header is not None and faults.enabled(FaultName.version_checked_after_key):
        found = _usable_version(versions, version_header, faults)
        if found is None:
            return _unsupported(exchange, faults, family, versions, now)
        exchange.version, exchange.version_info = found.version, found
    if out_of_scope and faults.enabled(FaultName.scope_checked_before_pin):
        return errors.problem(exchange, faults, family, Problem.SCOPE_MISSING, now)
    # 4. Pinned version, when no header chose one.
    if version_header is None:
        pinned = versions.usable(record.pin)
        if pinned is None:
            return _unsupported(exchange, faults, family, versions, now, upgrade=True)
        exchange.version, exchange.version_info = pinned.version, pinned
    caller = sb.accounts.caller(record)
    exchange.caller = caller
    if out_of_scope and caller.suspended and faults.enabled(FaultName.org_checked_before_scope):
        return errors.problem(exchange, faults, family, Problem.ORG_SUSPENDED, now)
    # 5. Scope; open videos also need the key bound to an app.
    lax_scope = faults.enabled(FaultName.scope_not_enforced) and endpoint.scope == "metadata:read"
    scopes = scopes_15(faults, endpoint.name, caller)
    if endpoint.scope is not None and endpoint.scope not in scopes and not lax_scope:
        if family is Family.FLAT and faults.enabled(FaultName.scope_flat_error_code):
            return errors.flat(exchange, faults, 403, errors.MSG_SCOPE, "forbidden")
        return errors.problem(exchange, faults, family, Problem.SCOPE_MISSING, now)
    if endpoint.app_bound and caller.app_id is None:
        return errors.flat(exchange, faults, 403, errors.APP_NOT_REGISTERED)
    # 6. Organisation.
    if endpoint.checks_org and caller.suspended:
        if faults.enabled(FaultName.org_suspended_with_error_code) and family is Family.FLAT:
            return errors.flat(exchange, faults, 403, errors.ORG_SUSPENDED, "org_suspended")
        return errors.problem(exchange, faults, family, Problem.ORG_SUSPENDED, now)
    # 7. Rate limit (always flat). A simulated answer replaces this step and what follows
    # (README: SIM endpoints, SIM-015); playback handles its own.
    if simulate_header is not None and endpoint.counter is not None and endpoint.simulates:
        test_org = caller.organisation.test or faults.enabled(FaultName.production_honours_simulate)
        beyond = faults.enabled(FaultName.simulated_beyond_error_table)
        scenario = simulate.scenario_for(
            simulate_header, endpoint.name, test_org, beyond_table=beyond
        )
        if scenario is not None:
            return simulate.respond(
                exchange, faults, sb.limits, caller.org_id, scenario, endpoint.counter, now
            )
    if endpoint.counter is not None:
        whose = counter_key_13(faults, caller.org_id, caller.role, endpoint.name, endpoint.counter)
        refusal = sb.limits.take_request(*whose, now)
        if refusal is not None:
            return errors.rate_limited(
                exchange, faults, refusal.retry_after, refusal.limit, refusal.window
            )
    return caller


def _key_invalid(exchange: Exchange, faults: FaultSwitch, family: Family, now: float) -> Reply:
    """401 for an unknown or revoked key (two coverage faults bend its code, README: Faults).

    Requirements: AUTH-006, AUTH-007, AUTH-033.
    """
    if family is Family.FLAT and faults.enabled(FaultName.unknown_key_flat_error_code):
        return errors.flat(exchange, faults, 401, errors.MSG_KEY_INVALID, "unauthorized")
    if family is Family.ENVELOPE and faults.enabled(FaultName.unknown_key_envelope_4010):
        return errors.envelope(exchange, faults, 401, 4010, errors.MSG_KEY_INVALID, now)
    return errors.problem(exchange, faults, family, Problem.KEY_INVALID, now)


def _usable_version(versions: VersionSet, value: str, faults: FaultSwitch) -> Version | None:
    """The version a header selects; three coverage faults serve the latest instead of a 400.

    Requirements: VER-003, VER-004, VER-005, VER-006, VER-010.
    """
    found = versions.usable(value)
    if found is not None:
        return found
    known, dated = versions.get(value), DATE_PATTERN.match(value) is not None
    served = (
        (known is not None and known.retired and faults.enabled(FaultName.retired_version_served))
        or (known is None and dated and faults.enabled(FaultName.unknown_version_served))
        or (not dated and faults.enabled(FaultName.malformed_version_served))
    )
    latest = versions.usable(versions.latest)
    if not served or latest is None:
        return None
    return dataclasses.replace(latest, version=value) if dated else latest  # echoed when dated


def _unsupported(
    exchange: Exchange,
    faults: FaultSwitch,
    family: Family,
    versions: VersionSet,
    now: float,
    upgrade: bool = False,
) -> Reply:
    """400 `unsupported_version` (flat everywhere); coverage faults bend its shape.

    Requirements: ERR-007, VER-004, VER-005, VER-006, VER-007, VER-008, VER-009.
    """
    if family is Family.ENVELOPE and faults.enabled(FaultName.unsupported_version_in_envelope):
        return errors.envelope(exchange, faults, 400, 4000, errors.MSG_UNSUPPORTED_VERSION, now)
    keep_upgrade = upgrade and not faults.enabled(FaultName.retired_pin_no_upgrade_to)
    upgrade_to = versions.latest if keep_upgrade else None
    reply = errors.unsupported_version(
        exchange, faults, versions.supported, versions.latest, upgrade_to=upgrade_to
    )
    if faults.enabled(FaultName.unsupported_version_no_latest):
        body = orjson.loads(reply.body)
        body.pop("latest_version", None)
        reply.body = orjson.dumps(body)
    return reply
