"""What a scenario must hold alone when the suite runs on several workers (`run --workers N`).

Every test shares the resource `target` (it reads the target's state). A test that changes that
state (the `admin` or `changes` fixture: a change, a clock move, a key rotation, a reset after
it) holds `target` exclusively: no other test runs meanwhile. A test may name what it holds
alone instead, with `@pytest.mark.exclusive("limits-organisation", ...)`: then it holds those
exclusively and still shares `target` unless it names it too. The limit scenarios do so: they
lower and spend the counters of a dedicated organisation that no other scenario uses.

On several workers the limits organisation is a pool: for each pair of twin roles the profile has
keys for (`limits_b` and `limits_videos_b`, `_c`, `_d`: another organisation each, like the
limits ones), a test holding `limits-organisation` takes whichever member is free
(`hold_one_of`), and while it runs the twin's keys stand in for the limits roles
(`limits_pool`). Up to four limit scenarios then run at a time; a sequential run always takes
the limits roles themselves.

A scenario that moves the clock of the organisation it holds alone names `OWN_CLOCK` too. Where
the target keeps a clock per organisation (the sandbox's admin API: `POST /_sandbox/clock` with
a role; `ORGANISATION_CLOCKS` says so for the run) only that organisation's time moves, and the
scenario runs beside the others; elsewhere the whole target's clock moves and it holds `target`.

The scenarios that change a film, an episode or a creative (the state model's film machine,
the change catalogue's film, episode and creative changes, the creative changed mid-walk) name
`changes-organisation`: the organisation of the role `films_changes` and the film and creatives
it alone sees. Where the run has them (`OWN_DATA`) they hold that alone, and their changes to
films, episodes and creatives are put back by restoring the role; elsewhere they change the
shared fixtures and hold `target`.

    exclusive, shared = holdings(item)
    locks = ResourceLocks(directory)              # one directory per run, shared by the workers
    with locks.hold(exclusive, shared, stop=lambda: False):
        ...                                       # the test runs here

The locks are `flock`s on files in the run's directory, one readers-writer lock per resource,
taken in name order. A test waiting to hold a resource alone goes through a turnstile that new
sharers queue behind, so it is never starved by a stream of short tests.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from delivery_conformance.target.profile_names import LIMITS_TWIN_SUFFIXES

__all__ = [
    "CHANGES_FIXTURES",
    "CHANGES_ORGANISATION",
    "CHANGES_ROLE",
    "LIMITS_ORGANISATION",
    "LIMITS_ROLES",
    "LIMITS_TWINS",
    "ORGANISATION_CLOCKS",
    "OWN_CLOCK",
    "OWN_DATA",
    "OWN_FIXTURE_FOR",
    "PUT_BACK",
    "STATE_FIXTURES",
    "TARGET",
    "Cleanup",
    "ResourceLocks",
    "cleanup",
    "holdings",
    "limits_pool",
]

TARGET = "target"
# The clock of the organisation(s) a test holds alone: `target` unless ORGANISATION_CLOCKS.
OWN_CLOCK = "own-clock"
# Whether this run's target moves a clock for one organisation alone (set by suite/plugin.py).
ORGANISATION_CLOCKS = pytest.StashKey[bool]()
# The organisation(s) of the roles `limits` and `limits_videos`, which no other scenario uses: the
# limit scenarios lower and spend its counters, then put back only it (`CLEAN_UP`).
LIMITS_ORGANISATION = "limits-organisation"
LIMITS_ROLES = ("limits", "limits_videos")
# The organisation of the role `films_changes` and what it alone sees (a film licensed to it
# alone, its creatives): the scenarios that change a film, an episode or a creative change them,
# holding this alone, and its restore puts them back. Where the run has no such data
# (`OWN_DATA`: the role and fixtures in the profile, no `[changes]` table, and an admin API
# whose role restore puts back the organisation's own data), they change the shared fixtures
# instead and hold `target`.
CHANGES_ORGANISATION = "changes-organisation"
CHANGES_ROLE = "films_changes"
# The shared fixture each of the organisation's own stands in for, in that order.
OWN_FIXTURE_FOR = {
    "film_id": "changes_film_id",
    "episode_encrypted": "changes_episode",
    "creative_id": "changes_creative_id",
}
CHANGES_FIXTURES = tuple(OWN_FIXTURE_FOR.values())
OWN_DATA = pytest.StashKey[bool]()
# The pool's other members, one per pair of twin roles (`limits_b` / `limits_videos_b`, ...).
LIMITS_TWINS = tuple(f"{LIMITS_ORGANISATION}-{suffix}" for suffix in LIMITS_TWIN_SUFFIXES)


def limits_pool(keys: Collection[str]) -> list[tuple[str, Mapping[str, str]]]:
    """The members of the limits pool this profile allows: (resource, role aliases while held).
    A twin pair counts only when the profile has a key for each of its roles."""
    members: list[tuple[str, Mapping[str, str]]] = [(LIMITS_ORGANISATION, {})]
    for resource, suffix in zip(LIMITS_TWINS, LIMITS_TWIN_SUFFIXES, strict=True):
        aliases = {base: f"{base}_{suffix}" for base in LIMITS_ROLES}
        if set(aliases.values()) <= set(keys):
            members.append((resource, aliases))
    return members


# What holding a resource alone lets a test change without a whole reset, and how each such
# change is put back: the admin API's `changed` entry -> the role whose organisation is restored.
PUT_BACK: dict[str, dict[str, str]] = {
    LIMITS_ORGANISATION: {f"role:{role}": role for role in LIMITS_ROLES},
    CHANGES_ORGANISATION: dict.fromkeys(
        ("films", "episodes", "creatives", f"role:{CHANGES_ROLE}"), CHANGES_ROLE
    ),
}
# Fixtures that change the target's state (and put it back after the test).
STATE_FIXTURES = frozenset({"admin", "changes"})
POLL = 0.02  # seconds between two tries of a lock (a stop is honoured within one)


def holdings(item: Any) -> tuple[frozenset[str], frozenset[str]]:
    """(held alone, shared) resources of a test item."""
    named = {str(name) for mark in item.iter_markers("exclusive") for name in mark.args}
    if not named and STATE_FIXTURES & set(getattr(item, "fixturenames", ())):
        named = {TARGET}
    config = getattr(item, "config", None)
    if OWN_CLOCK in named:
        named.discard(OWN_CLOCK)
        if config is None or not config.stash.get(ORGANISATION_CLOCKS, False):
            named.add(TARGET)
    if CHANGES_ORGANISATION in named and (config is None or not config.stash.get(OWN_DATA, False)):
        named = (named - {CHANGES_ORGANISATION}) | {TARGET}
    return frozenset(named), frozenset({TARGET} - named)


@dataclass(frozen=True)
class Cleanup:
    """How the target is put back after a test that used the admin API."""

    reset: bool  # the whole target (its changes reached beyond what it holds alone)
    restore_roles: tuple[str, ...] = ()  # otherwise: restore these roles' organisations
    undeclared: frozenset[str] = frozenset()  # changes its `exclusive` declaration does not cover


def cleanup(alone: frozenset[str], changed: frozenset[str]) -> Cleanup:
    """What to put back after a test holding `alone` that made the admin changes `changed`.

    A test holding the whole target is reset whole. Otherwise each resource it holds alone may
    be put back on its own (`PUT_BACK`); a change none of them covers is reported (the test's
    declaration is wrong) and the target is reset whole, so its neighbours see a clean state
    from then on."""
    if TARGET in alone:
        return Cleanup(reset=True)
    restorable = {change: role for name in alone for change, role in PUT_BACK.get(name, {}).items()}
    undeclared = frozenset(changed - set(restorable))
    if undeclared:
        return Cleanup(reset=True, undeclared=undeclared)
    roles = {role for name in alone for role in PUT_BACK.get(name, {}).values()}
    return Cleanup(reset=False, restore_roles=tuple(sorted(roles)))


class ResourceLocks:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _open(self, name: str, part: str) -> IO[str]:
        return (self.directory / f"{name}.{part}.lock").open("a")

    @contextmanager
    def hold_one_of(
        self, names: Sequence[str], stop: Callable[[], bool] = lambda: False
    ) -> Iterator[str | None]:
        """Hold alone the first of `names` that is free (the members of a pool, which no test
        shares); yields its name, or None if `stop()` turned true first."""
        while True:
            for name in names:
                handle = self._open(name, "resource")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    continue
                try:
                    yield name
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)
                    handle.close()
                return
            if stop():
                yield None
                return
            time.sleep(POLL)

    @contextmanager
    def hold(
        self,
        exclusive: frozenset[str],
        shared: frozenset[str],
        stop: Callable[[], bool] = lambda: False,
    ) -> Iterator[bool]:
        """Hold the resources; yields False (holding nothing) if `stop()` turned true first."""
        with ExitStack() as held:
            for name in sorted(exclusive | shared):
                mode = fcntl.LOCK_EX if name in exclusive else fcntl.LOCK_SH
                with self._open(name, "turnstile") as turnstile:
                    if not _lock(turnstile, fcntl.LOCK_EX, stop):
                        held.close()
                        yield False
                        return
                    resource = held.enter_context(self._open(name, "resource"))
                    got = _lock(resource, mode, stop)
                    fcntl.flock(turnstile, fcntl.LOCK_UN)
                if not got:
                    held.close()
                    yield False
                    return
                held.callback(fcntl.flock, resource, fcntl.LOCK_UN)
            yield True


def _lock(handle: IO[str], mode: int, stop: Callable[[], bool]) -> bool:
    while True:
        try:
            fcntl.flock(handle, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if stop():
                return False
            time.sleep(POLL)
