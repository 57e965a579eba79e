"""Locust 2 plumbing shared by every campaign file (FastHttpUser, open model, raw records).

Flow: the master (or the single local runner) prepares the target on `test_start` (admin steps,
/config, the UTC minute when needed), fixes the campaign start a few seconds ahead and sends the
plan to every worker (`load_plan`). Each generator process takes its share of the requests
(every N-th) and sends each at its due time; users of one process share one queue of slots, so
a slow answer never delays the next request. When a process has sent and heard back its share,
it ships its raw records to the master (`load_records`, `load_done`); the master merges them,
judges the run and quits. Expected 429s count as successes in Locust's statistics; wrong bodies
or headers are failures.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import gevent
from gevent.event import Event
from locust import FastHttpUser, events, task
from locust.env import Environment
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

from delivery_conformance.load.records import Record, merge_files, write_records
from delivery_conformance.load.schedule import Plan, Stage
from loadtests.campaigns import CAMPAIGNS, ENDPOINTS, Campaign
from loadtests.exchange import playback_body, read_answer
from loadtests.finish import finish, prepare, report_dir, write_failure
from loadtests.target import CampaignError, Target

__all__ = ["CampaignUser", "use_campaign"]

LEAD_S = 1.0
WORKER_RECORDS_WAIT_S = 10.0
# A target failing this often is not measured any further: the campaign stops early (exit 3).
ABORT_FAILURES = 50
ABORT_SHARE = 0.5
CHUNK = 2000
PLAN_WAIT_S = 60.0


class _Process:
    """What one generator process knows and has measured."""

    def __init__(self) -> None:
        self.campaign: Campaign | None = None
        self.plan: Plan | None = None
        self.start = 0.0
        self.episode = ""
        self.worker = "local"
        self.ready = Event()
        self.queue: list[int] = []
        self.inflight = 0
        self.records: list[Record] = []
        self.answered: dict[int, float] = {}
        self.done_events: dict[int, Event] = {}
        self.flushed = False
        self.failures = 0  # answers that were no answer or a 5xx
        self.aborted: str | None = None
        self.interrupted = False
        self.target: Target | None = None
        # master side
        self.received: list[Record] = []
        self.done_workers: set[str] = set()
        self.expected_workers = 1
        self.context: dict[str, Any] = {}
        self.finished = False


STATE = _Process()


def use_campaign(name: str) -> None:
    """Called by each campaign file: which campaign this Locust process runs."""
    STATE.campaign = CAMPAIGNS[name]


def _stages_to_json(stages: tuple[Stage, ...]) -> list[dict[str, Any]]:
    return [asdict(s) for s in stages]


def _stages_from_json(data: list[dict[str, Any]]) -> list[Stage]:
    return [
        Stage(**{**d, "batch": tuple(d["batch"]), "extra": tuple(map(tuple, d["extra"]))})
        for d in data
    ]


def _accept_plan(message: dict[str, Any], environment: Environment) -> None:
    workers, index = int(message["workers"]), 0
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        index = max(runner.worker_index, 0) % workers
        STATE.worker = f"w{index}"
        if STATE.target is None:
            # its profile could not be read (said at start): it sends nothing, tells the master
            # it is done with no record (the run is invalid for its share) and leaves, exit 2
            runner.send_message("load_done", {"worker": STATE.worker, "count": 0})
            environment.process_exit_code = 2
            gevent.spawn_later(0.5, runner.quit)
            return
    STATE.plan = Plan(_stages_from_json(message["stages"]))
    STATE.start = float(message["start"])
    STATE.episode = message["episode"]
    STATE.queue = STATE.plan.order(index, workers)[::-1]
    STATE.done_events = {i: Event() for i in range(STATE.plan.total)}
    STATE.ready.set()


@events.init_command_line_parser.add_listener
def _arguments(parser: Any) -> None:
    parser.add_argument("--target-profile", default="", help="target profile TOML (required)")
    parser.add_argument("--report-dir", default="", help="where verdict.json and records go")
    parser.add_argument(
        "--declared-scale",
        type=float,
        default=0.0,
        help="the target's declared limits scale (sandbox --limits-scale)",
    )
    parser.add_argument(
        "--campaign-duration",
        type=float,
        default=0.0,
        help="length in seconds of a timed campaign (mixed, soak)",
    )
    parser.add_argument(
        "--allow-production",
        action="store_true",
        default=False,
        help="allow a target whose /config says it is not a test organisation",
    )


@events.init.add_listener
def _init(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    options = environment.parsed_options
    path = getattr(options, "target_profile", "") if options else ""
    if path:
        try:
            STATE.target = Target.from_file(path)
            if not environment.host:
                environment.host = STATE.target.base_url
        except CampaignError as error:
            sys.stderr.write(f"load: {error}\n")
    if isinstance(runner, WorkerRunner):
        runner.register_message("load_plan", lambda msg, **kw: _accept_plan(msg.data, environment))
        runner.register_message("load_stop", lambda msg, **kw: _stop_worker(environment))
    elif isinstance(runner, MasterRunner):
        runner.register_message(
            "load_records",
            lambda msg, **kw: STATE.received.extend(
                Record.from_json(r) for r in msg.data["records"]
            ),
        )
        runner.register_message("load_done", lambda msg, **kw: _worker_done(msg.data, environment))


def _stop_worker(environment: Environment) -> None:
    """The master was interrupted: send nothing more, ship what was measured."""
    STATE.interrupted = True
    STATE.queue.clear()
    _flush(environment)


def _worker_done(data: dict[str, Any], environment: Environment) -> None:
    STATE.done_workers.add(str(data["worker"]))
    if len(STATE.done_workers) >= STATE.expected_workers:
        _conclude(environment, STATE.received)


@events.test_start.add_listener
def _test_start(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    if isinstance(runner, WorkerRunner) or STATE.campaign is None:
        return
    options = environment.parsed_options
    workers = runner.worker_count if isinstance(runner, MasterRunner) else 1
    STATE.expected_workers = workers
    try:
        if STATE.target is None:
            raise CampaignError("no usable --target-profile was given", exit_code=2)
        if STATE.campaign.single_worker and workers > 1:
            raise CampaignError(
                f"campaign {STATE.campaign.name} runs on one worker only", exit_code=2
            )
        # time to spawn every user before the first request is due
        lead = LEAD_S + getattr(runner, "target_user_count", 0) / 400
        plan, start, context = prepare(
            STATE.campaign,
            STATE.target,
            time.time() + lead,
            declared_scale=getattr(options, "declared_scale", 0.0) or None,
            allow_production=bool(getattr(options, "allow_production", False)),
            duration=getattr(options, "campaign_duration", 0.0) or None,
        )
    except CampaignError as error:
        write_failure(environment, STATE.campaign, str(error), error.exit_code)
        if runner is not None:
            gevent.spawn_later(0.1, runner.quit)
        return
    names = [f"w{i}" for i in range(workers)] if isinstance(runner, MasterRunner) else ["local"]
    context["planned_by_worker"] = {
        name: plan.requests_of(i, len(names)) for i, name in enumerate(names)
    }
    STATE.context = context
    message = {
        "stages": _stages_to_json(plan.stages),
        "start": start,
        "workers": workers,
        "episode": context["episode"],
    }
    if isinstance(runner, MasterRunner):
        runner.send_message("load_plan", message)
    else:
        _accept_plan(message, environment)


@events.quitting.add_listener
def _quitting(environment: Environment, **_: Any) -> None:
    """Ctrl-C or SIGTERM: judge what was measured before Locust picks its exit code. The master
    first gives the workers (signalled with it) a moment to ship their records."""
    if STATE.finished or STATE.campaign is None:
        return
    STATE.interrupted = True
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        _stop_worker(environment)
        return
    records = STATE.records
    if isinstance(runner, MasterRunner):
        # Workers may not have been signalled: ask them to stop. Each leaves its records in a
        # file of the report directory (messages to a master that is shutting down get lost).
        runner.send_message("load_stop", {})
        directory = report_dir(environment, STATE.campaign.name)
        deadline = time.monotonic() + WORKER_RECORDS_WAIT_S
        files: list[Path] = []
        while time.monotonic() < deadline:
            files = sorted(directory.glob("records-w*.jsonl"))
            if len(files) >= STATE.expected_workers:
                break
            gevent.sleep(0.1)
        records = merge_files(files) if files else STATE.received
    if not STATE.finished:
        _conclude(environment, records, stopped_early=True)


@events.test_stop.add_listener
def _test_stop(environment: Environment, **_: Any) -> None:
    # Stopped from outside (run time bound, Ctrl-C): ship or judge what was measured.
    if isinstance(environment.runner, WorkerRunner):
        _flush(environment)
    elif not STATE.finished and STATE.campaign is not None and STATE.ready.is_set():
        records = (
            STATE.records if not isinstance(environment.runner, MasterRunner) else STATE.received
        )
        _conclude(environment, records, stopped_early=True)


def _flush(environment: Environment) -> None:
    if STATE.flushed:
        return
    STATE.flushed = True
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        if STATE.campaign is not None:
            _keep_records_file(environment, STATE.campaign.name)
        for i in range(0, len(STATE.records), CHUNK):
            chunk = [r.to_json() for r in STATE.records[i : i + CHUNK]]
            runner.send_message("load_records", {"records": chunk})
        runner.send_message("load_done", {"worker": STATE.worker, "count": len(STATE.records)})
    else:
        _conclude(environment, STATE.records)


def _keep_records_file(environment: Environment, campaign: str) -> None:
    """A worker's records in a file of the report directory too, for an interrupted master on
    the same host that may miss the messages. Best effort: a worker on another host (a container
    user that may not write there, a pod without the master's volume) sends them by message
    only, which is how a master on another host gets them anyway."""
    try:
        directory = report_dir(environment, campaign)
        part = directory / f"records-{STATE.worker}.jsonl.part"
        write_records(part, list(STATE.records))
        part.rename(directory / f"records-{STATE.worker}.jsonl")
    except OSError as error:
        sys.stderr.write(
            f"load: worker {STATE.worker} keeps no records file ({type(error).__name__}: "
            f"{error.strerror or error}); its records go to the master by message only\n"
        )


def _conclude(environment: Environment, records: list[Record], stopped_early: bool = False) -> None:
    if STATE.finished or STATE.campaign is None or STATE.target is None:
        return
    STATE.finished = True
    stopped_early = stopped_early or STATE.interrupted
    context = {**STATE.context, "aborted": STATE.aborted}
    finish(environment, STATE.campaign, STATE.target, records, context, stopped_early)
    if environment.runner is not None and not stopped_early:
        gevent.spawn_later(0.2, environment.runner.quit)


class CampaignUser(FastHttpUser):
    """Sends the slots of the plan at their due time and records every answer."""

    network_timeout = 15.0
    connection_timeout = 5.0

    @task
    def follow_plan(self) -> None:
        if not STATE.ready.wait(PLAN_WAIT_S) or STATE.plan is None:
            raise StopUser()
        while STATE.queue:
            index = STATE.queue.pop()
            STATE.inflight += 1
            try:
                self._slot(index)
            finally:
                STATE.inflight -= 1
                STATE.done_events[index].set()
        if STATE.inflight == 0:
            _flush(self.environment)
        raise StopUser()

    def _slot(self, index: int) -> None:
        assert STATE.plan is not None
        slot = STATE.plan.slot(index)
        stage = slot.stage
        due = STATE.start + slot.offset
        if not stage.open and index > 0:
            STATE.done_events[index - 1].wait(60)
            due = max(due, STATE.answered.get(index - 1, due))
        wait = due - time.time()
        if wait > 0:
            gevent.sleep(wait)
        if stage.endpoint == "admin":
            self._admin(stage)
            STATE.answered[index] = time.time()
            return
        choices = stage.endpoint.split("|")
        name = choices[index % len(choices)]
        record = self._send(index, stage, name, due)
        STATE.answered[index] = record.answered
        STATE.records.append(record)
        if record.status == 0 or record.status >= 500:
            STATE.failures += 1
            if (
                STATE.failures >= ABORT_FAILURES
                and STATE.failures > ABORT_SHARE * len(STATE.records)
                and STATE.aborted is None
            ):
                STATE.aborted = (
                    f"target failing: {STATE.failures} of {len(STATE.records)} "
                    "answers were 5xx or no answer; campaign stopped early"
                )
                STATE.queue.clear()

    def _admin(self, stage: Stage) -> None:
        assert STATE.target is not None
        extra = dict(stage.extra)
        STATE.target.role_action(extra.get("role", "limits"), extra["action"])

    def _send(self, index: int, stage: Stage, name: str, due: float) -> Record:
        assert STATE.target is not None
        endpoint = ENDPOINTS[name]
        headers = STATE.target.headers(dict(stage.extra).get("role", endpoint.role))
        kwargs: dict[str, Any] = {}
        if endpoint.method == "POST":
            kwargs["json"] = playback_body(stage, STATE.episode)
        if stage.simulate:
            headers["Service-Simulate"] = stage.simulate
        sent = time.time()
        with self.client.request(
            endpoint.method,
            endpoint.path,
            headers=headers,
            catch_response=True,
            name=f"{stage.name} {name}",
            **kwargs,
        ) as answer:
            answered = time.time()
            record = read_answer(
                seq=index,
                worker=STATE.worker,
                stage=stage,
                endpoint=name,
                due=due,
                sent=sent,
                answered=answered,
                status=answer.status_code or 0,
                headers=answer.headers or {},
                content=answer.content,
            )
            if record.problem:
                answer.failure(record.problem)
            else:
                answer.success()
        return record
