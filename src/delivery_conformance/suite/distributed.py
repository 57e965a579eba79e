"""The suite on several workers (`run --workers N`): pytest-xdist processes against one target.

The runner gives every process of the run one directory (`--shared-state DIR`). In it:
- the pacing record (`SharedPacer`): one budget per organisation and counter for all workers;
- the resource locks (`suite/exclusive.py`): a test that changes the target runs alone;
- `collection.pickle`: what the first worker collected (each test's requirement IDs and the
  tests the selection left out), so the controller can name every test, even one whose worker
  died before reaching it;
- `stop`: written by the controller on SIGINT/SIGTERM; each worker then stops between requests;
- `first-phase-done`: the tests holding the whole target alone that are over (`WorkerLocks`).

A worker judges a test as a sequential run does and sends its `TestFinished` event to the
controller on the teardown report (`conformance_event`). The controller keeps the events and,
when the run ends, hands them to the report writers in collection order: the reports read as a
sequential run's, whatever the workers' order was. The test xdist names as the one a dead worker
was running is "error" (even if its event came: a dead worker is never a quiet pass); any other
test with no event is "not exercised" with the reason the run stopped.
"""

from __future__ import annotations

import base64
import fcntl
import pickle
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from delivery_conformance.evidence import events
from delivery_conformance.evidence.events import Outcome
from delivery_conformance.suite.exclusive import (
    LIMITS_ORGANISATION,
    POLL,
    TARGET,
    ResourceLocks,
    holdings,
)

__all__ = [
    "EVENT_ATTRIBUTE",
    "Gathered",
    "WorkerLocks",
    "decode",
    "encode",
    "is_controller",
    "is_worker",
    "place",
    "rank",
    "read_collection",
    "spread",
    "stop_requested",
    "write_collection",
]

EVENT_ATTRIBUTE = "conformance_event"
COLLECTION_FILE = "collection.pickle"
STOP_FILE = "stop"
DONE_FILE = "first-phase-done"  # node ids of the first phase's tests that are over
CRASHED_REASON = "the worker running this test died (crashed or killed) before it was done with it"
UNREPORTED_REASON = "the run ended before any worker reported this test"
T = TypeVar("T")


def rank(alone: frozenset[str]) -> int:
    """Where a test goes in a worker's order: what holds the whole target alone first, then what
    holds something else alone, then the rest. Tests holding the target alone then run one after
    another at the start instead of each waiting for every neighbour's test to end."""
    if TARGET in alone:
        return 0
    return 1 if alone else 2


def spread(few: Sequence[T], many: Sequence[T]) -> list[T]:
    """`many` in its order with `few` spread evenly through it, `few[0]` first.

    The second phase's tests that hold something alone (the limits organisation) run one after
    another whatever the order; handed out together, each would keep its worker waiting on the
    lock while the tests that share everything queue behind. Spread, one is in hand at a time,
    and the chain of them runs beside the others instead of before them."""
    if not few:
        return list(many)
    step = len(many) / len(few)
    merged: list[T] = []
    taken = 0
    for index, item in enumerate(few):
        upto = round(index * step)
        merged.extend(many[taken:upto])
        taken = max(taken, upto)
        merged.append(item)
    merged.extend(many[taken:])
    return merged


def encode(value: object) -> str:
    """Events cross from a worker in a report attribute: text, as xdist's channel carries."""
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


def decode(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def is_controller(config: pytest.Config) -> bool:
    return config.pluginmanager.has_plugin("dsession")


def stop_requested(directory: Path | None) -> bool:
    return directory is not None and (directory / STOP_FILE).exists()


def request_stop(directory: Path) -> None:
    (directory / STOP_FILE).touch()


@dataclass(frozen=True)
class Collection:
    requirement_ids: Mapping[str, tuple[str, ...]]  # node id -> IDs, in collection order
    deselected: tuple[events.TestDeselected, ...] = ()


def write_collection(directory: Path, collection: Collection) -> None:
    """The first worker to finish collecting writes it (all workers collect the same)."""
    path = directory / COLLECTION_FILE
    if path.exists():
        return
    temporary = directory / f"{COLLECTION_FILE}.{id(collection)}.tmp"
    temporary.write_bytes(pickle.dumps(collection))
    temporary.replace(path)


def read_collection(directory: Path | None) -> Collection:
    path = None if directory is None else directory / COLLECTION_FILE
    if path is None or not path.exists():
        return Collection({})
    loaded = pickle.loads(path.read_bytes())
    return loaded if isinstance(loaded, Collection) else Collection({})


def note_done(directory: Path, nodeid: str) -> None:
    """One more test of the first phase is over (run, stopped, or its worker died)."""
    with (directory / DONE_FILE).open("a") as done:
        fcntl.flock(done, fcntl.LOCK_EX)
        done.write(nodeid + "\n")
        fcntl.flock(done, fcntl.LOCK_UN)


def done_so_far(directory: Path) -> set[str]:
    try:
        return set((directory / DONE_FILE).read_text().splitlines())
    except FileNotFoundError:
        return set()


def place(alone: frozenset[str], long: bool) -> tuple[int, int]:
    """Where a test holding `alone` goes in a worker's order: by `rank`, then within it.

    In the first and last ranks the long tests (property tests, scenarios marked `long`: a few
    hundred requests each) lead, so that none of them is the run's tail. In the second, a long
    scenario on a resource that only one test at a time can hold (any but the limits pool)
    leads: its chain is the phase's longest path. The short scenarios on such a resource come
    last, when the long one is over: the workers share out the tests in batches, so a short one
    handed out next to the long one could start just after it and wait for all of it. Between
    them the pool's scenarios, long first (a member is usually free)."""
    level = rank(alone)
    if level != 1:
        return level, 0 if long else 1
    if alone - {LIMITS_ORGANISATION}:
        return level, 0 if long else 3
    return level, 1 if long else 2


def _place(item: pytest.Item) -> tuple[int, int]:
    long = "properties" in item.path.parts or item.get_closest_marker("long") is not None
    return place(holdings(item)[0], long)


class WorkerLocks:
    """Registered in each worker: the run in two phases, and each test holding what it needs.

    First phase: the tests that hold the whole target alone, one after another. Second: the rest,
    side by side (each still holding what `holdings` says). The workers sort their collection so
    that the first phase comes first (the controller hands tests out in that order), and a worker
    starts a test of the second phase only once every test of the first is over: otherwise a test
    of the first phase could wait, with every other worker idle, for a long neighbour to end.
    """

    def __init__(
        self,
        locks: ResourceLocks,
        stop: Callable[[], bool],
        pool: Callable[[], Sequence[tuple[str, Mapping[str, str]]]] = lambda: (),
        use_aliases: Callable[[Mapping[str, str]], None] = lambda aliases: None,
    ) -> None:
        self.locks = locks
        self.stop = stop
        # The limits pool (`exclusive.limits_pool`), asked when a test needs it, and how the
        # role aliases of the member taken are put in force (and lifted) for the test.
        self.pool = pool
        self.use_aliases = use_aliases
        self.order: dict[str, int] = {}  # node id -> place in the collection, before sorting
        self.first_phase: set[str] = set()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.order = {item.nodeid: place for place, item in enumerate(items)}
        items.sort(key=_place)  # stable: the file order is kept within each rank
        ranks = [rank(holdings(item)[0]) for item in items]
        first = [item for item, r in zip(items, ranks, strict=True) if r == 0]
        alone = [item for item, r in zip(items, ranks, strict=True) if r == 1]
        rest = [item for item, r in zip(items, ranks, strict=True) if r == 2]
        items[:] = first + spread(alone, rest)
        self.first_phase = {item.nodeid for item in first}

    def _first_phase_over(self) -> bool:
        return self.first_phase <= done_so_far(self.locks.directory)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        exclusive, shared = holdings(item)
        first = rank(exclusive) == 0
        while not first and not self._first_phase_over() and not self.stop():
            time.sleep(POLL)
        try:
            with ExitStack() as held:
                members = dict(self.pool()) if LIMITS_ORGANISATION in exclusive else {}
                if len(members) > 1:  # whichever member of the limits pool is free
                    taken = held.enter_context(self.locks.hold_one_of(list(members), self.stop))
                    self.use_aliases(members.get(taken or "", {}))
                    held.callback(self.use_aliases, {})
                    exclusive = exclusive - {LIMITS_ORGANISATION}
                held.enter_context(self.locks.hold(exclusive, shared, self.stop))
                return (yield)  # a stop while waiting: the run's hook reports it not exercised
        finally:
            if first:
                note_done(self.locks.directory, item.nodeid)


@dataclass
class Gathered:
    """The controller's side: each test's event as its worker reported it."""

    shared_dir: Path | None = None
    finished: dict[str, events.TestFinished] = field(default_factory=dict)
    crashed: set[str] = field(default_factory=set)

    def keep(self, event: events.TestFinished) -> None:
        self.finished.setdefault(event.nodeid, event)  # a collection error comes from each

    def report(self, report: pytest.TestReport) -> None:
        text = getattr(report, EVENT_ATTRIBUTE, None)
        if isinstance(text, str):
            self.keep(decode(text))
        elif report.failed and report.when not in ("setup", "call", "teardown"):
            self.crashed.add(report.nodeid)  # xdist's report for the test a dead worker ran
            if self.shared_dir is not None:  # it will not run: the first phase is not held up
                note_done(self.shared_dir, report.nodeid)

    def in_order(self, collection: Collection, stopped: str | None) -> list[events.Event]:
        """Deselected first, then one event per collected test, in collection order."""
        ordered: list[events.Event] = list(collection.deselected)
        known = dict(collection.requirement_ids)
        ordered += [e for node, e in self.finished.items() if node not in known]
        for nodeid, ids in known.items():
            # xdist names the test a dead worker was not done with; its verdict may have come
            # (the worker died between its teardown report and the next test), but a dead
            # worker is never a quiet pass: the test is in error and the run a harness error
            event = None if nodeid in self.crashed else self.finished.get(nodeid)
            if event is None:
                outcome = Outcome.ERROR if nodeid in self.crashed else Outcome.NOT_EXERCISED
                reason = CRASHED_REASON if nodeid in self.crashed else stopped or UNREPORTED_REASON
                event = events.TestFinished(nodeid, ids, outcome, reason)
            ordered.append(event)
        return ordered
