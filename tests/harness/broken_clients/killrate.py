"""The client kill rate: certify the reference client and every broken variant against one
embedded sandbox; a variant is caught when the failed requirement IDs are exactly its own.

    python tests/harness/broken_clients/killrate.py [--set full|fast|quick] [--jobs N]
        [--variant NAME ...] [--clean-runs N] [--out FILE.md]

--set full: every scenario for every client; fast (default for variants): every scenario but
the five slow timing ones (17 s, 6 s, up to 20 s, about 95 s, about 60 s), which run only for
the variants aimed at their requirements; quick: each variant against its one quick scenario
(make test form).
Exit 0 when every variant is caught with exact blame and every clean run is certified.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from variants import VARIANTS, Variant

from delivery_conformance.certify.plan import Plan, load_plan
from delivery_conformance.certify.runner import (
    CertifyOptions,
    Upstream,
    certify,
    client_ids,
    embedded_upstream,
)
from delivery_conformance.certify.scenarios import Scenario, load_catalogue
from delivery_conformance.reports.results import RunSummary, Status
from delivery_conformance.spec.requirements import Requirement, load_requirements
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile
from delivery_conformance.verdict import Verdict

HERE = Path(__file__).resolve().parent
PLAN = HERE / "reference_plan.toml"
SLOW = frozenset({"retry-background-timeout", "retry-interactive-timeout-floor",
                  "retry-total-interactive", "retry-total-background",
                  "sync-poll-schedule"})  # fmt: skip
UNATTRIBUTED = "(unattributed)"


@dataclass(frozen=True)
class Outcome:
    name: str
    what: str
    expected: frozenset[str]
    charged: frozenset[str]
    verdict: str
    seconds: float
    scenarios: int

    @property
    def ok(self) -> bool:
        return self.charged == self.expected


def plan_for(client: str) -> Plan:
    plan = load_plan(PLAN)
    return Plan(plan.name if client == "delivery-client" else client.split()[-1], plan.flows,
                plan.timeout, plan.export, {**plan.vars, "client": client},
                text=plan.text)  # fmt: skip


def broken_command(name: str) -> str:
    return f"{sys.executable} {HERE / 'broken_client.py'} {name}"


def charged(summary: RunSummary) -> frozenset[str]:
    # a broken "should" rule is a warning (CONFORMING WITH WARNINGS): charged all the same
    ids = {r.requirement.id for r in summary.requirements
           if r.status in (Status.FAILED, Status.WARNING)}  # fmt: skip
    if summary.unattributed:
        ids.add(UNATTRIBUTED)
    return frozenset(ids)


def run_one(
    name: str, what: str, expected: frozenset[str], client: str, scenarios: list[Scenario],
    upstream: Upstream, requirements: dict[str, Requirement],
) -> Outcome:  # fmt: skip
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"killrate-{name}-") as folder:
        options = CertifyOptions(journal_dir=Path(folder))
        summary = certify(plan_for(client), scenarios, upstream, requirements, options)
    verdict = summary.verdict()
    found = charged(summary)
    if not expected and verdict is not Verdict.CONFORMING:
        found = found | {verdict.word}
    return Outcome(name, what, expected, found, verdict.word, time.monotonic() - started,
                   len(scenarios))  # fmt: skip


def select(variant: Variant, catalogue: list[Scenario], which: str) -> list[Scenario]:
    if which == "full":
        return catalogue
    if which == "quick":
        return [s for s in catalogue if s.id == variant.quick]
    return [s for s in catalogue
            if s.id not in SLOW or set(s.requirements) & variant.charged]  # fmt: skip


def table(outcomes: list[Outcome]) -> str:
    rows = ["| Client | Rule broken | Expected | Charged | Caught | Scenarios | Seconds |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for o in outcomes:
        expected = ", ".join(sorted(o.expected)) or "none (clean)"
        got = ", ".join(sorted(o.charged)) or "none"
        mark = "yes" if o.ok else "NO"
        rows.append(f"| {o.name} | {o.what} | {expected} | {got} | {mark} | {o.scenarios} "
                    f"| {o.seconds:.0f} |")  # fmt: skip
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--set", choices=("full", "fast", "quick"), default="fast",
                        help="the scenarios each broken client runs (default fast)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=1, help="clients certified at once")
    parser.add_argument("--variant", action="append", default=[], help="only these variants")
    parser.add_argument(
        "--clean-runs", type=int, default=1, help="reference client runs (whole catalogue)"
    )
    parser.add_argument("--out", type=Path, help="write the markdown table here")
    args = parser.parse_args(argv)
    requirements = load_requirements()
    catalogue = load_catalogue(client_ids(requirements))
    names = args.variant or list(VARIANTS)
    unknown = set(names) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {', '.join(sorted(unknown))}")
    with EmbeddedSandbox() as profile_path:
        upstream = embedded_upstream(load_profile(profile_path, environ={}))
        jobs = []
        clean = catalogue if args.set != "quick" else [s for s in catalogue if s.quick]
        for n in range(args.clean_runs):
            jobs.append((f"reference (run {n + 1})", "none", frozenset(), "delivery-client",
                         clean))  # fmt: skip
        for name in names:
            variant = VARIANTS[name]
            scenarios = select(variant, catalogue, args.set)
            proven = {rid for s in scenarios for rid in s.requirements}
            if scenarios:
                jobs.append((name, variant.what, variant.charged & proven, broken_command(name),
                             scenarios))  # fmt: skip

        def work(job: tuple[str, str, frozenset[str], str, list[Scenario]]) -> Outcome:
            outcome = run_one(*job, upstream, requirements)
            print(f"{outcome.name}: charged {sorted(outcome.charged)} "
                  f"({'caught' if outcome.ok else 'NOT as expected'}) in {outcome.seconds:.0f} s",
                  flush=True)  # fmt: skip
            return outcome

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            outcomes = list(pool.map(work, jobs))
    text = table(outcomes)
    broken = [o for o in outcomes if o.expected]
    caught = sum(o.ok for o in broken)
    clean_ok = all(o.ok for o in outcomes if not o.expected)
    clean_word = "all certified" if clean_ok else "NOT all certified"
    summary = (f"kill rate {caught}/{len(broken)} broken clients caught with exact blame; "
               f"clean reference runs {clean_word}")  # fmt: skip
    print(text)
    print(summary)
    if args.out:
        args.out.write_text(text + "\n\n" + summary + "\n", encoding="utf-8")
    return 0 if caught == len(broken) and clean_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
