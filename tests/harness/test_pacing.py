import threading
from pathlib import Path

import pytest

from delivery_conformance.target.pacing import (
    DEFAULT_LIMITS,
    MERGE_SECONDS,
    Pacer,
    SharedPacer,
    limits_from_config,
)


def test_pacer_allows_half_the_limit_then_waits_for_the_oldest_to_leave_the_window() -> None:
    pacer = Pacer({"config": 10}, fraction=0.5)
    for second in range(5):
        assert pacer.wait_time("config", 1, float(second)) == 0.0
        pacer.record("config", 1, float(second))
    assert pacer.wait_time("config", 1, 5.0) == pytest.approx(55.0)
    assert pacer.wait_time("config", 1, 60.0) == 0.0


def test_pacer_counts_playback_tickets_by_cost() -> None:
    pacer = Pacer({"playback": 8}, fraction=0.5)
    pacer.record("playback", 3, 0.0)
    assert pacer.wait_time("playback", 1, 1.0) == 0.0
    assert pacer.wait_time("playback", 3, 1.0) == pytest.approx(59.0)


def test_pacer_never_paces_an_unknown_counter() -> None:
    pacer = Pacer({"config": 2})
    pacer.record("mystery", 1, 0.0)
    assert pacer.wait_time("mystery", 100, 0.0) == 0.0


def test_pacer_request_dearer_than_budget_waits_for_an_empty_window() -> None:
    pacer = Pacer({"playback": 4}, fraction=0.5)
    pacer.record("playback", 1, 0.0)
    assert pacer.wait_time("playback", 3, 10.0) == pytest.approx(50.0)


def test_pacer_keeps_every_clock_minute_under_half_the_limit() -> None:
    pacer, now, sent = Pacer({"videos": 20}), 0.0, []
    for _ in range(40):
        now += pacer.wait_time("videos", 1, now)
        pacer.record("videos", 1, now)
        sent.append(now)
        now += 0.5
    for minute in range(int(now // 60) + 1):
        assert sum(1 for t in sent if minute * 60 <= t < (minute + 1) * 60) <= 10


def test_limits_from_config_reads_doors_and_skips_junk() -> None:
    body = {
        "rate_limits": {
            "doors": {
                "catalog": {"limit": 100, "unit": "requests"},
                "config": {"limit": "many"},
                "odd": 3,
            }
        }
    }
    assert limits_from_config(body) == {"catalog": 100}
    assert limits_from_config({"rate_limits": None}) == {}
    assert limits_from_config([]) == {}


def test_update_limits_changes_the_budget() -> None:
    pacer = Pacer()
    assert pacer.budget("video") == DEFAULT_LIMITS["video"] // 2
    pacer.update_limits({"catalog": 10})
    assert pacer.budget("catalog") == 5


def test_pacer_refuses_a_silly_fraction() -> None:
    with pytest.raises(ValueError):
        Pacer(fraction=0)


def test_shared_pacers_of_one_run_spend_one_budget(tmp_path: Path) -> None:
    """Two workers' pacers on one record: together they get half the limit, not twice that."""
    first = SharedPacer(tmp_path / "pacing.json", {"config": 10})
    second = SharedPacer(tmp_path / "pacing.json", {"config": 10})
    for second_of_run in range(3):
        first.record("config", 1, float(second_of_run))
    second.record("config", 1, 3.0)
    assert first.wait_time("config", 1, 4.0) == 0.0
    first.record("config", 1, 4.0)
    assert second.used("config", 4.5) == 5
    assert second.wait_time("config", 1, 5.0) == pytest.approx(55.0)
    assert first.wait_time("config", 1, 60.5) == 0.0


def test_shared_pacer_starts_from_an_empty_record_and_ignores_unknown_counters(
    tmp_path: Path,
) -> None:
    pacer = SharedPacer(tmp_path / "pacing.json", {"config": 4})
    assert pacer.wait_time("config", 1, 0.0) == 0.0
    pacer.record("mystery", 1, 0.0)
    assert not (tmp_path / "pacing.json").exists()
    (tmp_path / "pacing.json").write_text("{not json")  # a record cut short: start again
    assert pacer.used("config", 1.0) == 0


def test_reserve_puts_the_request_on_the_record_at_the_moment_it_will_go() -> None:
    pacer = Pacer({"config": 4}, fraction=0.5)
    assert pacer.reserve("config", 1, 0.0) == 0.0
    assert pacer.reserve("config", 1, 1.0) == 0.0
    assert pacer.reserve("config", 1, 2.0) == pytest.approx(58.0)  # on the record at 60.0
    assert pacer.used("config", 59.0) == 3
    assert pacer.reserve("config", 1, 3.0, max_wait=10.0) == pytest.approx(10.0)  # at 13.0
    assert pacer.used("config", 61.5) == 2  # 0.0 and 1.0 have left; 13.0 and 60.0 count


def test_shared_reservations_of_two_workers_never_spend_more_than_one_budget(
    tmp_path: Path,
) -> None:
    first = SharedPacer(tmp_path / "pacing.json", {"config": 6})
    second = SharedPacer(tmp_path / "pacing.json", {"config": 6})
    sent = [at + first.reserve("config", 1, at) for at in (0.0, 1.0)]
    sent += [at + second.reserve("config", 1, at) for at in (1.5, 2.0)]
    assert sent[:3] == [0.0, 1.0, 1.5]
    assert sent[3] == pytest.approx(60.0)  # the fourth waits for the first to leave the window


def test_a_record_spent_fast_stays_short_and_never_counts_fewer_than_were_sent() -> None:
    """Requests close in time share an entry (at the later time): the window's count is never
    below the true one, and a minute of requests every 10 ms keeps a few hundred entries."""
    window = 60.0
    pacer, sent, now = Pacer({"catalog": 1_000_000}), [], 0.0
    for step in range(9000):
        now += 0.01 if step % 7 else 0.4
        pacer.record("catalog", 1, now)
        sent.append(now)
    assert len(pacer._live("catalog", now, "")) <= window / MERGE_SECONDS + 1
    for check in (now, now + 10.0, now + 30.0, now + 59.0):
        true_count = sum(1 for at in sent if check - window < at <= check)
        assert true_count <= pacer.used("catalog", check) <= true_count + 60


def test_each_organisation_has_a_budget_of_its_own_and_the_default_is_shared() -> None:
    pacer = Pacer({"config": 4}, fraction=0.5)
    for at in (0.0, 1.0):
        assert pacer.reserve("config", 1, at) == 0.0
    assert pacer.reserve("config", 1, 2.0, organisation="limits") == 0.0
    assert pacer.wait_time("config", 1, 3.0) == pytest.approx(57.0)
    assert pacer.wait_time("config", 1, 3.0, organisation="limits") == 0.0
    assert pacer.used("config", 3.0, organisation="limits") == 1


def test_workers_reserving_at_once_never_send_more_than_the_budget_in_any_window(
    tmp_path: Path,
) -> None:
    """Four workers (threads, each its own open record) ask for 15 requests each at the same
    moments: the send times they are given keep every 60 s under the one budget of 10."""
    times: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        pacer = SharedPacer(tmp_path / "pacing.json", {"config": 20})
        for step in range(15):
            now = float(step)
            sent = now + pacer.reserve("config", 1, now)
            with lock:
                times.append(sent)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(times) == 60
    for start in sorted(times):
        assert sum(1 for at in times if start <= at < start + 60.0) <= 10
