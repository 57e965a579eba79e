"""The client kill rate: certify the reference client and every broken variant against one
embedded sandbox; a variant is caught when the failed requirement IDs are exactly its own.

    python tests/harness/broken_clients/killrate.py [--set full|fast|quick] [--jobs N]
        [--population reference|node|all] [--variant NAME ...] [--clean-runs N] [--out FILE.md]

--population: reference (default) is the reference client and its broken variants
(variants.py); node is the independent Node partner client (independent_clients/node: its own
plan.toml, and each break of breaks.toml applied to a temporary copy of the client folder); all
is both, one table each. --variant names variants or breaks of the populations chosen. A break
marked `known_gap` (a rule our judges cannot catch yet, with the reason) is listed as such and
does not fail the run; the node population's expected_failures.toml (judge problems found with
that client, each with its reason) turns those failures into warnings that are not charged.

--set full: every scenario for every client; fast (default for variants): every scenario but
the six slow timing ones (17 s, 10 s, up to 20 s, about 95 s, about 60 s, about 26 s), which
run only for the variants aimed at their requirements; quick: each variant against its one quick
scenario (make test form).
Exit 0 when every variant is caught with exact blame and every clean run is certified.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

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
from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.results import RunSummary, Status
from delivery_conformance.spec.requirements import Requirement, load_requirements
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile
from delivery_conformance.verdict import Verdict

HERE = Path(__file__).resolve().parent
PLAN = HERE / "reference_plan.toml"
SLOW = frozenset({"retry-background-timeout", "retry-interactive-timeout",
                  "retry-total-interactive", "retry-total-background",
                  "sync-poll-schedule", "videos-refresh-before"})  # fmt: skip
UNATTRIBUTED = "(unattributed)"
NODE_DIR = HERE.parent / "independent_clients" / "node"
NODE_PLAN = NODE_DIR / "plan.toml"
NODE_BREAKS = NODE_DIR / "breaks.toml"
NODE_EXPECTED = NODE_DIR / "expected_failures.toml"
EXPECTED_TITLE = "expected failure ("


@dataclass(frozen=True)
class Outcome:
    name: str
    what: str
    expected: frozenset[str]
    charged: frozenset[str]
    verdict: str
    seconds: float
    scenarios: int
    known_gap: str = ""

    @property
    def ok(self) -> bool:
        return self.charged == self.expected


@dataclass(frozen=True)
class Edit:
    file: str
    find: str
    replace: str


@dataclass(frozen=True)
class Break:
    """One rule broken in a copy of the Node client: its edits, and the IDs it must be charged."""

    name: str
    what: str
    expect: frozenset[str]
    edits: tuple[Edit, ...]
    known_gap: str = ""


_BREAK_KEYS = frozenset({"name", "what", "expect", "file", "find", "replace", "edit",
                         "known_gap"})  # fmt: skip


def _edit(item: Any, where: str) -> Edit:
    if not isinstance(item, dict) or set(item) != {"file", "find", "replace"}:
        raise UsageError(f"{where}: an edit has exactly file, find and replace")
    if not all(isinstance(item[k], str) for k in item) or not item["find"]:
        raise UsageError(f"{where}: file, find and replace are strings, find not empty")
    return Edit(item["file"], item["find"], item["replace"])


def load_breaks(path: Path = NODE_BREAKS) -> dict[str, Break]:
    """breaks.toml: one [[break]] per break with name, what, expect and either file, find,
    replace (one edit) or [[break.edit]] tables (several edits); optional known_gap."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if set(data) - {"break"}:
        raise UsageError(f"{path}: only [[break]] tables")
    found: dict[str, Break] = {}
    for n, item in enumerate(data.get("break", [])):
        where = f"{path.name} break #{n + 1}"
        if set(item) - _BREAK_KEYS or not {"name", "what", "expect"} <= set(item):
            raise UsageError(f"{where}: keys are {', '.join(sorted(_BREAK_KEYS))}")
        single = {k: item[k] for k in ("file", "find", "replace") if k in item}
        if bool(single) == ("edit" in item):
            raise UsageError(f"{where}: either file, find, replace or [[break.edit]]")
        edits = (_edit(single, where),) if single else tuple(_edit(e, where)
                                                               for e in item["edit"])  # fmt: skip
        expect = item["expect"]
        if not isinstance(expect, list) or not expect:
            raise UsageError(f"{where}: expect lists the requirement IDs charged")
        if item["name"] in found:
            raise UsageError(f"{where}: name {item['name']} used twice")
        found[item["name"]] = Break(str(item["name"]), str(item["what"]),
                                    frozenset(map(str, expect)), edits,
                                    str(item.get("known_gap", "")))  # fmt: skip
    return found


def apply_break(brk: Break, folder: Path) -> None:
    """Each edit's find text must occur exactly once in its file; it is replaced once."""
    for edit in brk.edits:
        target = folder / edit.file
        if not target.is_file():
            raise UsageError(f"break {brk.name}: no file {edit.file}")
        text = target.read_text(encoding="utf-8")
        count = text.count(edit.find)
        if count != 1:
            raise UsageError(f"break {brk.name}: the find text occurs {count} times in "
                             f"{edit.file} (exactly once needed)")  # fmt: skip
        target.write_text(text.replace(edit.find, edit.replace, 1), encoding="utf-8")


def load_expected_failures(path: Path = NODE_EXPECTED) -> dict[tuple[str, str], str]:
    """[[expected]] scenario, requirement, reason (the certify-client format), if the file is
    there: judge problems found with the Node client."""
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {(str(e["scenario"]), str(e["requirement"])): str(e["reason"])
            for e in data.get("expected", [])}  # fmt: skip


def node_plan(client_dir: Path, name: str) -> Plan:
    """The node plan run on the copy in `client_dir`: its `{client}` names `{plan_dir}`."""
    return replace(load_plan(NODE_PLAN), name=name, plan_dir=str(client_dir))


def plan_for(client: str) -> Plan:
    plan = load_plan(PLAN)
    name = plan.name if client == "delivery-client" else client.split()[-1]
    return replace(plan, name=name, vars={**plan.vars, "client": client})


def broken_command(name: str) -> str:
    return f"{sys.executable} {HERE / 'broken_client.py'} {name}"


def _expected_only(violations: tuple[Any, ...]) -> bool:
    return bool(violations) and all(v.title.startswith(EXPECTED_TITLE) for v in violations)


def charged(summary: RunSummary) -> frozenset[str]:
    # a broken "should" rule is a warning (CONFORMING WITH WARNINGS): charged all the same; a
    # failure the expected-failures file names (a known judge problem) is not
    ids = {r.requirement.id for r in summary.requirements
           if r.status is Status.FAILED
           or (r.status is Status.WARNING and not _expected_only(r.violations))}  # fmt: skip
    if summary.unattributed:
        ids.add(UNATTRIBUTED)
    return frozenset(ids)


@dataclass(frozen=True)
class Job:
    name: str
    what: str
    expected: frozenset[str]
    client: str  # the reference population: the command that runs the client
    scenarios: list[Scenario]
    brk: Break | None = None  # the node population: the break applied (None: the clean client)
    node: bool = False
    known_gap: str = ""


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


def run_node(job: Job, upstream: Upstream, requirements: dict[str, Requirement]) -> Outcome:
    """The Node client (clean, or a temporary copy with one break applied) certified with its
    own plan; the expected-failures file's judge problems are warnings, not charged."""
    started = time.monotonic()
    selected = {s.id for s in job.scenarios}
    expected_failures = {k: v for k, v in load_expected_failures().items() if k[0] in selected}
    with tempfile.TemporaryDirectory(prefix=f"killrate-node-{job.name}-") as folder:
        client_dir = NODE_DIR
        if job.brk is not None:
            client_dir = Path(folder) / "client"
            shutil.copytree(NODE_DIR, client_dir)
            apply_break(job.brk, client_dir)
        options = CertifyOptions(journal_dir=Path(folder) / "journal",
                                 expected_failures=expected_failures)  # fmt: skip
        summary = certify(node_plan(client_dir, job.name), job.scenarios, upstream, requirements,
                          options)  # fmt: skip
    verdict = summary.verdict()
    found = charged(summary)
    clean_words = (Verdict.CONFORMING, Verdict.WARNINGS) if expected_failures else (
        Verdict.CONFORMING,)  # fmt: skip
    if not job.expected and (verdict not in clean_words or found):
        found = found | {verdict.word}
    return Outcome(job.name, job.what, job.expected, found, verdict.word,
                   time.monotonic() - started, len(job.scenarios), job.known_gap)  # fmt: skip


def select_for_break(brk: Break, catalogue: list[Scenario], which: str) -> list[Scenario]:
    """full: every scenario; fast: all but the slow ones not aimed at the break's IDs; quick:
    only the scenarios that judge its IDs (the slow ones left out unless aimed at them)."""
    if which == "full":
        return catalogue
    aimed = [s for s in catalogue if set(s.requirements) & brk.expect]
    if which == "quick":
        return aimed
    return [s for s in catalogue if s.id not in SLOW or s in aimed]


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
        mark = "yes" if o.ok else f"known gap: {o.known_gap}" if o.known_gap else "NO"
        rows.append(f"| {o.name} | {o.what} | {expected} | {got} | {mark} | {o.scenarios} "
                    f"| {o.seconds:.0f} |")  # fmt: skip
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--set", choices=("full", "fast", "quick"), default="fast",
                        help="the scenarios each broken client runs (default fast)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=1, help="clients certified at once")
    parser.add_argument("--population", choices=("reference", "node", "all"), default="reference",
                        help="the clients certified (default reference)")  # fmt: skip
    parser.add_argument("--variant", action="append", default=[],
                        help="only these variants (reference) or breaks (node)")  # fmt: skip
    parser.add_argument(
        "--clean-runs", type=int, default=1, help="reference client runs (whole catalogue)"
    )
    parser.add_argument("--out", type=Path, help="write the markdown table here")
    args = parser.parse_args(argv)
    requirements = load_requirements()
    catalogue = load_catalogue(client_ids(requirements))
    reference = args.population in ("reference", "all")
    node = args.population in ("node", "all")
    breaks = load_breaks() if node else {}
    known = (set(VARIANTS) if reference else set()) | set(breaks)
    unknown = set(args.variant) - known
    if unknown:
        parser.error(f"unknown variants {', '.join(sorted(unknown))}")
    names = [n for n in VARIANTS if not args.variant or n in args.variant] if reference else []
    break_names = [n for n in breaks if not args.variant or n in args.variant]
    with EmbeddedSandbox() as profile_path:
        upstream = embedded_upstream(load_profile(profile_path, environ={}))
        jobs: list[Job] = []
        clean = catalogue if args.set != "quick" else [s for s in catalogue if s.quick]
        if reference:
            for n in range(args.clean_runs):
                jobs.append(Job(f"reference (run {n + 1})", "none", frozenset(), "delivery-client",
                                clean))  # fmt: skip
            for name in names:
                variant = VARIANTS[name]
                scenarios = select(variant, catalogue, args.set)
                proven = {rid for s in scenarios for rid in s.requirements}
                if scenarios:
                    jobs.append(Job(name, variant.what, variant.charged & proven,
                                    broken_command(name), scenarios))  # fmt: skip
        if node:
            # the clean Node client runs the scenarios of the flows its plan has: it has no
            # long-running player of open videos (`videos_follow`), so CLI-040 is not
            # exercised for it and would make each clean run PARTIAL
            flows = set(load_plan(NODE_PLAN).flows)
            node_clean = [s for s in clean if s.flow in flows]
            for n in range(args.clean_runs):
                jobs.append(Job(f"node (run {n + 1})", "none", frozenset(), "", node_clean,
                                node=True))  # fmt: skip
            for name in break_names:
                brk = breaks[name]
                scenarios = select_for_break(brk, catalogue, args.set)
                proven = {rid for s in scenarios for rid in s.requirements}
                if scenarios:
                    jobs.append(Job(name, brk.what, brk.expect & proven, "", scenarios, brk,
                                    node=True, known_gap=brk.known_gap))  # fmt: skip

        def work(job: Job) -> Outcome:
            if job.node:
                outcome = run_node(job, upstream, requirements)
            else:
                outcome = run_one(job.name, job.what, job.expected, job.client, job.scenarios,
                                  upstream, requirements)  # fmt: skip
            print(f"{outcome.name}: charged {sorted(outcome.charged)} "
                  f"({'caught' if outcome.ok else 'NOT as expected'}) in {outcome.seconds:.0f} s",
                  flush=True)  # fmt: skip
            return outcome

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            outcomes = list(pool.map(work, jobs))
    # by job, not by name: a reference variant and a Node break may share a name
    of_node = [o for job, o in zip(jobs, outcomes, strict=True) if job.node]
    of_reference = [o for job, o in zip(jobs, outcomes, strict=True) if not job.node]
    parts: list[tuple[str, str]] = []
    ok = True
    if reference:
        text, summary, good = report(of_reference, "reference")
        parts.append((text, summary))
        ok = ok and good
    if node:
        text, summary, good = report(of_node, "node")
        parts.append((("## Independent Node client\n\n" if reference else "") + text, summary))
        ok = ok and good
    for text, summary in parts:
        print(text)
        print(summary)
    if args.out:
        written = "\n\n".join(text + "\n\n" + summary for text, summary in parts)
        args.out.write_text(written + "\n", encoding="utf-8")
    return 0 if ok else 1


def report(outcomes: list[Outcome], population: str) -> tuple[str, str, bool]:
    """The table and its summary line; True when every broken client is caught with exact
    blame (a break marked known_gap does not count against it) and every clean run certified."""
    text = table(outcomes)
    broken = [o for o in outcomes if o.expected]
    caught = sum(o.ok for o in broken)
    gaps = [o.name for o in broken if not o.ok and o.known_gap]
    clean_ok = all(o.ok for o in outcomes if not o.expected)
    clean_word = "all certified" if clean_ok else "NOT all certified"
    if population == "reference":
        summary = (f"kill rate {caught}/{len(broken)} broken clients caught with exact blame; "
                   f"clean reference runs {clean_word}")  # fmt: skip
    else:
        gap_text = f" ({len(gaps)} known gaps: {', '.join(gaps)})" if gaps else ""
        summary = (f"kill rate {caught}/{len(broken)} breaks of the node client caught with "
                   f"exact blame{gap_text}; clean node runs {clean_word}")  # fmt: skip
    good = caught + len(gaps) == len(broken) and clean_ok
    return text, summary, good


if __name__ == "__main__":
    raise SystemExit(main())
