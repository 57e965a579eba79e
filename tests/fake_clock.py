"""A clock for self-tests of code that takes its clock and its sleep as arguments (the client's
retries, the harness's pacing): time moves only when the code under test sleeps."""

from __future__ import annotations


class FakeClock:
    """Monotonic time that moves only by `sleep`; every sleep is kept in `sleeps`."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
