"""Pacing: keep the harness under a fraction of each rate counter (pure; `now` is passed in).

spec: Limits. Each counter has a limit per 60 s; `GET /config` reports them in
`rate_limits.doors` except for the single-video counter (10,800 per the Limits table) and the
simulated responses of test organisations (300 per minute, Limits item 4). The harness spends at
most `fraction` (default 0.5) of each limit within any sliding 60 s window. A sliding window at
half the limit also keeps every clock minute under half the limit, so the same rule serves the
continuously refilled counters and the clock-minute ones.

    pacer = Pacer()
    delay = pacer.wait_time("catalog", 1, now)   # seconds to sleep first (0.0: go)
    pacer.record("catalog", 1, now + delay)

`SharedPacer(path)` keeps the same record in a file, for the worker processes of one run.
"""

from __future__ import annotations

import fcntl
import json
import math
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from delivery_conformance.spec.limits import SPEC_LIMITS

__all__ = ["DEFAULT_LIMITS", "WINDOW_SECONDS", "Pacer", "SharedPacer", "limits_from_config"]

WINDOW_SECONDS = 60.0
# spec: Limits (the one table, spec/limits.py).
DEFAULT_LIMITS: Mapping[str, int] = {name: c.limit for name, c in SPEC_LIMITS.items()}


def limits_from_config(config: Any) -> dict[str, int]:
    """Counter limits from a decoded `GET /config` body; malformed entries are left out."""
    rate_limits = config.get("rate_limits") if isinstance(config, dict) else None
    doors = rate_limits.get("doors") if isinstance(rate_limits, dict) else None
    if not isinstance(doors, dict):
        return {}
    limits: dict[str, int] = {}
    for name, door in doors.items():
        limit = door.get("limit") if isinstance(door, dict) else None
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            limits[name] = limit
    return limits


class Pacer:
    """Sliding-window budget per counter. Unknown counters are never paced."""

    def __init__(
        self,
        limits: Mapping[str, int] = DEFAULT_LIMITS,
        *,
        fraction: float = 0.5,
        window: float = WINDOW_SECONDS,
    ) -> None:
        if not 0 < fraction <= 1:
            raise ValueError("fraction must be in (0, 1]")
        self.fraction = fraction
        self.window = window
        self._limits = dict(limits)
        self._spent: dict[str, deque[tuple[float, int]]] = {}

    def update_limits(self, limits: Mapping[str, int]) -> None:
        self._limits.update(limits)

    def budget(self, counter: str) -> int | None:
        limit = self._limits.get(counter)
        if limit is None:
            return None
        return max(1, math.floor(limit * self.fraction))

    def _live(self, counter: str, now: float) -> deque[tuple[float, int]]:
        spent = self._spent.setdefault(counter, deque())
        while spent and spent[0][0] <= now - self.window:
            spent.popleft()
        return spent

    def used(self, counter: str, now: float) -> int:
        return sum(cost for _, cost in self._live(counter, now))

    def wait_time(self, counter: str, cost: int, now: float) -> float:
        """Seconds to wait before spending `cost` on `counter` without passing the budget."""
        budget = self.budget(counter)
        if budget is None:
            return 0.0
        spent = self._live(counter, now)
        used = sum(c for _, c in spent)
        allowed = min(cost, budget)  # a request dearer than the budget waits for an empty window
        if used + allowed <= budget:
            return 0.0
        for at, spent_cost in spent:
            used -= spent_cost
            if used + allowed <= budget:
                return max(0.0, at + self.window - now)
        return 0.0  # unreachable: the window empties eventually

    def record(self, counter: str, cost: int, now: float) -> None:
        if counter in self._limits:
            self._live(counter, now).append((now, cost))


class SharedPacer(Pacer):
    """One budget shared by every process of a run (`run --workers N`): the spending record
    lives in `path` (JSON), read and written under an exclusive `flock` of `path`.lock, so N
    workers together stay under the same fraction of each counter as one would alone (never N
    times the budget). The window arithmetic is `Pacer`'s; only where the record lives differs.
    """

    def __init__(
        self,
        path: Path,
        limits: Mapping[str, int] = DEFAULT_LIMITS,
        *,
        fraction: float = 0.5,
        window: float = WINDOW_SECONDS,
    ) -> None:
        super().__init__(limits, fraction=fraction, window=window)
        self.path = path
        self._lock_path = path.with_name(path.name + ".lock")

    @contextmanager
    def _shared_record(self, write: bool) -> Iterator[None]:
        with self._lock_path.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._spent = _read_record(self.path)
                yield
                if write:
                    data = {name: list(spent) for name, spent in self._spent.items()}
                    temporary = self.path.with_name(self.path.name + ".tmp")
                    temporary.write_text(json.dumps(data))
                    temporary.replace(self.path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def used(self, counter: str, now: float) -> int:
        with self._shared_record(write=False):
            return super().used(counter, now)

    def wait_time(self, counter: str, cost: int, now: float) -> float:
        with self._shared_record(write=False):
            return super().wait_time(counter, cost, now)

    def record(self, counter: str, cost: int, now: float) -> None:
        if counter not in self._limits:
            return
        with self._shared_record(write=True):
            super().record(counter, cost, now)


def _read_record(path: Path) -> dict[str, deque[tuple[float, int]]]:
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return {}  # the first request of the run (or a record cut short: start again empty)
    return {
        name: deque((float(at), int(cost)) for at, cost in entries)
        for name, entries in data.items()
        if isinstance(entries, list)
    }
