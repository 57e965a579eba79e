"""Variants at the `store` seam: servers that read the data through a cache (spec: Limits >
Freshness (upper bounds); GET /catalog, "up to 30 seconds old").

A cached server answers the catalog side (catalog, series, playlists) and checks tickets from a
copy of the data taken at one moment. The copy is replaced when it is `max_age` seconds old, or
sooner once a change is noted that its Freshness row lets wait less: every change becomes
visible within min(`max_age`, the lag of its kind), each lag strictly inside the row's bound.

Time is the sandbox's wall clock (`sb.now()`), which the admin clock moves too: a jump forward
ages the copy by the jump (a jump past `max_age` renews it), a jump backwards renews it at once.
Pure: `now` is passed in; the copy itself is taken by the caller (state/views.py).

`admin_change` maps each action of the sandbox admin API to the Freshness row it falls under;
an action that is no change of the data served (faults, outages, the clock, creatives, limits,
keys and organisations, which the sandbox checks apart from the store) has the copies taken
again at the next read. A reset is no change the Freshness table speaks of: it is the test
harness's way back to the start state between scenarios, so every server takes it in at once
(its copy is dropped: `ServerViews.renew`); a partner's equivalent of the admin API must do
the same for its scenarios to start from the state they expect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum, auto
from types import MappingProxyType

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = [
    "BOUNDS",
    "CACHED_ENDPOINTS",
    "CachePolicy",
    "Change",
    "CopyAge",
    "ServerPlan",
    "admin_change",
    "server_plan",
]


class Change(StrEnum):
    """The rows of the Freshness table (plus the changes no row names)."""

    PUBLICATION = auto()  # film or episode published or withdrawn, stream_ready changed
    LICENCE = auto()  # licence granted, suspended, switched off or past its window
    SUSPENSION = auto()  # organisation suspended
    KEY = auto()  # key revoked or rotated
    CREATED = auto()  # something just created (key, episode, licence)
    SUBTITLE = auto()  # subtitle attached or replaced
    LIMIT_RAISED = auto()  # rate limit raised
    METADATA = auto()  # no row: a title changed; the catalog is "up to 30 seconds old"
    CONTROL = auto()  # not a change of the served data: faults, outages, the clock


# Change -> (bound in the catalog, bound in ticket requests), seconds; None: not applicable.
BOUNDS: MappingProxyType[Change, tuple[float | None, float | None]] = MappingProxyType(
    {
        Change.PUBLICATION: (30.0, 60.0),
        Change.LICENCE: (30.0, 30.0),
        Change.SUSPENSION: (30.0, 30.0),  # "about 1 s (always within 30 s)"
        Change.KEY: (30.0, 30.0),  # "about 1 s (always within 30 s)"
        Change.CREATED: (5.0, 5.0),
        Change.SUBTITLE: (None, 300.0),
        Change.LIMIT_RAISED: (60.0, 60.0),
        Change.METADATA: (30.0, None),
        Change.CONTROL: (None, None),
    }
)

# Admin API (first path segment, action) -> the Freshness row of that change. A licence restored
# and an episode published again could be read as "granted" or "published" (30 s) or as "just
# created" (5 s): the shorter bound is kept, so the variant is legal under either reading.
ADMIN_CHANGES: MappingProxyType[tuple[str, str], Change] = MappingProxyType(
    {
        ("licences", "end"): Change.LICENCE,
        ("licences", "suspend"): Change.LICENCE,
        ("licences", "restore"): Change.CREATED,
        ("episodes", "withdraw"): Change.PUBLICATION,
        ("episodes", "publish"): Change.CREATED,
        ("episodes", "subtitles"): Change.SUBTITLE,
        ("series", "withdraw"): Change.PUBLICATION,
        ("playlists", "withdraw"): Change.PUBLICATION,
        ("films", "retitle"): Change.METADATA,
        ("playlists", "retitle"): Change.METADATA,
        ("roles", "suspend"): Change.SUSPENSION,
        ("roles", "revoke"): Change.KEY,
        ("roles", "rotate"): Change.KEY,
        ("roles", "limits"): Change.LIMIT_RAISED,
    }
)

# The endpoints (app.py route names) a cached server answers from its copy.
CACHED_ENDPOINTS = frozenset(
    {"catalog", "series", "series_one", "playlists", "playlist", "playback"}
)


def admin_change(parts: Sequence[str]) -> Change:
    """The Freshness row of an admin API call, by its path segments under /_sandbox/."""
    if len(parts) == 3:
        return ADMIN_CHANGES.get((parts[0], parts[2]), Change.CONTROL)
    if len(parts) == 1:
        return ADMIN_CHANGES.get((parts[0], ""), Change.CONTROL)
    return Change.CONTROL


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """How old a server's copy may get: `max_age` at most, and per kind of change the longest it
    waits once noted (missing kinds: renewed at the next read)."""

    max_age: float
    lags: MappingProxyType[Change, float]

    def lag(self, change: Change) -> float:
        return min(self.lags.get(change, 0.0), self.max_age)

    def check(self) -> None:
        """Every lag strictly inside both bounds of its row (ImportError otherwise)."""
        for change, (catalog, tickets) in BOUNDS.items():
            waits = self.lag(change)
            for bound in (catalog, tickets, 30.0):  # 30.0: GET /catalog, "up to 30 seconds old"
                if bound is not None and waits >= bound:
                    raise ImportError(f"{change} waits {waits} s, its bound is {bound} s")


# catalog_cache: a copy up to 20 s old; a change within 20 s of a 30 s bound, within 3 s of a
# 5 s bound; the subtitle row (5 minutes) is taken in at once so that a run stays short.
LAGGING = CachePolicy(
    20.0,
    MappingProxyType(
        {
            Change.PUBLICATION: 20.0,
            Change.LICENCE: 20.0,
            Change.CREATED: 3.0,
            Change.METADATA: 20.0,
        }
    ),
)
LAGGING.check()


@dataclass(slots=True)
class CopyAge:
    """When a server's copy was taken and when it must be taken again."""

    taken_at: float
    due_at: float

    @classmethod
    def taken(cls, now: float, policy: CachePolicy) -> CopyAge:
        return cls(now, now + policy.max_age)

    def stale(self, now: float) -> bool:
        """Due, or the clock went back past the moment it was taken."""
        return now >= self.due_at or now < self.taken_at

    def noted(self, change: Change, now: float, policy: CachePolicy) -> None:
        """A change was made at `now`: the copy is taken again within its lag."""
        self.due_at = min(self.due_at, now + policy.lag(change))


@dataclass(frozen=True, slots=True)
class ServerPlan:
    """The servers answering in turn: each None (reads the data as it is) or a cache policy."""

    servers: tuple[CachePolicy | None, ...]


def server_plan(variants: VariantSet) -> ServerPlan | None:
    """The servers the variants on play; None: one server reading the data as it is."""
    if variants.enabled(VariantName.two_servers):
        return ServerPlan((None, LAGGING))
    if variants.enabled(VariantName.catalog_cache):
        return ServerPlan((LAGGING,))
    return None
