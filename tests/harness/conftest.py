from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from killrate_support import KillRateRun, SlowShares, run_targeted_killrate

FIXTURE = "targeted_killrate"
_SLOW = pytest.StashKey[tuple[SlowShares, Path]]()


def _uses_the_kill_rate(item: pytest.Item) -> bool:
    return FIXTURE in getattr(item, "fixturenames", ())


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that read the kill rate go last (their slow side processes start now)."""
    items.sort(key=_uses_the_kill_rate)  # stable: every other test keeps its order


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(_uses_the_kill_rate(item) for item in session.items):
        where = Path(tempfile.mkdtemp(prefix="killrate-"))
        session.config.stash[_SLOW] = (SlowShares.start(where), where)


def pytest_sessionfinish(session: pytest.Session) -> None:
    started = session.config.stash.get(_SLOW, None)
    if started is not None:
        slow, where = started
        slow.stop()
        shutil.rmtree(where, ignore_errors=True)


@pytest.fixture(scope="session")
def targeted_killrate(request: pytest.FixtureRequest) -> KillRateRun:
    """The targeted kill rate, run once per session (killrate_support.py), its slow processes
    started when the session was collected."""
    slow, where = request.config.stash[_SLOW]
    return run_targeted_killrate(where, slow)
