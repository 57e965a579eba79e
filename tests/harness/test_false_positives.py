"""The false-positive rate (killrate/false_positives.py): the suite passes every legal variant.

The judgement of one run is pure and tested here from both sides; the quick form runs the
whole suite once against one sandbox playing every variant of `QUICK` at once (`make variants`
gives each variant its own sandbox and run, with the property tests).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from delivery_conformance.killrate.false_positives import (
    VariantOptions,
    VariantsReport,
    judge_run,
    list_variants,
    run_variants,
)


def results(verdict: str, statuses: dict[str, tuple[str, str]], unattributed: int = 0) -> dict:
    return {
        "run": {"verdict_word": verdict},
        "requirements": [
            {"id": rid, "status": status, "level": level}
            for rid, (status, level) in statuses.items()
        ],
        "unattributed_findings": [{}] * unattributed,
    }


def test_a_variant_passes_only_when_judged_conforming() -> None:
    clean = results("CONFORMING", {"GEN-001": ("passed", "must")})
    assert judge_run(("gzip",), 0, clean, 1.0).passed
    warned = results("CONFORMING WITH WARNINGS", {"VID-013": ("warning", "should")})
    outcome = judge_run(("frozen_feed_additions",), 0, warned, 1.0)
    assert outcome.passed and outcome.warnings == ("VID-013",)


@pytest.mark.parametrize(
    ("code", "document", "why"),
    [
        (1, results("VIOLATIONS FOUND", {"PLAY-065": ("failed", "must")}), "a must failed"),
        (4, results("PARTIAL", {"PLAY-003": ("not exercised", "must")}), "partial"),
        (3, results("HARNESS ERROR", {}), "the tool failed"),
        (1, results("VIOLATIONS FOUND", {}, unattributed=1), "a finding no rule names"),
        (None, None, "no report"),
        (0, results("PARTIAL, ACCEPTED", {"PLAY-003": ("not exercised", "must")}), "accepted"),
    ],
)
def test_a_variant_that_is_refused_or_not_judged_whole_fails(
    code: int | None, document: dict | None, why: str
) -> None:
    assert not judge_run(("v",), code, document, 1.0).passed, why


def test_the_report_counts_and_names_each_variant() -> None:
    report = VariantsReport([{"name": "gzip", "allowed_by": "RFC 9110"}])
    report.outcomes.append(judge_run(("gzip",), 0, results("CONFORMING", {}), 2.0))
    report.outcomes.append(judge_run(("br",), 3, results("HARNESS ERROR", {}), 2.0))
    assert (report.passed, report.total, report.ok()) == (1, 2, False)
    text = report.markdown()
    assert "1 of 2 legal variants passed" in text and "| gzip | RFC 9110 |" in text


def test_every_variant_names_where_the_spec_allows_it() -> None:
    catalogue = list_variants()
    assert len(catalogue) >= 25
    for row in catalogue:
        assert row["allowed_by"] and row["summary"] and row["seam"], row


def test_an_unknown_variant_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", "variants", "--variant", "nope",
         "--report-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "unknown variant: nope" in done.stderr


# The quick form: every variant that answers at once (no cache to wait out), all in one
# sandbox; `short_reuse_window` is left out for `no_reuse`, which decides reuse alone.
SLOW_OR_EXCLUSIVE = frozenset({"catalog_cache", "two_servers", "short_reuse_window"})


def quick_variants() -> tuple[str, ...]:
    return tuple(row["name"] for row in list_variants() if row["name"] not in SLOW_OR_EXCLUSIVE)


def test_the_suite_passes_a_sandbox_playing_the_quick_variants_together(tmp_path: Path) -> None:
    report = run_variants(
        VariantOptions(run_dir=tmp_path, variants=quick_variants(), together=True, properties=False)
    )
    (outcome,) = report.outcomes
    assert outcome.passed, json.dumps(outcome.to_dict())[:3000]
