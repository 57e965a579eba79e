"""What a scenario holds alone on several workers, and the locks that keep it alone."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from delivery_conformance.suite.exclusive import (
    CHANGES_ORGANISATION,
    LIMITS_ORGANISATION,
    LIMITS_TWINS,
    ORGANISATION_CLOCKS,
    OWN_CLOCK,
    OWN_DATA,
    TARGET,
    Cleanup,
    ResourceLocks,
    cleanup,
    holdings,
    limits_pool,
)


class _Mark(NamedTuple):
    name: str
    args: tuple[str, ...]


class _Config:
    def __init__(self, organisation_clocks: bool, own_data: bool) -> None:
        self.stash = pytest.Stash()
        self.stash[ORGANISATION_CLOCKS] = organisation_clocks
        self.stash[OWN_DATA] = own_data


class _Item:
    """A test item as `holdings` reads it: its fixtures, its `exclusive` markers, whether the
    run's target keeps a clock per organisation and whether the run has the data of
    `films_changes`."""

    def __init__(
        self,
        fixtures: tuple[str, ...],
        *exclusive: tuple[str, ...],
        clocks: bool = False,
        own_data: bool = False,
    ) -> None:
        self.fixturenames = fixtures
        self._marks = [_Mark("exclusive", names) for names in exclusive]
        self.config = _Config(clocks, own_data)

    def iter_markers(self, name: str) -> list[_Mark]:
        return [mark for mark in self._marks if mark.name == name]


def _after(seconds: float):  # a stop that turns true after `seconds`
    end = time.monotonic() + seconds
    return lambda: time.monotonic() >= end


@pytest.mark.parametrize(
    ("item", "alone", "shared"),
    [
        (_Item(("client",)), set(), {TARGET}),
        (_Item(("client", "admin")), {TARGET}, set()),
        (_Item(("changes",)), {TARGET}, set()),
        (_Item(("admin",), (LIMITS_ORGANISATION,)), {LIMITS_ORGANISATION}, {TARGET}),
        (
            _Item(("admin",), (LIMITS_ORGANISATION,), (LIMITS_ORGANISATION, TARGET)),
            {LIMITS_ORGANISATION, TARGET},
            set(),
        ),
        # Moving its organisation's clock: beside the others only where that clock is its own.
        (_Item(("admin",), (LIMITS_ORGANISATION, OWN_CLOCK)), {LIMITS_ORGANISATION, TARGET}, set()),
        (
            _Item(("admin",), (LIMITS_ORGANISATION, OWN_CLOCK), clocks=True),
            {LIMITS_ORGANISATION},
            {TARGET},
        ),
        # Changing the film of its own organisation: beside the others only with that data.
        (_Item(("admin",), (CHANGES_ORGANISATION,)), {TARGET}, set()),
        (
            _Item(("admin",), (CHANGES_ORGANISATION,), own_data=True),
            {CHANGES_ORGANISATION},
            {TARGET},
        ),
    ],
)
def test_holdings_of_a_test(item: _Item, alone: set[str], shared: set[str]) -> None:
    assert holdings(item) == (frozenset(alone), frozenset(shared))


def test_sharers_run_together_and_an_exclusive_holder_alone(tmp_path: Path) -> None:
    locks = ResourceLocks(tmp_path)
    shared = frozenset({TARGET})
    with locks.hold(frozenset(), shared) as first, locks.hold(frozenset(), shared) as second:
        assert first and second
        with locks.hold(shared, frozenset(), _after(0.1)) as alone:
            assert alone is False  # gave up at the stop, holding nothing
    with locks.hold(shared, frozenset()) as alone:
        assert alone
        with locks.hold(frozenset(), shared, _after(0.1)) as sharer:
            assert sharer is False


B, C, D = LIMITS_TWINS
BOTH = {"limits", "limits_videos"}


@pytest.mark.parametrize(
    ("keys", "members"),
    [
        (BOTH, [LIMITS_ORGANISATION]),
        (BOTH | {"limits_b"}, [LIMITS_ORGANISATION]),  # half a twin pair: none
        (BOTH | {"limits_b", "limits_videos_b"}, [LIMITS_ORGANISATION, B]),
        (BOTH | {"limits_b", "limits_videos_b", "limits_d", "limits_videos_d", "limits_c"},
         [LIMITS_ORGANISATION, B, D]),
        (BOTH | {f"limits{k}_{s}" for k in ("", "_videos") for s in "bcd"},
         [LIMITS_ORGANISATION, B, C, D]),
    ],
)  # fmt: skip
def test_the_limits_pool_has_a_twin_pair_only_with_both_of_its_keys(
    keys: set[str], members: list[str]
) -> None:
    pool = dict(limits_pool(keys))
    assert list(pool) == members
    assert pool[LIMITS_ORGANISATION] == {}
    for member, suffix in ((B, "b"), (C, "c"), (D, "d")):
        if member in members:
            aliases = {"limits": f"limits_{suffix}", "limits_videos": f"limits_videos_{suffix}"}
            assert pool[member] == aliases


def test_a_pool_member_is_taken_when_free_and_waited_for_when_none_is(tmp_path: Path) -> None:
    locks, names = ResourceLocks(tmp_path), [LIMITS_ORGANISATION, B, C]
    with (
        locks.hold_one_of(names) as first,
        locks.hold_one_of(names) as second,
        locks.hold_one_of(names) as third,
    ):
        assert (first, second, third) == (LIMITS_ORGANISATION, B, C)
        with locks.hold_one_of(names, _after(0.1)) as fourth:
            assert fourth is None  # all taken: it waited, then gave up at the stop
    with locks.hold_one_of(names) as again:
        assert again == LIMITS_ORGANISATION  # released: free again


def test_other_resources_do_not_wait_for_each_other(tmp_path: Path) -> None:
    locks = ResourceLocks(tmp_path)
    with locks.hold(frozenset({LIMITS_ORGANISATION}), frozenset({TARGET})) as limits:
        assert limits
        with locks.hold(frozenset(), frozenset({TARGET}), _after(0.5)) as reader:
            assert reader
        with locks.hold(frozenset({TARGET}), frozenset(), _after(0.1)) as writer:
            assert writer is False


def test_a_waiting_exclusive_holder_goes_before_new_sharers(tmp_path: Path) -> None:
    """The turnstile: once a test waits to run alone, tests that come later wait behind it."""
    locks = ResourceLocks(tmp_path)
    shared, order = frozenset({TARGET}), []

    def writer() -> None:
        with locks.hold(shared, frozenset(), _after(5)) as got:
            order.append(("writer", got))

    with locks.hold(frozenset(), shared) as reader:
        assert reader
        thread = threading.Thread(target=writer)
        thread.start()
        time.sleep(0.2)  # the writer now waits at the turnstile for this reader
        with locks.hold(frozenset(), shared, _after(0.2)) as late:
            order.append(("late reader", late))
    thread.join(5)
    assert order == [("late reader", False), ("writer", True)]


@pytest.mark.parametrize(
    ("alone", "changed", "due"),
    [
        ({TARGET}, {"role:limits", "clock"}, Cleanup(reset=True)),
        ({LIMITS_ORGANISATION}, {"role:limits"},
         Cleanup(reset=False, restore_roles=("limits", "limits_videos"))),
        ({LIMITS_ORGANISATION}, set(),
         Cleanup(reset=False, restore_roles=("limits", "limits_videos"))),
        ({LIMITS_ORGANISATION}, {"role:limits", "clock"},
         Cleanup(reset=True, undeclared=frozenset({"clock"}))),
        (set(), {"role:films"}, Cleanup(reset=True, undeclared=frozenset({"role:films"}))),
        ({CHANGES_ORGANISATION}, {"role:films_changes", "films", "episodes", "creatives"},
         Cleanup(reset=False, restore_roles=("films_changes",))),
        ({CHANGES_ORGANISATION}, {"films", "playlists"},
         Cleanup(reset=True, undeclared=frozenset({"playlists"}))),
    ],
    ids=["whole-target", "limits-only", "limits-nothing-changed", "beyond-declaration",
         "undeclared", "own-film", "own-film-and-a-playlist"],
)  # fmt: skip
def test_cleanup_puts_back_only_what_the_test_held_alone(
    alone: set[str], changed: set[str], due: Cleanup
) -> None:
    assert cleanup(frozenset(alone), frozenset(changed)) == due
