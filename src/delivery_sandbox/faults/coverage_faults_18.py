"""Eighteenth block of coverage faults (issue 13; README: Requirement proofs): subtitle freshness.

A subtitle attached to an episode, or the file of one replaced, must show in ticket requests
within 5 minutes, and a language new to the licensed films must show in `/config` within 5
minutes. Under each fault one side of that change reaches the API 305 s after the admin API
answered (the 5-minute bound plus a few seconds, so the scenario's wait ends first); the other
side sees it at once, so each fault breaks exactly one requirement. The clean sandbox applies
the change before it answers.

Spec section: Limits > Freshness (upper bounds): subtitle attached or replaced, subtitle
languages in `/config`.

Slow faults (`SLOW_18`): only a wait of the whole 5 minutes proves them, so the targeted kill
rate of `make test` runs each in a process of its own beside the main one
(tests/harness/killrate_support.py). The delay goes through `sb.later`, so a reset cancels it.

Hook, one call in control/admin.py where the change is made: `subtitle_18`.
"""

# The fault table holds one row a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from typing import TYPE_CHECKING

from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows

if TYPE_CHECKING:
    from delivery_sandbox.state.context import Sandbox
    from delivery_sandbox.state.store import Episode

__all__ = ["COVERAGE_FAULT_ROWS_18", "SLOW_18", "subtitle_18"]

COVERAGE_FAULT_ROWS_18: tuple[FaultRow, ...] = fault_rows("""
subtitle_ticket_after_305_s  | FRESH-013 | a subtitle attached or replaced reaches ticket requests 305 s after it is made (past the 5-minute bound); /config at once
config_languages_after_305_s | FRESH-015 | a subtitle language new to the licensed films reaches /config's subtitles.languages 305 s after it is made; tickets at once
""")
DELAY = 305.0  # seconds: the 5-minute bound plus a margin the scenario's wait ends within
SLOW_18 = frozenset(str(name) for name, *_ in COVERAGE_FAULT_ROWS_18)


def subtitle_18(sb: Sandbox, episode_id: str, lang: str, url: str, now: int) -> Episode | None:
    """Attach or replace a subtitle (`store.attach_subtitle`; None: no such published episode);
    ticket requests keep the old subtitles, or the episode record (hence `/config`) keeps its
    old languages, for DELAY seconds under this block's faults."""
    store = sb.store
    before = store.episode(episode_id)
    if before is None:
        return None
    old_pairs = store.subtitle_pairs(before)
    changed = store.attach_subtitle(episode_id, lang, url, now)
    if changed is None:
        return None
    held = store.held_subtitles
    if sb.faults.enabled(FaultName.subtitle_ticket_after_305_s):
        held[episode_id] = old_pairs
        sb.later(DELAY, held.pop, episode_id, None)
    if sb.faults.enabled(FaultName.config_languages_after_305_s):
        held.setdefault(episode_id, store.subtitle_pairs(changed))  # tickets see it at once
        store.put_episode(before)
        sb.later(DELAY, _land, sb, changed)
    return changed


def _land(sb: Sandbox, changed: Episode) -> None:
    """The held-back record reaches the API: the episode and `/config` read it, tickets too."""
    sb.store.put_episode(changed)
    sb.store.held_subtitles.pop(changed.id, None)
