"""Stateful exploration: random sequences of changes, reads and clock steps, each read judged
by a small model of the spec's state rules (state_model.py, written apart from the sandbox).

Two machines, each with the rules of one part of the state:
- the film's: the film retitled, its episode withdrawn and published again, a creative renamed,
  and reads of the catalog row, the series detail and the creative. Where the run has the
  `films_changes` organisation (a film licensed to it alone, its own creative, and an admin API
  whose restore of that role puts them back: suite/exclusive.py, CHANGES_ORGANISATION), it
  changes that organisation's film and creative, restores the role between sequences and runs
  beside the other scenarios on several workers; otherwise it changes the shared film and
  creative, resets the target between sequences, and holds the whole target.
- the playlist's: the playlist retitled and withdrawn, clock steps of days, and reads of its
  detail and list item. Playlists are one library every video organisation lists, and the clock
  is the target's, so it resets the target between sequences and holds it alone.
A step that the model does not follow after a clock step (the film, the creative) ends there, so
the film's machine takes no clock steps.

Hypothesis's rule-based state machine picks the steps (each change is read back at once; the
reads are steps of their own too, so that "nothing changed since" is judged as well); a read
that breaks a rule fails that rule's requirement, and Hypothesis shrinks the failing sequence to
the shortest one that still fails; the report shows the steps. The reads of one moment (a
playlist's detail and list item, a film's catalog row and series detail) are sent side by side.
A read that does not yet show every change made so far (a server may answer from a cache up to
the bounds of Limits > Freshness) is not judged, and the next read of that thing tries again:
how soon a change shows is the Freshness scenarios' rule, never this one's, and no step waits.
The budget is `run --state-sequences N` for each machine (DEFAULT_STATE_SEQUENCES in
suite/plugin.py; 0 leaves both "not exercised"); the seed is the run's. The kill rate turns the
shrinking off (`--no-state-shrink`): it needs the rule charged, not the shortest sequence.

spec: see state_model.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import listing_support as listing
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from json_support import body_of, objs
from state_model import DAY, Creative, Film, Finding, Playlist, StateModel
from stateful_support import judge, run_sequences, sequences_or_skip

from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.suite.exclusive import (
    CHANGES_ORGANISATION,
    CHANGES_ROLE,
    OWN_DATA,
    OWN_FIXTURE_FOR,
)
from delivery_conformance.target.client import DeliveryClient

FILM_JUDGED = ("CAT-029", "CAT-082", "CAT-083", "CAT-084", "CRE-005", "CRE-065", "FRESH-022",
               "SER-006", "SER-017", "SER-048", "SER-049")  # fmt: skip
PLAYLIST_JUDGED = ("PLS-045", "PLS-046", "PLS-047", "STATE-006", "STATE-009", "STATE-010",
                   "STATE-013", "STATE-021")  # fmt: skip
# Steps of one playlist sequence: its four rules (a withdrawal, clock steps to 30 days and
# beyond, retitles, reads) each several times over; a step of the film's machine is one of six.
PLAYLIST_STEPS = 5
TITLE_LIST = ("First light", "Second wind", "Third act", "Fourth wall")
TITLES = st.sampled_from(TITLE_LIST)


def another(title: str, current: str | None) -> str:
    """`title`, or the next one of TITLE_LIST when it is the current one: a retitle to the same
    title changes nothing the spec names, so a server may or may not count it as a change."""
    if title != current:
        return title
    return TITLE_LIST[(TITLE_LIST.index(title) + 1) % len(TITLE_LIST)]


def together(*reads: Callable[[], Any]) -> list[Any]:
    """The reads of one moment, sent side by side: a distant target costs one round trip for
    them all instead of one each. Their answers, in the order given."""
    with ThreadPoolExecutor(len(reads)) as pool:
        futures = [pool.submit(read) for read in reads]
        return [future.result() for future in futures]


def _data(response: Any) -> Any:
    data = body_of(response).get("data") if response.status_code == 200 else None
    return data if isinstance(data, dict) else None


def _playlist(client: DeliveryClient, code: str) -> tuple[Any, Any]:
    """The playlist's detail and its list item, read at one moment."""
    response, pages = together(
        lambda: client.get(f"playlists/{code}", role="videos"),
        lambda: listing.envelope_walk(client, "playlists", "videos", "PLS-049", limit=100),
    )
    items = [i for i in listing.items_of(pages) if i.get("code") == code]
    return _data(response), (items[0] if items else None)


def _film_machine(
    client: DeliveryClient, admin: Any, role: str, fx: dict[str, str], restore: Callable[[], Any]
) -> type:
    film_id, episode, creative_id = fx["film_id"], fx["episode"], fx["creative_id"]

    def catalog_film() -> tuple[Any, bool, Any]:
        """The film's catalog row, whether the episode is listed, and the episode's number."""
        body = body_of(client.get("catalog", role=role))
        rows = [f for f in objs(body.get("films")) if f.get("id") == film_id]
        numbers = [
            e.get("episode_no") for e in objs(body.get("episodes")) if e.get("id") == episode
        ]
        return (rows[0] if rows else None), bool(numbers), (numbers[0] if numbers else None)

    def series(code: Any) -> Any:
        return _data(client.get(f"series/{code}", role=role))

    def creative() -> Any:
        return _data(client.get(f"creatives/{creative_id}", role=role))

    class FilmState(RuleBasedStateMachine):
        model: StateModel
        code: Any = None  # the film's code, its series' code
        episode_no: Any = None  # the number of the followed episode

        def _judge(self, found: list[Finding]) -> None:
            judge(found, self.model.steps)

        @initialize()
        def start(self) -> None:
            restore()  # back to the start: the organisation's own data, or the whole target
            record = creative()
            if record is None:  # readable before the run, but not any more
                raise AssertionError("the creative fixture left after a restore")
            self.model = StateModel(
                None,  # the film is read when a step first needs it
                creative=Creative(
                    record.get("name"), record.get("creative_code"), record.get("created_at")
                ),
            )
            self._judge(self.model.creative_read(record))

        def _film(self) -> Film:
            """The film's model, from its first catalog read (with its series code and the
            episode's number, which the series detail lists episodes by)."""
            if self.model.film is None:
                row, listed, self.episode_no = catalog_film()
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
            self._read_film_and_series()

        @rule()
        def toggle_episode(self) -> None:
            if not self._film().tracked:
                return
            action = "withdraw" if self._film().episode_listed else "publish"
            self.read_series()
            admin.episode(episode, action)
            self.model.episode_toggled(time.time())
            self._read_film_and_series()

        # Preconditions read only what the model did, never what the server answered: a server
        # whose answers vary from one read to the next (several servers, each with its cache)
        # must draw the same rules when Hypothesis replays a sequence. A rule on a film or a
        # creative the reads stopped following does nothing instead.
        @rule(title=TITLES)
        def rename_creative(self, title: str) -> None:
            title = another(title, self.model.creative.name)
            admin.call("POST", f"creatives/{creative_id}/retitle", {"title": title})
            self.model.creative_renamed(title, time.time())
            self.read_creative()

        @rule()
        def read_film(self) -> None:
            if self._film().tracked:
                self._film_read(catalog_film()[:2])

        def _film_read(self, read: tuple[Any, bool]) -> None:
            row, listed = read
            if self.model.film_landed(row, listed):
                self._judge(self.model.film_read(row, listed, time.time()))

        def _read_film_and_series(self) -> None:
            """After a change: the film's catalog row and its series detail, read at one
            moment; the series is judged with that row."""
            if not self._film().tracked:
                return
            if self.code is None or self.episode_no is None:
                self.read_film()
                return
            film, detail = together(catalog_film, lambda: series(self.code))
            self._film_read(film[:2])
            self._series_read(detail, film[:2])

        @rule()
        def read_series(self) -> None:
            """The film's series detail, judged with the film's catalog row read at the same
            moment."""
            if not self._film().tracked or self.code is None or self.episode_no is None:
                return
            detail, film = together(lambda: series(self.code), catalog_film)
            self._series_read(detail, film[:2])

        def _series_read(self, detail: Any, row: tuple[Any, bool]) -> None:
            if self.model.series_landed(detail, self.episode_no):
                film_row, listed = row
                found = self.model.series_read(
                    detail, self.episode_no, film_row, listed, time.time()
                )
                self._judge(found)

        @rule()
        def read_creative(self) -> None:
            if not self.model.creative.tracked:
                return
            record = creative()
            if self.model.creative_landed(record):
                self._judge(self.model.creative_read(record))

    return FilmState


def _playlist_machine(client: DeliveryClient, admin: Any, code: str) -> type:
    class PlaylistState(RuleBasedStateMachine):
        model: StateModel

        def _judge(self, found: list[Finding]) -> None:
            judge(found, self.model.steps)

        @initialize()
        def start(self) -> None:
            # Back to the start state; switched faults stay (the kill rate's, docs/sandbox.md >
            # Admin API); an admin API without that option resets them too.
            admin.call("POST", "reset", {"keep_faults": True})
            detail, _ = _playlist(client, code)
            if detail is None:  # readable before the run, but not any more
                raise AssertionError("the playlist fixture left after a reset")
            self.model = StateModel(
                None,
                Playlist(
                    detail.get("title"),
                    detail.get("metadata_version"),
                    detail.get("content_version"),
                ),
            )
            self._judge(self.model.playlist_read(detail, None))

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

        @rule(days=st.sampled_from([1, 15, 31]))
        def move_clock(self, days: int) -> None:
            admin.clock(advance=days * DAY)
            self.model.clock_moved(days * DAY)
            self.read_playlist()

        @rule()
        def read_playlist(self) -> None:
            pair = _playlist(client, code)
            if self.model.playlist_landed(*pair):
                self._judge(self.model.playlist_read(*pair))

    return PlaylistState


@pytest.mark.long
@pytest.mark.exclusive(CHANGES_ORGANISATION)  # the whole target where the run has no such data
@pytest.mark.requirement(*FILM_JUDGED)
@pytest.mark.needs(
    "admin", "role:films", "fixture:film_id", "fixture:episode_encrypted", "fixture:creative_id"
)
def test_random_sequences_of_film_changes_keep_the_state_rules(
    client: DeliveryClient, admin: Any, fixture_id: Any, request: pytest.FixtureRequest
) -> None:
    sequences = sequences_or_skip(request)
    own = request.config.stash.get(OWN_DATA, False)
    role = CHANGES_ROLE if own else "films"  # the shared film's role
    names = list(OWN_FIXTURE_FOR.values() if own else OWN_FIXTURE_FOR)
    fx = dict(
        zip(("film_id", "episode", "creative_id"), map(str, map(fixture_id, names)), strict=True)
    )

    def restore() -> Any:
        if own:
            return admin.restore(CHANGES_ROLE)
        return admin.call("POST", "reset", {"keep_faults": True})

    restore()
    if _data(client.get(f"creatives/{fx['creative_id']}", role=role)) is None:
        pytest.skip(NOT_EXERCISED_PREFIX + f"{names[2]} is not readable")
    run_sequences(_film_machine(client, admin, role, fx, restore), sequences, request)


@pytest.mark.long
@pytest.mark.requirement(*PLAYLIST_JUDGED)
@pytest.mark.needs("admin", "role:videos", "fixture:playlist_code")
def test_random_sequences_of_playlist_changes_and_clock_steps_keep_the_state_rules(
    client: DeliveryClient, admin: Any, fixture_id: Any, request: pytest.FixtureRequest
) -> None:
    sequences = sequences_or_skip(request)
    code = str(fixture_id("playlist_code"))
    admin.call("POST", "reset", {"keep_faults": True})
    if _playlist(client, code)[0] is None:
        pytest.skip(NOT_EXERCISED_PREFIX + "playlist_code is not readable")
    machine = _playlist_machine(client, admin, code)
    run_sequences(machine, sequences, request, steps=PLAYLIST_STEPS)
