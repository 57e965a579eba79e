"""The session's one targeted kill rate (killrate_support.py), started when the session is
collected and read by the tests that judge it.

Under pytest-xdist (`make test` runs two workers) the workers collect and run the tests and
the controller outlives them all: a worker that collected a test reading the kill rate says so
in the session's folder, the controller starts the kill-rate processes there (and ends them
when the session ends), and whichever worker runs such a test waits for their exit codes in
that folder.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from killrate_support import FIGURE, KillRateProcesses, KillRateRun, run_targeted_killrate

FIXTURE = "targeted_killrate"
_WHERE = pytest.StashKey[Path]()
_STARTED = pytest.StashKey[KillRateProcesses]()
_FIGURES: list[str] = []  # lines for the session summary, in the order their tests ended


def _uses_the_kill_rate(item: pytest.Item) -> bool:
    return FIXTURE in getattr(item, "fixturenames", ())


def _folder(run_id: str) -> Path:
    """The folder of one xdist session, the same for the controller and every worker."""
    return Path(tempfile.gettempdir()) / f"killrate-{run_id}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that read the kill rate go last, and its processes start now.

    A worker asks for them here, not when its collection finishes: xdist reports a worker's
    collection to the controller from its own `pytest_collection_finish`, which may run before
    ours, and the controller must find the request when that report arrives."""
    items.sort(key=_uses_the_kill_rate)  # stable: every other test keeps its order
    if config.option.collectonly or not any(_uses_the_kill_rate(i) for i in items):
        return
    run_id = getattr(config, "workerinput", {}).get("testrunuid")
    if run_id is None:  # a session without workers starts its kill rate itself
        where = Path(tempfile.mkdtemp(prefix="killrate-"))
        config.stash[_STARTED] = KillRateProcesses.start(where)
    else:  # a worker asks the controller (below) to start it
        where = _folder(run_id)
        where.mkdir(parents=True, exist_ok=True)
        (where / "wanted").touch()
    config.stash[_WHERE] = where


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """The controller, once a worker has collected: start the kill rate if it asked for it."""
    config: pytest.Config = node.config  # type: ignore[attr-defined]
    where = _folder(node.workerinput["testrunuid"])  # type: ignore[attr-defined]
    if _STARTED not in config.stash and (where / "wanted").exists():
        config.stash[_STARTED] = KillRateProcesses.start(where)


def pytest_sessionfinish(session: pytest.Session) -> None:
    started = session.config.stash.get(_STARTED, None)
    if started is not None:
        started.stop()
        shutil.rmtree(started.where, ignore_errors=True)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Figures a test recorded (the kill rate, the requirement proofs), kept for the summary:
    xdist workers' output is not shown, their reports' properties reach the controller."""
    if report.when == "call":
        figures = [str(value) for name, value in report.user_properties if name == FIGURE]
        if figures:
            _FIGURES.extend(figures)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for figure in _FIGURES:
        terminalreporter.write_line(figure)


@pytest.fixture(scope="session")
def targeted_killrate(request: pytest.FixtureRequest) -> KillRateRun:
    """The targeted kill rate, run once per session (killrate_support.py), its processes
    started when the session was collected."""
    return run_targeted_killrate(request.config.stash[_WHERE])
