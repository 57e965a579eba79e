"""The process-wide retry budget (CLI-023) and the pagers (spec: Endpoints > Paging and
envelopes; CLI-024, CLI-026 to CLI-028, PAGE-003, PAGE-004, PAGE-013)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import pytest
from client_support import FakeClock, Rig, json_response
from hypothesis import given
from hypothesis import strategies as st

from delivery_client import BadResponse, RetryBudget
from delivery_client.paging import walk_envelope, walk_flat

CATALOG = "/api/delivery/v1/catalog"
CREATIVES = "/api/delivery/v1/creatives"


@pytest.mark.parametrize(
    ("requests", "allowed"), [(0, 10), (50, 10), (100, 10), (150, 15), (300, 30)]
)
def test_budget_allows_ten_percent_of_last_minute_never_under_ten_cli_023(
    requests: int, allowed: int
) -> None:
    clock = FakeClock()
    budget = RetryBudget(clock=clock)
    for _ in range(requests):
        budget.record_request()
    granted = sum(budget.try_acquire() for _ in range(allowed + 5))
    assert granted == allowed


def test_budget_window_slides_after_sixty_seconds_cli_023() -> None:
    clock = FakeClock()
    budget = RetryBudget(clock=clock)
    assert sum(budget.try_acquire() for _ in range(12)) == 10
    clock.now += 60.0
    assert budget.try_acquire()


def test_budget_is_shared_across_threads_cli_023() -> None:
    budget = RetryBudget(clock=FakeClock())
    granted: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(10):
            ok = budget.try_acquire()
            with lock:
                granted.append(ok)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(granted) == 10


def flat_pages(pages: dict[str | None, dict]) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        return json_response(200, pages[request.url.params.get("cursor")])

    return handler


ODD = "a+b/c%2Fd==&x"  # a cursor a careless client would decode or re-encode


def test_cursor_goes_back_byte_for_byte_and_empty_pages_are_followed_cli_026_027_page_003_004(
    rig: Callable[..., Rig],
) -> None:
    pages = {
        None: {"films": [{"id": "1"}], "episodes": [], "next_cursor": ODD},
        ODD: {"films": [], "episodes": [], "next_cursor": "c3"},  # empty page, cursor not null
        "c3": {"films": [{"id": "2"}], "episodes": [], "next_cursor": None},
    }
    r = rig(flat_pages(pages))
    walked = list(walk_flat(r.client, CATALOG, "films", {"limit": 1}))
    assert len(walked) == 3
    assert [req.url.params.get("cursor") for req in r.requests] == [None, ODD, "c3"]


def test_a_looping_cursor_is_a_clear_error_not_a_hang(rig: Callable[..., Rig]) -> None:
    pages = {
        None: {"films": [], "episodes": [], "next_cursor": "A"},
        "A": {"films": [], "episodes": [], "next_cursor": "B"},
        "B": {"films": [], "episodes": [], "next_cursor": "A"},
    }
    r = rig(flat_pages(pages))
    with pytest.raises(BadResponse, match="same cursor came back twice"):
        list(walk_flat(r.client, CATALOG, "films"))
    assert len(r.requests) == 3


def test_a_non_string_cursor_or_missing_items_is_a_bad_response(rig: Callable[..., Rig]) -> None:
    with pytest.raises(BadResponse):
        list(
            walk_flat(
                rig(flat_pages({None: {"films": [], "next_cursor": 5}})).client, CATALOG, "films"
            )
        )
    with pytest.raises(BadResponse):
        list(walk_flat(rig(flat_pages({None: {"next_cursor": None}})).client, CATALOG, "films"))


def test_pages_are_walked_one_at_a_time_cli_024_page_013(rig: Callable[..., Rig]) -> None:
    pages = {
        None: {"films": [], "episodes": [], "next_cursor": "x"},
        "x": {"films": [], "episodes": [], "next_cursor": None},
    }
    r = rig(flat_pages(pages))
    walk = walk_flat(r.client, CATALOG, "films")
    next(walk)
    assert len(r.requests) == 1  # the next page is asked only when the caller takes it
    next(walk)
    assert len(r.requests) == 2


def envelope(items: list, next_link: str | None, cursor: str | None) -> dict:
    return {
        "code": 0,
        "message": "ok",
        "server_time": 1,
        "data": {"items": items, "next_cursor": cursor},
        "links": {"self": "x", "next": next_link},
    }


def test_envelope_walk_follows_links_next_and_keeps_updated_since_cli_028_cli_029(
    rig: Callable[..., Rig],
) -> None:
    base = "http://127.0.0.1:9" + CREATIVES

    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        if cursor is None:
            return json_response(200, envelope([{"n": 1}], f"{base}?cursor=p2&limit=1", "p2"))
        if cursor == "p2":  # a next link that forgot updated_since
            return json_response(200, envelope([], f"{base}?cursor=p3&limit=1", "p3"))
        return json_response(200, envelope([{"n": 3}], None, None))

    r = rig(handler)
    data = list(
        walk_envelope(r.client, CREATIVES, {"limit": 1}, pinned={"updated_since": 1700000000})
    )
    assert [len(d["items"]) for d in data] == [1, 0, 1]
    assert [req.url.params.get("updated_since") for req in r.requests] == ["1700000000"] * 3
    assert [req.url.params.get("cursor") for req in r.requests] == [None, "p2", "p3"]


def test_an_envelope_next_link_that_loops_is_an_error(rig: Callable[..., Rig]) -> None:
    link = "http://127.0.0.1:9" + CREATIVES + "?cursor=same"
    r = rig(lambda request: json_response(200, envelope([], link, "same")))
    with pytest.raises(BadResponse, match="twice"):
        list(walk_envelope(r.client, CREATIVES))


@given(st.lists(st.tuples(st.floats(0, 30), st.booleans()), min_size=1, max_size=300))
def test_property_retries_in_any_minute_stay_within_the_budget_cli_023(
    events: list[tuple[float, bool]],
) -> None:
    """Random requests and retry attempts over time: in every 60 s window ending at a granted
    retry, retries <= max(10, floor(10 % of the requests of that window))."""
    clock = FakeClock()
    budget = RetryBudget(clock=clock)
    requests: list[float] = []
    granted: list[float] = []
    for step, is_retry in events:
        clock.now += step
        if is_retry:
            if budget.try_acquire():
                granted.append(clock.now)
                requests.append(clock.now)
                budget.record_request()
        else:
            budget.record_request()
            requests.append(clock.now)
    for moment in granted:
        window = [t for t in requests if moment - 60 < t <= moment]
        retries = [t for t in granted if moment - 60 < t <= moment]
        assert len(retries) <= max(10, (len(window) * 10) // 100)
