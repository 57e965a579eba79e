"""`certify-client`: run the partner's flows through the referee proxy, scenario by scenario,
judge them, and fold the results into the harness's usual run summary.

For each scenario: a fresh working folder (`{state}`), a fresh proxy with the scenario's
injections and its own journal file, then the plan's flow command `runs` times (each bounded by
the plan's `timeout`, killed with its process group past it), the export command after each run
when the scenario reads state, the judges, the server checks over the untouched answers, and the
search of the flow's output for every secret the proxy handed out.

A scenario's flow missing from the plan: its requirements are "not exercised" (never passed).
A flow command the shell cannot find (exit 126/127): the certification stops with a one-line
usage error (exit 2). A flow that hangs, fails where the scenario expects success, or makes no
request: a finding charged to no requirement (the run fails, no certificate).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from delivery_conformance.certify import judges
from delivery_conformance.certify.injections import Injector
from delivery_conformance.certify.journal import LEAK_RULES, Entry, Journal, SecretBook
from delivery_conformance.certify.judges import FlowRun, JudgeResult, Observation
from delivery_conformance.certify.plan import Plan
from delivery_conformance.certify.proxy import RefereeProxy
from delivery_conformance.certify.scenarios import Scenario
from delivery_conformance.checks.common import judge_exchanges
from delivery_conformance.evidence import events
from delivery_conformance.evidence.events import Outcome
from delivery_conformance.evidence.violation import Severity, Violation
from delivery_conformance.exceptions import HarnessFailure, UsageError
from delivery_conformance.reports.results import RunSummary, Status, summarise
from delivery_conformance.spec.requirements import Requirement, Role
from delivery_conformance.target.profile import TargetProfile

__all__ = ["CertifyOptions", "Upstream", "certify", "check_upstream", "embedded_upstream"]

EXPORT_TIMEOUT = 30.0
UPSTREAM_PROBE_TIMEOUT = 5.0
# Keys of the embedded sandbox's profile used per flow (a real organisation gives one key).
FLOW_KEYS = {
    "catalog": "films", "catalog_paged": "films", "config": "films",
    "creatives": "films_creatives", "playback": "films_playback",
    "playback_encrypted": "films_playback", "playback_batch": "films_playback",
    "series": "films", "playlists": "videos", "download": "films_creatives", "watch": "films",
    "videos_follow": "videos",
}  # fmt: skip


@dataclass(frozen=True)
class Upstream:
    base_url: str
    keys: Mapping[str, str]  # flow -> key (the same key for every flow on a real organisation)
    vars: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CertifyOptions:
    journal_dir: Path
    expected_failures: Mapping[tuple[str, str], str] = field(default_factory=dict)
    python: str = ""  # not used by the runner; kept for the certificate


# Built-in {placeholders} filled from the embedded sandbox's fixtures (each is checked for
# what its name says against the sandbox: tests/harness/test_certify_placeholders.py):
#   episode    a ready signed-url-only episode (a ticket with manifest_url, no device values)
#   episode_2  another ready episode of the same film (so a batch of the two needs none either)
#   creative   a creative whose final render is ready
#   episode_encrypted  a ready private-encrypted episode (a ticket with play_auth_token when
#              the request carries device values: {union_info} and {drm_kek}, made-up values
#              of the player SDK's shape, at least 8 characters)
SANDBOX_VARS = {"episode": "episode_signed", "creative": "creative_id",
                "episode_encrypted": "episode_encrypted"}  # fmt: skip
DEVICE_VARS = {"union_info": "referee-device-7f3a21", "drm_kek": "referee-public-key-9c0e44"}
# {viewer}: the app's account of the viewer a flow plays for, a made-up person's email address
# (personal data: no part of it may reach `viewer_ref`, PLAY-025); built in for every upstream.
VIEWER_VARS = {"viewer": "ada.lovelace.k7f3@example.org"}
STATE_FILE_CAP = 256 * 1024 * 1024  # bytes of one state file searched for stored links


def embedded_upstream(profile: TargetProfile) -> Upstream:
    """The embedded sandbox as the upstream: a key per flow and fixtures as placeholders."""
    keys = {flow: profile.keys[name] for flow, name in FLOW_KEYS.items()}
    values = {var: str(profile.fixtures[name]) for var, name in SANDBOX_VARS.items()}
    values["episode_2"] = second_episode(profile.base_url, keys["catalog"], values["episode"])
    return Upstream(profile.base_url, keys, {**values, **DEVICE_VARS})


def second_episode(base_url: str, key: str, first: str) -> str:
    """Another published, stream-ready episode with a ready video (`vid_ready` true) of the film
    `first` belongs to, read from the catalog (the fixtures name a single one)."""
    url = f"{base_url.rstrip('/')}/api/delivery/v1/catalog"
    try:
        response = httpx.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        episodes = response.json().get("episodes") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        episodes = []
    film = next((e.get("film_id") for e in episodes if isinstance(e, dict)
                 and e.get("id") == first), None)  # fmt: skip
    for episode in episodes:
        if (
            isinstance(episode, dict) and film is not None and episode.get("film_id") == film
            and isinstance(episode.get("id"), str) and episode["id"] != first
            and episode.get("status") == "published" and episode.get("stream_ready") is True
            and episode.get("vid_ready") is True
        ):  # fmt: skip
            return str(episode["id"])
    raise HarnessFailure(f"upstream {base_url}: no second ready episode beside {first} in the "
                         "catalog, so {episode_2} has no value")  # fmt: skip


def check_upstream(base_url: str, key: str) -> None:
    """One GET /config within 5 s, any HTTP answer: else a one-line `HarnessFailure`."""
    try:
        headers = {"Authorization": f"Bearer {key}"}
        url = f"{base_url.rstrip('/')}/api/delivery/v1/config"
        httpx.get(url, headers=headers, timeout=UPSTREAM_PROBE_TIMEOUT)
    except httpx.HTTPError as error:
        raise HarnessFailure(
            f"upstream {base_url} does not answer ({type(error).__name__}); nothing was certified"
        ) from None


@dataclass
class _Command:
    exit_code: int | None
    output: str
    duration: float


def _run_shell(command: str, env: Mapping[str, str], cwd: Path, timeout: float) -> _Command:
    started = time.monotonic()
    process = subprocess.Popen(
        ["/bin/sh", "-c", command], cwd=cwd, env=dict(env), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = process.communicate(timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
        code = None
    return _Command(code, out.decode("utf-8", "replace"), time.monotonic() - started)


def _values(upstream_vars: Mapping[str, str], plan: Plan, workdir: Path) -> dict[str, str]:
    """The placeholders of a scenario's commands: the built-in ones shell-quoted (`{state}`,
    `{plan_dir}` when the plan came from a file, the upstream's fixtures), then the plan's [vars]
    as written, with the built-in placeholders they name filled in (nothing else in them is
    touched: a var is shell text, `${HOME}` included)."""
    builtin = {**VIEWER_VARS, **upstream_vars, "state": str(workdir)}
    if plan.plan_dir is not None:
        builtin["plan_dir"] = plan.plan_dir
    quoted = {k: shlex.quote(v) for k, v in builtin.items()}
    named = re.compile(r"\{(" + "|".join(map(re.escape, sorted(quoted))) + r")\}")
    own = {k: named.sub(lambda m: quoted[m.group(1)], v) for k, v in plan.vars.items()}
    return {**quoted, **own}


def _fill(template: str, values: Mapping[str, str], where: str) -> str:
    """Placeholders of a command: built-in values are shell-quoted, plan [vars] are not (the
    plan's author writes them as shell text, e.g. a command prefix)."""
    try:
        return template.format(**values)
    except (KeyError, IndexError) as error:
        raise UsageError(f"plan: {where} uses {{{error.args[0]}}}, which no [vars] entry "
                         "or built-in placeholder gives") from None  # fmt: skip
    except ValueError as error:
        raise UsageError(f"plan: {where}: {error}") from None


def _violation(rid: str, result: JudgeResult, base: str, title: str) -> Violation:
    lines = ", ".join(e.line() for e in result.entries[:4])
    actual = result.actual + (f" (journal {lines})" if lines else "")
    exchange = result.entries[-1].exchange(base) if result.entries else None
    return Violation(rid, title, result.expected, actual, exchange)


def _finding(title: str, expected: str, actual: str) -> Violation:
    return Violation("", title, expected, actual)


class _ScenarioRun:
    def __init__(
        self, scenario: Scenario, plan: Plan, upstream: Upstream, options: CertifyOptions,
        secrets: SecretBook,
    ) -> None:  # fmt: skip
        self.scenario, self.plan, self.upstream = scenario, plan, upstream
        self.options, self.secrets = options, secrets

    def run(self) -> list[events.TestFinished]:
        scenario, plan = self.scenario, self.plan
        started = time.monotonic()
        if scenario.flow not in plan.flows:
            why = f"the plan has no {scenario.flow} flow"
            return [self._test(n, e.requirement, Outcome.NOT_EXERCISED, why)
                    for n, e in enumerate(scenario.expectations)]  # fmt: skip
        if scenario.export and plan.export is None:
            why = "the plan has no [export] command, so state outcomes cannot be judged"
            return [self._test(n, e.requirement, Outcome.NOT_EXERCISED, why)
                    for n, e in enumerate(scenario.expectations)]  # fmt: skip
        workdir = Path(tempfile.mkdtemp(prefix=f"certify-{scenario.id}-"))
        journal_path = self.options.journal_dir / f"{scenario.id}.jsonl"
        journal_path.unlink(missing_ok=True)
        journal = Journal(journal_path)
        findings: list[Violation] = []
        runs: list[FlowRun] = []
        leaks: list[tuple[str, str, int]] = []
        stored: list[tuple[str, str, int]] = []
        try:
            with RefereeProxy(self.upstream.base_url, journal=journal,
                              injector=Injector(list(scenario.injections)),
                              secrets=self.secrets) as proxy:  # fmt: skip
                values = _values(self.upstream.vars, plan, workdir)
                command = _fill(plan.flows[scenario.flow], values, f"flow {scenario.flow}")
                env = {**os.environ, "DELIVERY_BASE_URL": proxy.base_url,
                       "DELIVERY_API_KEY": self.upstream.keys[scenario.flow]}  # fmt: skip
                base = proxy.base_url
                for phase in range(1, scenario.runs + 1):
                    proxy.phase = phase
                    before = len(journal.entries())
                    result = _run_shell(command, env, workdir, plan.timeout)
                    ended_wall = time.time()
                    proxy.settle()
                    if result.exit_code in (126, 127):
                        raise UsageError(f"plan: flow {scenario.flow}: the shell cannot run "
                                         f"it (exit {result.exit_code}): "
                                         f"{_last(result.output, self.secrets)}")  # fmt: skip
                    leaks += [(kind, masked, phase)
                              for kind, masked in self.secrets.leaks(result.output)]  # fmt: skip
                    findings += self._flow_findings(result, phase, len(journal.entries()) - before)
                    export = self._export(env, workdir, values, phase, findings)
                    stored += [
                        (kind, masked, phase) for kind, masked in self._stored(workdir, export)
                    ]
                    runs.append(
                        FlowRun(phase, result.exit_code, result.duration, export, ended_wall)
                    )
        finally:
            journal.close()
            shutil.rmtree(workdir, ignore_errors=True)
        entries = tuple(journal.entries())
        seen = frozenset(self.secrets.values.values())
        obs = Observation(entries, tuple(runs), seen, tuple(leaks), tuple(dict.fromkeys(stored)),
                          plan.per_item_failure_exit, tuple(VIEWER_VARS.values()))  # fmt: skip
        tests = self._judge(obs, base)
        if any(t.outcome is Outcome.FAILED for t in tests):  # the failure explains the exit
            findings = [f for f in findings if not f.title.endswith(" failed")]
        for kind, masked, phase in leaks:
            rule = LEAK_RULES.get(kind, "")
            if not any(e.requirement == rule for e in scenario.expectations):
                findings.append(Violation(rule, f"{kind} printed by the client",
                                          "no secret in the client's output",
                                          f"{kind} {masked} in run {phase}"))  # fmt: skip
        server = judge_exchanges(
            [e.exchange(base) for e in entries if not e.injected and e.status is not None]
        )
        server = tuple(replace(v, title=f"server finding: {v.title}") for v in server)
        duration = time.monotonic() - started
        if findings:
            tests.append(events.TestFinished(f"{scenario.id}::flow", (), Outcome.FAILED,
                                      violations=tuple(findings), duration=duration))  # fmt: skip
        if server:
            ids = tuple(dict.fromkeys(v.requirement_id for v in server))
            tests.append(events.TestFinished(f"{scenario.id}::server", ids, Outcome.FAILED,
                                      violations=server, duration=duration))  # fmt: skip
        return tests

    def _flow_findings(self, result: _Command, phase: int, requests: int) -> list[Violation]:
        name = self.scenario.flow
        if result.exit_code is None:
            return [_finding(f"flow {name} did not finish", f"done within {self.plan.timeout:g} s",
                             f"killed after {result.duration:.1f} s (run {phase})")]  # fmt: skip
        found = []
        if requests == 0:
            found.append(_finding(f"flow {name} made no request",
                                  "the flow calls the API through DELIVERY_BASE_URL",
                                  f"no request reached the proxy (run {phase}, exit "
                                  f"{result.exit_code})"))  # fmt: skip
        elif result.exit_code not in (accepted := self._accepted_exits()):
            shown = " or ".join(str(c) for c in sorted(accepted))
            found.append(_finding(f"flow {name} failed", f"exit {shown}",
                                  f"exit {result.exit_code} (run {phase}): "
                                  f"{_last(result.output, self.secrets)}"))  # fmt: skip
        return found

    def _accepted_exits(self) -> set[int]:
        """The exit statuses that finish this scenario's flow (scenarios.py, `exit`): every
        status but a hang where the answers may rightly make the flow give up; 0, and the
        plan's `per_item_failure_exit` where an item is refused; else 0 only."""
        if self.scenario.exit == "any":
            return set(range(256))
        item_exit = self.plan.per_item_failure_exit
        if self.scenario.exit == "handled" and item_exit is not None:
            return {0, item_exit}
        return {0}

    def _stored(self, workdir: Path, export: Any) -> list[tuple[str, str]]:
        """Links of the kinds a `not_stored` judge names, kept in the client's state folder
        (`{state}`) or in its exported state, after a run."""
        kinds = {str(k) for e in self.scenario.expectations if e.judge == "not_stored"
                 for k in e.params.get("kinds", ())}  # fmt: skip
        if not kinds:
            return []
        found = self.secrets.stored(json.dumps(export).encode(), kinds) if export else []
        for path in sorted(workdir.rglob("*")):
            if path.is_file() and not path.is_symlink():
                with path.open("rb") as handle:
                    found += self.secrets.stored(handle.read(STATE_FILE_CAP), kinds)
        return found

    def _export(
        self, env: Mapping[str, str], workdir: Path, values: Mapping[str, str], phase: int,
        findings: list[Violation],
    ) -> Any:  # fmt: skip
        if not self.scenario.export or self.plan.export is None:
            return None
        command = _fill(self.plan.export, values, "[export] command")
        result = _run_shell(command, env, workdir, EXPORT_TIMEOUT)
        try:
            if result.exit_code != 0:
                raise ValueError(f"exit {result.exit_code}")
            return json.loads(result.output[result.output.index("{") :])
        except ValueError as error:
            findings.append(_finding("the export command failed", "a JSON object on stdout",
                                     f"{error} after run {phase}"))  # fmt: skip
            return None

    def _test(
        self, n: int, rid: str, outcome: Outcome, reason: str = "",
        violations: tuple[Violation, ...] = (), exchanges: Sequence[Entry] = (), base: str = "",
    ) -> events.TestFinished:  # fmt: skip
        expectation = self.scenario.expectations[n]
        nodeid = f"{self.scenario.id}::{rid}::{expectation.judge}"
        checked = (rid,) if outcome is not Outcome.NOT_EXERCISED else ()
        shown = tuple(e.exchange(base) for e in exchanges[:4])
        return events.TestFinished(
            nodeid, (rid,), outcome, reason, violations, shown, checked=checked
        )

    def _standing(self, obs: Observation, base: str) -> list[events.TestFinished]:
        """The standing rules of this scenario's flow (judges.STANDING) that it does not judge
        itself: only a failure is reported (charged to the rule, like a printed secret)."""
        own = {e.requirement for e in self.scenario.expectations}
        tests = []
        for flows, rid, name, params in judges.STANDING:
            if self.scenario.flow not in flows or rid in own:
                continue
            result = judges.JUDGES[name](obs, params)
            if result.status == judges.FAILED:
                title = f"{rid} not met in {self.scenario.id}"
                tests.append(events.TestFinished(
                    f"{self.scenario.id}::{rid}::{name}", (rid,), Outcome.FAILED, "",
                    (_violation(rid, result, base, title),),
                    tuple(e.exchange(base) for e in result.entries[:4]), checked=(rid,),
                ))  # fmt: skip
        return tests

    def _judge(self, obs: Observation, base: str) -> list[events.TestFinished]:
        tests = self._standing(obs, base)
        accepted = self._accepted_exits()
        stopped = bool(tests) and any(r.exit_code not in accepted for r in obs.runs)
        for n, expectation in enumerate(self.scenario.expectations):
            rid = expectation.requirement
            result = judges.JUDGES[expectation.judge](obs, expectation.params)
            reason = self.options.expected_failures.get((self.scenario.id, rid))
            if (result.status == judges.FAILED and stopped
                    and expectation.judge in judges.FINISH_JUDGES):  # fmt: skip
                why = "the flow did not finish: it broke " + ", ".join(
                    t.requirement_ids[0] for t in tests
                )
                result = replace(result, status=judges.NOT_EXERCISED, actual=why)
            if result.status == judges.FAILED:
                title = f"{rid} not met in {self.scenario.id}"
                found = _violation(rid, result, base, title)
                if reason is not None:
                    found = replace(found, title=f"expected failure ({reason})",
                                    severity=Severity.WARNING)  # fmt: skip
                tests.append(self._test(n, rid, Outcome.FAILED, "", (found,), result.entries,
                                        base))  # fmt: skip
            elif result.status == judges.PASSED and reason is not None:
                found = Violation(rid, "an expected failure did not happen",
                                  f"a failure ({reason})", f"passed: {result.actual}")  # fmt: skip
                tests.append(self._test(n, rid, Outcome.FAILED, "", (found,)))
            elif result.status == judges.PASSED:
                tests.append(self._test(n, rid, Outcome.PASSED, result.actual, (),
                                        result.entries, base))  # fmt: skip
            else:
                assert result.status == judges.NOT_EXERCISED
                tests.append(self._test(n, rid, Outcome.NOT_EXERCISED,
                                        f"not exercised: {result.actual}"))  # fmt: skip
        return tests


def _last(output: str, secrets: SecretBook) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return secrets.redactor().text(lines[-1][:200]) if lines else "no output"


def certify(
    plan: Plan,
    scenarios: Iterable[Scenario],
    upstream: Upstream,
    requirements: Mapping[str, Requirement],
    options: CertifyOptions,
    *,
    progress: Any = None,
    secrets: SecretBook | None = None,
) -> RunSummary:
    """Run every scenario and return the summary (client rules first, server findings apart).
    `secrets` collects every secret the proxies handed out (for the certificate's journals)."""
    started_wall, started = time.time(), time.monotonic()
    options.journal_dir.mkdir(parents=True, exist_ok=True)
    secrets = secrets if secrets is not None else SecretBook()
    start = events.RunStarted(upstream.base_url, started_wall, None, False, events.RunPolicy())
    run: list[events.Event] = [start]
    for scenario in scenarios:
        tests = _ScenarioRun(scenario, plan, upstream, options, secrets).run()
        run += tests
        if progress is not None:
            progress(scenario, tests)
    duration = time.monotonic() - started
    run.append(events.RunFinished(time.time(), duration, 0))
    summary = summarise(requirements, run, extra={"kind": "client certification",
                                                     "plan": plan.name})  # fmt: skip
    client = tuple(r for r in summary.client_requirements)
    server = tuple(r for r in summary.requirements
                   if r.status in (Status.FAILED, Status.WARNING))  # fmt: skip
    return replace(summary, requirements=client + server, client_requirements=())


def client_ids(requirements: Mapping[str, Requirement]) -> list[str]:
    return [r.id for r in requirements.values() if r.role is Role.CLIENT]
