"""The independent population: a partner client written from the spec alone in JavaScript
(tests/harness/independent_clients/node), certified with its own plan, and its single-rule
breaks (breaks.toml) caught with exact blame. `make certify` runs every break; this runs the
clean client on the quick scenarios and a sample of five breaks on the scenarios aimed at them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from delivery_conformance.certify.plan import load_plan
from delivery_conformance.certify.runner import client_ids
from delivery_conformance.certify.scenarios import FLOWS
from delivery_conformance.spec.requirements import load_requirements

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "broken_clients"))

import killrate  # noqa: E402  (a script folder, put on the path above)

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node (20+) is not installed here")
ENV = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
# One break per family: paging, batch retries, stored links, tolerance, the key's transport.
SAMPLE = ("cursor_decoded", "resends_whole_batch", "stores_poster_signed_url",
          "strict_reason_switch", "key_in_query")  # fmt: skip


def test_every_break_applies_once_and_names_only_client_requirements() -> None:
    breaks = killrate.load_breaks()
    known = set(client_ids(load_requirements()))
    assert len(breaks) >= 40
    for brk in breaks.values():
        assert brk.expect <= known, f"{brk.name}: {sorted(brk.expect - known)} unknown"
        assert brk.what and "\n" not in brk.what
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / "client"
            shutil.copytree(killrate.NODE_DIR, copy)
            killrate.apply_break(brk, copy)  # refuses a find text missing or not unique
            assert any((copy / e.file).read_text() != (killrate.NODE_DIR / e.file).read_text()
                       for e in brk.edits)  # fmt: skip


def test_a_break_whose_find_text_is_missing_or_repeated_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.mjs").write_text("x;\nx;\n", encoding="utf-8")
    twice = killrate.Break(
        "twice", "x", frozenset({"CLI-001"}), (killrate.Edit("a.mjs", "x;", "y;"),)
    )
    missing = killrate.Break("missing", "x", frozenset({"CLI-001"}),
                             (killrate.Edit("a.mjs", "z;", "y;"),))  # fmt: skip
    for brk, count in ((twice, 2), (missing, 0)):
        with pytest.raises(killrate.UsageError, match=f"occurs {count} times"):
            killrate.apply_break(brk, tmp_path)
    assert (tmp_path / "a.mjs").read_text(encoding="utf-8") == "x;\nx;\n"


def test_the_node_plan_loads_with_its_own_exit_convention() -> None:
    plan = load_plan(killrate.NODE_PLAN)
    assert set(plan.flows) <= set(FLOWS)
    assert {"catalog", "catalog_paged", "creatives", "playback", "playback_batch", "config",
            "download"} <= set(plan.flows)  # fmt: skip
    assert plan.export and plan.per_item_failure_exit == 3


@needs_node
def test_every_break_is_still_valid_javascript() -> None:
    for brk in killrate.load_breaks().values():
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / "client"
            shutil.copytree(killrate.NODE_DIR, copy)
            killrate.apply_break(brk, copy)
            for edit in {e.file for e in brk.edits}:
                done = subprocess.run([NODE or "node", "--check", str(copy / edit)],
                                      capture_output=True, text=True)  # fmt: skip
                assert done.returncode == 0, f"{brk.name}: {done.stderr}"


@needs_node
@pytest.mark.slow
def test_the_clean_node_client_is_certified_and_a_sample_of_breaks_caught() -> None:
    done = subprocess.run(
        [sys.executable, str(HERE / "broken_clients" / "killrate.py"), "--population", "node",
         "--set", "quick", "--jobs", "2", "--clean-runs", "1",
         *[a for name in SAMPLE for a in ("--variant", name)]],
        env=ENV, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"kill rate {len(SAMPLE)}/{len(SAMPLE)} breaks of the node client caught" in done.stdout
    assert "| node (run 1) | none | none (clean) | none | yes |" in done.stdout
