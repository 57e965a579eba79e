"""How the suite lets time pass while it waits for a server to take a change in.

Against any server a freshness poll sleeps between its reads, up to the spec's bound (spec:
Limits > Freshness): 30 s for most data, 5 minutes for subtitles. Against the sandbox those
sleeps can be made instant: `run --advance-clock` moves the sandbox's clock (`POST
/_sandbox/clock`, which shifts every time the sandbox reads, from ticket lifetimes to rate-limit
windows) by the same amount instead, and the poll's own elapsed time counts the move. A server
that shows a change only 35 s after it then still misses a 30 s bound, in no time.

Only for one scenario at a time: moving a shared clock would age what a neighbour is timing, so
`--advance-clock` refuses `--workers` above 1. The scenarios that time the server itself (hold,
drain, refill, clock minute) do not wait through this: they measure the real clock.

    WAITS.monotonic()        # seconds, real plus every move of the target's clock
    WAITS.sleep(2.0)         # a real sleep, or the target's clock moved 2 s
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["WAITS", "Waits"]


class Waits:
    """Real sleeps, or moves of the target's clock once `advance_with` is given one."""

    def __init__(
        self,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._monotonic = monotonic
        self._sleep = sleep
        self._advance: Callable[[float], object] | None = None
        self.advanced = 0.0  # seconds the target's clock was moved

    @property
    def advancing(self) -> bool:
        return self._advance is not None

    def advance_with(self, advance: Callable[[float], object] | None) -> None:
        """Wait by calling `advance(seconds)` from now on (None: real sleeps again)."""
        self._advance = advance

    def monotonic(self) -> float:
        return self._monotonic() + self.advanced

    def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        if self._advance is None:
            self._sleep(seconds)
            return
        self._advance(seconds)
        self.advanced += seconds


WAITS = Waits()  # the suite's one instance; the plugin points it at the target's clock
