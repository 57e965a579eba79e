"""Small pure rules a client applies to what it received (no I/O, `now` passed in)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PROTECTED", "is_free", "may_sell_paid", "usable"]

PROTECTED = "private-encrypted"


def is_free(film: Mapping[str, Any], episode_no: int) -> bool:
    """Film `free_until_episode` (Resources > Film; CAT-077): episodes up to and including it are
    free, 0 means none, null means every episode is paid; a non-integer counts as null."""
    limit = film.get("free_until_episode")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return False
    return 1 <= episode_no <= limit


def may_sell_paid(ticket: Mapping[str, Any]) -> bool:
    """POST /playback (PLAY-097): a paid episode is sold only on a `private-encrypted` ticket;
    an unknown protection value is not that."""
    return ticket.get("protection") == PROTECTED


def usable(creative: Mapping[str, Any], now: float, grace: int = 86_400) -> bool:
    """Creative record `rights.ends_at` (CLI-034): the whole last day is included, so the
    creative is usable until `ends_at` + 86400; null means no end date on record."""
    rights = creative.get("rights")
    ends_at = rights.get("ends_at") if isinstance(rights, Mapping) else None
    if not isinstance(ends_at, int) or isinstance(ends_at, bool):
        return True
    return now < ends_at + grace
