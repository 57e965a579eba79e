"""What the stateful explorations share (test_state_model.py, test_ticket_model.py): their
budget (`run --state-sequences N`, 0 leaves them "not exercised"), Hypothesis's settings for a
rule-based state machine, and what a failing sequence reports.

The seed is the run's (derandomized); the kill rate turns the shrinking off
(`--no-state-shrink`): it needs the rule charged, not the shortest sequence.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import FlakyFailure
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test
from state_model import Finding

from delivery_conformance.checks import expect
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX

__all__ = ["STEPS", "judge", "run_sequences", "sequences_or_skip"]

STEPS = 8  # steps of one sequence


def sequences_or_skip(request: pytest.FixtureRequest) -> int:
    """The run's budget of sequences; a budget of 0 leaves the scenario not exercised."""
    sequences = int(request.config.getoption("state_sequences") or 0)
    if sequences < 1:
        pytest.skip(NOT_EXERCISED_PREFIX + "run --state-sequences 0")
    return sequences


def judge(found: list[Finding], steps: list[str]) -> None:
    """Each finding of a model fails its requirement, the steps so far as the evidence."""
    for finding in found:
        expect(
            finding.requirement,
            False,
            expected=finding.expected,
            actual=f"{finding.actual} after: {'; '.join(steps)}",
            title=f"state model: {finding.requirement} after {len(steps)} steps",
        )


def run_sequences(
    machine: type[RuleBasedStateMachine],
    sequences: int,
    request: pytest.FixtureRequest,
    steps: int = STEPS,
) -> None:
    """Runs `sequences` random sequences of `steps` steps of the machine, shrunk unless the run
    says not to."""
    shrink = not request.config.getoption("no_state_shrink")
    try:
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=sequences,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
                print_blob=False,
                phases=[p for p in Phase if p is not Phase.shrink or shrink],
            ),
        )
    except FlakyFailure as flaky:
        # The replay of a failing sequence did not fail again: the server answered otherwise
        # (a cache, another server behind the name). A violation seen once is still one.
        raise flaky.exceptions[0] from None
