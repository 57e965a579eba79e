"""The pytest plugin of the product suite (loaded by tests/conformance and tests/properties).

Options: `--target FILE` (a target profile; default: start the embedded sandbox), `--requirement
ID` (repeatable; exact IDs or patterns such as `CAT-*`: run only tests naming a matching ID),
`--no-pacing`, `--shared-state DIR` (set by `run --workers N` for its worker processes: the
shared pacing record and resource locks), `--report-dir DIR` (write results.json and report.html
there), `--conformance-seed N` (recorded in the report), `--conformance-strict` (a failed
`should` fails the run), `--min-coverage PCT` (accept a partial run exercising at least PCT % of
what it selected), `--max-duration SECONDS` (stop there: the tests not yet run are reported not
exercised, the run is TIMED OUT).

Markers:
  @pytest.mark.requirement("PLAY-012", ...)   mandatory on every test; IDs must exist in
                                              spec/requirements.yaml (else a usage error)
  @pytest.mark.needs("role:videos", "fixture:video_id", "admin", "bare_host",
                     "test_organisation")     missing in the profile => not exercised
  @pytest.mark.exclusive("limits-organisation")  what the test holds alone on several workers
                                              (default: the whole target when it uses `admin`
                                              or `changes`; suite/exclusive.py)

Fixtures: `profile`, `client` (a paced `DeliveryClient`), `key(role)`, `fixture_id(name)`,
`admin` (an `AdminClient`; resets the target after the test). Asking `key`, `fixture_id` or
`admin` for something the profile lacks skips the test with a reason starting `not exercised: `,
which the reports count as not exercised, never as passed.

Every test ends as one `TestFinished` event: its requirement IDs, its outcome, the typed
violations (a `ConformanceFailure`; a bare assertion or a garbage body becomes a violation of the
test's own requirements) and the redacted exchanges it made. Consumers implement
`pytest_conformance_event(event)`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from delivery_conformance.checks.common import with_common_rules
from delivery_conformance.evidence import events, ledger
from delivery_conformance.evidence.events import (
    NOT_APPLICABLE_PREFIX,
    NOT_EXERCISED_PREFIX,
    Outcome,
)
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.redact import redact_text
from delivery_conformance.evidence.violation import ConformanceFailure, Violation
from delivery_conformance.exceptions import (
    HarnessError,
    HarnessFailure,
    RunStopped,
    TargetGarbage,
    UsageError,
)
from delivery_conformance.spec.endpoints import SUCCESS_SHAPE, match_endpoint
from delivery_conformance.suite import distributed
from delivery_conformance.suite.exclusive import (
    CHANGES_FIXTURES,
    CHANGES_ROLE,
    ORGANISATION_CLOCKS,
    OWN_DATA,
    ResourceLocks,
    cleanup,
    holdings,
    limits_pool,
)
from delivery_conformance.suite.selection import matches, select
from delivery_conformance.suite.waits import WAITS
from delivery_conformance.target.admin import (
    AdminClient,
    has_organisation_clocks,
    restores_own_data,
)
from delivery_conformance.target.changes import run_change
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.pacing import Pacer, SharedPacer
from delivery_conformance.target.profile import TargetProfile, load_profile

__all__ = [
    "DEFAULT_MAX_DURATION",
    "DEFAULT_STATE_SEQUENCES",
    "NEEDS_KINDS",
    "known_requirement_ids",
]

DEFAULT_MAX_DURATION = 3600.0  # seconds: docs/running.md > Exit codes (TIMED OUT)
# Sequences of the stateful exploration (tests/conformance/test_state_model.py) in a run.
DEFAULT_STATE_SEQUENCES = 25
TIMED_OUT_REASON = "the run reached --max-duration before this test"
NOT_JSON_RULE = "GEN-005"  # What the service does: every non-empty body is JSON
LONG_TEST, LONG_TEST_AGAIN = 15.0, 30.0  # seconds before "still running" lines
INTERRUPTED_REASON = "the run was interrupted (SIGINT or SIGTERM) before this test"
STOP_REASONS = {"timed out": TIMED_OUT_REASON, "interrupted": INTERRUPTED_REASON}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

NEEDS_KINDS = ("role:", "fixture:", "admin", "bare_host", "test_organisation")
_STATE = pytest.StashKey["_RunState"]()
FEATURES_INPUT = "delivery_admin_features"  # the controller's probe, in each worker's input
FEATURES_PROBE_TIMEOUT = 10.0  # seconds for the admin API's `GET state` before a run


@dataclasses.dataclass(frozen=True)
class AdminFeatures:
    """What the target's admin API does beyond the basics, as its `GET state` shows it."""

    organisation_clocks: bool = False  # a clock moves for one organisation alone
    own_data_restore: bool = False  # a role's restore puts back its organisation's own data


class _HookSpecs:
    @pytest.hookspec
    def pytest_conformance_event(self, event: events.Event) -> None:
        """One event of the run (see `delivery_conformance.evidence.events`)."""


def known_requirement_ids() -> set[str]:
    """The IDs of spec/requirements.yaml (a seam: self-tests replace it)."""
    from delivery_conformance.spec.requirements import RequirementsError, load_requirements

    try:
        return set(load_requirements())
    except RequirementsError as error:
        raise pytest.UsageError(str(error)) from None


def _expected_failures(config: pytest.Config, started: float) -> tuple[events.ExpectedFailure, ...]:
    """The baseline named by --expected-failures, its dates judged against the run's start day
    (UTC). `run` read it once already, so a broken file stopped the run before it began."""
    from delivery_conformance.spec.requirements import load_requirements
    from delivery_conformance.suite.expected_failures import load_expected_failures

    path = config.getoption("expected_failures")
    if not path:
        return ()
    today = dt.datetime.fromtimestamp(started, dt.UTC).date()
    try:
        return load_expected_failures(Path(path), load_requirements(), today)
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None


def should_requirement_ids() -> set[str]:
    """The IDs whose level is `should`: their violations warn and never stop a test."""
    from delivery_conformance.spec.requirements import (
        Level,
        RequirementsError,
        load_requirements,
    )

    try:
        return {r.id for r in load_requirements().values() if r.level is Level.SHOULD}
    except RequirementsError:
        return set()  # reported once, as a usage error, when the markers are checked


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(_HookSpecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("delivery-conformance")
    group.addoption("--target", default=None, help="target profile (default: embedded sandbox)")
    group.addoption(
        "--requirement",
        action="append",
        default=[],
        dest="conformance_ids",
        metavar="ID",
        help="run only tests naming this requirement ID or pattern (CAT-*, PLAY-01*)",
    )
    group.addoption(
        "--no-pacing",
        action="store_true",
        default=False,
        help="do not pace requests under the rate limits",
    )
    group.addoption(
        "--target-from-sandbox",
        action="store_true",
        default=False,
        help="the --target profile was written by the embedded sandbox: read it without "
        "environment variables (no ${NAME}, no DELIVERY_KEY_<ROLE>)",
    )
    group.addoption("--report-dir", default=None, help="write results.json and report.html here")
    group.addoption("--conformance-seed", type=int, default=None, help="seed to record")
    group.addoption(
        "--conformance-strict",
        action="store_true",
        default=False,
        dest="conformance_strict",
        help="a violated `should` requirement fails the run (default: a warning)",
    )
    group.addoption(
        "--expected-failures",
        default=None,
        metavar="FILE",
        help="TOML [[expected]] requirement, reason, expires: known failures judged as warnings",
    )
    group.addoption(
        "--min-coverage",
        type=float,
        default=None,
        metavar="PCT",
        help="accept a partial run that exercised at least PCT %% of the selected requirements",
    )
    group.addoption(
        "--max-duration",
        type=float,
        default=DEFAULT_MAX_DURATION,
        metavar="SECONDS",
        help=f"stop the run after this many seconds (default {DEFAULT_MAX_DURATION:g})",
    )
    group.addoption(
        "--state-sequences",
        type=int,
        default=DEFAULT_STATE_SEQUENCES,
        dest="state_sequences",
        metavar="N",
        help="random sequences of changes the stateful exploration tries "
        f"(default {DEFAULT_STATE_SEQUENCES}; 0: not exercised)",
    )
    group.addoption(
        "--no-state-shrink",
        action="store_true",
        default=False,
        dest="no_state_shrink",
        help="report a failing sequence of the stateful exploration as found, unshrunk",
    )
    group.addoption(
        "--advance-clock",
        action="store_true",
        default=False,
        dest="advance_clock",
        help="against the sandbox, one scenario at a time: a freshness poll moves the target's "
        "clock (POST /_sandbox/clock) instead of sleeping (suite/waits.py)",
    )
    group.addoption(
        "--shared-state",
        default=None,
        dest="shared_state",
        metavar="DIR",
        help="a folder the worker processes of one run share (pacing record, locks of the "
        "resources a test holds alone); `run --workers N` sets it",
    )


def build_unicode_tables() -> None:
    """Have Hypothesis build the table of the characters the property tests draw from (the
    `utf-8` codec, Schemathesis's default) into its home folder, so that the workers of a run
    read it rather than each spending a second of CPU on it."""
    from hypothesis import strategies

    strategies.characters(codec="utf-8").validate()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requirement(*ids): requirement IDs this test proves")
    config.addinivalue_line("markers", "needs(*what): roles, fixtures or admin API needed")
    config.addinivalue_line(
        "markers", "long: many round trips; on several workers it starts first in its phase"
    )
    config.addinivalue_line(
        "markers", "exclusive(*resources): what the test holds alone on several workers"
    )
    # Hypothesis keeps files (a constants cache, its Unicode tables) in ./.hypothesis; a run
    # writes only into its report folder, so they go to a folder of their own, removed when the
    # run ends. The processes of one run (`--workers N`) share it: a table one of them built
    # (about a second of CPU) serves the others.
    shared = config.getoption("shared_state")
    if shared:
        set_hypothesis_home_dir(Path(shared) / "hypothesis")  # removed with the run's folder
    else:
        home = Path(tempfile.mkdtemp(prefix="delivery-hypothesis-"))
        set_hypothesis_home_dir(home)
        config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    state = _RunState(config)
    config.stash[_STATE] = state
    # A broken `should`, or a failure the expected-failures file accepts (in date), never stops
    # its test: what the test judges after it still counts.
    accepted = {e.requirement_id for e in state.policy.expected_failures if not e.expired}
    ledger.soften(should_requirement_ids() | accepted)
    config.pluginmanager.register(state, "delivery-conformance-run")
    if distributed.is_worker(config) and state.shared_dir is not None:
        locks = ResourceLocks(state.shared_dir)
        state.worker_locks = distributed.WorkerLocks(
            locks,
            lambda: state.stop_reason() is not None,
            pool=lambda: limits_pool(state.profile().keys),
            use_aliases=state.use_aliases,
        )
        config.pluginmanager.register(state.worker_locks, "delivery-conformance-locks")
    if config.getoption("report_dir"):
        from delivery_conformance.reports.writer import ReportWriter

        config.pluginmanager.register(ReportWriter(Path(config.getoption("report_dir"))))


def _state(config: pytest.Config) -> _RunState:
    return config.stash[_STATE]


def _ids(item: pytest.Item) -> tuple[str, ...]:
    return tuple(i for mark in item.iter_markers("requirement") for i in mark.args)


def _needs(item: pytest.Item) -> tuple[str, ...]:
    return tuple(n for mark in item.iter_markers("needs") for n in mark.args)


def _marker_problems(items: list[pytest.Item], known: set[str]) -> list[str]:
    problems = []
    for item in items:
        ids = _ids(item)
        if not ids:
            problems.append(f"{item.nodeid} has no @pytest.mark.requirement")
        problems += [f"{item.nodeid} names unknown requirement {i}" for i in ids if i not in known]
        problems += [
            f"{item.nodeid} has an unknown need {n!r}"
            for n in _needs(item)
            if not isinstance(n, str) or not n.startswith(NEEDS_KINDS)
        ]
    return problems


class _RunState:
    """Per-run plumbing: profile, shared client, the current test's exchanges and outcome."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.t0 = time.time()
        self.seed: int | None = config.getoption("conformance_seed")
        self._profile: TargetProfile | None = None
        self._embedded: Any = None
        self._client: DeliveryClient | None = None
        self._admin: AdminClient | None = None
        self._features: AdminFeatures | None = None  # `admin_features()`, once known
        self.aliases: Mapping[str, str] = {}  # roles standing in for others (`use_aliases`)
        self.exchanges: list[Exchange] = []
        self._outcome: dict[str, tuple[Outcome, str, tuple[Violation, ...]]] = {}
        self._start: dict[str, float] = {}
        self.pacing = not config.getoption("no_pacing")
        self.max_duration: float = config.getoption("max_duration")
        self.deadline = time.monotonic() + self.max_duration
        self.stopped: str | None = None
        self._signalled = False
        self._watchdog: threading.Timer | None = None
        self._saved_handlers: dict[int, Any] = {}
        shared = config.getoption("shared_state")
        self.shared_dir = Path(shared) if shared else None
        self.worker = distributed.is_worker(config)
        self.gathered: distributed.Gathered | None = None  # the controller of several workers
        self._unicode_tables: threading.Thread | None = None  # built once for the workers
        self.worker_locks: distributed.WorkerLocks | None = None  # a worker's: it sorts the tests
        self._deselected: list[events.TestDeselected] = []
        self.policy = events.RunPolicy(
            selectors=tuple(config.getoption("conformance_ids")),
            keyword=config.getoption("keyword") or None,
            strict=config.getoption("conformance_strict"),
            min_coverage=config.getoption("min_coverage"),
            max_duration=self.max_duration,
            expected_failures=_expected_failures(config, self.t0),
        )

    # -- pytest hooks (this object is registered as a plugin) --------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist's controller, per worker: the workers agree on what the controller probed."""
        node.workerinput[FEATURES_INPUT] = dataclasses.astuple(self.admin_features())

    def use_aliases(self, aliases: Mapping[str, str]) -> None:
        """From here the roles `aliases` maps send (and are acted on by the admin API as) the
        roles they map to: a worker holding the twin of the limits organisation."""
        self.aliases = dict(aliases)
        for user in (self._client, self._admin):
            if user is not None:
                user.role_aliases = self.aliases

    def admin_features(self) -> AdminFeatures:
        """What the target's admin API does (suite/exclusive.py): a worker takes the
        controller's answer, any other process asks the admin API once. A target without these
        features, or whose admin API does not answer, has none: the scenarios that need them
        then hold the whole target."""
        if self._features is None:
            workerinput = getattr(self.config, "workerinput", None)
            if workerinput is not None:
                self._features = AdminFeatures(*workerinput.get(FEATURES_INPUT, ()))
            else:
                self._features = self._probe_features()
            self.config.stash[ORGANISATION_CLOCKS] = self._features.organisation_clocks
            self.config.stash[OWN_DATA] = self._features.own_data_restore and self._has_own_data()
        return self._features

    def _has_own_data(self) -> bool:
        """The profile names the `films_changes` role and its fixtures, and no `[changes]`
        commands (those change the profile's own fixtures: the scenarios that would change the
        organisation's own data keep to the shared ones). A broken profile: no (the run says
        why where it reads the profile)."""
        needs = [f"role:{CHANGES_ROLE}", *(f"fixture:{name}" for name in CHANGES_FIXTURES)]
        try:
            return all(map(self.has, needs)) and self.profile().changes is None
        except HarnessError:
            return False

    def organisation_clocks(self) -> bool:
        """Whether the target moves a clock for one organisation alone."""
        return self.admin_features().organisation_clocks

    def _probe_features(self) -> AdminFeatures:
        try:
            profile = self.profile()
            if profile.admin is None:
                return AdminFeatures()
            origin = urlsplit(profile.admin.url)
            own = dataclasses.replace(profile, base_url=f"{origin.scheme}://{origin.netloc}")
            with DeliveryClient(own, timeout=FEATURES_PROBE_TIMEOUT) as transport:
                state = AdminClient(profile.admin, transport).state()
            return AdminFeatures(has_organisation_clocks(state), restores_own_data(state))
        except HarnessError:  # unreachable, garbage or refused: none (the run says why)
            return AdminFeatures()

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if any(item.get_closest_marker("exclusive") for item in items):
            self.admin_features()  # `holdings` reads what it found from here on
        known = known_requirement_ids()
        problems = _marker_problems(items, known)
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise pytest.UsageError("; ".join(problems[:3]) + more)
        selectors = config.getoption("conformance_ids")
        if not selectors:
            return
        try:
            select(selectors, sorted(known))
        except HarnessError as error:
            raise pytest.UsageError(str(error)) from None
        dropped = [item for item in items if not any(matches(i, selectors) for i in _ids(item))]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if item not in dropped]

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        for item in items:
            self._deselected.append(events.TestDeselected(item.nodeid, _ids(item)))
            self.emit(self._deselected[-1])

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.worker and self.shared_dir is not None:
            order = self.worker_locks.order if self.worker_locks is not None else {}
            items = sorted(session.items, key=lambda item: order.get(item.nodeid, 0))
            ids = {item.nodeid: _ids(item) for item in items}  # as a sequential run orders them
            collection = distributed.Collection(ids, tuple(self._deselected))
            distributed.write_collection(self.shared_dir, collection)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.gathered is not None:
            if self._unicode_tables is None:  # the run is under way: the cores have room
                self._unicode_tables = threading.Thread(target=build_unicode_tables, daemon=True)
                self._unicode_tables.start()
            self.gathered.report(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            lines = str(report.longrepr).strip().splitlines() or ["?"]
            reason = f"collection failed: {redact_text(lines[-1][:300])}"
            self.emit(events.TestFinished(report.nodeid, (), Outcome.ERROR, reason))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        controller = distributed.is_controller(session.config)
        if controller:
            # the workers collect; the events come here
            self.gathered = distributed.Gathered(self.shared_dir)
        elif not session.items or session.config.option.collectonly:
            return
        try:
            profile = self.profile()
        except HarnessError as error:
            pytest.exit(str(error), returncode=3)
        self.deadline = time.monotonic() + self.max_duration
        workers = int(session.config.getoption("numprocesses", 1) or 1) if controller else 1
        if session.config.getoption("advance_clock"):
            self._advance_clock(profile, controller or distributed.is_worker(session.config))
        started = time.time()
        self.emit(
            events.RunStarted(
                profile.base_url, started, self.seed, self.pacing, self.policy, workers
            )
        )

        self._catch_signals()

    def _advance_clock(self, profile: TargetProfile, several_workers: bool) -> None:
        """`--advance-clock`: the suite's waits move the target's clock (suite/waits.py)."""
        if several_workers:
            pytest.exit("--advance-clock runs one scenario at a time: not with --workers", 2)
        if profile.admin is None:
            pytest.exit("--advance-clock needs a target with an [admin] table (the sandbox)", 2)
        WAITS.advance_with(self._move_clock)
        self.config.add_cleanup(lambda: WAITS.advance_with(None))

    def _move_clock(self, seconds: float) -> None:
        """A wait of `--advance-clock`: the target's clock moved on, as time passes. Not a change
        the test made (`AdminClient.changed`): nothing is put back after it."""
        api = self.admin()
        moved_before = "clock" in api.changed
        api.clock(advance=seconds)
        if not moved_before:
            api.changed.discard("clock")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        """Once the run must stop, every remaining test is reported not exercised, not run."""
        stop = self.stop_reason()
        if stop is None:
            return None
        self.stopped = stop
        reason = STOP_REASONS[stop]
        self.emit(events.TestFinished(item.nodeid, _ids(item), Outcome.NOT_EXERCISED, reason))
        return True

    def _announce_wait(self, counter: str, seconds: float) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        line = f"pacing: waiting {seconds:.0f} s for room on the {counter} counter"
        if reporter is not None:
            reporter.write_line(line)

    def stop_reason(self) -> str | None:
        """ "interrupted" after SIGINT/SIGTERM, "timed out" past --max-duration, else None."""
        if self._signalled or distributed.stop_requested(self.shared_dir):
            return "interrupted"
        if time.monotonic() >= self.deadline:
            return "timed out"
        return None

    def _catch_signals(self) -> None:
        """The first SIGINT/SIGTERM stops the run between requests (report written); a second
        SIGINT interrupts at once. Only the main thread may install handlers."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in STOP_SIGNALS:
            self._saved_handlers[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: object) -> None:
        if self._signalled and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self._signalled = True
        if self.gathered is not None and self.shared_dir is not None:
            distributed.request_stop(self.shared_dir)  # the workers stop between requests

    def _restore_signals(self) -> None:
        for signum, handler in self._saved_handlers.items():
            signal.signal(signum, handler)
        self._saved_handlers.clear()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.begin(item.nodeid)
        item.user_properties.append(("requirements", ",".join(_ids(item))))
        missing = [need for need in _needs(item) if not self.has(need)]
        if missing:
            pytest.skip(NOT_EXERCISED_PREFIX + "the profile lacks " + ", ".join(missing))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        self.note(item, call, report)
        return report

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._restore_signals()
        if int(exitstatus) == int(pytest.ExitCode.INTERRUPTED) or self._signalled:
            self.stopped = "interrupted"
        if self.gathered is not None:
            self._hand_over_gathered()
        elapsed = time.time() - self.t0
        self.emit(events.RunFinished(time.time(), elapsed, int(exitstatus), self.stopped))
        self.close()

    # -- plumbing ------------------------------------------------------------------------------

    def emit(self, event: events.Event) -> None:
        if self.gathered is not None and isinstance(event, events.TestFinished):
            self.gathered.keep(event)  # handed over in collection order when the run ends
            return
        self.config.hook.pytest_conformance_event(event=event)

    def _hand_over_gathered(self) -> None:
        """The controller: every worker's event, in the order a sequential run gives them."""
        gathered, self.gathered = self.gathered, None
        assert gathered is not None
        stop = self.stop_reason() or self.stopped
        collection = distributed.read_collection(self.shared_dir)
        for event in gathered.in_order(collection, STOP_REASONS.get(stop or "")):
            if isinstance(event, events.TestFinished):
                for said, reason in STOP_REASONS.items():
                    if event.reason == reason:
                        self.stopped = said
            self.emit(event)

    def profile(self) -> TargetProfile:
        if self._profile is None:
            target = self.config.getoption("target")
            if target:
                own = self.config.getoption("target_from_sandbox")
                self._profile = load_profile(target, environ={} if own else None)
            else:
                from delivery_conformance.target.embedded import EmbeddedSandbox

                self._embedded = EmbeddedSandbox()
                self._profile = load_profile(self._embedded.start(), environ={})
                self.pacing = False
        return self._profile

    def client(self) -> DeliveryClient:
        if self._client is None:
            profile = self.profile()
            pacer: Pacer | None = None
            if self.pacing:  # one budget for every worker of the run
                shared = self.shared_dir
                pacer = SharedPacer(shared / "pacing.json") if shared is not None else Pacer()
            self._client = DeliveryClient(profile, pacer=pacer, on_exchange=self.exchanges.append)
            self._client.role_aliases = self.aliases
            self._client.stop_check = self.stop_reason
            self._client.on_wait = self._announce_wait
            if "films" in profile.keys:
                self._client.learn_config("films")
        return self._client

    def admin(self) -> AdminClient:
        profile = self.profile()
        if profile.admin is None:
            pytest.skip(NOT_EXERCISED_PREFIX + "the profile has no [admin] table")
        if self._admin is None:
            origin = urlsplit(profile.admin.url)
            admin_profile = dataclasses.replace(
                profile, base_url=f"{origin.scheme}://{origin.netloc}"
            )
            transport = DeliveryClient(admin_profile, on_exchange=self.exchanges.append)
            clocks = self.organisation_clocks()
            self._admin = AdminClient(profile.admin, transport, organisation_clocks=clocks)
            self._admin.role_aliases = self.aliases
        return self._admin

    def has(self, need: str) -> bool:
        profile = self.profile()
        kind, _, name = need.partition(":")
        checks: dict[str, Callable[[], bool]] = {
            "role": lambda: name in profile.keys,
            "fixture": lambda: name in profile.fixtures,
            "admin": lambda: profile.admin is not None,
            "bare_host": lambda: profile.bare_host is not None,
            "test_organisation": lambda: profile.test_organisation,
        }
        return checks[kind]()

    def begin(self, nodeid: str) -> None:
        self.exchanges.clear()
        ledger.begin()
        self._start[nodeid] = time.time()
        self._watch(nodeid, LONG_TEST)

    def _watch(self, nodeid: str, after: float) -> None:
        """Say so when one test runs long (polls, drains, minute waits): never a silent minute."""
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._watchdog = threading.Timer(after, self._still_running, (nodeid,))
        self._watchdog.daemon = True
        self._watchdog.start()

    def _still_running(self, nodeid: str) -> None:
        if nodeid not in self._start:
            return
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            took = time.time() - self._start[nodeid]
            reporter.write_line(f"still running after {took:.0f} s: {nodeid}")
        self._watch(nodeid, LONG_TEST_AGAIN)

    def note(
        self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
    ) -> None:
        nodeid = item.nodeid
        current = self._outcome.get(nodeid)
        if report.when == "setup":
            if report.skipped:
                self._outcome[nodeid] = _skip_outcome(report)
            elif report.failed:
                self._outcome[nodeid] = _classify(call, (), self.exchanges)
        elif report.when == "call":
            if report.passed:
                self._outcome[nodeid] = (Outcome.PASSED, "", ())
            elif report.skipped:
                self._outcome[nodeid] = _skip_outcome(report)
            else:
                self._outcome[nodeid] = self._stopped_or(
                    _classify(call, _ids(item), self.exchanges)
                )
        elif report.when == "teardown":
            if self._watchdog is not None:
                self._watchdog.cancel()
            if report.failed and (current is None or current[0] is Outcome.PASSED):
                outcome, reason, found = _classify(call, (), self.exchanges)
                if outcome is Outcome.ERROR:
                    reason = "teardown failed: " + reason
                self._outcome[nodeid] = (outcome, reason, found)
            outcome, reason, violations = self._outcome.pop(nodeid, (Outcome.ERROR, "", ()))
            # A test whose body ran to its end judged everything it names, even when a deferred
            # finding or a common rule (judged on its exchanges below) fails it now.
            judged = set(_ids(item)) if outcome is Outcome.PASSED else ledger.checked()
            warned = ledger.deferred()  # broken `should` rules: findings, never a stop
            if warned:
                violations = (*violations, *warned)
                if outcome is Outcome.PASSED:
                    outcome = Outcome.FAILED
            outcome, violations = with_common_rules(outcome, violations, self.exchanges)
            for stop, said in STOP_REASONS.items():
                if reason == said:
                    self.stopped = stop
            duration = time.time() - self._start.pop(nodeid, time.time())
            finished = events.TestFinished(
                nodeid,
                _ids(item),
                outcome,
                reason,
                violations,
                tuple(self.exchanges),
                duration,
                tuple(sorted(judged & set(_ids(item)))),
            )
            if self.worker:
                setattr(report, distributed.EVENT_ATTRIBUTE, distributed.encode(finished))
            self.emit(finished)

    def _stopped_or(
        self, found: tuple[Outcome, str, tuple[Violation, ...]]
    ) -> tuple[Outcome, str, tuple[Violation, ...]]:
        """A harness error raised once the run had to stop is the stop's doing: a stateful
        exploration cut by the time bound mid-sequence, for one, makes Hypothesis report its
        replay as flaky. The test is then not exercised, with the stop's reason."""
        stop = self.stop_reason()
        if found[0] is Outcome.ERROR and stop is not None:
            return Outcome.NOT_EXERCISED, STOP_REASONS[stop], ()
        return found

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._admin is not None:
            self._admin.close()
        if self._embedded is not None:
            self._embedded.stop()


def _skip_outcome(report: pytest.TestReport) -> tuple[Outcome, str, tuple[Violation, ...]]:
    """A skipped test: not applicable when the scenario said so, else not exercised."""
    message = _skip_message(report)
    if message.startswith(NOT_APPLICABLE_PREFIX):
        return Outcome.NOT_APPLICABLE, message.removeprefix(NOT_APPLICABLE_PREFIX), ()
    return Outcome.NOT_EXERCISED, _skip_reason(report), ()


def _skip_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    message = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return message.removeprefix("Skipped: ")


def _skip_reason(report: pytest.TestReport) -> str:
    message = _skip_message(report)
    if message.startswith(NOT_EXERCISED_PREFIX):
        return message.removeprefix(NOT_EXERCISED_PREFIX)
    return f"skipped: {message}"


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return redact_text(text[:500])


def _error_reason(call: pytest.CallInfo[None]) -> str:
    if call.excinfo is None:
        return "unknown error"
    error = call.excinfo.value
    if isinstance(error, HarnessError):
        return _one_line(error)
    return f"{type(error).__name__}: {_one_line(error)}"


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def _classify(
    call: pytest.CallInfo[None], ids: tuple[str, ...], exchanges: list[Exchange]
) -> tuple[Outcome, str, tuple[Violation, ...]]:
    """A failed setup, call or teardown: typed violations when the target is at fault.

    A typed violation is charged to the requirement it names, wherever it was raised (fixtures
    included). A finding that names no rule (a bare assertion, a non-JSON body) is charged to the
    test's requirement when the test names exactly one, else it is *unattributed* (requirement
    id ""): never spread over every marker. The run's time bound leaves the test not exercised;
    anything else is the harness's own error.
    """
    if call.excinfo is None:
        return Outcome.ERROR, "unknown failure", ()
    last = exchanges[-1] if exchanges else None
    owner = ids[0] if len(ids) == 1 else ""
    found: list[Violation] = []
    for leaf in _leaves(call.excinfo.value):
        if isinstance(leaf, ConformanceFailure):
            found.extend(leaf.violations)
        elif isinstance(leaf, RunStopped):
            said = str(leaf)
            reason = INTERRUPTED_REASON if said.startswith("interrupted") else TIMED_OUT_REASON
            return Outcome.NOT_EXERCISED, reason, ()
        elif isinstance(leaf, TargetGarbage):
            rule = _unreadable_body_rule(last, owner)
            needed = _precondition_read(last, ids) if rule == owner else None
            if needed is not None:
                return Outcome.NOT_EXERCISED, needed, ()
            found.append(
                Violation(rule, "response is not JSON", "a JSON body", _one_line(leaf), last)
            )
        elif isinstance(leaf, AssertionError | pytest.fail.Exception):
            title = "scenario assertion failed"
            found.append(
                Violation(owner, title, "the scenario's assertion to hold", _one_line(leaf), last)
            )
        elif ledger.deferred() and not isinstance(leaf, HarnessError):
            # A broken `should` was kept and the scenario went on with an answer it could not
            # use: the target's finding (added at teardown) stopped it, not the tool.
            reason = f"stopped after a broken should: {_error_reason(call)}"
            return Outcome.FAILED, reason, ()
        else:
            return Outcome.ERROR, _error_reason(call), ()
    return Outcome.FAILED, "", tuple(found)


def _unreadable_body_rule(last: Exchange | None, owner: str) -> str:
    """The one rule an answer the scenario could not read as JSON breaks, whoever read it.

    A non-empty body that is not JSON breaks GEN-005; an empty body where a success answer
    was due breaks the rule that gives that operation's success body (spec: Endpoints). Only an
    empty error answer stays the reading test's own finding (its rule says what was due).
    """
    if last is None:
        return owner
    if last.response_body:
        return NOT_JSON_RULE
    endpoint = match_endpoint(last.method, urlsplit(last.url).path)
    if endpoint is not None and last.status is not None and 200 <= last.status < 300:
        return SUCCESS_SHAPE[endpoint.operation]
    return owner


ENDPOINT_SECTION = "Endpoints > "


@functools.cache
def _sections() -> dict[str, str]:
    """Requirement ID -> its spec section, read once per process."""
    from delivery_conformance.spec.requirements import load_requirements

    return {rid: requirement.section for rid, requirement in load_requirements().items()}


def _section_of(requirement_id: str) -> str:
    """The spec section of a requirement ("" for an unknown ID)."""
    return _sections().get(requirement_id, "")


def _precondition_read(last: Exchange | None, ids: tuple[str, ...]) -> str | None:
    """The not-exercised reason when an empty error answer came from an endpoint other than the
    one every requirement of the test is about (their spec section `Endpoints > METHOD /path`):
    a read the scenario needed before it could judge its own rule, which it never reached. The
    endpoint's own scenarios judge that answer. None: the answer is the test's own finding."""
    if last is None or not ids:
        return None
    endpoint = match_endpoint(last.method, urlsplit(last.url).path)
    if endpoint is None:
        return None
    subject = f"Endpoints > {endpoint.method} {endpoint.template}"
    sections = [_section_of(rid) for rid in ids]
    if not all(section.startswith(ENDPOINT_SECTION) for section in sections):
        return None  # a rule of no one endpoint: the answer may be its subject
    if any(section == subject or section.startswith(subject + " ") for section in sections):
        return None
    return (
        f"{NOT_EXERCISED_PREFIX}a read it needed first, {endpoint.method} {endpoint.template}, "
        f"answered {last.status} with an empty body (that endpoint's scenarios judge it)"
    )


@pytest.fixture(scope="session")
def profile(request: pytest.FixtureRequest) -> TargetProfile:
    return _state(request.config).profile()


@pytest.fixture(scope="session")
def client(request: pytest.FixtureRequest) -> DeliveryClient:
    return _state(request.config).client()


def _profile_entry(table: Mapping[str, str], name: str, what: str) -> str:
    """`table[name]`; the test is not exercised when the profile lacks it (`what` says which)."""
    if name not in table:
        pytest.skip(f"{NOT_EXERCISED_PREFIX}the profile has no {what}")
    return table[name]


@pytest.fixture
def key(profile: TargetProfile) -> Callable[[str], str]:
    return lambda role: _profile_entry(profile.keys, role, f"key for role {role!r}")


@pytest.fixture
def fixture_id(profile: TargetProfile) -> Callable[[str], str]:
    return lambda name: _profile_entry(profile.fixtures, name, f"fixture {name!r}")


@pytest.fixture
def admin(request: pytest.FixtureRequest) -> Iterator[AdminClient]:
    """The admin API; the target is reset after the test (tests using it change state).

    A test that holds only the limits organisation alone (`exclusive`, suite/exclusive.py) puts
    back only that organisation: a whole reset would disturb the tests running beside it.
    """
    state = _state(request.config)
    api = state.admin()
    api.changed.clear()
    yield api
    _put_back(state, request.node)


def _put_back(state: _RunState, node: pytest.Item) -> None:
    """After a test that changed the target through the admin API: a reset, or where the test
    held only some resources alone, a restore of just those (suite/exclusive.py: `cleanup`)."""
    api = state.admin()
    alone, _ = holdings(node)
    plan = cleanup(alone, frozenset(api.changed))
    if plan.reset:
        api.reset()
    for role in plan.restore_roles:
        if role in state.profile().keys:
            api.restore(role)
    if plan.undeclared:  # a declaration that no longer matches what the scenario does
        raise HarnessFailure(
            f"{node.nodeid} holds only {', '.join(sorted(alone))} alone "
            f"(@pytest.mark.exclusive) but changed {', '.join(sorted(plan.undeclared))}"
        )


class ChangeMaker:
    """Makes one change of the catalogue (spec/changes.yaml) on the target: with the command the
    profile's `[changes]` names for it, else through the admin API; a target with neither leaves
    the test "not exercised". After the test the target is put back: the profile's `undo`
    command, or through the admin API as after any test that used it (`_put_back`: a reset, or
    a restore of what the test held alone) (target/changes.py)."""

    def __init__(self, state: _RunState, node: pytest.Item) -> None:
        self._state = state
        self._node = node
        self._made: str | None = None  # "command" or "admin"

    def make(self, name: str, admin_path: str, body: Any, values: Mapping[str, object]) -> None:
        profile = self._state.profile()
        commands = profile.changes
        if commands is not None and name in commands.commands:
            outcome = run_change(commands, name, values)
            self._made = "command"  # a command that failed half way is undone too
            if not outcome.made:
                pytest.skip(NOT_EXERCISED_PREFIX + outcome.reason)
        elif profile.admin is not None:
            api = self._state.admin()
            api.changed.clear()
            self._made = "admin"
            api.call("POST", admin_path, body)
        else:
            pytest.skip(
                NOT_EXERCISED_PREFIX
                + f"the profile names no way to make {name} ([changes] command or [admin])"
            )

    def undo(self) -> None:
        commands = self._state.profile().changes
        if self._made == "command" and commands is not None and commands.undo:
            run_change(commands, "undo", {})
        elif self._made == "admin":
            _put_back(self._state, self._node)


@pytest.fixture
def changes(request: pytest.FixtureRequest) -> Iterator[ChangeMaker]:
    """Makes the changes of the change catalogue; the target is put back after the test."""
    maker = ChangeMaker(_state(request.config), request.node)
    yield maker
    maker.undo()
