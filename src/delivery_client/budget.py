"""The process-wide retry budget (spec: Errors > Retry policy (client side), last sentences).

Like botocore's retry quota: one object shared by every client, thread and task of a process,
separate from backoff. Decision (CLI-023): retries allowed in the last 60 s are
max(10, floor(0.10 x requests sent in the last 60 s)); every attempt sent is a request, a retry
counts in both. A retry over budget is not sent: the call fails fast.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

__all__ = ["RetryBudget", "process_budget"]

WINDOW = 60.0


class RetryBudget:
    def __init__(
        self,
        ratio: float = 0.10,
        floor: int = 10,
        *,
        clock: Callable[[], float] = time.monotonic,
        window: float = WINDOW,
    ) -> None:
        self.ratio = ratio
        self.floor = floor
        self.window = window
        self._clock = clock
        self._requests: deque[float] = deque()
        self._retries: deque[float] = deque()
        self._lock = threading.Lock()

    def _prune(self, now: float) -> None:
        for times in (self._requests, self._retries):
            while times and times[0] <= now - self.window:
                times.popleft()

    def allowed(self, requests: int) -> int:
        return max(self.floor, math.floor(self.ratio * requests + 1e-9))

    def record_request(self) -> None:
        with self._lock:
            now = self._clock()
            self._prune(now)
            self._requests.append(now)

    def try_acquire(self) -> bool:
        """Take one retry if the budget of the last window allows it."""
        with self._lock:
            now = self._clock()
            self._prune(now)
            if len(self._retries) >= self.allowed(len(self._requests)):
                return False
            self._retries.append(now)
            return True

    def snapshot(self) -> tuple[int, int]:
        """(requests, retries) in the current window."""
        with self._lock:
            self._prune(self._clock())
            return len(self._requests), len(self._retries)


_PROCESS: RetryBudget | None = None
_PROCESS_LOCK = threading.Lock()


def process_budget() -> RetryBudget:
    """The one budget of this process (created on first use, with the real monotonic clock)."""
    global _PROCESS
    with _PROCESS_LOCK:
        if _PROCESS is None:
            _PROCESS = RetryBudget()
        return _PROCESS
