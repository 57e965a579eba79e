"""Playback tickets and their server-side reuse, pure.

spec: POST /playback; Resources > Playback ticket; Limits > Other constants.

A ticket is `vid` + `play_auth_token` for a `private-encrypted` episode (30 minutes) or a
`manifest_url` for a `signed-url-only` one (15 minutes). With a `viewer_ref`, a repeat request for
the same viewer, device values, episode (asked for the same way) and intent class gets the same
ticket back while at least 5 minutes of it are left. Time and secrets are passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from delivery_sandbox.playback.admission import IntentClass

__all__ = [
    "ENCRYPTED",
    "PLAYBACK_DOMAIN",
    "SIGNED_URL_ONLY",
    "ReuseKey",
    "Ticket",
    "TicketBook",
    "TicketPolicy",
    "iso_utc",
    "mint",
]

ENCRYPTED = "private-encrypted"
SIGNED_URL_ONLY = "signed-url-only"
PLAYBACK_DOMAIN = "play.delivery.sandbox"
SUBTITLE_FORMAT = "webvtt"


@dataclass(frozen=True)
class TicketPolicy:
    """Lifetimes and the reuse window (spec: Limits > Other constants); faults change them.

    Requirements: PLAY-051, PLAY-052, PLAY-060, PLAY-064.

    Requirements: STATE-018, STATE-019.
    """

    play_token_ttl: int = 1_800
    manifest_ttl: int = 900
    reuse_margin: int = 300  # reuse until 5 minutes before expires_at
    reuse_ignores_device: bool = False
    sort_subtitles: bool = True  # False: reverse lang order (a fault)
    reuse_extension: int = 0  # seconds a reuse adds to the kept ticket (a fault: PLAY-003)
    reuses: bool = True  # False: no ticket is kept for reuse (legal variant no_reuse)


def iso_utc(epoch: float) -> str:
    """ISO 8601 UTC with a `Z`, to the second. (PLAY-050)"""
    return _iso(int(epoch))


@lru_cache(maxsize=8)
def _iso(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


@dataclass(frozen=True)
class Ticket:
    episode_id: str
    episode_no: int
    protection: str
    expires_at: float
    subtitles: tuple[tuple[str, str], ...]  # (lang, url)
    vid: str | None = None
    play_auth_token: str | None = None
    manifest_url: str | None = None

    def fields(self) -> dict[str, Any]:
        """The ticket fields of a 200 body or a batch item (spec: POST /playback, Response 200).

        Requirements: PLAY-001, PLAY-048, PLAY-049, PLAY-050, PLAY-053, PLAY-054, PLAY-055,
        PLAY-057, PLAY-058.
        """
        out: dict[str, Any] = {}
        if self.play_auth_token is not None:
            out["vid"] = self.vid
            out["play_auth_token"] = self.play_auth_token
        else:
            out["manifest_url"] = self.manifest_url
        out["expires_at"] = iso_utc(self.expires_at)
        out["protection"] = self.protection
        out["subtitles"] = [
            {"lang": lang, "url": url, "format": SUBTITLE_FORMAT} for lang, url in self.subtitles
        ]
        return out


def mint(
    *,
    episode_id: str,
    episode_no: int,
    protection: str,
    vid: str | None,
    subtitles: Iterable[tuple[str, str]],
    now: float,
    new_secret: Callable[[], str],
    policy: TicketPolicy,
) -> Ticket:
    """A fresh ticket for one episode issued at `now`.

    Requirements: CFG-035, PLAY-001, PLAY-051, PLAY-052, PLAY-053, PLAY-054, PLAY-056.

    Requirements: STATE-018, STATE-019.
    """
    subs = tuple(sorted(subtitles, reverse=not policy.sort_subtitles))
    if protection == SIGNED_URL_ONLY:
        expires = now + policy.manifest_ttl
        url = (
            f"https://{PLAYBACK_DOMAIN}/hls/{episode_id}/master.m3u8"
            f"?expires={int(expires)}&signature={new_secret()}"
        )
        return Ticket(episode_id, episode_no, protection, expires, subs, manifest_url=url)
    return Ticket(
        episode_id,
        episode_no,
        protection,
        now + policy.play_token_ttl,
        subs,
        vid=vid,
        play_auth_token=new_secret(),
    )


@dataclass(frozen=True)
class ReuseKey:
    """What must match for a ticket to be reused; `episode` keeps how it was asked for."""

    viewer_ref: str
    union_info: str | None
    drm_kek: str | None
    episode: tuple[str, ...]
    intent: IntentClass


class TicketBook:
    """Tickets issued with a `viewer_ref`, kept for reuse until their reuse window closes."""

    SOFT_CAP = 50_000
    HARD_CAP = 200_000

    def __init__(self, policy: TicketPolicy | None = None) -> None:
        self.policy = policy or TicketPolicy()
        self._kept: dict[ReuseKey, Ticket] = {}

    def _key(self, key: ReuseKey) -> ReuseKey:
        if self.policy.reuse_ignores_device:
            return ReuseKey(key.viewer_ref, None, None, key.episode, key.intent)
        return key

    def reusable(self, ticket: Ticket, now: float) -> bool:
        return ticket.expires_at - now >= self.policy.reuse_margin

    def find(self, key: ReuseKey, now: float) -> Ticket | None:
        """The kept ticket when at least the reuse margin of it is left, else None.

        Requirements: PLAY-003, PLAY-060, PLAY-064.
        """
        key = self._key(key)
        ticket = self._kept.get(key)
        if ticket is None or not self.policy.reuses:
            return None
        if self.reusable(ticket, now):
            if self.policy.reuse_extension:
                ticket = replace(ticket, expires_at=ticket.expires_at + self.policy.reuse_extension)
                self._kept[key] = ticket
            return ticket
        del self._kept[key]
        return None

    def keep(self, key: ReuseKey, ticket: Ticket, now: float) -> None:
        if not self.policy.reuses:
            return
        if len(self._kept) >= self.SOFT_CAP:
            self._purge(now)
        self._kept[self._key(key)] = ticket

    def _purge(self, now: float) -> None:
        self._kept = {k: t for k, t in self._kept.items() if self.reusable(t, now)}
        while len(self._kept) >= self.HARD_CAP:
            del self._kept[next(iter(self._kept))]

    def clear(self) -> None:
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)
