"""Faults of the freshness bounds: an admin change (a key revoked or rotated, an episode
withdrawn, a licence or an organisation suspended, a limit raised, a subtitle attached) reaches
the API later than the Freshness table allows. The admin API answers at once, but the change is
put back and made again after a delay (through `sb.later`, so a reset cancels it). The clean
sandbox applies every change before it answers.

Spec sections: Limits > Freshness (upper bounds; subtitle attached or replaced, subtitle
languages in `/config`); Authentication (key revocation and rotation).

Slow faults (`SLOW`): a delay past a hard bound (5 s, 30 s, 65 s, 5 minutes) is only seen once
the suite has waited that bound out, so the targeted kill rate of `make test` runs them in
processes of their own beside the main one (tests/harness/killrate_support.py). Each delay is
the bound plus a few seconds, so the scenario's wait ends before the change lands.

The admin-action seam: control/admin.py makes each change through one function,
`admin_action(sb, action, **args)`, and `ACTIONS` names the hook of each action: `revoke`,
`rotate`, `publish_episode`, `change_licence`, `suspend` (also late under
suspension_seen_late), `set_limit`, `attach_subtitle`, `retitle_film`, `retitle_playlist`
(what a retitle keeps under the metadata faults) and `renamed` (a creative renamed by the admin
API: its `updated_at`, `creative_stamp`, FRESH-022; its `created_at`, CRE-065). Their rows:
here, and registry.py / coverage_rows.py for the retitle and suspension faults.
"""

# The fault table holds one row a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from delivery_sandbox.faults.authentication import rotate_key
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Record, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = [
    "ACTIONS",
    "COLLATERAL",
    "FAULTS",
    "FAULT_ROWS",
    "SLOW",
    "admin_action",
    "attach_subtitle",
    "change_licence",
    "creative_stamp",
    "publish_episode",
    "renamed",
    "retitle_film",
    "retitle_playlist",
    "revoke",
    "rotate",
    "set_limit",
    "suspend",
]

FAULT_ROWS: tuple[FaultRow, ...] = fault_rows("""
revocation_seen_late          | FRESH-011           | a key revocation takes effect 4 s after it is made (within 30 s, not about 1 s)
revocation_after_35_s         | FRESH-008 FRESH-009 | a key revocation takes effect 35 s after it is made: the key still opens the catalog and tickets past 30 s
old_secret_open_35_s          | FRESH-010           | after a rotation the old secret still opens the catalog and tickets for 35 s
rotated_key_refused_8_s       | FRESH-012           | a rotated key's new secret is refused for the first 8 s
episode_withdrawal_after_35_s | FRESH-001           | an episode withdrawal takes effect 35 s after it is made: the catalog lists it past 30 s (tickets still within 60 s)
licence_suspension_after_35_s | FRESH-003           | a licence suspension takes effect 35 s after it is made: the film stays in the catalog past 30 s
org_suspension_after_35_s     | FRESH-005 FRESH-006 | an organisation suspension takes effect 35 s after it is made: catalog and tickets still served past 30 s
catalog_raise_after_70_s      | FRESH-014           | a raised catalog limit applies 70 s after it is made (not within about a minute); the playback counter's at once
creative_update_keeps_stamp   | FRESH-022           | a creative renamed during a walk keeps its updated_at: neither the rest of the walk nor the next sync brings it again
subtitle_ticket_after_305_s  | FRESH-013 | a subtitle attached or replaced reaches ticket requests 305 s after it is made (past the 5-minute bound); /config at once
config_languages_after_305_s | FRESH-015 | a subtitle language new to the licensed films reaches /config's subtitles.languages 305 s after it is made; tickets at once
""")
# Seconds each fault holds its change back: the bound it breaks plus a margin.
DELAYS: dict[FaultName, float] = {
    FaultName.revocation_seen_late: 4.0,  # "about 1 s" (FRESH-011): the suite allows 2 s
    FaultName.revocation_after_35_s: 35.0,
    FaultName.old_secret_open_35_s: 35.0,
    FaultName.rotated_key_refused_8_s: 8.0,
    FaultName.episode_withdrawal_after_35_s: 35.0,
    FaultName.licence_suspension_after_35_s: 35.0,
    FaultName.org_suspension_after_35_s: 35.0,
    FaultName.catalog_raise_after_70_s: 70.0,  # "about 1 minute": the suite allows 65 s
}
# Faults only a wait of the whole bound (more than 4 s) can prove.
SUBTITLE_DELAY = 305.0  # seconds: the 5-minute bound plus a margin the scenario's wait ends within
SUBTITLE_FAULTS = (FaultName.subtitle_ticket_after_305_s, FaultName.config_languages_after_305_s)
SLOW = frozenset(str(name) for name, delay in DELAYS.items() if delay > 5.0) | frozenset(
    str(name) for name in SUBTITLE_FAULTS
)
COLLATERAL: dict[str, tuple[tuple[str, str], ...]] = {
    "licence_suspension_after_35_s": (
        ("FRESH-004", "the late suspension reaches ticket requests past their 30 s bound too"),
    ),
}
FAULTS = declare(
    FAULT_ROWS, area="Limits > Freshness", seam="admin", slow=SLOW, collateral=COLLATERAL
)


def _hold_back(
    sb: Server,
    fault: FaultName,
    undo: Callable[[], object],
    redo: Callable[[], object],
    org: str | None = None,
) -> None:
    """A change just made: when `fault` is on, undo it now and make it again after its delay
    (a sandbox reset cancels what is pending; a restore of `org`, what is pending for it)."""
    if sb.faults.enabled(fault):
        undo()
        sb.later(DELAYS[fault], redo, org=org)


def revoke(sb: Server, role: str) -> None:
    """Revoke the key of `role`, late under the revocation faults."""
    keys = sb.accounts.keys
    key = sb.accounts.key_of(role)
    before = keys[key]
    sb.accounts.revoke(role)
    after = keys[key]
    for fault in (FaultName.revocation_seen_late, FaultName.revocation_after_35_s):
        _hold_back(
            sb, fault, lambda: keys.__setitem__(key, before), lambda: keys.__setitem__(key, after)
        )


def rotate(sb: Server, role: str) -> str:
    """Rotate the key of `role` (`rotate_key`); the old secret is dropped late, or the new one
    admitted late, under the rotation faults. The new secret."""
    keys = sb.accounts.keys
    old = sb.accounts.key_of(role)
    record = keys[old]
    new = rotate_key(sb, role)
    _hold_back(
        sb,
        FaultName.old_secret_open_35_s,
        lambda: keys.__setitem__(old, record),
        lambda: keys.pop(old, None),
    )
    if new in keys:
        made = keys[new]
        _hold_back(
            sb,
            FaultName.rotated_key_refused_8_s,
            lambda: keys.pop(new, None),
            lambda: keys.__setitem__(new, made),
        )
    return new


def publish_episode(sb: Server, episode_id: str, publish: bool) -> bool:
    """Publish or withdraw an episode of the seed (False: no such episode); a withdrawal lands
    late under `episode_withdrawal_after_35_s`."""
    store = sb.store
    keep = sb.faults.enabled(FaultName.film_version_ignores_episodes)

    def published(value: bool) -> bool:
        found: bool = store.set_episode_published(
            episode_id, value, int(sb.now()), keep_version=keep
        )
        return found

    if not published(publish):
        return False
    if not publish:
        _hold_back(
            sb,
            FaultName.episode_withdrawal_after_35_s,
            lambda: published(True),
            lambda: published(False),
        )
    return True


def change_licence(sb: Server, org_id: str, film_id: str, action: str, now: int) -> Record:
    """`store.change_licence` (its KeyError and ValueError pass through); a suspension lands
    late under `licence_suspension_after_35_s`."""
    licences = sb.store.licences
    key = (org_id, film_id)
    before = licences.get(key)
    licence = sb.store.change_licence(org_id, film_id, action, now)
    if action == "suspend" and before is not None:
        _hold_back(
            sb,
            FaultName.licence_suspension_after_35_s,
            lambda: licences.__setitem__(key, before),
            lambda: licences.__setitem__(key, licence),
        )
    return licence


LATE_SUSPENSION = 4.0  # seconds, fault suspension_seen_late


def suspend(sb: Server, org_id: str) -> None:
    """Suspend an organisation, late under `org_suspension_after_35_s`; under
    `suspension_seen_late` (FRESH-007 broken, FRESH-005/006 kept) only after 4 s."""
    if sb.faults.enabled(FaultName.suspension_seen_late):
        sb.later(LATE_SUSPENSION, sb.accounts.suspended.add, org_id, org=org_id)
        return
    suspended = sb.accounts.suspended
    suspended.add(org_id)
    _hold_back(
        sb,
        FaultName.org_suspension_after_35_s,
        lambda: suspended.discard(org_id),
        lambda: sb.accounts.suspended.add(org_id),
        org=org_id,
    )


def set_limit(sb: Server, org_id: str, counter: str, limit: int, now: float) -> None:
    """Set a counter's limit; a raise of the catalog counter lands late under
    `catalog_raise_after_70_s`."""
    limits = sb.limits
    before = limits.limit_of(org_id, counter)
    limits.set_limit(org_id, counter, limit, now)
    if counter == "catalog" and limit > before:
        _hold_back(
            sb,
            FaultName.catalog_raise_after_70_s,
            lambda: limits.set_limit(org_id, counter, before, now),
            lambda: limits.set_limit(org_id, counter, limit, sb.now()),
            org=org_id,
        )


def creative_stamp(faults: FaultSwitch, before: int, now: int) -> int:
    """The `updated_at` of a creative changed at `now`: unchanged under
    `creative_update_keeps_stamp`."""
    return before if faults.enabled(FaultName.creative_update_keeps_stamp) else now


def renamed(sb: Server, creative: Record, name: str, now: int) -> Record:
    """A creative renamed at `now`: its `updated_at` moves (`creative_stamp`); its `created_at`,
    `approved_at` and code stay (the rename time under `creative_rename_restamps_created_at` and
    `creative_rename_restamps_approved_at`, another code under `creative_rename_recodes`)."""
    faults = sb.faults
    created = creative.created_at
    if faults.enabled(FaultName.creative_rename_restamps_created_at):
        created = now
    approved = creative.approved_at
    if faults.enabled(FaultName.creative_rename_restamps_approved_at) and approved is not None:
        approved = now
    code = creative.code
    if faults.enabled(FaultName.creative_rename_recodes):
        code = f"{code or 'CR'}-R{now % 1000:03d}"
    return dataclasses.replace(
        creative,
        name=name,
        updated_at=creative_stamp(faults, creative.updated_at, now),
        created_at=created,
        approved_at=approved,
        code=code,
    )


def retitle_film(sb: Server, film_id: str, title: str, now: int) -> Record:
    """Retitle a film (`store.retitle_film`; KeyError: no such film); its metadata_version
    kept under `metadata_version_frozen`."""
    keep = sb.faults.enabled(FaultName.metadata_version_frozen)
    return sb.store.retitle_film(film_id, title, now, keep_version=keep)


def retitle_playlist(sb: Server, code: str, title: str, now: int) -> Record:
    """Retitle a playlist (`store.retitle_playlist`; KeyError: no such playlist); its
    updated_at kept under `playlist_change_keeps_updated_at`, its metadata_version under
    `playlist_metadata_version_frozen`."""
    keep_time = sb.faults.enabled(FaultName.playlist_change_keeps_updated_at)
    keep_version = sb.faults.enabled(FaultName.playlist_metadata_version_frozen)
    return sb.store.retitle_playlist(
        code, title, now, keep_time=keep_time, keep_version=keep_version
    )


def attach_subtitle(sb: Server, episode_id: str, lang: str, url: str, now: int) -> Record | None:
    """Attach or replace a subtitle (`store.attach_subtitle`; None: no such published episode);
    ticket requests keep the old subtitles, or the episode record (hence `/config`) keeps its
    old languages, for SUBTITLE_DELAY seconds under the subtitle faults."""
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
        sb.later(SUBTITLE_DELAY, held.pop, episode_id, None)
    if sb.faults.enabled(FaultName.config_languages_after_305_s):
        held.setdefault(episode_id, store.subtitle_pairs(changed))  # tickets see it at once
        store.put_episode(before)
        sb.later(SUBTITLE_DELAY, _land, sb, changed)
    return changed


def _land(sb: Server, changed: Record) -> None:
    """The held-back record reaches the API: the episode and `/config` read it, tickets too."""
    sb.store.put_episode(changed)
    sb.store.held_subtitles.pop(changed.id, None)


# The admin-action seam: control/admin.py names the action, the hook above makes the change.
ACTIONS: dict[str, Callable[..., Any]] = {
    "revoke": revoke,  # a key revoked (late under the revocation faults)
    "rotate": rotate,  # a key rotated (the rotation faults; the old secret dropped late)
    "suspend": suspend,  # an organisation suspended (late under the suspension faults)
    "set_limit": set_limit,  # a counter's limit set (a catalog raise late)
    "change_licence": change_licence,  # a licence ended, suspended or restored
    "publish_episode": publish_episode,  # an episode withdrawn or published again
    "attach_subtitle": attach_subtitle,  # a subtitle attached or replaced
    "retitle_film": retitle_film,  # a film retitled (what its metadata_version does)
    "retitle_playlist": retitle_playlist,  # a playlist retitled (its updated_at, version)
    "rename_creative": renamed,  # a creative renamed (its updated_at, created_at)
}


def admin_action(sb: Server, action: str, /, **args: Any) -> Any:
    """Make the admin change `action` with `args`, as the switched-on faults bend it (an
    action not in `ACTIONS` is a KeyError)."""
    return ACTIONS[action](sb, **args)
