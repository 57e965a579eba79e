"""The sandbox's targeted kill rate, judged: every fault caught with exact blame, the clean
sandbox passing, and every requirement the suite claims proven by it.

The run comes from the session fixture `targeted_killrate` (conftest.py, killrate_support.py),
started when the session is collected; the tests that read it live here, alone in their file,
so that `make test`'s workers (pytest-xdist, one file to a worker) never wait for it before
every other file has been handed out.
"""

from __future__ import annotations

from collections.abc import Callable

from killrate_support import CLEAN_RUNS, FIGURE, KillRateRun
from proofs_support import LOAD_ANALYSIS, PENDING, SUITE, load_campaign_rows, pending_file

from delivery_conformance.killrate.proofs import Proofs, change_row_proofs, judge, scan
from delivery_conformance.spec.changes import load_changes
from delivery_conformance.spec.requirements import load_requirements


def test_every_fault_is_caught_and_the_clean_sandbox_passes(
    targeted_killrate: KillRateRun, record_property: Callable[[str, object], None]
) -> None:
    """Kill rate, blame precision and the false-positive rate of the clean runs."""
    done, data = targeted_killrate.done, targeted_killrate.data
    assert data is not None, targeted_killrate.output()
    clean = sum(1 for run in data["clean_runs"] if run["passed"])
    total, caught, exact = data["faults_total"], data["faults_caught"], data["exact_blame"]
    record_property(
        FIGURE,
        f"kill rate (targeted, all processes): {caught}/{total} faults caught; exact blame "
        f"{exact}/{total}; clean runs passed {clean}/{len(data['clean_runs'])}",
    )
    uncaught = {f["name"]: f["failing_ids"] for f in data["faults"] if not f["caught"]}
    dirty = [run for run in data["clean_runs"] if not run["passed"]]
    assert data["faults_total"] > 0 and len(data["clean_runs"]) == CLEAN_RUNS
    assert not uncaught, f"faults not caught (failing IDs seen instead): {uncaught}"
    # Blame precision: nothing failed but the fault's own IDs and its declared collateral.
    blamed = {
        f["name"]: f["blamed_elsewhere"]
        for f in data["faults"]
        if f["caught"] and not f["exact_blame"]
    }
    assert not blamed, f"faults that made other requirements fail: {blamed}"
    assert not dirty, f"clean runs with failures: {dirty}"
    assert done.returncode == 0, done.stderr[-2000:]


def test_every_claimed_requirement_keeps_its_proof(
    targeted_killrate: KillRateRun, record_property: Callable[[str, object], None]
) -> None:
    assert targeted_killrate.data is not None, targeted_killrate.output()
    marked, charged = scan(SUITE)
    load_rows = load_campaign_rows()
    rows = targeted_killrate.data["faults"] + load_rows
    load_ids = {rid for row in load_rows for rid in row["requirement_ids"]}
    marked, charged = marked | load_ids, charged | (load_ids & scan(LOAD_ANALYSIS)[1])
    proofs: Proofs = judge(load_requirements(), marked, charged, rows)
    record_property(FIGURE, proofs.figures())
    count, pending = pending_file()
    now_pending = set(proofs.not_yet_proven)
    lost = {rid: proofs.not_yet_proven[rid] for rid in sorted(now_pending - pending)}
    assert not lost, f"requirements that lost their proof (or new, unproven): {lost}"
    gained = sorted(pending - now_pending)
    assert not gained, (
        f"proven now, take them out of {PENDING.name} (and lower its count from {count}): {gained}"
    )


def test_every_consequence_of_the_change_catalogue_is_failed_by_a_fault(
    targeted_killrate: KillRateRun, record_property: Callable[[str, object], None]
) -> None:
    """Row by row, not only per requirement: each consequence's generated scenario is among the
    tests that caught a fault of its requirement, with exact blame (spec/changes.yaml)."""
    assert targeted_killrate.data is not None, targeted_killrate.output()
    proofs = change_row_proofs(load_changes(), targeted_killrate.data["faults"])
    record_property(FIGURE, proofs.figures())
    assert proofs.proven, "no consequence of the change catalogue was proven"
    assert not proofs.not_yet_proven, (
        f"consequences whose scenario no fault made fail: {list(proofs.not_yet_proven)}"
    )
