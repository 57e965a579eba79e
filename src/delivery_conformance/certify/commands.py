"""The `proxy` and `certify-client` subcommands (wired into cli.py by `add_commands`).

    delivery-conformance proxy --upstream URL [--port 0] [--journal FILE] [--scenario FILE]
                               [--max-duration S]
    delivery-conformance certify-client --plan PLAN [--upstream URL --key-env NAME]
                               [--report-dir DIR] [--scenario ID ...] [--quick]
                               [--expected-failures FILE]

`proxy` records until Ctrl-C, SIGTERM or --max-duration, then judges the answers it did not
touch with the server checks: exit 0, or 1 with each server finding on stderr.

Exit codes of certify-client: the verdict table (docs/running.md > Exit codes): 0 certified (a
certificate is written for a whole-catalogue run), 1 a client rule failed or the flows
misbehaved (hang, failure, no request), 2 a bad plan, scenario, expected-failures file or a flow
command the shell cannot run, 3 the upstream (or the embedded sandbox) does not answer, 4 some
requirements were not exercised (no certificate).
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import os
import signal
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from delivery_conformance.certify.certificate import write_certificate
from delivery_conformance.certify.injections import Injector
from delivery_conformance.certify.journal import Journal, SecretBook
from delivery_conformance.certify.plan import load_plan
from delivery_conformance.certify.proxy import RefereeProxy
from delivery_conformance.certify.runner import (
    FLOW_KEYS,
    CertifyOptions,
    Upstream,
    certify,
    check_upstream,
    client_ids,
    embedded_upstream,
)
from delivery_conformance.certify.scenarios import Scenario, load_catalogue
from delivery_conformance.checks.common import judge_exchanges
from delivery_conformance.evidence.events import TestFinished
from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.writer import results_document, write_document
from delivery_conformance.spec.requirements import load_requirements
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile
from delivery_conformance.verdict import Verdict

__all__ = ["COMMANDS", "add_commands"]

PROXY_MAX_DURATION = 3600.0


def add_commands(commands: Any) -> None:
    proxy = commands.add_parser("proxy", help="run the referee proxy in front of a server")
    proxy.add_argument("--upstream", required=True, help="the server's base URL (http[s]://)")
    proxy.add_argument("--port", type=int, default=0, help="loopback port (default 0: any free)")
    proxy.add_argument("--journal", type=Path, help="append the journal (JSON Lines) here")
    proxy.add_argument(
        "--scenario", type=Path, help="a scenario file: its first scenario's injections apply"
    )
    proxy.add_argument("--max-duration", type=float, default=PROXY_MAX_DURATION,
                       help="stop after this many seconds (default 3600)")  # fmt: skip
    cert = commands.add_parser("certify-client", help="certify a client through the proxy")
    cert.add_argument("--plan", type=Path, required=True, help="the certification plan (TOML)")
    cert.add_argument("--upstream", help="a test organisation's base URL instead of the "
                      "embedded sandbox (needs --key-env)")  # fmt: skip
    cert.add_argument("--key-env", help="environment variable holding the upstream's key")
    cert.add_argument("--report-dir", type=Path, default=Path("reports/certify"),
                      help="write <DIR>/<run id>/ reports, journals and certificate")  # fmt: skip
    cert.add_argument("--scenario", action="append", default=[], metavar="ID",
                      help="only scenarios whose id matches (glob, repeatable)")  # fmt: skip
    cert.add_argument("--quick", action="store_true",
                      help="only the scaled-down set (scenarios marked quick)")  # fmt: skip
    cert.add_argument("--expected-failures", type=Path,
                      help="TOML [[expected]] scenario, requirement, reason: judged as "
                      "warnings, and a failure when they do not happen")  # fmt: skip


def _expected(path: Path | None, scenarios: list[Scenario]) -> dict[tuple[str, str], str]:
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"expected failures {path}: cannot read ({error})") from None
    known = {(s.id, e.requirement) for s in scenarios for e in s.expectations}
    out = {}
    for n, item in enumerate(data.get("expected", [])):
        if set(item) != {"scenario", "requirement", "reason"} or not item["reason"]:
            raise UsageError(f"expected failures {path} #{n + 1}: needs scenario, requirement "
                             "and a reason")  # fmt: skip
        key = (item["scenario"], item["requirement"])
        if key not in known:
            raise UsageError(f"expected failures {path} #{n + 1}: no scenario {key[0]} proving "
                             f"{key[1]} is selected")  # fmt: skip
        out[key] = str(item["reason"])
    if set(data) - {"expected"}:
        raise UsageError(f"expected failures {path}: only [[expected]] tables")
    return out


def _progress(scenario: Scenario, tests: list[TestFinished]) -> None:
    words = ", ".join(f"{t.requirement_ids[0] if t.requirement_ids else t.nodeid.split('::')[-1]}"
                      f" {t.outcome.value}" for t in tests)  # fmt: skip
    print(f"  {scenario.id}: {words}", flush=True)


def command_certify(args: argparse.Namespace) -> int:
    plan = load_plan(args.plan)
    requirements = load_requirements()
    scenarios = load_catalogue(client_ids(requirements))
    if args.quick:
        scenarios = [s for s in scenarios if s.quick]
    if args.scenario:
        scenarios = [s for s in scenarios
                     if any(fnmatch.fnmatchcase(s.id, p) for p in args.scenario)]  # fmt: skip
        if not scenarios:
            raise UsageError(f"--scenario {' '.join(args.scenario)} matches no scenario")
    expected = _expected(args.expected_failures, scenarios)
    upstream_url = args.upstream or plan.upstream
    key_env = args.key_env or plan.key_env
    run_dir = args.report_dir / dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    run_dir.mkdir(parents=True, exist_ok=True)
    options = CertifyOptions(journal_dir=run_dir / "journal", expected_failures=expected)
    print(f"certify-client: {plan.name}: {len(scenarios)} scenarios; flow timeout "
          f"{plan.timeout:g} s", flush=True)  # fmt: skip
    signal.signal(signal.SIGTERM, _terminate)
    secrets = SecretBook()
    if upstream_url:
        if not key_env or not os.environ.get(key_env):
            raise UsageError("--upstream needs --key-env naming a set environment variable")
        key = os.environ[key_env]
        check_upstream(upstream_url, key)
        upstream = Upstream(upstream_url, dict.fromkeys(FLOW_KEYS, key))
        summary = certify(plan, scenarios, upstream, requirements, options, progress=_progress,
                          secrets=secrets)  # fmt: skip
    else:
        with EmbeddedSandbox() as profile_path:
            upstream = embedded_upstream(load_profile(profile_path, environ={}))
            check_upstream(upstream.base_url, upstream.keys["catalog"])
            summary = certify(plan, scenarios, upstream, requirements, options,
                              progress=_progress, secrets=secrets)  # fmt: skip
    document = results_document(summary)
    html = write_document(document, run_dir)
    verdict = summary.verdict()
    print(summary.line())
    print(f"report: {html}")
    if args.quick or args.scenario:
        print("no certificate: only a run of the whole catalogue is certified")
    elif verdict in (Verdict.CONFORMING, Verdict.WARNINGS):
        journals = sorted(options.journal_dir.glob("*.jsonl"))
        bundle = write_certificate(run_dir / "certificate", document, run_dir / "results.json",
                                   plan.text, plan.name, journals, secrets.values)  # fmt: skip
        print((bundle / "SUMMARY.txt").read_text(encoding="utf-8").strip())
        print(f"certificate: {bundle}")
    else:
        print("no certificate: the verdict does not allow one")
    return summary.exit_code()


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def command_proxy(args: argparse.Namespace) -> int:
    if not args.upstream.startswith(("http://", "https://")):
        raise UsageError("--upstream must be an http(s) URL")
    if not 0 <= args.port <= 65535:
        raise UsageError("--port is 0 to 65535")
    injections: list[Any] = []
    if args.scenario is not None:
        requirements = load_requirements()
        found = load_catalogue(client_ids(requirements), [args.scenario])
        if not found:
            raise UsageError(f"{args.scenario}: no scenario in it")
        injections = list(found[0].injections)
    journal = Journal(args.journal)
    signal.signal(signal.SIGTERM, _terminate)
    deadline = time.monotonic() + args.max_duration
    with RefereeProxy(args.upstream, journal=journal, injector=Injector(injections),
                      port=args.port) as proxy:  # fmt: skip
        print(f"referee proxy: {proxy.base_url} -> {args.upstream}"
              f"{f'; journal {args.journal}' if args.journal else ''}; Ctrl-C to stop",
              flush=True)  # fmt: skip
        try:
            while time.monotonic() < deadline:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
    journal.close()
    entries = journal.entries()
    injected = sum(1 for e in entries if e.injected)
    untouched = [e.exchange(proxy.base_url) for e in entries if not e.injected and e.status]
    server = judge_exchanges(untouched)
    for finding in server:
        print(f"server finding: {finding.line()}", file=sys.stderr)
    print(f"referee proxy: {len(entries)} exchanges recorded, {injected} injected, "
          f"{len(server)} server findings", file=sys.stderr)  # fmt: skip
    return 1 if server else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "proxy": command_proxy,
    "certify-client": command_certify,
}
