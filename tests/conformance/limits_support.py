"""Helpers of the limit scenarios: one cheap call per counter, spending and counting.

spec: Limits (counters, endpoints, units). The dedicated roles `limits` (film organisation) and
`limits_videos` (video organisation) are used so that lowering a counter touches nobody else;
the `admin` fixture resets the target after each test. Counter names are the admin API's
(docs/reading-of-the-spec.md (LIM-027)): playback, catalog, creatives, videos, video, config.

Timing: a continuous counter keeps refilling (L/60 per second) while answers travel, so the
helpers measure instead of assuming a count: `spend` goes on until the first 429 (bounded),
`spend_timed` also answers how long the spending took, `refilled` turns seconds into units, and
`drain_play` empties the playback bucket with play-only batches until an item is refused. The
limit scenarios run inside `client.burst(...)` (module fixtures): each spends a counter it
lowered itself on a dedicated organisation, so pacing must not stretch a drain.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playback_support import DEVICE, body_of, play_body, post

from delivery_conformance.checks import expect_status
from delivery_conformance.target.client import DeliveryClient, Response

__all__ = [
    "CLOCK_MINUTE",
    "CONTINUOUS",
    "COUNTERS",
    "Ceiling",
    "CounterCall",
    "admitted_count",
    "drain_play",
    "expect_each_status",
    "fewest_admitted",
    "fresh_minute",
    "lower",
    "median_elapsed",
    "play_batch",
    "play_only_batch",
    "refilled",
    "require_fixtures",
    "spend",
    "spend_timed",
    "spend_to_ceiling",
    "tickets",
]

CONTINUOUS = ("playback", "catalog")
CLOCK_MINUTE = ("creatives", "videos", "video", "config")
MAX_SPEND = 700  # bound on any spending loop
HIGH_PER_MILLE = 25  # spec: Limits ("approximate on the high side by up to about 2.5 %")


@dataclass(frozen=True)
class CounterCall:
    """The cheapest call that costs one unit of a counter, with the role that owns it."""

    counter: str
    role: str
    send: Callable[[DeliveryClient, Callable[[str], Any]], Response]
    fixtures: tuple[str, ...] = ()


def _ticket(client: DeliveryClient, fixture_id: Callable[[str], Any]) -> Response:
    return post(client, play_body(fixture_id), role="limits")


COUNTERS: dict[str, CounterCall] = {
    c.counter: c
    for c in (
        CounterCall("playback", "limits", _ticket, ("episode_encrypted",)),
        CounterCall(
            "catalog", "limits", lambda c, f: c.get("catalog", role="limits", params={"limit": 1})
        ),
        CounterCall(
            "creatives",
            "limits",
            lambda c, f: c.get("creatives", role="limits", params={"limit": 1}),
        ),
        CounterCall("config", "limits", lambda c, f: c.get("config", role="limits")),
        CounterCall(
            "videos",
            "limits_videos",
            lambda c, f: c.get("videos", role="limits_videos", params={"limit": 1}),
        ),
        CounterCall(
            "video",
            "limits_videos",
            lambda c, f: c.get(f"videos/{f('video_id')}", role="limits_videos"),
            ("video_id",),
        ),
    )
}


def lower(admin: Any, role: str, counter: str, limit: int) -> None:
    """Set a counter's limit for a role's organisation and start it full."""
    admin.set_limit(role, counter, limit)
    admin.reset_limits(role)


def fresh_minute(admin: Any, role: str, second: float = 1.0) -> float:
    """Set `role`'s clock `second` s into its next UTC minute; answer that minute's epoch.

    A clock-minute counter starts again at each UTC minute (spec: Limits table), so a count that
    straddles a minute boundary counts nothing: a scenario spending one starts here and assumes
    it ends within the same minute (under 50 s). Where the target keeps a clock per organisation
    only `role`'s moves (`AdminClient.clock`); elsewhere the whole target's.
    """
    now = admin.now(role)
    minute = (math.floor((time.time() if now is None else now) / 60) + 1) * 60
    admin.clock(set_to=minute + second, role=role)
    return minute


def require_fixtures(fixture_id: Callable[[str], Any], counter: str) -> None:
    """Ask for the fixtures the counter's cheap call needs (an absent one skips the test)."""
    for name in COUNTERS[counter].fixtures:
        fixture_id(name)


def play_batch(episode: object, size: int = 3) -> dict[str, Any]:
    """A batch of `size` play items for one episode: costs `size` tickets when all issue."""
    return {
        "intent": "play",
        "episodes": [{"episode_id": episode, "intent": "play"}] * size,
        **DEVICE,
    }


def play_only_batch(episode: object, size: int = 3) -> dict[str, Any]:
    """A batch whose every item says `intent: play` (later items would default to prefetch)."""
    return {
        "intent": "play",
        "episodes": [{"episode_id": episode, "intent": "play"}] * size,
        **DEVICE,
    }


def fewest_admitted(limit: int) -> int:
    """The fewest units a window of `limit` may admit before its first refusal.

    spec: Limits (counting runs high by up to about 2.5 %): a server may refuse that share of
    the limit early, rounded to whole units, so one unit early with a lowered limit under 40
    (docs/reading-of-the-spec.md (LIM (counting))); it never admits more than the limit.
    """
    return limit - -(-limit * HIGH_PER_MILLE // 1000)  # the 2.5 % rounded up to a whole unit


def refilled(counter: str, limit: int, seconds: float) -> int:
    """Whole units a counter of `limit` gains back in `seconds` (0 for clock-minute counters).

    spec: Limits table (continuous refill: the limit over 60 s, e.g. 180 per second for 10,800).
    """
    if counter not in CONTINUOUS:
        return 0
    return math.floor(limit / 60 * max(0.0, seconds))


def spend_timed(
    send: Callable[[], Response], *, limit: int = MAX_SPEND
) -> tuple[list[Response], Response | None, float]:
    """`spend` until the first 429, also answering the seconds it took (monotonic)."""
    start = time.monotonic()
    admitted, refused = spend(send, limit=limit)
    return admitted, refused, time.monotonic() - start


def drain_play(
    client: DeliveryClient,
    episode: object,
    role: str,
    max_batches: int,
    held_over: float | None = None,
) -> tuple[list[Response], Response | None]:
    """Empty the playback bucket: play-only batches of 3 until one has a refused item.

    Answers every batch answer and the one with the refusal (None: no refusal within
    `max_batches`, or an answer came back after `held_over` s: a hold past its bound is already
    the finding, so the drain stops there). A correct server may hold the last play items
    (spec: Limits > Behaviour at the ceiling item 3), so right after the refusal the bucket is
    empty and the next ticket is a whole refill interval away, whatever the round trip was.
    """
    answers: list[Response] = []
    body = play_only_batch(episode)
    for _ in range(max_batches):
        response = post(client, body, role=role)
        answers.append(response)
        if response.status_code == 429 or tickets(response) < 3:
            return answers, response
        if held_over is not None and response.exchange.elapsed > held_over:
            return answers, None
    return answers, None


@dataclass(frozen=True)
class Ceiling:
    """What `spend_to_ceiling` saw: the answers before the first 429, the 429 (None: none came),
    and whether the sends got ahead of the refill (a missing 429 is then a finding; else the
    round trip was too long for this counter and the ceiling was not reached: not exercised)."""

    admitted: list[Response]
    refused: Response | None
    outpaced: bool


def spend_to_ceiling(
    send: Callable[[], Response], counter: str, limit: int, *, extra: int = 5, seconds: float = 60
) -> Ceiling:
    """Send until the first 429 on a counter of `limit`, at most the limit, plus what refilled
    while sending, plus `extra`: how long that takes depends on the round trip, never the
    verdict. A sending that has not got ahead of the refill within `seconds` stops (the target
    is too far for this counter's refill)."""
    admitted: list[Response] = []
    start = time.monotonic()
    while time.monotonic() - start < seconds and len(admitted) < MAX_SPEND:
        if len(admitted) > limit + refilled(counter, limit, time.monotonic() - start) + extra:
            return Ceiling(admitted, None, outpaced=True)
        response = send()
        if response.status_code == 429:
            return Ceiling(admitted, response, outpaced=True)
        admitted.append(response)
    return Ceiling(admitted, None, outpaced=False)


def spend(
    send: Callable[[], Response], *, until_429: bool = True, limit: int = MAX_SPEND
) -> tuple[list[Response], Response | None]:
    """Send until the first 429 (bounded); answer the non-429 responses and the 429."""
    admitted: list[Response] = []
    for _ in range(limit):
        response = send()
        if response.status_code == 429 and until_429:
            return admitted, response
        admitted.append(response)
    return admitted, None


def admitted_count(send: Callable[[], Response], limit: int) -> int:
    """How many 200s before the first 429, spending at most `limit` + 5 calls."""
    admitted, _ = spend(send, limit=limit + 5)
    return sum(1 for r in admitted if r.status_code == 200)


def expect_each_status(
    requirement_id: str, send: Callable[[], Response], times: int, status: int, expected: str
) -> None:
    """Send `times` times; every answer must have `status`."""
    for _ in range(times):
        expect_status(requirement_id, send(), status, expected=expected)


def tickets(response: Response) -> int:
    """Tickets a playback answer issued: 1 for a single 200, the 200 items of a batch."""
    if response.status_code != 200:
        return 0
    items = body_of(response).get("items")
    if isinstance(items, list):
        return sum(1 for i in items if isinstance(i, dict) and i.get("status") == 200)
    return 1


def median_elapsed(responses: list[Response]) -> float:
    return statistics.median(r.exchange.elapsed for r in responses) if responses else 0.0
