"""The models of the stateful explorations (tests/conformance/state_model.py and ticket_model.py),
judged on their own: pure, every change and request told its time."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))

from state_model import Creative, Film, Playlist, StateModel  # found on the path above
from ticket_model import Request, TicketModel

T0 = 1_800_000_000.0


def _model() -> StateModel:
    film = Film("First light", "v-listed", episode_listed=True)
    return StateModel(film, Playlist("P", "pv", "pc"), Creative("C", "code", "t"))


def _row(version: str, stamp: float) -> dict[str, object]:
    return {"title": "First light", "metadata_version": version, "metadata_updated_at": stamp}


def test_a_copy_from_an_earlier_change_to_the_same_state_is_not_a_late_stamp() -> None:
    """Withdrawn, published, withdrawn again: a cache may still show the first withdrawal,
    stamped with its time, and that answer is as fresh as the spec requires."""
    model = _model()
    model.episode_toggled(T0)  # withdrawn
    model.episode_toggled(T0 + 100)  # published
    model.episode_toggled(T0 + 200)  # withdrawn again
    assert model.film_read(_row("v-withdrawn", T0), episode_listed=False) == []


def test_a_stamp_older_than_every_change_to_the_shown_state_is_charged() -> None:
    model = _model()
    model.episode_toggled(T0)
    model.episode_toggled(T0 + 100)
    model.episode_toggled(T0 + 200)
    found = model.film_read(_row("v-withdrawn", T0 - 60), episode_listed=False)
    assert [f.requirement for f in found] == ["CAT-084"]


def test_an_unmoved_version_is_charged_to_the_change_and_the_history_is_forgotten_on_read() -> None:
    model = _model()
    model.episode_toggled(T0)
    found = model.film_read(_row("v-listed", T0), episode_listed=False)
    assert [f.requirement for f in found] == ["CAT-083"]
    assert model.film is not None and model.film.passed == []


def test_a_ticket_given_back_for_another_request_breaks_the_first_thing_that_differs() -> None:
    model = TicketModel()
    assert model.answered(Request("a", "one", "play"), "t1", "E", T0) == []
    cases = [
        (Request(None, "one", "play"), "PLAY-059"),
        (Request("b", "one", "play"), "PLAY-061"),
        (Request("a", "two", "play"), "PLAY-062"),
        (Request("a", "one", "prefetch"), "PLAY-063"),
    ]
    for request, rule in cases:
        assert [f.requirement for f in model.answered(request, "t1", "E", T0 + 1)] == [rule]


def test_a_reuse_keeps_expires_at_and_stops_five_minutes_before_the_end() -> None:
    model = TicketModel()
    same = Request("a", "one", "play")
    model.answered(same, "t1", "E", T0)
    assert model.answered(same, "t1", "E", T0 + 60) == []  # reuse is allowed, never required
    assert [f.requirement for f in model.answered(same, "t1", "E2", T0 + 60)] == ["PLAY-003"]
    model.clock_moved(26 * 60)  # 4 minutes left
    assert [f.requirement for f in model.answered(same, "t1", "E", T0 + 60)] == ["PLAY-064"]
    assert model.answered(same, "t2", "E3", T0 + 61) == []  # a new ticket is always right


def _detail(title: str, listed: bool, content: str, stamp: float, version: str = "v") -> dict:
    episodes = [{"ep_number": 1}, *([{"ep_number": 2}] if listed else [])]
    return {"title_i18n": {"en": title}, "episodes": episodes, "content_version": content,
            "metadata_version": version, "metadata_updated_at": stamp}  # fmt: skip


def _series_findings(model: StateModel, detail: dict, row: dict | None = None) -> list[str]:
    return [f.requirement for f in model.series_read(detail, 2, row, True)]


def test_the_series_detail_moves_with_a_retitle_and_holds_when_nothing_changed() -> None:
    model = _model()
    assert _series_findings(model, _detail("First light", True, "c1", T0)) == []
    model.film_retitled("Second wind", T0 + 100)
    assert model.series_landed(_detail("Second wind", True, "c2", T0 + 100), 2)
    assert not model.series_landed(_detail("First light", True, "c1", T0), 2)  # a cached copy
    assert _series_findings(model, _detail("Second wind", True, "c2", T0 + 100)) == []
    assert _series_findings(model, _detail("Second wind", True, "c2", T0 + 100)) == []


def test_each_series_rule_is_charged_alone() -> None:
    model = _model()
    _series_findings(model, _detail("First light", True, "c1", T0))
    model.film_retitled("Second wind", T0 + 100)
    assert _series_findings(model, _detail("Second wind", True, "c1", T0 + 100)) == ["SER-049"]
    model.film_retitled("Third act", T0 + 200)
    assert _series_findings(model, _detail("Third act", True, "c3", T0)) == ["SER-048"]
    assert _series_findings(model, _detail("Third act", True, "c4", T0)) == ["SER-006"]
    row = {"title": "Third act", "metadata_version": "other"}
    assert _series_findings(model, _detail("Third act", True, "c4", T0), row) == ["SER-017"]


def test_a_state_reached_twice_is_not_compared_with_the_catalog_and_a_touch_may_move_it() -> None:
    model = _model()
    _series_findings(model, _detail("First light", True, "c1", T0))
    model.episode_toggled(T0 + 100)  # withdrawn
    model.episode_toggled(T0 + 200)  # published: the state of the last read again
    row = {"title": "First light", "metadata_version": "history-hash"}
    # a hash of the history may have moved; the two copies need not agree
    assert _series_findings(model, _detail("First light", True, "c9", T0), row) == []


def test_after_a_return_to_an_earlier_state_reads_are_not_compared_within_the_bound() -> None:
    """Withdrawn and published again: a cache may serve the first copy of that state (its
    hash and time) for up to the Freshness bound, then the current one."""
    model = _model()
    assert model.film_read(_row("v-listed", T0), True, now=T0) == []
    model.episode_toggled(T0 + 1)  # withdrawn
    model.episode_toggled(T0 + 2)  # published: back to the state of the first read
    assert model.film_read(_row("v-listed", T0), True, now=T0 + 3) == []  # the first copy
    assert model.film_read(_row("v-again", T0 + 2), True, now=T0 + 4) == []  # the current one
    # a read that could be such a copy is no baseline: the next sure read sets one
    assert model.film_read(_row("v-again", T0 + 2), True, now=T0 + 60) == []
    found = model.film_read(_row("v-other", T0 + 2), True, now=T0 + 61)
    assert [f.requirement for f in found] == ["CAT-029"]
