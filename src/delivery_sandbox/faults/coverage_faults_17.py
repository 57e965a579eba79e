"""Seventeenth block of coverage faults (issue 13; README: Requirement proofs): freshness bounds.

Each fault makes one kind of admin change (a key revoked or rotated, an episode withdrawn, a
licence or an organisation suspended, a limit raised) reach the API later than the Freshness table allows: the admin API answers
at once, but the change is put back and made again after a delay. The clean sandbox applies
every change before it answers.

Spec section: Limits > Freshness (upper bounds); Authentication (key revocation and rotation).

Slow faults: a delay past a hard bound (5 s, 30 s, 65 s) is only seen once the suite has waited that
bound out, so these faults are marked `slow` (`SLOW_17`): the targeted kill rate of `make test`
runs them in a second process beside the main one (tests/harness/killrate_support.py). Each
delay is the bound plus a few seconds, so the scenario's wait ends before the change lands.

Hooks, each one call in control/admin.py where the change is made: `revoke_17`, `rotate_17`,
`episode_17`, `licence_17`, `suspend_17`, `set_limit_17`; and
`creative_stamp_17`, the `updated_at` a creative renamed by the admin API takes (FRESH-022:
the creatives feed brings an updated record again).
"""

# The fault table holds one row a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from delivery_sandbox.faults.coverage_faults_9 import rotate_9
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch
    from delivery_sandbox.state.context import Sandbox
    from delivery_sandbox.state.store import Licence

__all__ = [
    "COLLATERAL_17",
    "COVERAGE_FAULT_ROWS_17",
    "SLOW_17",
    "creative_stamp_17",
    "episode_17",
    "licence_17",
    "revoke_17",
    "rotate_17",
    "set_limit_17",
    "suspend_17",
]

COVERAGE_FAULT_ROWS_17: tuple[FaultRow, ...] = fault_rows("""
revocation_seen_late          | FRESH-011           | a key revocation takes effect 4 s after it is made (within 30 s, not about 1 s)
revocation_after_35_s         | FRESH-008 FRESH-009 | a key revocation takes effect 35 s after it is made: the key still opens the catalog and tickets past 30 s
old_secret_open_35_s          | FRESH-010           | after a rotation the old secret still opens the catalog and tickets for 35 s
rotated_key_refused_8_s       | FRESH-012           | a rotated key's new secret is refused for the first 8 s
episode_withdrawal_after_35_s | FRESH-001           | an episode withdrawal takes effect 35 s after it is made: the catalog lists it past 30 s (tickets still within 60 s)
licence_suspension_after_35_s | FRESH-003           | a licence suspension takes effect 35 s after it is made: the film stays in the catalog past 30 s
org_suspension_after_35_s     | FRESH-005 FRESH-006 | an organisation suspension takes effect 35 s after it is made: catalog and tickets still served past 30 s
catalog_raise_after_70_s      | FRESH-014           | a raised catalog limit applies 70 s after it is made (not within about a minute); the playback counter's at once
creative_update_keeps_stamp   | FRESH-022           | a creative renamed during a walk keeps its updated_at: neither the rest of the walk nor the next sync brings it again
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
SLOW_17 = frozenset(str(name) for name, delay in DELAYS.items() if delay > 5.0)
COLLATERAL_17: dict[str, tuple[tuple[str, str], ...]] = {
    "licence_suspension_after_35_s": (
        ("FRESH-004", "the late suspension reaches ticket requests past their 30 s bound too"),
    ),
}


def _hold_back(
    sb: Sandbox, fault: FaultName, undo: Callable[[], object], redo: Callable[[], object]
) -> None:
    """A change just made: when `fault` is on, undo it now and make it again after its delay
    (a sandbox reset cancels what is pending)."""
    if sb.faults.enabled(fault):
        undo()
        sb.later(DELAYS[fault], redo)


def revoke_17(sb: Sandbox, role: str) -> None:
    """Revoke the key of `role`, late under this block's revocation faults."""
    keys = sb.accounts.keys
    key = sb.accounts.key_of(role)
    before = keys[key]
    sb.accounts.revoke(role)
    after = keys[key]
    for fault in (FaultName.revocation_seen_late, FaultName.revocation_after_35_s):
        _hold_back(
            sb, fault, lambda: keys.__setitem__(key, before), lambda: keys.__setitem__(key, after)
        )


def rotate_17(sb: Sandbox, role: str) -> str:
    """Rotate the key of `role` (`rotate_9`); the old secret is dropped late, or the new one
    admitted late, under this block's rotation faults. The new secret."""
    keys = sb.accounts.keys
    old = sb.accounts.key_of(role)
    record = keys[old]
    new = rotate_9(sb, role)
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


def episode_17(sb: Sandbox, episode_id: str, publish: bool) -> bool:
    """Publish or withdraw an episode of the seed (False: no such episode); a withdrawal lands
    late under `episode_withdrawal_after_35_s`."""
    store = sb.store
    keep = sb.faults.enabled(FaultName.film_version_ignores_episodes)

    def published(value: bool) -> bool:
        return store.set_episode_published(episode_id, value, int(sb.now()), keep_version=keep)

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


def licence_17(sb: Sandbox, org_id: str, film_id: str, action: str, now: int) -> Licence:
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


def suspend_17(sb: Sandbox, org_id: str) -> None:
    """Suspend an organisation, late under `org_suspension_after_35_s`."""
    suspended = sb.accounts.suspended
    suspended.add(org_id)
    _hold_back(
        sb,
        FaultName.org_suspension_after_35_s,
        lambda: suspended.discard(org_id),
        lambda: sb.accounts.suspended.add(org_id),
    )


def set_limit_17(sb: Sandbox, org_id: str, counter: str, limit: int, now: float) -> None:
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
        )


def creative_stamp_17(faults: FaultSwitch, before: int, now: int) -> int:
    """The `updated_at` of a creative changed at `now`: unchanged under
    `creative_update_keeps_stamp`."""
    return before if faults.enabled(FaultName.creative_update_keeps_stamp) else now
