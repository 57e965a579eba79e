"""The state of one sandbox: settings, clock, accounts, data, limits, faults (ARCHITECTURE).

Everything mutable lives on one `Sandbox` object, built from `Settings` with an injected time
source and random source, so tests can build as many independent sandboxes as they like.
`generation` grows on every admin change; caches keyed on it never serve stale data.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from delivery_sandbox.faults.registry import FaultSwitch
from delivery_sandbox.http.headers import RequestIds
from delivery_sandbox.http.versions import LATEST, VERSION_SETS, VersionSet, VersionSetName
from delivery_sandbox.playback.fault_policies import apply_faults
from delivery_sandbox.playback.limits import Limits
from delivery_sandbox.playback.tickets import TicketBook
from delivery_sandbox.state.accounts import EXTENDED_ONLY, ROLES, Accounts, Pin
from delivery_sandbox.state.clock import Clock
from delivery_sandbox.state.seed import build_store
from delivery_sandbox.state.store import Store

__all__ = ["BARE_HOST", "WWW_HOST", "Sandbox", "Settings"]

BARE_HOST = "delivery.sandbox"
WWW_HOST = "www.delivery.sandbox"
CACHE_MAX = 4096


@dataclass(frozen=True)
class Settings:
    faults: tuple[str, ...] = ()
    limits_scale: float = 1.0
    versions: VersionSetName = VersionSetName.SPEC
    admin_token: str | None = None
    seed: int = 20261002


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
    request_ids: RequestIds
    admin_token: str
    cursor_secret: bytes
    generation: int = 0
    cache: dict[Any, Any] = field(default_factory=dict)
    tickets: TicketBook = field(default_factory=TicketBook)
    outages: set[str] = field(default_factory=set)  # areas out (outages.py; admin API)
    pending: list[asyncio.TimerHandle] = field(default_factory=list)  # `later` actions

    def now(self) -> float:
        return self.clock.now()

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
        apply_faults(self.faults, self.limits)

    def later(self, seconds: float, action: Callable[..., object], *args: object) -> None:
        """Run `action` on the event loop after `seconds` (a reset cancels what is pending)."""
        handle = asyncio.get_running_loop().call_later(seconds, self._run_later, action, args)
        self.pending.append(handle)

    def _run_later(self, action: Callable[..., object], args: tuple[object, ...]) -> None:
        action(*args)
        self.changed()

    def reset(self) -> None:
        """Back to the start state (admin `POST /_sandbox/reset`)."""
        for handle in self.pending:
            handle.cancel()
        self.pending.clear()
        self.clock.reset()
        self.accounts.reset()
        self.store.reset()
        self.limits.clear()
        self.tickets = TicketBook()
        self.outages.clear()
        self.faults.only(self.settings.faults)
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
    sandbox = Sandbox(
        settings=settings,
        clock=clock,
        rng=rng,
        versions=versions,
        accounts=Accounts(rng, pins, roles),
        store=store,
        limits=Limits(scale=settings.limits_scale),
        faults=FaultSwitch(settings.faults),
        request_ids=RequestIds(rng),
        admin_token=settings.admin_token
        or "adm_" + "".join(rng.choice("abcdef0123456789") for _ in range(32)),
        cursor_secret=bytes(rng.getrandbits(8) for _ in range(32)),
    )
    sandbox.changed()  # brings the limiter in line with the faults given at start
    return sandbox
