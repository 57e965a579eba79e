"""`delivery-conformance`: the command line.

    delivery-conformance run [--target FILE] [--report-dir DIR] [-k EXPR] [--requirement ID ...]
                             [--no-properties] [--no-pacing] [--seed N]
    delivery-conformance check-profile FILE
    delivery-conformance killrate [--report-dir DIR] [--mode targeted|full|properties]
                                  [--fault NAME ...] [--clean-runs N] [--no-properties]

Exit codes (README > Exit codes): 0 conforming, 1 violations found, 2 usage or profile error,
3 target unreachable or harness failure. Errors are one line on stderr, never a traceback.
Without --target, `run` starts the embedded sandbox on a free loopback port (pacing off for it
only), runs the suite and stops it. Before running, the target must answer GET /config.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from delivery_conformance.client import DeliveryClient
from delivery_conformance.embedded import EmbeddedSandbox
from delivery_conformance.exceptions import HarnessError, TargetGarbage
from delivery_conformance.killrate import KillRateOptions, Mode, run_killrate
from delivery_conformance.killrate_report import KillRateWriter, ProgressPrinter
from delivery_conformance.profile import TargetProfile, load_profile
from delivery_conformance.runner import DEFAULT_SEED, RunOptions, run_suite, suite_paths

__all__ = ["COMMANDS", "main"]

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"delivery-conformance: {message}\n")


def _seed(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    root = _Parser(prog="delivery-conformance", description="Delivery API v1 conformance")
    commands = root.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser("run", help="run the conformance suite against a target")
    run.add_argument("--target", type=Path, default=None, help="target profile (TOML)")
    run.add_argument("--report-dir", type=Path, default=Path("reports"))
    run.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    run.add_argument("--requirement", action="append", default=[], metavar="ID")
    run.add_argument("--no-properties", action="store_true", help="skip tests/properties")
    run.add_argument("--no-pacing", action="store_true")
    run.add_argument(
        "--seed", type=_seed, default=DEFAULT_SEED, help=f"generation seed (default {DEFAULT_SEED})"
    )
    check = commands.add_parser("check-profile", help="validate a target profile")
    check.add_argument("file", type=Path)
    kill = commands.add_parser("killrate", help="run the suite against every sandbox fault")
    kill.add_argument("--report-dir", type=Path, default=Path("reports"))
    kill.add_argument("--mode", choices=[m.value for m in Mode], default=Mode.FULL.value)
    kill.add_argument("--fault", action="append", default=[], metavar="NAME")
    kill.add_argument("--clean-runs", type=_seed, default=3, metavar="N")
    kill.add_argument("--no-properties", action="store_true", help="skip tests/properties")
    return root


def probe(profile: TargetProfile) -> None:
    """Reachability: GET /config (with a key when there is one) must answer JSON over HTTP."""
    role = "films" if "films" in profile.keys else next(iter(profile.keys), None)
    with DeliveryClient(profile, timeout=10.0) as client:
        response = client.request("GET", "config", role=role)
        try:
            response.json_body()
        except TargetGarbage as error:
            raise TargetGarbage(f"{error} (is base_url a Delivery API server?)") from None


def run_id(now: dt.datetime, rng: random.Random) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + f"-{rng.randrange(16**4):04x}"


def command_run(args: argparse.Namespace) -> int:
    rng = random.Random()
    seed = args.seed  # fixed by default, so two runs of one version of the tool are comparable
    run_dir = args.report_dir / run_id(dt.datetime.now(dt.UTC), rng)
    profile = load_profile(args.target) if args.target is not None else None
    options = RunOptions(
        target=args.target or Path("embedded"),
        run_dir=run_dir,
        keyword=args.keyword,
        requirements=tuple(args.requirement),
        properties=not args.no_properties,
        pacing=not args.no_pacing,
        seed=seed,
    )
    if not suite_paths(options):
        print("delivery-conformance: nothing to run yet (tests/conformance has no test)")
        return 0
    if profile is not None:
        probe(profile)
        summary = run_suite(options)
    else:
        with EmbeddedSandbox() as target:
            summary = run_suite(dataclasses.replace(options, target=target, pacing=False))
    if summary is None:
        print("delivery-conformance: nothing to run yet (tests/conformance has no test)")
        return 0
    print(f"{summary.line()}\nreport: {run_dir / 'report.html'}")
    return summary.exit_code()


def command_check_profile(args: argparse.Namespace) -> int:
    profile = load_profile(args.file)
    roles = ", ".join(sorted(profile.keys)) or "none"
    print(
        f"profile OK: {profile.base_url}; roles: {roles}; {len(profile.fixtures)} fixtures; "
        f"admin API: {'yes' if profile.admin else 'no'}"
    )
    return 0


def command_killrate(args: argparse.Namespace) -> int:
    run_dir = args.report_dir / "killrate" / run_id(dt.datetime.now(dt.UTC), random.Random())
    options = KillRateOptions(
        run_dir=run_dir,
        mode=Mode(args.mode),
        faults=tuple(args.fault),
        clean_runs=args.clean_runs,
        properties=not args.no_properties,
    )
    report = run_killrate(options, [ProgressPrinter(sys.stdout), KillRateWriter(run_dir)])
    print(f"report: {run_dir / 'killrate.md'}")
    return 0 if report.ok() else 1


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": command_run,
    "check-profile": command_check_profile,
    "killrate": command_killrate,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except HarnessError as error:
        print(f"delivery-conformance: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("delivery-conformance: interrupted", file=sys.stderr)
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
