"""`delivery-conformance`: the command line.

    delivery-conformance run [--target FILE] [--report-dir DIR] [-k EXPR] [--requirement ID ...]
                             [--no-properties] [--no-pacing] [--seed N] [--strict]
                             [--min-coverage PCT] [--max-duration SECONDS] [--summary-md FILE]
                             [--expected-failures FILE] [--workers N] [--har FILE]
                             [--advance-clock]
    delivery-conformance report RESULTS [--out DIR] [--summary-md FILE] [--strict]
    delivery-conformance replay RESULTS --finding N [--target PROFILE] [--timeout SECONDS]
    delivery-conformance check-profile [FILE]      (default: $DELIVERY_TARGET)
    delivery-conformance init-profile [FILE]       (default: target.toml)
    delivery-conformance killrate [--report-dir DIR] [--mode targeted|full|properties]
                                  [--fault NAME ...] [--clean-runs N] [--no-properties]
                                  [--advance-clock]
    delivery-conformance proxy --upstream URL [--port 0] [--journal FILE] [--scenario FILE]
    delivery-conformance certify-client --plan PLAN [--quick] [--scenario ID ...]
    delivery-conformance contract-diff OLD.yaml NEW.yaml [--markdown FILE] [--json FILE]
                                       [--fail-on breaking|additive|any]
    delivery-conformance compare OLD/results.json NEW/results.json [--summary-md FILE] [--html FILE]
                                 [--fail-on-behaviour]

Exit codes and verdict words: one table, `verdict.Verdict` (docs/running.md > Exit codes).
Errors are one line on stderr, never a traceback. A command whose output pipe is closed early
(`| head -3`) stops quietly with exit 141 (128 + SIGPIPE, what a shell reports for such a writer).
Without --target, `run` starts the embedded sandbox on a free loopback port (pacing off for it
only), runs the suite and stops it. Before running, the target must answer GET /config.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import random
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from delivery_conformance import __version__
from delivery_conformance.certify import commands as certify_commands
from delivery_conformance.exceptions import HarnessError, HarnessFailure, UsageError
from delivery_conformance.killrate.false_positives import (
    VariantOptions,
    VariantOutcome,
    run_variants,
    write_report,
)
from delivery_conformance.killrate.judge import Mode
from delivery_conformance.killrate.measure import KillRateOptions, run_killrate
from delivery_conformance.killrate.report import KillRateWriter, ProgressPrinter
from delivery_conformance.reports import compare_command
from delivery_conformance.reports.view import verdict_word
from delivery_conformance.reports.writer import (
    finish_outputs,
    load_results,
    prepare_outputs,
    write_document,
    write_summary_markdown,
)
from delivery_conformance.spec import contract_commands
from delivery_conformance.spec.requirements import load_requirements
from delivery_conformance.suite import replay as replay_commands
from delivery_conformance.suite.expected_failures import load_expected_failures
from delivery_conformance.suite.plugin import DEFAULT_MAX_DURATION, DEFAULT_STATE_SEQUENCES
from delivery_conformance.suite.profile_check import report_lines, suite_census, write_template
from delivery_conformance.suite.runner import DEFAULT_SEED, RunOptions, run_suite, suite_paths
from delivery_conformance.suite.selection import select
from delivery_conformance.target import latency
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.preflight import chosen_workers, expectation, probe
from delivery_conformance.target.profile import MAX_WORKERS, load_profile, target_from_env
from delivery_conformance.verdict import EXIT_USAGE, Verdict

__all__ = ["COMMANDS", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"delivery-conformance: {message}\n")


ADVANCE_CLOCK_HELP = (
    "the freshness polls move the sandbox's clock (POST /_sandbox/clock) instead of sleeping out "
    "their bounds: a 5-minute wait takes no time; one scenario at a time, a target with an "
    "[admin] table"
)


def _seed(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return int(text)


def _workers(text: str) -> int:
    number = _seed(text)
    if not 1 <= number <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"from 1 to {MAX_WORKERS} workers, not {number}")
    return number


def _sequences(text: str) -> int:
    number = _seed(text)
    if number > 100_000:
        raise argparse.ArgumentTypeError(f"at most 100000 sequences, not {number}")
    return number


def parser() -> argparse.ArgumentParser:
    root = _Parser(
        prog="delivery-conformance",
        description="Delivery API v1 conformance: run the suite, check profiles, measure the "
        "kill rate. `run ... -- PYTEST_ARGS` passes the rest to pytest.",
    )
    root.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = root.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser("run", help="run the conformance suite against a target")
    run.add_argument("--target", type=Path, default=None, help="target profile (TOML)")
    run.add_argument(
        "--report-dir",
        type=Path,
        default=Path("reports"),
        help="write <DIR>/<run id>/{report.html,results.json,junit.xml} and point <DIR>/latest "
        "at them (default: reports)",
    )
    run.add_argument(
        "--summary-md",
        type=Path,
        default=None,
        metavar="FILE",
        help="append a short Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)",
    )
    run.add_argument(
        "--har", type=Path, default=None, metavar="FILE",
        help="write every exchange of the run (secrets redacted) to FILE as HAR 1.2",
    )  # fmt: skip
    run.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    run.add_argument(
        "--requirement",
        action="append",
        default=[],
        metavar="ID",
        help="run only tests naming this requirement: an ID or a pattern (CAT-*, PLAY-01*)",
    )
    run.add_argument("--no-properties", action="store_true", help="skip tests/properties")
    run.add_argument(
        "--no-pacing", action="store_true", help="do not pace requests under the rate limits"
    )
    run.add_argument(
        "--strict",
        action="store_true",
        help="a violated `should` requirement fails the run (exit 1); default: a warning, exit 0",
    )
    run.add_argument(
        "--expected-failures",
        type=Path,
        default=None,
        metavar="FILE",
        help="known failures: TOML [[expected]] requirement, reason, expires; a listed failure is "
        "a warning with its reason, a listed pass is reported as fixed, an expired entry fails "
        "the run",
    )
    run.add_argument(
        "--min-coverage",
        type=float,
        default=None,
        metavar="PCT",
        help="accept a partial run (exit 0) that exercised at least PCT %% of what it selected",
    )
    run.add_argument(
        "--max-duration",
        type=float,
        default=DEFAULT_MAX_DURATION,
        metavar="SECONDS",
        help=f"stop the run there with a partial report, exit 5 (default {DEFAULT_MAX_DURATION:g})",
    )
    run.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="run N scenarios at once against the target, under one pacing budget (default: "
        "the profile's `workers`, else chosen from the measured round trip; 1 for the "
        "embedded sandbox)",
    )
    run.add_argument(
        "--advance-clock",
        action="store_true",
        help=ADVANCE_CLOCK_HELP,
    )
    run.add_argument(
        "--seed", type=_seed, default=DEFAULT_SEED, help=f"generation seed (default {DEFAULT_SEED})"
    )
    run.add_argument(
        "--state-sequences",
        type=_sequences,
        default=None,
        metavar="N",
        help="random sequences of changes, reads and clock steps the stateful exploration "
        f"judges (default {DEFAULT_STATE_SEQUENCES}; 0 leaves it not exercised)",
    )
    check = commands.add_parser(
        "check-profile",
        help="validate a target profile; list the roles and fixtures it lacks, with the tests each "
        "would unlock",
    )
    check.add_argument(
        "file", type=Path, nargs="?", default=None, help="the profile (default: $DELIVERY_TARGET)"
    )
    init = commands.add_parser("init-profile", help="write a commented target profile template")
    init.add_argument(
        "file",
        type=Path,
        nargs="?",
        default=Path("target.toml"),
        help="where to write it (default: target.toml; an existing file is never overwritten)",
    )
    report = commands.add_parser(
        "report", help="render report.html, spec.html and junit.xml again from a results.json"
    )
    report.add_argument("results", type=Path, help="a results.json written by `run`")
    report.add_argument(
        "--out", type=Path, default=None, help="where to write (default: beside the results file)"
    )
    report.add_argument(
        "--summary-md", type=Path, default=None, metavar="FILE", help="also append the summary"
    )
    report.add_argument("--strict", action="store_true", help="warnings are junit failures")
    commands.add_parser(
        "latency-proxy",
        help="forward a loopback target adding latency with jitter, e.g. --upstream URL "
        "--latency 40ms --jitter 15ms (its own --help lists every option)",
        add_help=False,
    )
    kill = commands.add_parser("killrate", help="run the suite against every sandbox fault")
    kill.add_argument(
        "--report-dir",
        type=Path,
        default=Path("reports"),
        help="write <DIR>/killrate/<run id>/killrate.{json,md} (default: reports)",
    )
    kill.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default=Mode.FULL.value,
        help="targeted: per fault the tests naming its IDs; full: the whole suite per fault; "
        "properties: the property tests alone (default: full)",
    )
    kill.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="only this fault (repeatable; default: the whole catalogue)",
    )
    kill.add_argument(
        "--clean-runs",
        type=_seed,
        default=3,
        metavar="N",
        help="runs against the clean sandbox first; any failure fails the kill rate (default 3)",
    )
    kill.add_argument("--no-properties", action="store_true", help="skip tests/properties")
    kill.add_argument(
        "--advance-clock",
        action="store_true",
        help=f"in every run: {ADVANCE_CLOCK_HELP}",
    )
    legal = commands.add_parser(
        "variants",
        help="run the suite against every legal variant of the sandbox (the false-positive rate)",
    )
    legal.add_argument(
        "--report-dir",
        type=Path,
        default=Path("reports"),
        help="write <DIR>/variants/<run id>/variants.{json,md} (default: reports)",
    )
    legal.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="only this variant (repeatable; default: the whole catalogue)",
    )
    legal.add_argument(
        "--together",
        action="store_true",
        help="one sandbox with every chosen variant on at once, one run (the quick form)",
    )
    legal.add_argument(
        "--jobs", type=_seed, default=1, metavar="N", help="runs at a time (default 1)"
    )
    legal.add_argument("--no-properties", action="store_true", help="skip tests/properties")
    certify_commands.add_commands(commands)
    contract_commands.add_commands(commands)
    replay_commands.add_commands(commands)
    compare_command.add_commands(commands)
    return root


def run_id(now: dt.datetime, rng: random.Random) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + f"-{rng.randrange(16**4):04x}"


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM ends a run like Ctrl-C: pytest stops, the partial report is written."""
    raise KeyboardInterrupt


def command_run(args: argparse.Namespace) -> int:
    rng = random.Random()
    seed = args.seed  # fixed by default, so two runs of one version of the tool are comparable
    run_dir = args.report_dir / run_id(dt.datetime.now(dt.UTC), rng)
    if args.requirement:
        select(args.requirement, load_requirements())  # exit 2 before anything starts
    if args.min_coverage is not None and not 0 <= args.min_coverage <= 100:
        raise UsageError(
            f"--min-coverage takes a percentage from 0 to 100, not {args.min_coverage:g}"
        )
    if args.expected_failures is not None:  # exit 2 before anything starts
        today = dt.datetime.now(dt.UTC).date()
        load_expected_failures(args.expected_failures, load_requirements(), today)
    if args.target is None:
        args.target = target_from_env()
    profile = load_profile(args.target) if args.target is not None else None
    if args.advance_clock and (args.workers or 1) > 1:
        raise UsageError("--advance-clock runs one scenario at a time: not with --workers above 1")
    if args.advance_clock and profile is not None and profile.admin is None:
        raise UsageError("--advance-clock needs a target with an [admin] table (the sandbox)")
    options = RunOptions(
        target=args.target or Path("embedded"),
        workers=args.workers or 1,
        run_dir=run_dir,
        keyword=args.keyword,
        requirements=tuple(args.requirement),
        properties=not args.no_properties,
        pacing=not args.no_pacing,
        seed=seed,
        strict=args.strict,
        expected_failures=args.expected_failures,
        min_coverage=args.min_coverage,
        max_duration=args.max_duration,
        state_sequences=args.state_sequences,
        extra_args=(*(("--advance-clock",) if args.advance_clock else ()), *args.pytest_args),
    )
    if not suite_paths(options):
        raise HarnessFailure(
            f"no conformance suite found at {options.tests_root} (a broken installation?)"
        )
    prepare_outputs(run_dir, args.summary_md, args.har)  # exit 2 before the target is touched
    signal.signal(signal.SIGTERM, _terminate)
    if profile is not None:
        rtt = probe(profile)
        workers, why = chosen_workers(rtt, args.workers, profile.workers)
        if args.advance_clock:
            workers, why = 1, "--advance-clock: one scenario at a time"
        print(expectation(rtt, args.max_duration, workers=workers), flush=True)
        print(f"workers: {workers} ({why})", flush=True)
        summary = run_suite(dataclasses.replace(options, workers=workers))
    else:
        why = "--workers" if args.workers else "the embedded sandbox is nearby: one is fastest"
        print(f"workers: {options.workers} ({why})", flush=True)
        with EmbeddedSandbox() as target:
            embedded = dataclasses.replace(options, target=target, pacing=False, from_sandbox=True)
            summary = run_suite(embedded)
    if summary is None:
        raise HarnessFailure(f"no conformance suite found at {options.tests_root}")
    print("\n".join(filter(None, (summary.line(), summary.coverage_line()))))
    print(f"report: {run_dir / 'report.html'}")
    finish_outputs(summary, args.report_dir, run_dir, args.summary_md, args.har)
    return summary.exit_code()


def command_check_profile(args: argparse.Namespace) -> int:
    path = args.file if args.file is not None else target_from_env()
    if path is None:
        raise UsageError("check-profile needs a FILE (or DELIVERY_TARGET naming one)")
    profile = load_profile(path)
    print("\n".join(report_lines(profile, suite_census())))
    return 0


def command_init_profile(args: argparse.Namespace) -> int:
    write_template(args.file)
    print(f"wrote {args.file}: fill in base_url, keys and fixtures, then run "
          f"delivery-conformance check-profile {args.file}")  # fmt: skip
    return 0


def command_report(args: argparse.Namespace) -> int:
    """Re-render a run's reports from its results.json (checked against the published schema)."""
    document = load_results(args.results)
    out = args.out or args.results.parent
    html = write_document(document, out, strict=args.strict or None)
    if args.summary_md is not None:
        prepare_outputs(out, args.summary_md)
        write_summary_markdown(document, args.summary_md, html)
    print(f"{verdict_word(document['run'])}; report: {html}")
    return 0


def command_killrate(args: argparse.Namespace) -> int:
    run_dir = args.report_dir / "killrate" / run_id(dt.datetime.now(dt.UTC), random.Random())
    options = KillRateOptions(
        run_dir=run_dir,
        mode=Mode(args.mode),
        faults=tuple(args.fault),
        clean_runs=args.clean_runs,
        properties=not args.no_properties,
        extra_args=("--advance-clock",) if args.advance_clock else (),
    )
    report = run_killrate(options, [ProgressPrinter(sys.stdout), KillRateWriter(run_dir)])
    print(f"report: {run_dir / 'killrate.md'}")
    return 0 if report.ok() else 1


def command_variants(args: argparse.Namespace) -> int:
    run_dir = args.report_dir / "variants" / run_id(dt.datetime.now(dt.UTC), random.Random())
    options = VariantOptions(
        run_dir=run_dir,
        variants=tuple(args.variant),
        together=args.together,
        properties=not args.no_properties,
        jobs=args.jobs,
    )

    def progress(outcome: VariantOutcome) -> None:
        said = "passed" if outcome.passed else "FAILED"
        failed = f"; must failed: {', '.join(outcome.failed)}" if outcome.failed else ""
        took = f"exit {outcome.exit_code}, {outcome.duration:.0f} s"
        print(f"{' + '.join(outcome.variants)}: {said}, {outcome.verdict} ({took}){failed}")

    report = run_variants(options, progress)
    _, markdown = write_report(report, run_dir)
    print(f"false-positive rate: {report.passed} of {report.total} legal variants passed")
    print(f"report: {markdown}")
    return 0 if report.ok() else 1


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": command_run,
    "check-profile": command_check_profile,
    "init-profile": command_init_profile,
    "report": command_report,
    "killrate": command_killrate,
    "variants": command_variants,
    **certify_commands.COMMANDS,
    **contract_commands.COMMANDS,
    **replay_commands.COMMANDS,
    **compare_command.COMMANDS,
}


BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a writer its reader left


def main(argv: Sequence[str] | None = None) -> int:
    """Every command; one whose reader goes away (`... | head -3`) stops quietly with
    `BROKEN_PIPE_EXIT`, as a command killed by SIGPIPE would, and no traceback."""
    try:
        try:
            return _main(argv)
        finally:  # what is still buffered goes now, while a closed pipe can be caught
            sys.stdout.flush()
    except BrokenPipeError:
        # the reader is gone: point stdout at /dev/null so the interpreter's last flush of
        # what is still buffered cannot raise again on the way out
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return BROKEN_PIPE_EXIT


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["latency-proxy"]:  # its own parser and options (delivery_conformance.latency)
        try:
            return latency.main(argv[1:], prog="delivery-conformance latency-proxy")
        except SystemExit as stop:  # its parser's usage errors: one line already printed
            return int(stop.code or 0)
    passed = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser().parse_args(argv[: len(argv) - len(passed) - (1 if "--" in argv else 0)])
    if passed and args.command != "run":
        parser().error(f"only `run` passes arguments after -- to pytest, not {args.command!r}")
    args.pytest_args = passed
    try:
        return COMMANDS[args.command](args)
    except HarnessError as error:
        print(f"delivery-conformance: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("delivery-conformance: interrupted", file=sys.stderr)
        return Verdict.INTERRUPTED.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
