"""`python -m loadtests.run PROFILE`: run one load campaign and exit with its verdict.

    python -m loadtests.run PROFILE [--target FILE] [--workers N] [--report-dir DIR]
                            [--allow-production] [--scale-check] [--limits-scale X]
                            [--scale X] [--fault NAME] [--latency 40ms --jitter 15ms]
                            [--tenants N]

Without --target the embedded sandbox is started as a subprocess (with --limits-scale, default
1; for the tenants campaign with --tenants organisations, default 20). --workers N runs Locust's
master with N worker processes on this machine; their raw records are merged for the verdict.
--scale-check only reads /config and shows the plan. --latency puts the latency proxy
(delivery_conformance.target.latency) between the generator and the target.

Exit codes: 0 within the spec, 1 a limit deviates, 2 bad input or a refused target,
3 the generator or the target failed (an invalid run; also SIGINT/SIGTERM, after a partial
report that says how far the run got).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from delivery_conformance.load.schedule import Plan
from delivery_conformance.load.verdict import ExitCode, Expectations
from delivery_conformance.target.embedded import sandbox_command
from delivery_conformance.target.latency import LatencyProxy, parse_duration, write_proxied_profile
from loadtests.campaigns import CAMPAIGNS, Campaign
from loadtests.target import CampaignError, Target

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
MAX_USERS = 800
MARGIN_S = 40.0
LOCUST_LOGLEVEL = os.environ.get("LOAD_LOCUST_LOGLEVEL", "WARNING")  # into locust.log
STOP_GRACE_S = 20.0  # after an interrupt, Locust's time to judge what it has
TENANTS = 20  # organisations the embedded sandbox makes for the tenants campaign


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.USAGE, f"load: {message}\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m loadtests.run", description=__doc__.split("\n")[0])
    p.add_argument(
        "profile", choices=sorted(CAMPAIGNS), metavar="PROFILE", help=", ".join(sorted(CAMPAIGNS))
    )
    p.add_argument("--target", type=Path, default=None, help="target profile TOML")
    p.add_argument("--workers", type=int, default=0, help="Locust worker processes (0: one)")
    p.add_argument(
        "--report-dir",
        type=Path,
        default=Path("reports"),
        help="write <DIR>/load/<campaign>-<run id>/ (default: reports)",
    )
    p.add_argument(
        "--allow-production",
        action="store_true",
        help="run against an organisation whose /config says it is not a test organisation",
    )
    p.add_argument(
        "--scale-check",
        action="store_true",
        help="only check /config against the spec's numbers and print the plan",
    )
    p.add_argument(
        "--limits-scale", type=float, default=1.0, help="embedded sandbox: scale of every limit"
    )
    p.add_argument(
        "--scale",
        type=float,
        default=None,
        help="declared scale of the target's limits (1; embedded: --limits-scale)",
    )
    p.add_argument("--fault", action="append", default=[], help="embedded sandbox fault")
    p.add_argument(
        "--tenants",
        type=int,
        default=None,
        metavar="N",
        help=f"embedded sandbox: organisations of the tenants campaign (default {TENANTS})",
    )
    p.add_argument(
        "--duration",
        type=_duration,
        default=None,
        metavar="DURATION",
        help="length of a timed campaign (mixed: 40s, soak: 10 minutes = 600s)",
    )
    p.add_argument(
        "--latency",
        type=_duration,
        default=None,
        metavar="DURATION",
        help="reach the target through the latency proxy (e.g. 40ms round trip)",
    )
    p.add_argument(
        "--jitter",
        type=_duration,
        default=0.0,
        metavar="DURATION",
        help="latency proxy jitter (e.g. 15ms)",
    )
    return p


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@contextlib.contextmanager
def _distant(args: argparse.Namespace, profile: Path) -> Iterator[Path]:
    """The profile itself, or (with --latency) a copy that goes through the latency proxy."""
    if args.latency is None:
        yield profile
        return
    base = Target.from_file(profile)
    upstream = base.base_url
    base.close()
    try:
        proxy = LatencyProxy(
            upstream=upstream,
            latency=args.latency,
            jitter=args.jitter,
            seed=1,
            max_connections=MAX_USERS * 2 + 64,
            max_chunks=256,
        )
    except ValueError as error:
        raise CampaignError(f"latency proxy: {error}", exit_code=2) from None
    with proxy as url:
        scratch = Path(tempfile.mkdtemp(prefix="load-proxy-"))
        yield write_proxied_profile(profile, scratch / "proxied.toml", url)


class Sandbox:
    """The embedded sandbox as a subprocess (never imported)."""

    def __init__(self, scale: float, faults: list[str], directory: Path, tenants: int = 0) -> None:
        self.profile = directory / "sandbox.toml"
        options: tuple[str, ...] = ("--limits-scale", str(scale))
        if tenants:
            options += ("--tenants", str(tenants))
        command = sandbox_command(self.profile, faults, options, versions=None)
        self.log = (directory / "sandbox.log").open("w")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, timeout: float = 30.0) -> Path:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CampaignError(f"the sandbox exited with {self.process.returncode}")
            if self.profile.exists() and self.profile.stat().st_size > 0:
                time.sleep(0.2)
                return self.profile
            time.sleep(0.1)
        raise CampaignError("the sandbox did not write its profile in time")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()


def users_for(campaign: Campaign, plan: Plan) -> int:
    """Enough users that a 0.5 s hold at the peak rate never starves the schedule."""
    if campaign.single_worker and plan.peak_rate() == 0:
        return 2
    return min(MAX_USERS, math.ceil(plan.peak_rate() * 0.8) + 10)


def run_time(campaign: Campaign, plan: Plan, has_admin: bool) -> int:
    bound = plan.duration + MARGIN_S + (0 if has_admin else 60)
    if campaign.boundary_at is not None and not has_admin:
        bound += 120
    return math.ceil(bound)


def _locust(
    args: argparse.Namespace,
    campaign: Campaign,
    profile: Path,
    scale: float,
    directory: Path,
    users: int,
    seconds: int,
) -> int:
    locustfile = ROOT / "loadtests" / f"{campaign.name}.py"
    command = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(locustfile),
        "--headless",
        "-u",
        str(users),
        "-r",
        str(users),
        "--run-time",
        f"{seconds}s",
        "--stop-timeout",
        "5",
        "--loglevel",
        LOCUST_LOGLEVEL,
        "--only-summary",
        "--target-profile",
        str(profile),
        "--report-dir",
        str(directory),
        "--declared-scale",
        str(scale),
        "--html",
        str(directory / "locust.html"),
        "--csv",
        str(directory / "locust"),
    ]
    if args.allow_production:
        command.append("--allow-production")
    if args.duration is not None:
        command += ["--campaign-duration", str(args.duration)]
    if args.workers > 0:
        command += ["--processes", str(args.workers)]
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    # its own process group, so a stop reaches Locust and every worker process it forked; not
    # a session of its own, which Linux's autogroups would schedule apart from the caller, out of
    # reach of the caller's `nice` (make test runs its timed self-tests ahead of the others)
    # Locust's own warnings and interrupt noise go to a log beside the report
    with (directory / "locust.log").open("w") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, process_group=0, stderr=log)
        try:
            return process.wait(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            stop_group(process)
            return -1
        except KeyboardInterrupt:
            stop_group(process)
            raise


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to Locust's master (it collects its workers' records, judges what it has and
    writes the report), then SIGKILL to its whole process group: no Locust process survives."""
    for sig, grace in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            if sig == signal.SIGTERM:
                os.kill(process.pid, sig)
            else:
                os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # forked workers outliving their master


def verdict_code(directory: Path, locust_code: int, interrupted: bool = False) -> int:
    path = directory / "verdict.json"
    if not path.exists():
        what = (
            "interrupted before the generator wrote its report"
            if interrupted
            else f"the generator wrote no verdict (locust exit {locust_code})"
        )
        body = {
            "profile": directory.name.split("-")[0],
            "outcome": "invalid",
            "exit_code": int(ExitCode.INVALID),
            "target_failure": what,
            "figures": [],
        }
        path.write_text(json.dumps(body, indent=2) + "\n", "utf-8")
        print(f"load: {what}; report: {directory}", file=sys.stderr)
        return ExitCode.INVALID
    try:
        verdict = json.loads(path.read_text("utf-8"))
    except ValueError:
        return ExitCode.INVALID
    if interrupted:
        print(f"load: interrupted; partial report: {directory}", file=sys.stderr)
        return ExitCode.INVALID
    return int(verdict.get("exit_code", ExitCode.INVALID))


@dataclasses.dataclass(frozen=True)
class CampaignPlan:
    """What a campaign will send to one target: its expectations, schedule, users, run time."""

    expectations: Expectations
    plan: Plan
    users: int
    run_time: int


def plan_campaign(
    campaign: Campaign,
    target: Target,
    config: dict[str, Any],
    scale: float,
    duration: float | None,
) -> CampaignPlan:
    """The campaign's plan against this target: the limits of its role, scaled, and the measured
    round trip; one function for `loadtests.run` and `loadtests.distributed`."""
    if duration is not None and campaign.default_duration is None:
        raise CampaignError(
            f"campaign {campaign.name} has a fixed length (no --duration)", ExitCode.USAGE
        )
    try:
        exp = Expectations.from_config(config, scale)
        exp = dataclasses.replace(exp, rtt=target.round_trip()["max_s"], tenants=target.tenants)
        plan = Plan(campaign.stages(exp, duration))
    except ValueError as error:
        raise CampaignError(str(error), ExitCode.USAGE) from None
    return CampaignPlan(
        exp, plan, users_for(campaign, plan), run_time(campaign, plan, target.has_admin)
    )


def execute(args: argparse.Namespace, profile: Path, scale: float) -> int:
    campaign = CAMPAIGNS[args.profile]
    target = Target.from_file(profile)
    config = target.config(campaign.config_role)
    target.check_test_organisation(config, args.allow_production)
    planned = plan_campaign(campaign, target, config, scale, args.duration)
    exp, plan = planned.expectations, planned.plan
    if args.scale_check:
        figures = exp.config_figures(list(campaign.counters))
        for f in figures:
            mark = "ok  " if f.passed else "FAIL"
            print(f"{mark} {f.name}: {f.measured:g} (expected {f.expected:g})")
        print(
            f"plan: {plan.total} requests over {plan.duration:.1f} s, "
            f"peak {plan.peak_rate():.0f}/s, {planned.users} users"
        )
        return ExitCode.WITHIN_SPEC if all(f.passed for f in figures) else ExitCode.DEVIATES
    if args.workers > 1 and campaign.single_worker:
        raise CampaignError(f"campaign {campaign.name} runs on one worker only", ExitCode.USAGE)
    run_id = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
    directory = args.report_dir / "load" / f"{campaign.name}-{run_id}"
    directory.mkdir(parents=True, exist_ok=True)
    try:
        code = _locust(
            args,
            campaign,
            profile,
            scale,
            directory,
            planned.users,
            planned.run_time,
        )
    except KeyboardInterrupt:
        return verdict_code(directory, -1, interrupted=True)
    finally:
        target.close()
    return verdict_code(directory, code)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.workers < 0 or args.workers > 64:
        parser().error("--workers must be 0 to 64")
    if not args.limits_scale > 0 or (args.scale is not None and not args.scale > 0):
        parser().error("scales must be positive numbers")
    if args.tenants is not None and not 0 <= args.tenants <= 200:
        parser().error("--tenants must be 0 to 200")
    tenants = args.tenants
    if tenants is None:
        tenants = TENANTS if args.profile == "tenants" else 0
    sandbox = None
    previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM ends a run like Ctrl-C
    # Ctrl-C works even when started from a shell that ignored SIGINT (a background job)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if args.target is not None:
            with _distant(args, args.target) as profile:
                return execute(args, profile, args.scale or 1.0)
        scratch = Path(tempfile.mkdtemp(prefix="load-sandbox-"))
        sandbox = Sandbox(args.limits_scale, args.fault, scratch, tenants)
        with _distant(args, sandbox.wait()) as profile:
            return execute(args, profile, args.scale or args.limits_scale)
    except CampaignError as error:
        print(f"load: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("load: interrupted", file=sys.stderr)
        return ExitCode.INVALID
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        if sandbox is not None:
            sandbox.stop()


if __name__ == "__main__":
    sys.exit(main())
