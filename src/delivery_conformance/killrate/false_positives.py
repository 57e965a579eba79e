"""The false-positive rate: does the suite pass every legal variant of the sandbox?

    report = run_variants(VariantOptions(run_dir=Path("reports/variants/x")))
    report.passed, report.total, report.ok()

The kill rate proves each judge fails on a server that breaks its rule; this proves the other
side: each judge passes a server that differs from ours only where the spec allows (a content
coding, caches inside the freshness bounds, no ticket reuse, another reading of an ambiguous
sentence). The catalogue of variants is read from `python -m delivery_sandbox --list-variants`,
never imported. Each variant gets its own sandbox (`--variant NAME`, extended versions) and one
whole run of the suite as a user runs it (`delivery-conformance run --target ...`, a
subprocess); `together` runs one sandbox with every chosen variant on at once (the quick form).

A variant passes when its run exits 0 (warnings allowed), with no `must` requirement failed,
nothing unattributed, and a verdict that is neither PARTIAL nor HARNESS ERROR: a legal server
must be judged conforming, never merely "not refused".
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from delivery_conformance.exceptions import HarnessFailure, UsageError
from delivery_conformance.target.embedded import EmbeddedSandbox

__all__ = ["VariantOptions", "VariantOutcome", "VariantsReport", "list_variants", "run_variants"]

RUN_TIMEOUT = 1200.0  # seconds for one whole run of the suite against one variant
PASSING_WORDS = frozenset({"CONFORMING", "CONFORMING WITH WARNINGS"})


@dataclass(frozen=True)
class VariantOptions:
    run_dir: Path
    variants: tuple[str, ...] = ()  # empty: the whole catalogue
    together: bool = False  # one sandbox, every chosen variant on
    properties: bool = True
    jobs: int = 1
    run_timeout: float = RUN_TIMEOUT
    extra_run_args: tuple[str, ...] = ()  # e.g. ("--requirement", "PLAY-*")


@dataclass(frozen=True)
class VariantOutcome:
    """One run of the suite against one variant (or one set of variants)."""

    variants: tuple[str, ...]
    exit_code: int | None
    verdict: str
    failed: tuple[str, ...] = ()  # must requirements failed
    warnings: tuple[str, ...] = ()
    not_exercised: tuple[str, ...] = ()
    unattributed: int = 0
    duration: float = 0.0
    problem: str = ""  # the run could not be made or read

    @property
    def passed(self) -> bool:
        return (
            self.exit_code == 0
            and self.verdict in PASSING_WORDS
            and not self.failed
            and not self.unattributed
            and not self.problem
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "variants": list(self.variants),
            "passed": self.passed,
            "exit_code": self.exit_code,
            "verdict": self.verdict,
            "failed": list(self.failed),
            "warnings": list(self.warnings),
            "not_exercised": list(self.not_exercised),
            "unattributed": self.unattributed,
            "duration_seconds": round(self.duration, 1),
            "problem": self.problem,
        }


@dataclass
class VariantsReport:
    catalogue: list[dict[str, Any]]
    outcomes: list[VariantOutcome] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    def ok(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "total": self.total,
            "outcomes": [o.to_dict() for o in self.outcomes],
            "catalogue": self.catalogue,
        }

    def markdown(self) -> str:
        allowed = {row["name"]: row.get("allowed_by", "") for row in self.catalogue}
        lines = [
            f"# False-positive rate: {self.passed} of {self.total} legal variants passed",
            "",
            "| Variant | Allowed by | Verdict | Exit | Must failed | Warnings | Time |",
            "|---|---|---|---|---|---|---|",
        ]
        for o in self.outcomes:
            name = " + ".join(o.variants)
            where = allowed.get(o.variants[0], "") if len(o.variants) == 1 else "(together)"
            verdict = o.verdict + (f" ({o.problem})" if o.problem else "")
            lines.append(
                f"| {name} | {where} | {verdict} | {o.exit_code} | "
                f"{', '.join(o.failed) or '-'} | {', '.join(o.warnings) or '-'} | "
                f"{o.duration:.0f} s |"
            )
        return "\n".join(lines) + "\n"


def list_variants() -> list[dict[str, Any]]:
    """The sandbox's catalogue of legal variants (`--list-variants`), as it prints it."""
    done = subprocess.run(
        [sys.executable, "-m", "delivery_sandbox", "--list-variants"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise HarnessFailure(f"the sandbox could not list its variants: {done.stderr.strip()}")
    try:
        rows = json.loads(done.stdout)
    except ValueError:
        raise HarnessFailure("the sandbox's variant list is not JSON") from None
    return [dict(row) for row in rows]


def _read_results(report_dir: Path) -> dict[str, Any] | None:
    found = [p for p in report_dir.glob("*/results.json") if p.parent.name != "latest"]
    if len(found) != 1:
        return None
    try:
        return dict(json.loads(found[0].read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def _ids_with(results: dict[str, Any], status: str, level: str | None = None) -> tuple[str, ...]:
    return tuple(
        r["id"]
        for r in results.get("requirements", [])
        if r.get("status") == status and (level is None or r.get("level") == level)
    )


def judge_run(
    variants: tuple[str, ...],
    exit_code: int | None,
    results: dict[str, Any] | None,
    duration: float,
    problem: str = "",
) -> VariantOutcome:
    """The outcome of one run from its exit code and results.json (pure)."""
    if results is None:
        return VariantOutcome(
            variants, exit_code, "NO REPORT", duration=duration, problem=problem or "no results"
        )
    run = results.get("run", {})
    return VariantOutcome(
        variants,
        exit_code,
        str(run.get("verdict_word", "")),
        failed=_ids_with(results, "failed", "must"),
        warnings=_ids_with(results, "warning"),
        not_exercised=_ids_with(results, "not exercised"),
        unattributed=len(results.get("unattributed_findings", [])),
        duration=duration,
        problem=problem,
    )


def run_one(variants: tuple[str, ...], options: VariantOptions) -> VariantOutcome:
    """One sandbox playing `variants`, one whole run of the suite against it."""
    report_dir = options.run_dir / "-".join(variants if len(variants) < 4 else ("together",))
    started = time.monotonic()
    sandbox_options = [part for name in variants for part in ("--variant", name)]
    try:
        with EmbeddedSandbox(options=sandbox_options) as profile:
            command = [
                sys.executable, "-m", "delivery_conformance.cli", "run",
                "--target", str(profile), "--report-dir", str(report_dir),
                *(() if options.properties else ("--no-properties",)),
                *options.extra_run_args,
            ]  # fmt: skip
            log = report_dir.with_suffix(".log")
            report_dir.mkdir(parents=True, exist_ok=True)
            with log.open("w", encoding="utf-8") as out:
                done = subprocess.run(
                    command,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    timeout=options.run_timeout,
                    check=False,
                )
    except subprocess.TimeoutExpired:
        took = time.monotonic() - started
        return judge_run(variants, None, None, took, f"over {options.run_timeout:g} s")
    except HarnessFailure as error:
        return judge_run(variants, None, None, time.monotonic() - started, str(error))
    took = time.monotonic() - started
    return judge_run(variants, done.returncode, _read_results(report_dir), took)


def run_variants(
    options: VariantOptions, progress: Callable[[VariantOutcome], None] | None = None
) -> VariantsReport:
    """Every chosen variant (or all of them together), runs `options.jobs` at a time."""
    catalogue = list_variants()
    known = [str(row["name"]) for row in catalogue]
    unknown = [name for name in options.variants if name not in known]
    if unknown:
        raise UsageError(f"unknown variant: {', '.join(unknown)} (known: {', '.join(known)})")
    chosen = tuple(options.variants) or tuple(known)
    report = VariantsReport(catalogue)
    groups: Sequence[tuple[str, ...]] = (
        [chosen] if options.together else [(name,) for name in chosen]
    )
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        for outcome in pool.map(lambda group: run_one(group, options), groups):
            report.outcomes.append(outcome)
            if progress is not None:
                progress(outcome)
    return report


def write_report(report: VariantsReport, run_dir: Path) -> tuple[Path, Path]:
    run_dir.mkdir(parents=True, exist_ok=True)
    as_json, as_md = run_dir / "variants.json", run_dir / "variants.md"
    as_json.write_text(json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8")
    as_md.write_text(report.markdown(), encoding="utf-8")
    return as_json, as_md
