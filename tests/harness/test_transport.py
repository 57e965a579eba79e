"""`transport.AnswerBudget`: each socket operation gets at most the time left for the answer."""

from __future__ import annotations

import threading

import pytest
from bad_servers import BadServer

from delivery_conformance.exceptions import TargetUnreachable
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import TargetProfile
from delivery_conformance.target.transport import MIN_WAIT, AnswerBudget


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_outside_a_bound_operations_keep_their_own_timeout() -> None:
    budget = AnswerBudget(FakeClock())
    assert budget.clip(10.0) == 10.0
    assert budget.clip(None) is None


def test_inside_a_bound_the_nearer_of_the_two_wins() -> None:
    clock = FakeClock()
    budget = AnswerBudget(clock)
    with budget.bound(3.0):
        assert budget.clip(10.0) == 3.0
        assert budget.clip(None) == 3.0
        clock.now += 2.5
        assert budget.clip(10.0) == pytest.approx(0.5)
        assert budget.clip(0.2) == 0.2
        clock.now += 5.0
        assert budget.clip(10.0) == MIN_WAIT  # past the deadline: time out at once, never block
    assert budget.clip(10.0) == 10.0


def test_the_bound_belongs_to_the_thread_that_set_it() -> None:
    budget = AnswerBudget(FakeClock())
    seen: list[float | None] = []
    with budget.bound(1.0):
        other = threading.Thread(target=lambda: seen.append(budget.clip(7.0)))
        other.start()
        other.join()
    assert seen == [7.0]


def test_a_trickling_answer_is_cut_at_the_whole_answer_bound() -> None:
    """A real socket: 4 bytes every 0.5 s never trips a per-read timeout of 1.5 s."""
    with BadServer("trickle_body") as url:
        profile = TargetProfile(base_url=url, keys={}, fixtures={})
        with (
            DeliveryClient(profile, timeout=1.5) as client,
            pytest.raises(TargetUnreachable, match="too slow") as caught,
        ):
            client.request("GET", "config")
    assert "\n" not in str(caught.value)


def test_a_get_on_a_connection_dropped_before_any_answer_is_sent_once_more() -> None:
    """A server may close an idle kept-alive connection as a request leaves: a GET goes again."""
    server = BadServer("drops_first")
    with server as url:
        profile = TargetProfile(base_url=url, keys={}, fixtures={})
        with DeliveryClient(profile, timeout=5.0) as client:
            assert client.request("GET", "config").status_code == 200
    assert server.connections == 2


def test_a_post_is_never_sent_twice_and_a_target_that_always_drops_stays_unreachable() -> None:
    """The server closes after reading the request: a clean close, or a reset when its close
    raced the request's last bytes; either way one line saying so, and one send."""
    server = BadServer("drops_first")
    with (
        server as url,
        DeliveryClient(TargetProfile(base_url=url, keys={}, fixtures={})) as client,
        pytest.raises(TargetUnreachable, match=r"closed without (an|a complete) answer"),
    ):
        client.request("POST", "tickets", json={})
    assert server.connections == 1
    dropping = BadServer("drops")
    with (
        dropping as url,
        DeliveryClient(TargetProfile(base_url=url, keys={}, fixtures={})) as again,
        pytest.raises(TargetUnreachable, match=r"closed without (an|a complete) answer"),
    ):
        again.request("GET", "config")
    assert dropping.connections == 2
