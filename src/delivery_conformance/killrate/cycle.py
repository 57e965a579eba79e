"""The pytest side of the kill rate: run the suite once per cycle in one session.

A cycle is a clean run (no fault) or one fault switched on alone. Every test function gets a
hidden parameter naming its cycles (in targeted mode only the faults whose requirement IDs its
markers name; tests of parametrised functions whose own markers miss the fault are deselected),
and the items are ordered cycle by cycle, clean runs first. Between two cycles every fixture is
torn down (session ones too), so a module fixture that read the target under one fault is never
reused under the next; the target is reset and the next fault switched on before the first
fixture of the cycle is set up. Within a cycle the fault is switched on again after a test that
used the `admin` or `changes` fixture (its teardown resets the target, and the reset turns
faults off).

The conformance plugin's `TestFinished` events are gathered per cycle; when a cycle ends its
verdict (`CleanRun` or `FaultVerdict`, judged by `killrate.judge_*`) goes to the consumers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
from _pytest.runner import runtestprotocol

from delivery_conformance.evidence.events import Event, TestFinished
from delivery_conformance.exceptions import HarnessError
from delivery_conformance.killrate.judge import (
    CleanRun,
    Consumer,
    FaultRow,
    FaultVerdict,
    KillRate,
    Mode,
    TestResult,
    judge_clean_run,
    judge_fault,
    specific_ids,
)

__all__ = ["CYCLE_ARG", "Cycle", "FaultCycle"]

# Fixtures whose teardown resets the target (which turns its faults off): `admin`, and
# `changes` when it made a change through the admin API.
RESETTING = frozenset({"admin", "changes"})

CYCLE_ARG = "killrate_cycle"
_OK_STATUSES = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


@dataclass(frozen=True)
class Cycle:
    key: str  # the id it adds to node ids: clean-N or the fault's name
    fault: FaultRow | None = None
    clean_index: int = 0

    def names(self, ids: set[str]) -> bool:
        return self.fault is None or bool(ids & set(self.fault.requirement_ids))


@dataclass(frozen=True)
class _Placed:
    cycle: Cycle
    test: str  # node id without the cycle id
    properties: bool
    uses_admin: bool


def function_ids(definition: pytest.Item) -> set[str]:
    """Requirement IDs of a test function: its own markers and those of its parameters."""
    ids = {i for mark in definition.iter_markers("requirement") for i in mark.args}
    for mark in definition.iter_markers("parametrize"):
        values = mark.args[1] if len(mark.args) > 1 else mark.kwargs.get("argvalues", ())
        for value in values:
            for inner in getattr(value, "marks", ()):
                if inner.name == "requirement":
                    ids.update(inner.args)
    return ids


def item_ids(item: pytest.Item) -> set[str]:
    return {i for mark in item.iter_markers("requirement") for i in mark.args}


def base_nodeid(nodeid: str, key: str) -> str:
    """The node id as it is without the cycle parameter."""
    if nodeid.endswith(f"[{key}]"):
        return nodeid[: -len(key) - 2]
    if nodeid.endswith(f"-{key}]"):
        return nodeid[: -len(key) - 2] + "]"
    return nodeid


class FaultCycle:
    """A pytest plugin object (passed to `pytest.main(plugins=[...])`)."""

    def __init__(
        self,
        faults: Sequence[FaultRow],
        *,
        targeted: bool,
        clean_runs: int,
        switch: Callable[[str | None, bool], None],
        consumers: Sequence[Consumer],
        clock: Callable[[], float],
    ) -> None:
        self.cycles = [Cycle(f"clean-{n}", None, n) for n in range(1, clean_runs + 1)]
        self.cycles += [Cycle(fault.name, fault) for fault in faults]
        self._by_key = {cycle.key: cycle for cycle in self.cycles}
        self.targeted = targeted
        self._switch = switch
        self._consumers = consumers
        self._clock = clock
        self._placed: dict[str, _Placed] = {}
        self._results: dict[str, list[TestResult]] = {c.key: [] for c in self.cycles}
        self._current: Cycle | None = None
        self._started = 0.0
        self._last_used_admin = False
        self._failed_clean: set[str] = set()
        self._clean: list[CleanRun] = []
        self._verdicts: dict[str, FaultVerdict] = {}
        self._completed = False

    # -- collection ----------------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        ids = function_ids(metafunc.definition)
        wanted = [c for c in self.cycles if not self.targeted or c.names(ids)]
        if not wanted:
            return  # no cycle for this function: deselected below
        metafunc.fixturenames.append(CYCLE_ARG)
        metafunc.parametrize(CYCLE_ARG, wanted, ids=[c.key for c in wanted])

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        keep: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            callspec = getattr(item, "callspec", None)
            cycle = callspec.params.get(CYCLE_ARG) if callspec is not None else None
            if not isinstance(cycle, Cycle) or (self.targeted and not cycle.names(item_ids(item))):
                dropped.append(item)
                continue
            keep.append(item)
            self._placed[item.nodeid] = _Placed(
                cycle,
                base_nodeid(item.nodeid, cycle.key),
                item.path.parent.name == "properties",
                bool(RESETTING & set(getattr(item, "fixturenames", ()))),
            )
        order = {cycle.key: n for n, cycle in enumerate(self.cycles)}
        keep.sort(key=lambda item: order[self._placed[item.nodeid].cycle.key])
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep

    # -- running -------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool:
        """Switch the target before the item's fixtures; tear all down after a cycle's last."""
        here = self._placed.get(item.nodeid)
        after = self._placed.get(nextitem.nodeid) if nextitem is not None else None
        if here is not None:
            self._enter(here)
            if after is not None and after.cycle is not here.cycle:
                nextitem = None
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        runtestprotocol(item, nextitem=nextitem, log=True)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _enter(self, placed: _Placed) -> None:
        """Outside output capture: a finished cycle's verdict is printed at once."""
        cycle = placed.cycle
        fault = cycle.fault.name if cycle.fault is not None else None
        try:
            if cycle is not self._current:
                self._finish_current()
                self._current, self._started = cycle, self._clock()
                self._switch(fault, True)
            elif self._last_used_admin and fault is not None:
                self._switch(fault, False)
        except HarnessError as error:
            pytest.exit(f"cannot switch the target to {cycle.key}: {error}", returncode=3)
        self._last_used_admin = placed.uses_admin

    @pytest.hookimpl(optionalhook=True)
    def pytest_conformance_event(self, event: Event) -> None:
        if not isinstance(event, TestFinished):
            return
        placed = self._placed.get(event.nodeid)
        if placed is None:
            return
        if placed.properties:
            ids = specific_ids(event.violations, event.requirement_ids)
        else:
            ids = tuple(dict.fromkeys(v.requirement_id for v in event.violations))
        self._results[placed.cycle.key].append(
            TestResult(placed.test, event.outcome, ids, placed.properties, event.reason)
        )

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._finish_current()
        self._completed = exitstatus in _OK_STATUSES
        if self._completed:
            for cycle in self.cycles:  # faults no test ran for (targeted: no test names them)
                if cycle.fault is not None and cycle.key not in self._verdicts:
                    self._emit_fault(cycle.fault, 0.0)

    # -- verdicts ------------------------------------------------------------------------------

    def _finish_current(self) -> None:
        cycle, self._current = self._current, None
        if cycle is None:
            return
        duration = self._clock() - self._started
        results = self._results[cycle.key]
        if cycle.fault is None:
            run = judge_clean_run(cycle.clean_index, results, duration)
            self._failed_clean.update(run.failed)
            self._clean.append(run)
            self._notify(run)
        else:
            self._emit_fault(cycle.fault, duration)

    def _emit_fault(self, fault: FaultRow, duration: float) -> None:
        verdict = judge_fault(fault, self._results[fault.name], duration, self._failed_clean)
        self._verdicts[fault.name] = verdict
        self._notify(verdict)

    def _notify(self, event: CleanRun | FaultVerdict) -> None:
        for consumer in self._consumers:
            consumer(event)

    def report(self, mode: Mode, duration: float) -> KillRate | None:
        """The kill rate, or None when the session did not finish."""
        if not self._completed:
            return None
        faults = tuple(self._verdicts[c.key] for c in self.cycles if c.fault is not None)
        return KillRate(mode, faults, tuple(self._clean), duration)
