"""The sandbox clock: one injected time source plus an offset the admin API moves.

Every part of the sandbox reads time through one `Clock`, so `POST /_sandbox/clock` moves
licence windows, link expiries, rate-limit windows and ticket lifetimes together.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock"]


class Clock:
    """Wall time from `source` shifted by `offset` seconds."""

    def __init__(self, source: Callable[[], float] = time.time, offset: float = 0.0) -> None:
        self._source = source
        self.offset = offset

    def now(self) -> float:
        return self._source() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    def set(self, epoch: float) -> None:
        self.offset = epoch - self._source()

    def reset(self) -> None:
        self.offset = 0.0
