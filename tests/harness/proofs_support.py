"""What the requirement-proof tests share: where the suite's charges are read, the ratchet file
of requirements not yet proven, and the load-only faults as proof rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from killrate_support import ROOT

PENDING = Path(__file__).with_name("requirement_proofs_pending.json")
# Where the load campaigns charge their figures (the load-only faults' checks).
LOAD_ANALYSIS = [ROOT / "src" / "delivery_conformance" / "load"]
SUITE = [
    ROOT / "tests" / "conformance",
    ROOT / "tests" / "properties",
    ROOT / "src" / "delivery_conformance" / "checks",
    ROOT / "src" / "delivery_conformance" / "properties",
]


def fault(name: str, ids: tuple[str, ...], failing: tuple[str, ...], caught: bool = True) -> dict:
    return {"name": name, "requirement_ids": list(ids), "failing_ids": list(failing),
            "caught": caught}  # fmt: skip


def pending_file() -> tuple[int, set[str]]:
    data = json.loads(PENDING.read_text())
    return data["count"], set(data["not_yet_proven"])


def load_campaign_rows() -> list[dict[str, Any]]:
    """The load-only faults (the conformance kill rate leaves them out), as proof rows.

    Each is proven by tests/harness/test_load_smoke.py, in the same `make test` but for the few it
    leaves to `make load-smoke` (`LOAD_FULL_SUBTLE`, a slower second fault of one campaign): its
    campaign fails with every requirement the fault declares charged by a failed figure and no
    figure outside them (`_fails_with`), and the load-only faults are exactly the ones listed in
    `loadtests.sensitivity.SUBTLE` with these IDs (`test_every_load_only_fault_has_a_campaign...`).
    """
    return [fault(name, ids, ids) for name, (_, ids) in subtle_faults().items()]


def subtle_faults() -> dict[str, tuple[str, tuple[str, ...]]]:
    """loadtests.sensitivity.SUBTLE: load-only fault -> (campaign, the IDs it declares)."""
    sys.path.insert(0, str(ROOT))
    try:
        from loadtests.sensitivity import SUBTLE
    finally:
        sys.path.remove(str(ROOT))
    return SUBTLE
