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
