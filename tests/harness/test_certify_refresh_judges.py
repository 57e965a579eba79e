"""CLI-040 from both sides, on synthetic journals: the open-video list walked again before the
`refresh_before` served (`refreshed_before`), the `refresh_in` injection that serves it seconds
ahead, and the open videos' MP4 links as a secret kind the state and output searches know."""

from __future__ import annotations

import json
from typing import Any

import pytest

from delivery_conformance.certify.injections import InjectionError, Injector, parse_injection
from delivery_conformance.certify.journal import LEAK_RULES, Entry, SecretBook
from delivery_conformance.certify.judges import (
    FAILED,
    JUDGES,
    NOT_EXERCISED,
    PASSED,
    FlowRun,
    Observation,
)
from delivery_conformance.certify.refresh_judges import walks

VIDEOS = "/api/delivery/v1/videos"
T0 = 1_800_000_000.0  # epoch seconds (2027-01-15T08:00:00Z): the flow's first request


def page(seq: int, at: float, refresh_in: float | None, *, cursor: str | None = None,
         status: int = 200, body: str = "", phase: int = 1) -> Entry:  # fmt: skip
    """A GET /videos page at T0 + `at` whose answer named refresh_before `refresh_in` later."""
    extra: dict[str, Any] = {}
    if refresh_in is not None:
        extra["refresh_before"] = T0 + at + refresh_in
    query = {"cursor": cursor} if cursor else {}
    return Entry(seq, 1, at, at + 0.01, T0 + at, "GET", VIDEOS, query, {}, "", status, {}, body,
                 0.0, "refresh_in 15", phase, (), "k", None, extra)  # fmt: skip


def verdict(entries: list[Entry], ended_at: float, phase: int = 1) -> tuple[str, str]:
    runs = (FlowRun(phase, 0, ended_at, None, T0 + ended_at),)
    result = JUDGES["refreshed_before"](Observation(tuple(entries), runs), {})
    return result.status, result.actual


def test_walks_start_with_a_request_without_cursor_and_take_their_earliest_refresh() -> None:
    found = walks([page(1, 0, 15), page(2, 0.1, 12, cursor="c1"), page(3, 5, 15),
                   page(4, 5.1, None, cursor="c1", status=503)])  # fmt: skip
    assert [len(w.entries) for w in found] == [2, 2]
    assert [w.refresh_before for w in found] == [T0 + 12.1, T0 + 20]


def test_a_client_that_walks_again_before_each_refresh_passes() -> None:
    entries = [page(n + 1, at, 15) for n, at in enumerate((0, 5, 10, 15, 20, 25))]
    assert verdict(entries, 25.5) == (PASSED, "5 walk(s) refreshed before their refresh_before")


def test_a_client_that_keeps_its_first_walk_past_refresh_before_fails() -> None:
    status, actual = verdict([page(1, 0, 15), page(2, 0.1, 15, cursor="c1")], 25)
    assert status == FAILED
    assert "no walk followed, and the flow ran 10.0 s past it" in actual


def test_a_walk_that_comes_after_refresh_before_fails_with_how_late() -> None:
    status, actual = verdict([page(1, 0, 15), page(2, 16.5, 15)], 20)
    assert status == FAILED and "walk 2 started 1.5 s after it" in actual


def test_a_refresh_time_after_the_flow_ended_is_not_exercised_never_passed() -> None:
    assert verdict([page(1, 0, 15)], 10)[0] == NOT_EXERCISED  # due after the end
    assert verdict([page(1, 0, None), page(2, 20, None)], 30)[0] == NOT_EXERCISED  # none named
    assert verdict([], 30)[0] == NOT_EXERCISED
    unknown_end = (FlowRun(1, 0, 30.0),)  # a run whose end time was not recorded
    result = JUDGES["refreshed_before"](Observation((page(1, 0, 15),), unknown_end), {})
    assert result.status == NOT_EXERCISED


def test_the_refresh_time_is_read_from_the_body_when_not_noted() -> None:
    late = json.dumps({"rows": [], "refresh_before": "2027-01-15T08:00:15Z"})
    assert walks([page(1, 0, None, body=late)])[0].refresh_before == T0 + 15
    cut = page(1, 0, None, body=late[:20] + "…[90 more]")
    assert walks([cut])[0].refresh_before is None


def test_refresh_in_serves_refresh_before_seconds_ahead_and_keeps_expires_at_consistent() -> None:
    """Endpoints > GET /videos: refresh_before 45 minutes after the response, compressed."""
    injection = parse_injection({"match": {"path": "videos"}, "times": 0, "refresh_in": 15}, "v")
    injector = Injector([injection], clock=lambda: 1_800_000_000.7)
    plan = injector.decide("GET", VIDEOS, {}, 1)
    body = {"rows": [], "expires_at": "2027-01-15T09:00:00Z",
            "refresh_before": "2027-01-15T08:45:00Z"}  # fmt: skip
    changed = injector.rewrite(plan, VIDEOS, 200, body)
    assert changed["refresh_before"] == "2027-01-15T08:00:15Z"
    assert changed["expires_at"] == "2027-01-15T09:00:00Z"  # still after the refresh: kept
    assert plan.extra["refresh_before"] == 1_800_000_015 and plan.labels == ["refresh_in 15"]
    soon = {"rows": [], "expires_at": "2027-01-15T08:00:05Z", "refresh_before": "x"}
    assert injector.rewrite(injector.decide("GET", VIDEOS, {}, 1), VIDEOS, 200, soon)[
        "expires_at"] == "2027-01-15T08:00:15Z"  # fmt: skip
    errored = injector.decide("GET", VIDEOS, {}, 1)
    assert injector.rewrite(errored, VIDEOS, 503, {"error": "x"}) == {"error": "x"}
    assert "refresh_before" not in errored.extra
    for bad in (0, -5, "15", True):
        with pytest.raises(InjectionError, match="refresh_in"):
            parse_injection({"refresh_in": bad}, "v")


def test_open_video_links_are_a_secret_kind_charged_to_cli_040() -> None:
    book = SecretBook()
    link = "https://media.example/open/v1/p480.mp4?exp=9&sig=abc123"
    book.add_body({"rows": [{"id": "v1", "mp4": {"p480": link, "p720": None}}]})
    assert book.values == {link: "video_link"} and LEAK_RULES["video_link"] == "CLI-040"
    assert book.stored(b'{"cache": "' + link.encode() + b'"}', ["video_link"]) != []
    assert book.leaks(f"playing {link}") == [("video_link", link[:6] + "…")]
    assert link not in book.redactor().text(f"playing {link}")
