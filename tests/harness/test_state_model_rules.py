"""The state model of the stateful exploration (tests/conformance/state_model.py), judged on
its own: pure, every change told its time."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))

from state_model import Creative, Film, Playlist, StateModel  # found on the path above

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
