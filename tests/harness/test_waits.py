"""The suite's waits: real sleeps, or moves of the target's clock (suite/waits.py)."""

from __future__ import annotations

from delivery_conformance.suite.waits import Waits
from fake_clock import FakeClock


def test_without_a_clock_to_move_a_wait_is_a_real_sleep() -> None:
    real = FakeClock()
    waits = Waits(real, real.sleep)
    start = waits.monotonic()
    waits.sleep(2.5)
    waits.sleep(0)
    assert real.sleeps == [2.5] and waits.monotonic() - start == 2.5 and not waits.advancing


def test_with_a_clock_to_move_a_wait_moves_it_and_counts_in_the_elapsed_time() -> None:
    real, moved = FakeClock(), []
    waits = Waits(real, real.sleep)
    waits.advance_with(moved.append)
    start = waits.monotonic()
    for _ in range(60):  # a 30 s poll, a read every half second
        waits.sleep(0.5)
    assert real.sleeps == [] and moved == [0.5] * 60
    assert waits.monotonic() - start == 30.0 and waits.advanced == 30.0
    waits.advance_with(None)
    waits.sleep(1.0)
    assert real.sleeps == [1.0] and moved == [0.5] * 60
