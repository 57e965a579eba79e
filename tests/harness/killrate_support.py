"""One targeted kill-rate run of the embedded sandbox, shared by the self-tests that judge it.

`make test` pays for it once: the `targeted_killrate` fixture (conftest.py) runs it on first
use; test_killrate judges the fault catalogue with it, test_requirement_proofs the proof of every
requirement the suite claims.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
KILLRATE_TIMEOUT = 900  # seconds; measured about 150 s on the 2-core build machine
CLEAN_RUNS = 3


@dataclass(frozen=True)
class KillRateRun:
    """`killrate --mode targeted --no-properties --clean-runs 3` and its killrate.json."""

    done: subprocess.CompletedProcess[str]
    data: dict[str, Any] | None  # None when the run wrote no report

    def output(self) -> str:
        return self.done.stdout[-2000:] + self.done.stderr[-2000:]


def run_targeted_killrate(where: Path) -> KillRateRun:
    command = [sys.executable, "-m", "delivery_conformance.cli", "killrate", "--mode", "targeted"]
    command += ["--no-properties", "--clean-runs", str(CLEAN_RUNS), "--report-dir", str(where)]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=KILLRATE_TIMEOUT, check=False
    )
    reports = list(where.glob("killrate/*/killrate.json"))
    data = json.loads(reports[0].read_text()) if len(reports) == 1 else None
    return KillRateRun(done, data)
