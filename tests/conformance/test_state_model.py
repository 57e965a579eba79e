"""Stateful exploration: random sequences of changes, reads and clock steps, each read judged
by a small model of the spec's state rules (state_model.py, written apart from the sandbox).

Hypothesis's rule-based state machine picks the steps (each change is read back at once; the
reads are steps of their own too, so that "nothing changed since" is judged as well); a read
that breaks a rule fails that
rule's requirement, and Hypothesis shrinks the failing sequence to the shortest one that still
fails; the report shows the steps. Each sequence starts from the target's reset. A read that does
not yet show every change made so far (a server may answer from a cache up to the bounds of
Limits > Freshness) is not judged, and the next read of that thing tries again: how soon a
change shows is the Freshness scenarios' rule, never this one's, and no step waits. The budget
is `run --state-sequences N` (DEFAULT_STATE_SEQUENCES in suite/plugin.py; 0 leaves the scenario
"not exercised"); the seed is the run's. The kill rate turns the shrinking off
(`--no-state-shrink`): it needs the rule charged, not the shortest sequence.

spec: see state_model.py.
"""

from __future__ import annotations

import time
from typing import Any

import listing_support as listing
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from json_support import body_of, objs
from state_model import DAY, Creative, Film, Finding, Playlist, StateModel
from stateful_support import judge, run_sequences, sequences_or_skip

from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.target.client import DeliveryClient

JUDGED = ("CAT-029", "CAT-082", "CAT-083", "CAT-084", "PLS-045", "PLS-046",
          "PLS-047", "STATE-006", "STATE-009", "STATE-010", "STATE-013", "STATE-021",
          "CRE-005", "CRE-065", "FRESH-022", "SER-006", "SER-017", "SER-048",
          "SER-049")  # fmt: skip
TITLE_LIST = ("First light", "Second wind", "Third act", "Fourth wall")
TITLES = st.sampled_from(TITLE_LIST)


def another(title: str, current: str | None) -> str:
    """`title`, or the next one of TITLE_LIST when it is the current one: a retitle to the same
    title changes nothing the spec names, so a server may or may not count it as a change."""
    if title != current:
        return title
    return TITLE_LIST[(TITLE_LIST.index(title) + 1) % len(TITLE_LIST)]


def _catalog_film(client: DeliveryClient, film_id: str, episode: str) -> tuple[Any, bool, Any]:
    """The film's catalog row, whether the episode is listed, and the episode's number."""
    body = body_of(client.get("catalog", role="films"))
    rows = [f for f in objs(body.get("films")) if f.get("id") == film_id]
    numbers = [e.get("episode_no") for e in objs(body.get("episodes")) if e.get("id") == episode]
    return (rows[0] if rows else None), bool(numbers), (numbers[0] if numbers else None)


def _series(client: DeliveryClient, code: Any) -> Any:
    response = client.get(f"series/{code}", role="films")
    data = body_of(response).get("data") if response.status_code == 200 else None
    return data if isinstance(data, dict) else None


def _playlist(client: DeliveryClient, code: str) -> tuple[Any, Any]:
    response = client.get(f"playlists/{code}", role="videos")
    data = body_of(response).get("data") if response.status_code == 200 else None
    pages = listing.envelope_walk(client, "playlists", "videos", "PLS-049", limit=100)
    items = [i for i in listing.items_of(pages) if i.get("code") == code]
    return (data if isinstance(data, dict) else None), (items[0] if items else None)


def _creative(client: DeliveryClient, creative_id: str) -> Any:
    response = client.get(f"creatives/{creative_id}", role="films")
    data = body_of(response).get("data") if response.status_code == 200 else None
    return data if isinstance(data, dict) else None


def _machine(client: DeliveryClient, admin: Any, fx: dict[str, str]) -> type:
    film_id, episode = fx["film_id"], fx["episode_encrypted"]
    code, creative_id = fx["playlist_code"], fx["creative_id"]

    class SpecState(RuleBasedStateMachine):
        model: StateModel
        code: Any = None  # the film's code, its series' code
        episode_no: Any = None  # the number of the followed episode
        last_row: tuple[Any, bool] | None = None  # the film's row at the last catalog read

        def _judge(self, found: list[Finding]) -> None:
            judge(found, self.model.steps)

        @initialize()
        def start(self) -> None:
            # Back to the start state; switched faults stay (the kill rate's, docs/sandbox.md >
            # Admin API); an admin API without that option resets them too.
            admin.call("POST", "reset", {"keep_faults": True})
            detail, _ = _playlist(client, code)
            record = _creative(client, creative_id)
            if detail is None or record is None:  # readable before the run, but not any more
                raise AssertionError("the playlist or the creative fixture left after a reset")
            self.model = StateModel(
                None,  # the film is read when a step first needs it (the catalog is large)
                Playlist(
                    detail.get("title"),
                    detail.get("metadata_version"),
                    detail.get("content_version"),
                ),
                Creative(record.get("name"), record.get("creative_code"), record.get("created_at")),
            )
            self._judge(self.model.playlist_read(detail, None))
            self._judge(self.model.creative_read(record))

        def _film(self) -> Film:
            """The film's model, from its first catalog read (with its series code and the
            episode's number, which the series detail lists episodes by)."""
            if self.model.film is None:
                row, listed, self.episode_no = _catalog_film(client, film_id, episode)
                film = Film(
                    str((row or {}).get("title")), (row or {}).get("metadata_version"), listed
                )
                film.read, film.tracked = (film.title, listed), row is not None and listed
                self.model.film = film  # a film the catalog no longer lists is not followed
                self.code = (row or {}).get("code")
            return self.model.film

        @rule(title=TITLES)
        def retitle_film(self, title: str) -> None:
            if not self._film().tracked:
                return
            title = another(title, self._film().title)
            self.read_series()  # before and after: what stayed since the last read is judged
            admin.call("POST", f"films/{film_id}/retitle", {"title": title})
            self.model.film_retitled(title, time.time())
            self.read_film()
            self.read_series(self.last_row)

        @rule()
        def toggle_episode(self) -> None:
            if not self._film().tracked:
                return
            action = "withdraw" if self._film().episode_listed else "publish"
            self.read_series()
            admin.episode(episode, action)
            self.model.episode_toggled(time.time())
            self.read_film()
            self.read_series(self.last_row)

        # Preconditions read only what the model did, never what the server answered: a server
        # whose answers vary from one read to the next (several servers, each with its cache)
        # must draw the same rules when Hypothesis replays a sequence. A rule on a film or a
        # creative the reads stopped following does nothing instead.
        @precondition(lambda self: self.model.playlist.withdrawn_at_clock is None)
        @rule(title=TITLES)
        def retitle_playlist(self, title: str) -> None:
            title = another(title, self.model.playlist.title)
            admin.call("POST", f"playlists/{code}/retitle", {"title": title})
            self.model.playlist_retitled(title, time.time())
            self.read_playlist()

        @precondition(lambda self: self.model.playlist.withdrawn_at_clock is None)
        @rule()
        def withdraw_playlist(self) -> None:
            admin.withdraw_playlist(code)
            self.model.playlist_withdrawn()
            self.read_playlist()

        @rule(title=TITLES)
        def rename_creative(self, title: str) -> None:
            title = another(title, self.model.creative.name)
            admin.call("POST", f"creatives/{creative_id}/retitle", {"title": title})
            self.model.creative_renamed(title, time.time())
            self.read_creative()

        @rule(days=st.sampled_from([1, 15, 31]))
        def move_clock(self, days: int) -> None:
            admin.clock(advance=days * DAY)
            self.model.clock_moved(days * DAY)
            self.read_playlist()

        @rule()
        def read_film(self) -> None:
            if not self._film().tracked:
                return
            row, listed, _ = _catalog_film(client, film_id, episode)
            self.last_row = row, listed  # the series read of the same step compares with it
            if self.model.film_landed(row, listed):
                self._judge(self.model.film_read(row, listed, time.time()))

        @rule()
        def read_series(self, row: tuple[Any, bool] | None = None) -> None:
            """The film's series detail; judged with the catalog row read just before it (in
            the same step, after a change) or read now."""
            if not self._film().tracked or self.code is None or self.episode_no is None:
                return
            detail = _series(client, self.code)
            if self.model.series_landed(detail, self.episode_no):
                film_row, listed = row or _catalog_film(client, film_id, episode)[:2]
                found = self.model.series_read(
                    detail, self.episode_no, film_row, listed, time.time()
                )
                self._judge(found)

        @rule()
        def read_playlist(self) -> None:
            pair = _playlist(client, code)
            if self.model.playlist_landed(*pair):
                self._judge(self.model.playlist_read(*pair))

        @rule()
        def read_creative(self) -> None:
            if not self.model.creative.tracked:
                return
            record = _creative(client, creative_id)
            if self.model.creative_landed(record):
                self._judge(self.model.creative_read(record))

    return SpecState


@pytest.mark.requirement(*JUDGED)
@pytest.mark.needs(
    "admin", "role:films", "role:videos", "fixture:film_id", "fixture:episode_encrypted",
    "fixture:playlist_code", "fixture:creative_id",
)  # fmt: skip
def test_random_sequences_of_changes_keep_the_state_rules(
    client: DeliveryClient, admin: Any, fixture_id: Any, request: pytest.FixtureRequest
) -> None:
    sequences = sequences_or_skip(request)
    names = ("film_id", "episode_encrypted", "playlist_code", "creative_id")
    fx = {name: str(fixture_id(name)) for name in names}
    admin.call("POST", "reset", {"keep_faults": True})
    if _playlist(client, fx["playlist_code"])[0] is None or not _creative(
        client, fx["creative_id"]
    ):
        pytest.skip(NOT_EXERCISED_PREFIX + "playlist_code or creative_id is not readable")
    run_sequences(_machine(client, admin, fx), sequences, request)
