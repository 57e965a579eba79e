"""The state of one sandbox: settings, clock, accounts, data, limits, faults (ARCHITECTURE).

Everything mutable lives on one `Sandbox` object, built from `Settings` with an injected time
source and random source, so tests can build as many independent sandboxes as they like.
`generation` grows on every admin change; caches keyed on it never serve stale data.
Legal variants (variants/) are fixed at start: the policies they set (`bases`, `paging`,
`readings`) and, for the cache variants, the servers that answer in turn (`views`, `serving`).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from delivery_sandbox.faults import limits as limit_faults
from delivery_sandbox.faults.registry import FaultSwitch
from delivery_sandbox.http.headers import RequestIds
from delivery_sandbox.http.versions import LATEST, VERSION_SETS, VersionSet, VersionSetName
from delivery_sandbox.playback.limits import Limits
from delivery_sandbox.playback.policies import DEFAULT_BASES, Policies, in_force
from delivery_sandbox.playback.tickets import TicketBook
from delivery_sandbox.playback.variant_policies import variant_bases
from delivery_sandbox.state.accounts import (
    EXTENDED_ONLY,
    LIMITS_TWINS,
    ROLES,
    TENANT_LICENCES_OF,
    Accounts,
    Pin,
    Tenants,
)
from delivery_sandbox.state.clock import Clock
from delivery_sandbox.state.seed import build_store
from delivery_sandbox.state.store import Store
from delivery_sandbox.state.views import ServerViews
from delivery_sandbox.variants.caches import CACHED_ENDPOINTS, Change, server_plan
from delivery_sandbox.variants.catalogue import VariantSet
from delivery_sandbox.variants.paging import FULL_PAGES, PagePolicy, page_policy
from delivery_sandbox.variants.readings import DEFAULT_READINGS, Readings, readings

__all__ = ["BARE_HOST", "WWW_HOST", "Sandbox", "Settings"]

BARE_HOST = "delivery.sandbox"
WWW_HOST = "www.delivery.sandbox"
CACHE_MAX = 4096


@dataclass(frozen=True)
class Settings:
    faults: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()  # legal variants (variants/catalogue.py), fixed at start
    limits_scale: float = 1.0
    versions: VersionSetName = VersionSetName.SPEC
    admin_token: str | None = None
    seed: int = 20261002
    tenants: int = 0  # `--tenants N`: N more test organisations and an idle one (accounts.py)


@dataclass
class Sandbox:
    settings: Settings
    clock: Clock
    rng: random.Random
    versions: VersionSet
    accounts: Accounts
    store: Store
    limits: Limits
    faults: FaultSwitch
    variants: VariantSet
    request_ids: RequestIds
    admin_token: str
    cursor_secret: bytes
    generation: int = 0
    cache: dict[Any, Any] = field(default_factory=dict)
    tickets: TicketBook = field(default_factory=TicketBook)
    outages: set[str] = field(default_factory=set)  # areas out (outages.py; admin API)
    _order: Iterator[int] = field(default_factory=itertools.count)  # ties among `later` ones
    # `later` actions: (due on the sandbox clock, order made, action, its arguments, the
    # organisation whose state it changes, if one: a restore of that organisation drops it)
    pending: list[tuple[float, int, Callable[..., object], tuple[object, ...], str | None]] = field(
        default_factory=list
    )
    bases: Policies = DEFAULT_BASES  # playback and limits policies before any fault (variants)
    paging: PagePolicy = FULL_PAGES  # where pages are cut (variants/paging.py)
    readings: Readings = DEFAULT_READINGS  # the reading of ambiguous answers (variants)
    views: ServerViews | None = None  # the servers of a cache variant (state/views.py)

    def now(self) -> float:
        """The time of what is being answered: the caller's organisation's clock in a request
        (state/clock.py), the sandbox's own elsewhere."""
        return self.clock.current()

    def serving(self, endpoint: str) -> Sandbox:
        """The sandbox as the server answering this request reads it: itself, or under a cache
        variant a sandbox whose store and built bodies are that server's copy (spec: Limits >
        Freshness, each server has its own cache)."""
        if self.views is None:
            return self
        view = self.views.answer(self.store, self.clock.now(), endpoint in CACHED_ENDPOINTS)
        if view is None:
            return self
        return dataclasses.replace(self, store=view.store, cache=view.cache)

    def note_change(self, change: Change) -> None:
        """An admin change of this Freshness row was made (the cache variants take it in)."""
        if self.views is not None:
            self.views.noted(change, self.clock.now())

    def cached(self, key: Any, build: Callable[[], bytes]) -> bytes:
        """A pre-serialised body, built once per key until the next change."""
        found = self.cache.get(key)
        if found is None:
            if len(self.cache) > CACHE_MAX:
                self.cache.clear()
            found = self.cache[key] = build()
        return found

    def changed(self) -> None:
        """Something an answer depends on changed: drop every cached body, re-apply the faults."""
        self.generation += 1
        self.cache.clear()
        self.policies()

    def policies(self) -> Policies:
        """The playback and limits policies in force: the bases as the switched-on faults bend
        them (the policy step seam, faults/limits.py: `bend_policies`), handed to the limiter."""
        bent = limit_faults.bend_policies(self.faults, self.bases, self.bases is DEFAULT_BASES)
        return in_force(self.limits, bent)

    def later(
        self, seconds: float, action: Callable[..., object], *args: object, org: str | None = None
    ) -> None:
        """Run `action` once the sandbox clock has moved `seconds` on (a reset cancels what is
        pending, a restore of `org` what is pending for it). Due actions run when the next
        request or admin call arrives (`run_due`): nothing can see them before, and a clock
        moved by `POST /_sandbox/clock` brings them due as real time would."""
        due = self.clock.now() + seconds
        self.pending.append((due, next(self._order), action, args, org))

    def forget_pending(self, org: str) -> None:
        """Drop what is pending for `org` (its restore: back to its start, nothing to land)."""
        self.pending = [entry for entry in self.pending if entry[4] != org]

    def run_due(self) -> None:
        """Run, in the order they fall due, the `later` actions the clock has reached."""
        if not self.pending:
            return
        now = self.clock.now()
        due = sorted((e for e in self.pending if e[0] <= now), key=lambda e: (e[0], e[1]))
        if not due:
            return
        self.pending = [entry for entry in self.pending if entry[0] > now]
        for _, _, action, args, _ in due:
            action(*args)
        self.changed()

    def reset(self) -> None:
        """Back to the start state (admin `POST /_sandbox/reset`)."""
        self.pending.clear()
        self.clock.reset()
        self.accounts.reset()
        self.store.reset()
        self.limits.clear()
        self.tickets = TicketBook()
        self.outages.clear()
        self.faults.only(self.settings.faults)
        if self.views is not None:
            self.views.renew()
        self.changed()

    def fixtures(self) -> dict[str, str | int]:
        out: dict[str, str | int] = dict(self.store.fixtures)
        if self.settings.versions is VersionSetName.EXTENDED:
            retired = self.versions.first_with(retired=True)
            deprecated = self.versions.first_with(deprecated=True)
            if retired:
                out["retired_version"] = retired
            if deprecated:
                out["deprecated_version"] = deprecated
        return out


def build_sandbox(
    settings: Settings,
    time_source: Callable[[], float] = time.time,
    rng: random.Random | None = None,
) -> Sandbox:
    """A fresh sandbox. `rng` mints keys, request ids and secrets; the seed data is fixed."""
    rng = rng if rng is not None else random.SystemRandom()
    versions = VERSION_SETS[settings.versions]
    pins = {
        Pin.LATEST: LATEST,
        Pin.RETIRED: versions.first_with(retired=True) or LATEST,
        Pin.DEPRECATED: versions.first_with(deprecated=True) or LATEST,
    }
    roles = [
        r for r in ROLES if settings.versions is VersionSetName.EXTENDED or r not in EXTENDED_ONLY
    ]
    clock = Clock(time_source)
    store = build_store(settings.seed, clock.now())
    tenants = Tenants.make(settings.tenants)
    store.share_licences(TENANT_LICENCES_OF, tenants.org_ids)
    for twin, source in LIMITS_TWINS.items():
        store.share_licences(source, (twin,))
    variants = VariantSet(settings.variants)
    plan = server_plan(variants)
    bases = variant_bases(variants)
    if tenants.org_ids:  # the limiter knows them (the tenant faults act on them only)
        bases = dataclasses.replace(
            bases, quirks=dataclasses.replace(bases.quirks, tenants=tenants.org_ids)
        )
    sandbox = Sandbox(
        settings=settings,
        clock=clock,
        rng=rng,
        versions=versions,
        accounts=Accounts(rng, pins, roles, tenants),
        store=store,
        limits=Limits(scale=settings.limits_scale),
        faults=FaultSwitch(settings.faults),
        variants=variants,
        request_ids=RequestIds(rng),
        admin_token=settings.admin_token
        or "adm_" + "".join(rng.choice("abcdef0123456789") for _ in range(32)),
        cursor_secret=bytes(rng.getrandbits(8) for _ in range(32)),
        bases=bases,
        paging=page_policy(variants),
        readings=readings(variants),
        views=None if plan is None else ServerViews(plan),
    )
    sandbox.changed()  # brings the limiter in line with the faults given at start
    return sandbox
