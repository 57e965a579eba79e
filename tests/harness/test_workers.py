"""`run --workers N`: the same reports whatever N, and a stopped run that names what it left.

spec-independent plumbing (suite/distributed.py, suite/exclusive.py): the workers' events come
back in collection order; a test that changes the target runs alone; a signal or a worker that
dies still ends in written reports, with no process of the run left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from harness_support import run_results
from test_interrupt import STOP_BOUND, processes_marked

from delivery_conformance.evidence.events import Outcome, TestDeselected, TestFinished
from delivery_conformance.suite.distributed import (
    CRASHED_REASON,
    Collection,
    Gathered,
    place,
    rank,
    spread,
)
from delivery_conformance.suite.exclusive import CHANGES_ORGANISATION, LIMITS_ORGANISATION, TARGET
from delivery_conformance.suite.runner import RunOptions, run_suite
from delivery_conformance.target import preflight
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.preflight import chosen_workers

# Plain readers, scenarios that change the target (alone), and limit scenarios (alone on one of
# the two limits organisations, beside the readers, moving only that organisation's clock): two
# limit scenarios that took the same organisation, or whose admin calls and requests went to
# different ones, would fail each other.
MIXED = (
    "test_catalog_paging or test_withdrawal or test_limits_headers or test_limits_counters"
    " or test_keys"
)


def _digest(data: dict[str, Any]) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    tests = [(t["nodeid"], t["outcome"], t["reason"]) for t in data["tests"]]
    return tests, {r["id"]: r["status"] for r in data["requirements"]}


def test_a_run_on_three_workers_reports_what_the_sequential_run_reports(tmp_path: Path) -> None:
    digests = []
    with EmbeddedSandbox() as profile:
        for workers in (1, 3):
            options = RunOptions(
                target=profile,
                run_dir=tmp_path / str(workers),
                keyword=MIXED,
                properties=False,
                pacing=False,
                from_sandbox=True,
                workers=workers,
            )
            summary = run_suite(options)
            assert summary is not None and summary.exit_code() == 0, summary and summary.line()
            results = (tmp_path / str(workers) / "results.json").read_text(encoding="utf-8")
            digests.append(_digest(json.loads(results)))
    (sequential_tests, sequential_ids), (workers_tests, workers_ids) = digests
    assert len(sequential_tests) > 40
    assert workers_tests == sequential_tests  # same tests, same order, same outcomes
    assert workers_ids == sequential_ids


@pytest.mark.parametrize(
    ("rtt", "workers"),
    [(0.001, 1), (0.009, 1), (0.040, 2), (0.150, 8), (0.800, 8)],
)
def test_the_default_worker_count_follows_the_round_trip(rtt: float, workers: int) -> None:
    assert chosen_workers(rtt, None, None)[0] == workers


def test_the_command_line_then_the_profile_choose_the_worker_count() -> None:
    assert chosen_workers(0.150, 3, 5) == (3, "--workers")
    assert chosen_workers(0.001, None, 5) == (5, "the profile's `workers`")


def test_the_budget_caps_the_default_when_it_could_not_keep_more_workers_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(preflight, "BUDGET_PER_SECOND", 20.0)  # 20 requests/s in all
    workers, why = chosen_workers(0.150, None, None)
    assert workers == 3 and "at most 3 by the pacing budget" in why


def _start(tmp_path: Path, mark: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, mark.split("=")[0]: mark.split("=")[1]}
    return subprocess.Popen(
        [sys.executable, "-m", "delivery_conformance.cli", "run", "--no-properties",
         "--workers", "2", "--report-dir", str(tmp_path), *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _when_running(run: subprocess.Popen[str], lines: list[str]) -> None:
    deadline = time.monotonic() + 90
    while not any(line.startswith(".") for line in lines) and time.monotonic() < deadline:
        time.sleep(0.2)  # pytest's first progress dots: the workers are judging tests


def _workers_of(mark: str, run: subprocess.Popen[str]) -> list[int]:
    return [pid for pid in processes_marked(mark) if pid != run.pid]


def _finish(run: subprocess.Popen[str], lines: list[str], act: Any) -> tuple[str, str]:
    reader = threading.Thread(target=lambda: lines.extend(iter(run.stdout.readline, "")))
    reader.start()
    try:
        _when_running(run, lines)
        act()
        run.wait(timeout=STOP_BOUND * 4)
        err = run.stderr.read()
    finally:
        if run.poll() is None:
            run.kill()
        reader.join(timeout=5)
    return "".join(lines), err


def test_a_signal_stops_every_worker_and_the_reports_name_what_was_not_run(
    tmp_path: Path,
) -> None:
    mark = f"DELIVERY_TEST_MARK={uuid.uuid4().hex}"
    lines: list[str] = []
    with _start(tmp_path, mark) as run:
        out, err = _finish(run, lines, lambda: run.send_signal(signal.SIGTERM))
    assert run.returncode == 130, out[-1500:] + err[-1500:]
    assert "Traceback" not in err
    data = run_results(tmp_path)
    assert data["run"]["stopped"] == "interrupted"
    outcomes = {t["outcome"] for t in data["tests"]}
    assert "passed" in outcomes and "not exercised" in outcomes
    assert any(t["reason"].startswith("the run was interrupted") for t in data["tests"])
    time.sleep(0.5)
    assert processes_marked(mark) == []


def test_a_worker_that_dies_leaves_its_test_in_error_and_the_run_goes_on(tmp_path: Path) -> None:
    mark = f"DELIVERY_TEST_MARK={uuid.uuid4().hex}"
    lines: list[str] = []
    with _start(tmp_path, mark, "-k", "test_scopes or test_every_path") as run:

        def kill_one_worker() -> None:
            workers = [p for p in _workers_of(mark, run) if b"exec(eval(sys.stdin" in _cmdline(p)]
            assert workers, "no worker process found"
            os.kill(workers[0], signal.SIGKILL)

        out, err = _finish(run, lines, kill_one_worker)
    assert run.returncode == 3, out[-1500:] + err[-1500:]  # a harness error, not a verdict
    data = run_results(tmp_path)
    errored = [t for t in data["tests"] if t["outcome"] == "error"]
    assert [t["reason"] for t in errored] == [CRASHED_REASON]
    assert len([t for t in data["tests"] if t["outcome"] == "passed"]) > 100
    time.sleep(0.5)
    assert processes_marked(mark) == []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _finished(nodeid: str, outcome: Outcome = Outcome.PASSED) -> TestFinished:
    return TestFinished(nodeid, ("CAT-001",), outcome)


def test_the_controller_gives_the_events_back_in_collection_order() -> None:
    gathered = Gathered()
    for nodeid in ("t::c", "t::a"):
        gathered.keep(_finished(nodeid))
    gathered.crashed.add("t::b")
    deselected = TestDeselected("t::z", ("CAT-002",))
    collection = Collection({"t::a": ("CAT-001",), "t::b": ("CAT-001",), "t::c": ("CAT-001",),
                             "t::d": ("CAT-003",)}, (deselected,))  # fmt: skip
    ordered = gathered.in_order(collection, "the run was interrupted")
    assert ordered[0] == deselected
    finished = [e for e in ordered if isinstance(e, TestFinished)]
    assert [(e.nodeid, e.outcome, e.reason) for e in finished] == [
        ("t::a", Outcome.PASSED, ""),
        ("t::b", Outcome.ERROR, CRASHED_REASON),
        ("t::c", Outcome.PASSED, ""),
        ("t::d", Outcome.NOT_EXERCISED, "the run was interrupted"),
    ]
    assert finished[3].requirement_ids == ("CAT-003",)  # named, though no worker reached it


def test_a_worker_killed_between_a_verdict_and_the_next_test_is_still_an_error() -> None:
    """xdist names the test a dead worker was not done with even when that test's verdict came
    (the kill fell after its teardown report): a dead worker is never a quiet pass."""
    gathered = Gathered()
    gathered.keep(_finished("t::a"))
    gathered.crashed.add("t::a")
    ordered = gathered.in_order(Collection({"t::a": ("CAT-001",)}), None)
    assert [(e.nodeid, e.outcome, e.reason) for e in ordered if isinstance(e, TestFinished)] == [
        ("t::a", Outcome.ERROR, CRASHED_REASON)
    ]


def test_a_collection_error_reported_by_every_worker_is_one_event() -> None:
    gathered = Gathered()
    for _ in range(3):
        gathered.keep(_finished("tests/conformance/test_x.py", Outcome.ERROR))
    assert len(gathered.in_order(Collection({}), None)) == 1


def test_tests_holding_the_target_alone_go_first_then_other_holders() -> None:
    assert rank(frozenset({TARGET})) == 0
    assert rank(frozenset({LIMITS_ORGANISATION, TARGET})) == 0
    assert rank(frozenset({LIMITS_ORGANISATION})) == 1
    assert rank(frozenset()) == 2


def test_within_a_rank_long_tests_lead_and_a_single_holders_short_ones_come_last() -> None:
    """Sorted by `place`: the whole target's long ones, then its short ones; then the long one
    of the `films_changes` chain (one holder at a time), the limits pool long first, and the
    short ones of the `films_changes` chain; then the shared tests, long first."""
    alone = {"target": frozenset({TARGET}), "changes": frozenset({CHANGES_ORGANISATION}),
             "limits": frozenset({LIMITS_ORGANISATION}), "shared": frozenset()}  # fmt: skip
    tests = [
        (kind, long) for kind in ("shared", "limits", "changes", "target") for long in (False, True)
    ]
    ordered = sorted(tests, key=lambda test: place(alone[test[0]], test[1]))
    assert ordered == [
        ("target", True), ("target", False), ("changes", True), ("limits", True),
        ("limits", False), ("changes", False), ("shared", True), ("shared", False),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("few", "many", "merged"),
    [
        ("ABC", "abcdefghi", "AabcBdefCghi"),
        ("A", "abc", "Aabc"),
        ("", "ab", "ab"),
        ("AB", "", "AB"),
    ],
)
def test_tests_holding_one_organisation_alone_are_spread_through_the_second_phase(
    few: str, many: str, merged: str
) -> None:
    """Spread, the limits organisation's chain runs beside the shared tests; handed out together
    its tests would keep every worker waiting on its lock."""
    assert "".join(spread(list(few), list(many))) == merged


POOL_SUITE = """
import time
from pathlib import Path

import pytest

from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION

MEETING = Path(__file__).parent  # each scenario marks here that its limit is set


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("LIM-009")
@pytest.mark.parametrize("limit", [41, 42])
def test_the_limit_set_is_the_limit_read(client, admin, limit):
    admin.set_limit("limits", "config", limit)
    (MEETING / f"set-{limit}").touch()
    deadline = time.monotonic() + 20  # both set before either reads: they ran side by side
    while len(list(MEETING.glob("set-*"))) < 2:
        assert time.monotonic() < deadline, "the other limit scenario never ran beside this one"
        time.sleep(0.05)
    doors = client.get("config", role="limits").json_body()["rate_limits"]["doors"]
    assert doors["config"]["limit"] == limit
"""


def test_two_limit_scenarios_at_a_time_each_act_on_the_organisation_they_took(
    tmp_path: Path,
) -> None:
    """Two scenarios holding the limits organisation, side by side on two workers (each waits,
    polling, until the other has set its limit): each must take its own member of the pool, and
    its admin calls and its requests must both go to it. One after another, or on one
    organisation, they fail."""
    started = time.monotonic()
    with EmbeddedSandbox() as profile:
        data = _run_on_two_workers(tmp_path, POOL_SUITE, profile)
    assert [t["outcome"] for t in data["tests"]] == ["passed", "passed"]
    assert time.monotonic() - started < 60


OWN_DATA_SUITE = """
import os

import pytest

from delivery_conformance.suite.exclusive import CHANGES_ORGANISATION, holdings


@pytest.mark.exclusive(CHANGES_ORGANISATION)
@pytest.mark.requirement("CAT-082")
def test_what_the_film_scenario_holds(client, request):
    client.get("config", role="films")
    assert sorted(holdings(request.node)[0]) == [os.environ["EXPECTED_HOLDING"]]
"""


@pytest.mark.parametrize(
    ("without", "expected"),
    [(None, "changes-organisation"), ("films_changes", "target"), ("changes_episode", "target")],
)
def test_the_film_scenario_holds_its_organisation_only_where_the_run_has_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without: str | None, expected: str
) -> None:
    """On two workers (the controller asks the admin API, each worker takes its answer): the
    state model's film scenario holds the `films_changes` organisation alone where the profile
    has that role and all its fixtures (and the sandbox's restore puts its data back), and the
    whole target where a key or a fixture is missing."""
    monkeypatch.setenv("EXPECTED_HOLDING", expected)
    with EmbeddedSandbox() as profile:
        if without is not None:
            lines = profile.read_text(encoding="utf-8").splitlines(keepends=True)
            kept = [line for line in lines if not line.startswith(f"{without} =")]
            assert len(kept) == len(lines) - 1
            profile.write_text("".join(kept), encoding="utf-8")
        data = _run_on_two_workers(tmp_path, OWN_DATA_SUITE, profile)
    assert [t["outcome"] for t in data["tests"]] == ["passed"]


def _run_on_two_workers(tmp_path: Path, suite_text: str, profile: Path) -> dict[str, Any]:
    """A synthetic suite (one file) run on two workers against `profile`: its results.json,
    after checking the run ended with exit 0."""
    suite = tmp_path / "tests" / "conformance"
    suite.mkdir(parents=True)
    (suite / "conftest.py").write_text('pytest_plugins = ["delivery_conformance.suite.plugin"]\n')
    (suite / "test_synthetic.py").write_text(suite_text)
    options = RunOptions(
        target=profile,
        run_dir=tmp_path / "run",
        properties=False,
        pacing=False,
        from_sandbox=True,
        workers=2,
        tests_root=tmp_path / "tests",
    )
    summary = run_suite(options)
    assert summary is not None and summary.exit_code() == 0, summary and summary.line()
    return json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
