"""Authentication in the spec's order (spec: Authentication 4; Versioning 2).

The order of checks is one table, `STEPS`: the `Service-Version` header, key present, key valid,
the pinned version, scope (and, for open videos, the app binding), organisation, a simulated
answer, the rate limit. Each step reads and fills one `Check` (what the request has shown so
far) and passes (None), refuses (a `Refusal`, answered in the endpoint's error format) or
answers (a `Reply`). The body comes last and is the endpoint's business. `Endpoint` rows hold
what the steps need: scope, error family, counter.

Every step runs through one seam, `faults.authentication.bend_step`: with no fault switched on
it only runs the step; the faults that bend authentication act there, one step at a time
(docs/sandbox.md > Fault catalogue).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from delivery_sandbox.faults.authentication import bend_step
from delivery_sandbox.faults.switch import FaultSwitch
from delivery_sandbox.http import errors
from delivery_sandbox.http.errors import ENVELOPE_PROBLEMS, Family, Problem
from delivery_sandbox.http.headers import Exchange, Reply, bearer_key
from delivery_sandbox.http.versions import Version, VersionSet
from delivery_sandbox.playback import simulate
from delivery_sandbox.state.accounts import Caller, KeyRecord
from delivery_sandbox.state.context import Sandbox

__all__ = ["STEPS", "Check", "Endpoint", "Refusal", "authenticate", "bearer_key"]

UNSUPPORTED_VERSION = "unsupported_version"  # 400, flat on every endpoint (spec: Versioning 2)
APP_NOT_REGISTERED = "app_not_registered"  # 403, flat (spec: Authentication, open videos)


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
    simulates: bool = False  # honours Service-Simulate (docs/reading-of-the-spec.md)


@dataclass(frozen=True)
class Refusal:
    """A failed check: a `Problem` (answered in the endpoint's format), `unsupported_version`
    (with `upgrade_to` for a retired pin) or `app_not_registered`."""

    problem: str
    upgrade: bool = False


@dataclass
class Check:
    """One request's run through the steps: what it sent, and what the steps learn."""

    sb: Sandbox
    exchange: Exchange
    endpoint: Endpoint
    version_header: str | None
    authorization: str | None
    simulate_header: str | None
    now: float
    key: str | None = None  # key present
    record: KeyRecord | None = None  # key valid
    caller: Caller | None = None  # pinned version: the key's organisation, app and scopes
    scopes: frozenset[str] = field(default_factory=frozenset)  # what the scope step weighs
    counter: tuple[str, str] | None = None  # (whose, which) counter the rate limit draws from

    @property
    def faults(self) -> FaultSwitch:
        return self.sb.faults

    @property
    def versions(self) -> VersionSet:
        return self.sb.versions

    @property
    def format(self) -> str:
        return self.endpoint.family.value

    def step(self, name: str) -> Outcome:
        """Run one step of the table (no seam)."""
        return STEP_BY_NAME[name](self)

    def refusal(self, problem: str, *, upgrade: bool = False) -> Refusal:
        return Refusal(problem, upgrade)

    def use_version(self, version: Version) -> None:
        """The version the answer announces from here on."""
        self.exchange.version, self.exchange.version_info = version.version, version

    def knows(self, caller: Caller) -> None:
        """The caller is known: the scopes it holds and the counter it draws from."""
        self.caller = self.exchange.caller = caller
        self.sb.clock.know_caller(caller.org_id)  # the rest of the request reads its clock
        self.now = self.sb.now()
        self.scopes = caller.scopes
        if self.endpoint.counter is not None:
            self.counter = (caller.org_id, self.endpoint.counter)

    def answer(
        self, refusal: Refusal, *, error_code: str | None = None, code: int | None = None
    ) -> Reply:
        """The refusal as an answer: in the endpoint's format, or flat carrying `error_code`,
        or as an envelope carrying `code`.

        Requirements: ERR-007, VER-004, VER-005, VER-006, VER-007, VER-008, VER-009.
        """
        exchange, faults, versions = self.exchange, self.sb.faults, self.sb.versions
        if refusal.problem == UNSUPPORTED_VERSION:
            if code is not None:
                msg = errors.MSG_UNSUPPORTED_VERSION
                return errors.envelope(exchange, faults, 400, code, msg, self.now)
            upgrade_to = versions.latest if refusal.upgrade else None
            return errors.unsupported_version(
                exchange, faults, versions.supported, versions.latest, upgrade_to=upgrade_to
            )
        if refusal.problem == APP_NOT_REGISTERED:
            return errors.flat(exchange, faults, 403, errors.APP_NOT_REGISTERED)
        which = Problem(refusal.problem)
        if code is not None:
            status, _, message = ENVELOPE_PROBLEMS[which]
            return errors.envelope(exchange, faults, status, code, message, self.now)
        if error_code is not None:
            status, error, _ = errors.FLAT_PROBLEMS[which]
            return errors.flat(exchange, faults, status, error, error_code)
        return errors.problem(exchange, faults, self.endpoint.family, which, self.now)

    def simulate(self, test_organisation: bool, *, beyond_table: bool = False) -> Reply | None:
        """The answer a Service-Simulate scenario stands for, when the endpoint honours the
        header and the organisation may simulate (docs/reading-of-the-spec.md: SIM
        (endpoints), SIM-015); None: no scenario, the request runs on."""
        endpoint, caller = self.endpoint, self.caller
        if self.simulate_header is None or endpoint.counter is None or not endpoint.simulates:
            return None
        assert caller is not None
        scenario = simulate.scenario_for(
            self.simulate_header, endpoint.name, test_organisation, beyond_table=beyond_table
        )
        if scenario is None:
            return None
        return simulate.respond(
            self.exchange,
            self.sb.faults,
            self.sb.limits,
            caller.org_id,
            scenario,
            endpoint.counter,
            self.now,
        )


Outcome = Refusal | Reply | None  # None: the step passed


def _version_header(check: Check) -> Outcome:
    """A bad Service-Version is answered before the key is looked at.

    Requirements: VER-003, VER-004, VER-005, VER-006, VER-010.
    """
    if check.version_header is None:
        return None
    found = check.versions.usable(check.version_header)
    if found is None:
        return Refusal(UNSUPPORTED_VERSION)
    check.use_version(found)
    return None


def _key_present(check: Check) -> Outcome:
    check.key = bearer_key(check.authorization)
    return Refusal(Problem.AUTH_MISSING) if check.key is None else None


def _key_valid(check: Check) -> Outcome:
    """Unknown or revoked: 401; a key that cannot be verified in time: a retryable 503.

    Requirements: AUTH-006, AUTH-007, AUTH-033.
    """
    record = check.sb.accounts.keys.get(check.key) if check.key is not None else None
    check.record = record
    if record is None or record.revoked:
        return Refusal(Problem.KEY_INVALID)
    if record.unverifiable:
        return Refusal(Problem.KEY_UNVERIFIABLE)
    return None


def _pinned_version(check: Check) -> Outcome:
    """Without a Service-Version header the key's pin serves; a retired pin is refused with
    `upgrade_to`. From here the caller is known."""
    assert check.record is not None
    if check.version_header is None:
        pinned = check.versions.usable(check.record.pin)
        if pinned is None:
            return Refusal(UNSUPPORTED_VERSION, upgrade=True)
        check.use_version(pinned)
    check.knows(check.sb.accounts.caller(check.record))
    return None


def _scope(check: Check) -> Outcome:
    """The endpoint's scope; open videos also need the key bound to an app."""
    assert check.caller is not None
    scope = check.endpoint.scope
    if scope is not None and scope not in check.scopes:
        return Refusal(Problem.SCOPE_MISSING)
    if check.endpoint.app_bound and check.caller.app_id is None:
        return Refusal(APP_NOT_REGISTERED)
    return None


def _organisation(check: Check) -> Outcome:
    assert check.caller is not None
    if check.endpoint.checks_org and check.caller.suspended:
        return Refusal(Problem.ORG_SUSPENDED)
    return None


def _simulated(check: Check) -> Outcome:
    """A simulated answer replaces the rate limit and what follows; playback handles its own."""
    assert check.caller is not None
    return check.simulate(check.caller.organisation.test)


def _rate_limit(check: Check) -> Outcome:
    """The endpoint's counter (always answered flat); playback counts in its handler."""
    if check.counter is None:
        return None
    refusal = check.sb.limits.take_request(*check.counter, check.now)
    if refusal is None:
        return None
    return errors.rate_limited(
        check.exchange, check.sb.faults, refusal.retry_after, refusal.limit, refusal.window
    )


Step = Callable[[Check], Outcome]

# The order of checks (spec: Authentication 4): the first step that does not pass answers.
STEPS: tuple[tuple[str, Step], ...] = (
    ("version_header", _version_header),
    ("key_present", _key_present),
    ("key_valid", _key_valid),
    ("pinned_version", _pinned_version),
    ("scope", _scope),
    ("organisation", _organisation),
    ("simulated", _simulated),
    ("rate_limit", _rate_limit),
)
STEP_BY_NAME: dict[str, Step] = dict(STEPS)


def authenticate(
    sb: Sandbox,
    exchange: Exchange,
    endpoint: Endpoint,
    version_header: str | None,
    authorization: str | None,
    simulate_header: str | None = None,
) -> Caller | Reply:
    """Run the steps in order; the first that does not pass is the answer.

    Requirements: AUTH-001, AUTH-006, AUTH-007, AUTH-010, AUTH-011, AUTH-012, AUTH-013, AUTH-014,
    AUTH-015, AUTH-016, AUTH-017, AUTH-018, AUTH-019, AUTH-020, AUTH-021, AUTH-030, AUTH-033,
    CAT-069, CAT-070, CAT-071, CAT-072, CAT-073, CAT-074, CAT-075, CFG-028, CFG-029, CFG-030,
    CFG-031, CFG-032, CFG-033, CRE-044, CRE-045, CRE-046, CRE-047, CRE-048, CRE-058, CRE-060,
    HDR-007, HDR-008, HDR-010, PLS-028, PLS-029, PLS-030, PLS-031, PLS-032, PLS-040, PLS-042,
    SER-036, SER-037, SER-038, SER-039, SER-040, SER-044, SER-046, VER-002, VER-003, VER-010,
    VID-021, VID-022, VID-023, VID-024, VID-025, VID-028, VID-030.
    """
    check = Check(sb, exchange, endpoint, version_header, authorization, simulate_header, sb.now())
    for name, step in STEPS:
        outcome = bend_step(name, check, partial(step, check))
        if isinstance(outcome, Refusal):
            return check.answer(outcome)
        if outcome is not None:
            return outcome
    assert check.caller is not None
    return check.caller
