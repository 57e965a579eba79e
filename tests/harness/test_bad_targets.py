"""Every kind of bad target ends `delivery-conformance run` with exit 3, one line, in bounded time.

docs/running.md > Exit codes: a target that refuses, hangs, trickles, answers HTML or garbage or
resets the connection is exit 3 with one line on stderr and no traceback, within the probe's bound
(`preflight.PROBE_TIMEOUT`, 10 s per answer, connect to last byte) plus start-up. Each kind runs the
real CLI as a subprocess against a tiny server of `bad_servers.py`; the six runs go side by side
(one session fixture), so the whole file costs about one bound, not six.
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from bad_servers import KINDS, BadServer, closed_port
from harness_support import KEY

from delivery_conformance.target.client import DEFAULT_TIMEOUT

# One answer's bound, plus the CLI's start-up and exit on a loaded two-core machine.
WALL_BOUND = DEFAULT_TIMEOUT + 12.0
QUICK_BOUND = 12.0  # kinds that fail at once need no timeout at all
SLOW_KINDS = {"trickle", "trickle_body", "hang"}
EXPECTED = {
    "refused": "cannot reach",
    "trickle": "too slow",
    "trickle_body": "too slow",
    "hang": "too slow",
    "html": "not JSON",
    "garbage": "invalid HTTP",
    "reset": "cannot reach",
}


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    took: float


def run_against(base_url: str, folder: Path) -> Outcome:
    folder.mkdir(parents=True, exist_ok=True)
    profile = folder / "target.toml"
    profile.write_text(f'base_url = "{base_url}"\n[keys]\nfilms = "{KEY}"\n', encoding="utf-8")
    command = [sys.executable, "-m", "delivery_conformance.cli", "run", "--target", str(profile),
               "--no-properties", "--report-dir", str(folder / "reports")]  # fmt: skip
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    return Outcome(done.returncode, done.stdout, done.stderr, time.monotonic() - start)


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Start every bad server, run the CLI against each at the same time, keep the outcomes."""
    base = tmp_path_factory.mktemp("bad-targets")
    with ExitStack() as stack:
        urls = {kind: stack.enter_context(BadServer(kind)) for kind in KINDS}
        urls["refused"] = f"http://127.0.0.1:{closed_port()}"
        with ThreadPoolExecutor(max_workers=len(urls)) as pool:
            futures = {k: pool.submit(run_against, url, base / k) for k, url in urls.items()}
            return {kind: future.result() for kind, future in futures.items()}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_a_bad_target_ends_with_exit_3_and_one_line_in_bounded_time(
    outcomes: dict[str, Outcome], kind: str
) -> None:
    outcome = outcomes[kind]
    shown = f"exit {outcome.returncode} after {outcome.took:.1f} s: {outcome.stderr}"
    assert outcome.returncode == 3, shown
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in outcome.stderr, shown
    assert lines[0].startswith("delivery-conformance: ") and EXPECTED[kind] in lines[0], shown
    assert KEY not in outcome.stdout + outcome.stderr
    assert outcome.took < (WALL_BOUND if kind in SLOW_KINDS else QUICK_BOUND), shown


@pytest.mark.parametrize("kind", sorted(SLOW_KINDS))
def test_a_slow_kind_is_cut_at_the_answer_bound_not_before(
    outcomes: dict[str, Outcome], kind: str
) -> None:
    """The bound is the answer's, not an accident: a slow kind runs at least that long."""
    assert outcomes[kind].took >= DEFAULT_TIMEOUT
