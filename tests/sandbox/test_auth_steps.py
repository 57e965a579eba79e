"""The order of checks as one table of steps, and the reference path free of faults (spec:
Authentication 4; docs/sandbox.md > Fault catalogue): auth.py, the HTTP helpers and app.py
name no fault, and the faults act at their seams only."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import delivery_sandbox
from delivery_sandbox.auth import STEPS
from delivery_sandbox.faults.authentication import bend_step
from delivery_sandbox.faults.switch import FaultSwitch

PACKAGE = Path(delivery_sandbox.__file__).parent
REFERENCE_PATH = ("auth.py", "app.py", "http/headers.py", "http/errors.py")


def test_the_steps_run_in_the_spec_order() -> None:
    assert [name for name, _ in STEPS] == [
        "version_header",
        "key_present",
        "key_valid",
        "pinned_version",
        "scope",
        "organisation",
        "simulated",
        "rate_limit",
    ]


@pytest.mark.parametrize("module", REFERENCE_PATH)
def test_the_reference_path_names_no_fault(module: str) -> None:
    text = (PACKAGE / module).read_text()
    assert "FaultName" not in text
    assert ".enabled(" not in text


@pytest.mark.parametrize("step", [name for name, _ in STEPS])
def test_with_no_fault_on_the_step_seam_only_runs_the_step(step: str) -> None:
    ran: list[str] = []
    check = SimpleNamespace(faults=FaultSwitch())
    outcome = bend_step(step, check, lambda: ran.append(step) or "passed")  # type: ignore[arg-type]
    assert (ran, outcome) == ([step], "passed")


def test_a_fault_moves_a_step_at_the_seam() -> None:
    """version_checked_after_key: the version step passes, the key step then checks it."""
    check = SimpleNamespace(faults=FaultSwitch(["version_checked_after_key"]), version_header="x")
    assert bend_step("version_header", check, lambda: "refused") is None  # type: ignore[arg-type]
