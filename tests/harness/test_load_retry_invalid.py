"""An invalid load run (our generator fell behind) is run again, never counted as a pass.

`python -m loadtests.sensitivity --retry-invalid N` re-runs a run whose generator missed its
schedule at most N times and reports how many attempts were invalid; a run that failed, or whose
target failed, is final at once. The runs here are stand-ins for `loadtests.run` subprocesses.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASS = {"outcome": "pass", "generator": {"valid": True}, "figures": []}
BEHIND = {"outcome": "invalid", "generator": {"valid": False, "reason": "lateness"}}
TARGET_DOWN = {"outcome": "invalid", "generator": {"valid": True}, "target_failure": "5xx"}
FAIL = {"outcome": "fail", "generator": {"valid": True}, "figures": [{"passed": False}]}


@pytest.fixture
def sensitivity(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(ROOT))
    import loadtests.sensitivity as module

    yield module


def scripted(
    module: ModuleType, monkeypatch: pytest.MonkeyPatch, answers: list[tuple[int, dict[str, Any]]]
) -> list[int]:
    calls: list[int] = []

    def run_one(args: argparse.Namespace, campaign: str, fault: str | None, d: Path) -> Any:
        code, verdict = answers[len(calls)]
        calls.append(code)
        return module.Run(campaign, fault, code, verdict, 1.0)

    monkeypatch.setattr(module, "run_one", run_one)
    return calls


@pytest.mark.parametrize(
    ("answers", "final_code", "invalid"),
    [
        ([(3, BEHIND), (0, PASS)], 0, 1),  # behind once, then a valid pass
        ([(3, BEHIND), (3, BEHIND), (3, BEHIND)], 3, 2),  # still behind: stays invalid
        ([(3, TARGET_DOWN)], 3, 0),  # the target failed: final, not retried
        ([(1, FAIL)], 1, 0),  # a deviation is final
        ([(0, PASS)], 0, 0),
    ],
)
def test_only_a_generator_that_fell_behind_is_run_again_and_counted(
    sensitivity: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    answers: list[tuple[int, dict[str, Any]]],
    final_code: int,
    invalid: int,
) -> None:
    calls = scripted(sensitivity, monkeypatch, answers)
    args = argparse.Namespace(retry_invalid=2)
    run, retried = sensitivity.run_measured(args, "burst", None, Path("."))
    assert (run.code, retried, len(calls)) == (final_code, invalid, invalid + 1)


def test_the_report_names_the_invalid_attempts_beside_the_clean_runs(
    sensitivity: ModuleType,
) -> None:
    args = argparse.Namespace(limits_scale=0.05, latency=None, jitter="0ms", clean_runs=1)
    run = sensitivity.Run("burst", None, 0, PASS, 1.0)
    text = sensitivity.markdown([], {"burst": [run]}, args, {"burst": 1})
    assert "| burst | 1/1 | 0 | 1 |" in text
