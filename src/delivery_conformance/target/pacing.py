"""Pacing: keep the harness under a fraction of each rate counter (pure; `now` is passed in).

spec: Limits. Each counter has a limit per 60 s; `GET /config` reports them in
`rate_limits.doors` except for the single-video counter (10,800 per the Limits table) and the
simulated responses of test organisations (300 per minute, Limits item 4). The harness spends at
most `fraction` (default 0.5) of each limit within any sliding 60 s window. A sliding window at
half the limit also keeps every clock minute under half the limit, so the same rule serves the
continuously refilled counters and the clock-minute ones.

    pacer = Pacer()
    delay = pacer.reserve("catalog", 1, now)   # seconds to sleep first (0.0: go), and the
                                               # request is on the record at now + delay
    pacer.reserve("catalog", 1, now, organisation="limits")   # a budget of its own

The spec counts per organisation: `organisation` names a budget of its own, for a key whose
organisation no other key of the run shares; the default, "", is the budget of all the others.

Requests sent within `MERGE_SECONDS` of each other are kept as one entry at the later time: a
request then counts a little longer than it does on the server, never shorter, and the record
of a counter spent as fast as it allows holds a few hundred entries, not thousands.

`SharedPacer(path)` keeps the same record in a file, for the worker processes of one run.
"""

from __future__ import annotations

import bisect
import fcntl
import json
import math
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from delivery_conformance.spec.limits import SPEC_LIMITS

__all__ = [
    "DEFAULT_LIMITS",
    "MERGE_SECONDS",
    "WINDOW_SECONDS",
    "Pacer",
    "SharedPacer",
    "limits_from_config",
]

WINDOW_SECONDS = 60.0
MERGE_SECONDS = 0.25
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

    def _live(self, counter: str, now: float, organisation: str) -> deque[tuple[float, int]]:
        name = f"{counter}@{organisation}" if organisation else counter
        spent = self._spent.setdefault(name, deque())
        while spent and spent[0][0] <= now - self.window:
            spent.popleft()
        return spent

    @contextmanager
    def _held(self, write: bool) -> Iterator[None]:
        """The record, held for one step (`write`: the step changes it). Here it is this
        object's own; `SharedPacer` reads it from its file and writes it back."""
        yield

    def used(self, counter: str, now: float, *, organisation: str = "") -> int:
        with self._held(write=False):
            return sum(cost for _, cost in self._live(counter, now, organisation))

    def wait_time(self, counter: str, cost: int, now: float, *, organisation: str = "") -> float:
        """Seconds to wait before spending `cost` on `counter` without passing the budget."""
        with self._held(write=False):
            return self._wait_time(counter, cost, now, organisation)

    def _wait_time(self, counter: str, cost: int, now: float, organisation: str) -> float:
        budget = self.budget(counter)
        if budget is None:
            return 0.0
        spent = self._live(counter, now, organisation)
        used = sum(c for _, c in spent)
        allowed = min(cost, budget)  # a request dearer than the budget waits for an empty window
        if used + allowed <= budget:
            return 0.0
        for at, spent_cost in spent:
            used -= spent_cost
            if used + allowed <= budget:
                return max(0.0, at + self.window - now)
        return 0.0  # unreachable: the window empties eventually

    def record(self, counter: str, cost: int, now: float, *, organisation: str = "") -> None:
        if counter in self._limits:
            with self._held(write=True):
                _add(self._live(counter, now, organisation), now, cost)

    def reserve(
        self,
        counter: str,
        cost: int,
        now: float,
        *,
        organisation: str = "",
        max_wait: float = math.inf,
    ) -> float:
        """`wait_time` and `record` in one step, the record held throughout (no other worker
        spends the budget in between): the seconds to wait (at most `max_wait`), with the
        request already on the record at the moment it will be sent."""
        if counter not in self._limits:
            return 0.0
        with self._held(write=True):
            wait = min(self._wait_time(counter, cost, now, organisation), max_wait)
            # what has left the window by `now`, not by the send, is dropped
            _add(self._live(counter, now, organisation), now + wait, cost)
        return wait


def _add(spent: deque[tuple[float, int]], at: float, cost: int) -> None:
    """Put `cost` on the record at `at`, kept in time order; an entry within MERGE_SECONDS of a
    neighbour joins it at the later of the two times (counted longer, never shorter)."""
    index = bisect.bisect_right(spent, at, key=lambda entry: entry[0])
    if index > 0 and at - spent[index - 1][0] <= MERGE_SECONDS:
        spent[index - 1] = (at, spent[index - 1][1] + cost)
    elif index < len(spent) and spent[index][0] - at <= MERGE_SECONDS:
        spent[index] = (spent[index][0], spent[index][1] + cost)
    else:
        spent.insert(index, (at, cost))


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
    def _held(self, write: bool) -> Iterator[None]:
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
