"""Before and after a campaign: prepare the target, then judge the records and write the report.

Report directory (per run): verdict.json, records.jsonl, admitted.png, refusals.png,
latency.png, plus Locust's own HTML and CSV when asked for (`loadtests.run` asks).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

from locust.env import Environment

from delivery_conformance.load.analysis import ANALYSES
from delivery_conformance.load.plots import write_latency_table, write_plots
from delivery_conformance.load.records import Record, sort_records, write_records
from delivery_conformance.load.schedule import Plan, assess_workers
from delivery_conformance.load.verdict import Expectations, Verdict
from loadtests.campaigns import Campaign
from loadtests.target import CampaignError, Target

__all__ = ["finish", "prepare", "report_dir", "write_failure"]

START_MARGIN_S = 0.5  # at least this long between the end of the set-up and the first request
IDLE_S = 60.0  # without an admin API a bucket is full again after a minute idle


def report_dir(environment: Environment, campaign: str) -> Path:
    options = environment.parsed_options
    given = getattr(options, "report_dir", "") if options else ""
    path = (
        Path(given)
        if given
        else (Path("reports") / "load" / f"{campaign}-{time.strftime('%Y%m%dT%H%M%S')}")
    )
    path.mkdir(parents=True, exist_ok=True)
    return path


def _minute_after(moment: float) -> float:
    return math.ceil(moment / 60.0) * 60.0


def prepare(
    campaign: Campaign,
    target: Target,
    start: float,
    declared_scale: float | None,
    allow_production: bool,
    duration: float | None = None,
) -> tuple[Plan, float, dict[str, Any]]:
    """Admin steps, /config and the start time; returns the plan, its start and the context."""
    rtt = target.round_trip()
    config = target.config(campaign.config_role)
    fetched = time.time()
    target.check_test_organisation(config, allow_production)
    try:
        exp = Expectations.from_config(config, declared_scale)
    except ValueError as error:
        raise CampaignError(str(error)) from None
    exp = dataclasses.replace(exp, tenants=target.tenants)
    if campaign.needs_admin and not target.has_admin:
        raise CampaignError(f"not exercised: campaign {campaign.name} needs the admin API")
    if campaign.name in ("minute", "mixed", "soak"):
        target.key("limits_videos")
    episode = target.profile.fixtures.get("episode_encrypted")
    if not episode:
        raise CampaignError("the profile has no fixture episode_encrypted")
    steps = campaign.setup(exp)
    lowered = False
    if target.has_admin:
        for role, action, body in steps:
            target.role_action(role, action, body)
            lowered = lowered or action == "limits"
    elif steps:
        start += IDLE_S  # counters full again from idle
    # A lowered limit is what /config advertises now (LIM-009): the run is judged against it.
    run_exp = (
        dataclasses.replace(
            Expectations.from_config(target.config("limits"), declared_scale),
            tenants=target.tenants,
        )
        if lowered
        else exp
    )
    if lowered:
        target.role_action("limits", "reset-limits")
    run_exp = dataclasses.replace(run_exp, rtt=rtt["max_s"])
    try:
        plan = Plan(campaign.stages(run_exp, duration))
    except ValueError as error:
        raise CampaignError(str(error), exit_code=2) from None
    context: dict[str, Any] = {
        "episode": episode,
        "scale": exp.scale,
        "rtt": rtt,
        "advertised": dict(exp.advertised),
        "lowered": lowered,
        "run_advertised": dict(run_exp.advertised),
    }
    if campaign.default_duration is not None:
        # latency table buckets: a minute for long runs, a fifth of the run for short ones
        context["bucket_s"] = 60.0 if plan.duration >= 300 else max(1.0, plan.duration / 5)
    # the set-up above (admin steps, round trip, /config) may have eaten the lead time
    start = max(start, time.time() + START_MARGIN_S)
    if campaign.boundary_at is not None:
        anchor = campaign.boundary_at(plan)
        if target.has_admin:
            boundary = start + anchor
            server = boundary + target.clock_offset()
            target.advance_clock((-server) % 60.0)
            for role, action, body in steps:
                target.role_action(role, action, body)
        else:
            # the requests of the campaign must not share a minute with the /config call
            boundary = max(
                _minute_after(start + anchor), _minute_after(fetched) + 60.0 * (anchor > 0)
            )
        context["boundary"] = boundary
        start = boundary - anchor
    context["start"] = start
    context["planned"] = plan.total
    context["plan_s"] = round(plan.duration, 3)
    return plan, start, context


def _plot_bounds(campaign: Campaign, exp: Expectations) -> tuple[float | None, float | None]:
    counter = campaign.counters[0]
    if campaign.name in ("burst", "refill", "shedding", "catalog"):
        return exp.limit(counter), exp.rate(counter)
    return None, None


def _target_failure(records: list[Record]) -> str | None:
    broken = [r for r in records if r.status == 0 or r.status >= 500]
    if broken:
        return f"{len(broken)} requests got no answer or a 5xx (first: status {broken[0].status})"
    return None


def finish(
    environment: Environment,
    campaign: Campaign,
    target: Target,
    records: list[Record],
    context: dict[str, Any],
    stopped_early: bool,
) -> Verdict:
    """Undo admin changes, judge the records, write the report; set the process exit code."""
    notes = []
    if context.get("lowered"):
        try:
            limit = context["advertised"].get("playback")
            if limit:
                target.role_action("limits", "limits", {"counter": "playback", "limit": limit})
            target.role_action("limits", "reset-limits")
        except CampaignError as error:
            notes.append(f"teardown: {error}")
    if campaign.default_duration is not None and target.has_admin:
        # mixed leaves the config counter spent for the rest of its minute: start afresh
        try:
            for role in ("limits", "limits_videos"):
                target.role_action(role, "reset-limits")
        except CampaignError as error:
            notes.append(f"teardown: {error}")
    records = sort_records(records)
    exp = Expectations(context["scale"], context["advertised"])
    run_exp = Expectations(context["scale"], context["run_advertised"])
    lateness: dict[str, list[float]] = {}
    for r in records:
        lateness.setdefault(r.worker, []).append(r.lateness)
    planned_by_worker = context.get("planned_by_worker") or {}
    validity = assess_workers(lateness, planned_by_worker, campaign.lateness)
    failure = _target_failure(records)
    if context.get("aborted"):
        failure = str(context["aborted"])
    elif stopped_early:
        failure = "campaign stopped before its plan was complete (time bound or interrupt)"
    figures, details = ANALYSES[campaign.name](records, run_exp, context)
    figures += exp.config_figures(campaign.counters)
    planned = int(context.get("planned", 0))
    last = max((r.due for r in records), default=context.get("start", 0.0))
    details = {
        **details,
        "requests": len(records),
        "notes": notes,
        "progress": {
            "planned": planned,
            "answered": len(records),
            "share": round(len(records) / planned, 4) if planned else None,
            "last_due_s": round(last - float(context.get("start", last)), 3),
            "plan_s": context.get("plan_s"),
        },
        "expectations": {
            "scale": exp.scale,
            "advertised": dict(exp.advertised),
            "during_run": dict(run_exp.advertised),
        },
    }
    if "boundary" in context:
        details["minute_boundary_epoch"] = context["boundary"]
    if "rtt" in context:
        details["round_trip"] = context["rtt"]
    verdict = Verdict(campaign.name, tuple(figures), validity, failure, details)
    directory = report_dir(environment, campaign.name)
    write_records(directory / "records.jsonl", records)
    verdict.write(directory / "verdict.json")
    capacity, rate = _plot_bounds(campaign, run_exp)
    write_plots(directory, records, capacity, rate)
    if "latency" in details:
        write_latency_table(
            directory / "latency_by_endpoint.png",
            details["latency"],
            f"{campaign.name}: latency per endpoint over time",
        )
    print(verdict.summary(), flush=True)
    for row in details.get("organisations", ()):
        print(_organisation_line(row), flush=True)
    print(f"report: {directory}", flush=True)
    environment.process_exit_code = int(verdict.exit_code)
    return verdict


def _organisation_line(row: dict[str, Any]) -> str:
    """One organisation of the tenants campaign: what it was admitted and refused, per counter."""
    counters = [
        f"{name} {c['admitted']} admitted, {c['refused']} refused ({c['early_refusals']} early)"
        for name in ("playback", "catalog")
        if isinstance(c := row.get(name), dict)
    ]
    if not counters:
        counters = [f"{row['sent']} sent, {row.get('refused', 0)} refused"]
    mark = "ok  " if row["passed"] else "FAIL"
    return f"  {mark} {row['organisation']} ({row['driven']}): " + "; ".join(counters)


def write_failure(
    environment: Environment, campaign: Campaign | None, message: str, exit_code: int
) -> None:
    """The campaign could not run: a one-line reason, an invalid verdict, a distinct exit code."""
    name = campaign.name if campaign else "unknown"
    directory = report_dir(environment, name)
    body = {
        "profile": name,
        "outcome": "invalid",
        "exit_code": exit_code,
        "target_failure": message,
        "figures": [],
    }
    (directory / "verdict.json").write_text(json.dumps(body, indent=2) + "\n", "utf-8")
    print(f"load {name}: {message}", flush=True)
    environment.process_exit_code = exit_code
