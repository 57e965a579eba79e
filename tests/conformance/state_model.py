"""A small model of the spec's state rules, written from the spec alone (not from the sandbox):
what a film, a playlist and a creative must show after any sequence of changes and clock steps.

The stateful scenario (test_state_model.py) makes random changes and reads, and hands each read
to the model, which answers the rules the read breaks. Pure: every change is told the wall time
it was made at (`now`), and the model adds the seconds it moved the target's clock.

A change that leaves the thing as it was at the last read (a title set to the one it had, an
episode withdrawn and published again) may or may not move a hash: a hash of the content stays,
a hash of the history moves, and both hash the metadata. Times are whole seconds (rounded down),
so a time that must move must not be earlier than the change, less the clock slack.

spec: Resources and their fields (Film `metadata_version`, `metadata_updated_at`; Series detail
`metadata_version`, `metadata_updated_at`, `content_version`, `episodes[]`; Playlist detail
`metadata_version`, `content_version`, `updated_at`; Creative record `created_at`,
`creative_code`, `updated_at`); States and transitions (Playlist); Limits > Other constants
(withdrawn items stay listed 30 days); Limits > Freshness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = [
    "DAY", "Creative", "Film", "Finding", "Playlist", "Series", "StateModel", "moment",
    "series_state",
]  # fmt: skip

DAY = 86400
MARGIN = 3600  # judged listed until 30 days less an hour, gone from 30 days and an hour
SLACK = 5.0  # seconds between the suite's clock and the target's, a rounded-down second included
FRESH = 30.0  # Limits > Freshness: the longest a served copy may lag a change to the film


@dataclass(frozen=True)
class Finding:
    requirement: str
    expected: str
    actual: str


def moment(value: Any) -> float | None:
    """Epoch seconds of an integer or an ISO 8601 time; None for anything else."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _late(stamp: float | None, changed_at: float) -> bool:
    """A time that should have moved to the change and is earlier than it."""
    return stamp is None or stamp < changed_at - SLACK


@dataclass
class Reverts:
    """A film back in a state it held before (withdrawn and published again, a title back to an
    earlier one) may be served, within the Freshness bound, from a copy made the first time:
    that copy shows the current state but the earlier hash (a hash of the history moves) and
    time. Until the bound has passed (wall time), such reads are not compared with the last one
    nor used as the baseline of the next."""

    seen: set[tuple[str, bool]] = field(default_factory=set)
    until: float = 0.0  # wall time until which a read may be such a copy

    def reached(self, before: tuple[str, bool], after: tuple[str, bool], now: float) -> None:
        self.seen.add(before)
        if after in self.seen:
            self.until = max(self.until, now + FRESH + SLACK)
        self.seen.add(after)

    def unsure(self, now: float | None) -> bool:
        return now is not None and now < self.until


@dataclass
class Film:
    title: str
    version: Any
    episode_listed: bool
    change: str = ""  # the requirement of the last change since the last read ("" when none)
    changed_at: float = 0.0  # the target's time of that change
    read: tuple[str, bool] = ("", True)  # title and episode state at the last read
    tracked: bool = True  # False once the film left the catalog after a clock step
    # (title, episode state) after each change since the last read, with the target's time of
    # that change: a cached copy showing the current state may date from an earlier change
    # that led to the same state (withdrawn, published, withdrawn again).
    passed: list[tuple[tuple[str, bool], float]] = field(default_factory=list)
    sure: bool = True  # whether `version` came from a read that could not be an earlier copy

    def moved(self) -> bool:
        """Whether the metadata differs from what the last read showed."""
        return (self.title, self.episode_listed) != self.read

    def changed(self, requirement: str, at: float) -> None:
        self.change, self.changed_at = requirement, at
        self.passed.append(((self.title, self.episode_listed), at))

    def reached_at(self) -> float:
        """The earliest time since the last read at which the film reached its current state:
        the least `metadata_updated_at` a read showing that state may carry."""
        now = (self.title, self.episode_listed)
        return min((at for state, at in self.passed if state == now), default=self.changed_at)


@dataclass
class Series:
    """The series detail of the model's film (`GET /series/{code}`, the film's code): it shows
    the film's state, its title in `title_i18n.en` and its published episodes in `episodes[]`."""

    read: tuple[str, bool] | None = None  # the film's state the last series read showed
    version: Any = None  # `metadata_version` at that read
    content: Any = None  # `content_version` at that read
    sure: bool = True  # whether that read could not be an earlier copy (see Reverts)
    touched: bool = False  # a change to the film since that read
    passed: list[tuple[tuple[str, bool], float]] = field(default_factory=list)

    def changed(self, state: tuple[str, bool], at: float) -> None:
        self.touched = True
        self.passed.append((state, at))

    def reached_at(self, state: tuple[str, bool]) -> float | None:
        """The earliest time since the last read at which the film reached `state`."""
        return min((at for shown, at in self.passed if shown == state), default=None)


def series_state(detail: dict[str, Any], episode_no: Any) -> tuple[str, bool]:
    """(English title, whether the episode numbered `episode_no` is published) of a detail."""
    titles = detail.get("title_i18n")
    title = titles.get("en") if isinstance(titles, dict) else None
    episodes = detail.get("episodes")
    numbers = (
        [e.get("ep_number") for e in episodes if isinstance(e, dict)]
        if isinstance(episodes, list)
        else []
    )
    return str(title), episode_no in numbers


@dataclass
class Playlist:
    title: str
    version: Any
    content: Any
    changed_at: float | None = None  # the target's time of the last change since the last read
    read_title: str = ""
    withdrawn_at_clock: float | None = None  # the model clock when it was withdrawn
    withdrawn_at_seen: Any = None  # the first `withdrawn_at` read after it


@dataclass
class Creative:
    name: str
    code: Any
    created_at: Any
    changed_at: float | None = None
    read_name: str = ""
    tracked: bool = True


@dataclass
class StateModel:
    film: Film | None  # None until a step first reads it (the scenario fills it in)
    # What a machine does not follow stays as given here and is never read.
    playlist: Playlist = field(default_factory=lambda: Playlist("", None, None))
    creative: Creative = field(default_factory=lambda: Creative("", None, None, tracked=False))
    clock: float = 0.0  # seconds the target's clock was moved
    steps: list[str] = field(default_factory=list)
    series: Series = field(default_factory=Series)
    reverts: Reverts = field(default_factory=Reverts)

    def __post_init__(self) -> None:
        if self.film is not None:
            self.film.read = (self.film.title, self.film.episode_listed)
        self.playlist.read_title = self.playlist.title
        self.creative.read_name = self.creative.name

    # -- changes ------------------------------------------------------------------------------

    def at(self, now: float) -> float:
        """The target's time for the wall time `now`."""
        return now + self.clock

    def film_retitled(self, title: str, now: float) -> None:
        assert self.film is not None, "read the film before changing it"
        before = (self.film.title, self.film.episode_listed)
        self.film.title = title
        self.reverts.reached(before, (title, self.film.episode_listed), now)
        self.film.changed("CAT-082", self.at(now))
        self.series.changed((title, self.film.episode_listed), self.at(now))
        self.steps.append(f"film retitled {title!r}")

    def episode_toggled(self, now: float) -> None:
        assert self.film is not None, "read the film before changing it"
        before = (self.film.title, self.film.episode_listed)
        self.film.episode_listed = not self.film.episode_listed
        self.reverts.reached(before, (self.film.title, self.film.episode_listed), now)
        self.film.changed("CAT-083", self.at(now))
        self.series.changed((self.film.title, self.film.episode_listed), self.at(now))
        self.steps.append("episode " + ("published" if self.film.episode_listed else "withdrawn"))

    def playlist_retitled(self, title: str, now: float) -> None:
        self.playlist.title, self.playlist.changed_at = title, self.at(now)
        self.steps.append(f"playlist retitled {title!r}")

    def playlist_withdrawn(self) -> None:
        if self.playlist.withdrawn_at_clock is None:
            self.playlist.withdrawn_at_clock = self.clock
        self.steps.append("playlist withdrawn")

    def creative_renamed(self, name: str, now: float) -> None:
        self.creative.name, self.creative.changed_at = name, self.at(now)
        self.steps.append(f"creative renamed {name!r}")

    def clock_moved(self, seconds: float) -> None:
        self.clock += seconds
        self.series.touched = True  # days later a licence window may have changed the detail
        self.steps.append(f"clock +{seconds / DAY:g} days")

    # -- reads: what the spec says the answer must show ----------------------------------------

    def film_landed(self, row: dict[str, Any] | None, episode_listed: bool) -> bool:
        """Whether a catalog read shows every change made so far (title, episode)."""
        if self.film is None:
            return True
        if row is None:
            return self.clock > 0  # the film left with a licence window: nothing more to see
        return row.get("title") == self.film.title and episode_listed == self.film.episode_listed

    def film_read(
        self, row: dict[str, Any] | None, episode_listed: bool, now: float | None = None
    ) -> list[Finding]:
        """Judges a catalog read that shows the film's current state; `now` (wall time) tells
        whether it may be an earlier copy of that state (see Reverts)."""
        film, found = self.film, []
        unsure = self.reverts.unsure(now)
        if film is None:
            return found
        if row is None:
            film.tracked = film.tracked and self.clock == 0
            return found
        version = row.get("metadata_version")
        if film.moved() and film.version is not None and version == film.version:
            found.append(
                Finding(film.change, f"metadata_version other than {film.version!r}", repr(version))
            )
        stamp, since = moment(row.get("metadata_updated_at")), film.reached_at()
        if film.moved() and film.version is not None and not unsure and _late(stamp, since):
            found.append(
                Finding(
                    "CAT-084",
                    f"metadata_updated_at from {since:.0f} on",
                    repr(row.get("metadata_updated_at")),
                )
            )
        if (
            not film.change
            and film.version is not None
            and film.sure
            and not unsure
            and version != film.version
        ):
            found.append(
                Finding("CAT-029", f"metadata_version still {film.version!r}", repr(version))
            )
        film.version, film.change, film.read = version, "", (film.title, film.episode_listed)
        film.sure = not unsure
        film.passed.clear()
        return found

    def series_landed(self, detail: dict[str, Any] | None, episode_no: Any) -> bool:
        """Whether a series detail shows every change made to the film so far."""
        film = self.film
        if film is None or detail is None:
            return film is None or self.clock > 0  # gone with a licence window: nothing to see
        return series_state(detail, episode_no) == (film.title, film.episode_listed)

    def series_read(
        self, detail: dict[str, Any] | None, episode_no: Any, row: dict[str, Any] | None,
        row_listed: bool, now: float | None = None,
    ) -> list[Finding]:  # fmt: skip
        """Judges a series detail that shows the film's current state, and the catalog row read
        with it: the hash moves with the metadata (SER-049) and stays when nothing changed
        (SER-006), the time moves (SER-048), the metadata hash is the catalog's (SER-017)."""
        series, found = self.series, []
        if detail is None:
            return found
        unsure = self.reverts.unsure(now)
        shown = series_state(detail, episode_no)
        content, version = detail.get("content_version"), detail.get("metadata_version")
        if series.read is not None and shown != series.read and content == series.content:
            found.append(
                Finding("SER-049", f"content_version other than {series.content!r}", "unchanged")
            )
        since = series.reached_at(shown)
        stamp = moment(detail.get("metadata_updated_at"))
        moved = series.read is not None and shown != series.read
        if moved and since is not None and not unsure and _late(stamp, since):
            found.append(
                Finding("SER-048", f"metadata_updated_at from {since:.0f} on", repr(stamp))
            )
        steady = series.sure and not unsure and not series.touched
        if series.read is not None and steady and content != series.content:
            found.append(
                Finding("SER-006", f"content_version still {series.content!r}", repr(content))
            )
        # a state held twice (at the last read, or reached again since): a hash of the history
        # may differ between two copies that both show it, so the catalog is compared only
        # when the state was held once
        held = sum(1 for state, _ in series.passed if state == shown) + (shown == series.read)
        once = held <= 1
        same = row is not None and (row.get("title"), row_listed) == shown
        if (
            same
            and once
            and not unsure
            and row is not None
            and row.get("metadata_version") != version
        ):
            found.append(
                Finding(
                    "SER-017",
                    f"the catalog's metadata_version {row.get('metadata_version')!r}",
                    repr(version),
                )
            )
        series.read, series.version, series.content = shown, version, content
        series.touched, series.sure = False, not unsure
        series.passed.clear()
        return found

    def playlist_landed(self, detail: dict[str, Any] | None, item: dict[str, Any] | None) -> bool:
        if self.playlist.withdrawn_at_clock is not None:
            return detail is None and (item is None or item.get("status") != "active")
        return detail is not None and detail.get("title") == self.playlist.title

    def playlist_read(
        self, detail: dict[str, Any] | None, item: dict[str, Any] | None
    ) -> list[Finding]:
        plist = self.playlist
        if plist.withdrawn_at_clock is not None:
            return self._withdrawn_read(item)
        found: list[Finding] = []
        if detail is None:
            return found
        if plist.changed_at is not None and plist.title != plist.read_title:
            if plist.version is not None and detail.get("metadata_version") == plist.version:
                found.append(
                    Finding(
                        "PLS-046", f"metadata_version other than {plist.version!r}", "unchanged"
                    )
                )
            if plist.content is not None and detail.get("content_version") == plist.content:
                found.append(
                    Finding("PLS-047", f"content_version other than {plist.content!r}", "unchanged")
                )
            if _late(moment(detail.get("updated_at")), plist.changed_at):
                found.append(
                    Finding(
                        "PLS-045",
                        f"updated_at from {plist.changed_at:.0f} on",
                        repr(detail.get("updated_at")),
                    )
                )
        plist.version, plist.content = detail.get("metadata_version"), detail.get("content_version")
        plist.changed_at, plist.read_title = None, plist.title
        return found

    def _withdrawn_read(self, item: dict[str, Any] | None) -> list[Finding]:
        plist, found = self.playlist, []
        age = self.clock - (plist.withdrawn_at_clock or 0.0)
        if age >= 30 * DAY + MARGIN:
            if item is not None:
                found.append(
                    Finding("STATE-006", "gone 30 days after the withdrawal", "still listed")
                )
            return found
        if item is None:
            if age <= 30 * DAY - MARGIN:
                found.append(
                    Finding("STATE-013", "listed within 30 days of the withdrawal", "gone")
                )
            return found
        if item.get("status") != "withdrawn":
            found.append(Finding("STATE-009", "status withdrawn", repr(item.get("status"))))
        if item.get("content_version") is not None or item.get("clip_count") is not None:
            found.append(Finding("STATE-010", "content_version and clip_count null", "set"))
        if plist.withdrawn_at_seen is None:
            plist.withdrawn_at_seen = item.get("withdrawn_at")
        elif item.get("withdrawn_at") != plist.withdrawn_at_seen:
            found.append(
                Finding(
                    "STATE-021",
                    f"withdrawn_at still {plist.withdrawn_at_seen!r}",
                    repr(item.get("withdrawn_at")),
                )
            )
        return found

    def creative_landed(self, record: dict[str, Any] | None) -> bool:
        return record is None or record.get("name") == self.creative.name

    def creative_read(self, record: dict[str, Any] | None) -> list[Finding]:
        made, found = self.creative, []
        if record is None:
            made.tracked = made.tracked and self.clock == 0
            return found
        if record.get("created_at") != made.created_at:
            found.append(
                Finding(
                    "CRE-065",
                    f"created_at still {made.created_at!r}",
                    repr(record.get("created_at")),
                )
            )
        if record.get("creative_code") != made.code:
            found.append(
                Finding(
                    "CRE-005",
                    f"creative_code still {made.code!r}",
                    repr(record.get("creative_code")),
                )
            )
        renamed = made.changed_at is not None and made.name != made.read_name
        if (
            renamed
            and made.changed_at is not None
            and _late(moment(record.get("updated_at")), made.changed_at)
        ):
            found.append(
                Finding(
                    "FRESH-022",
                    f"updated_at from {made.changed_at:.0f} on",
                    repr(record.get("updated_at")),
                )
            )
        made.changed_at, made.read_name = None, made.name
        return found
